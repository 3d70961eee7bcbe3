package engine

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/moby/moby/client"
)

// LogOptions selects the log lines of a container.
type LogOptions struct {
	Tail       string // number of lines from the end, or "all"
	Follow     bool
	Timestamps bool
	Since      string
}

// LogLine is one line of container output.
type LogLine struct {
	Stream string // stdout or stderr
	Text   string // without the trailing newline
}

// maxLogLine bounds a single line; longer ones are split.
const maxLogLine = 64 << 10

// Logs reads a container's logs and calls fn once per line. tty tells how the
// engine frames the stream (raw for TTY containers, multiplexed otherwise).
// With Follow it returns when ctx ends or the container's output ends.
func (c *Client) Logs(ctx context.Context, id string, tty bool, o LogOptions, fn func(LogLine) error) error {
	if !o.Follow {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, callTimeout)
		defer cancel()
	}
	rc, err := c.cli.ContainerLogs(ctx, id, client.ContainerLogsOptions{
		ShowStdout: true, ShowStderr: true, Follow: o.Follow, Tail: o.Tail, Timestamps: o.Timestamps, Since: o.Since,
	})
	if err != nil {
		return c.fail(err)
	}
	defer rc.Close()
	if tty {
		return splitLines(rc, "stdout", fn)
	}
	return demux(rc, fn)
}

// splitLines calls fn for every line of r.
func splitLines(r io.Reader, stream string, fn func(LogLine) error) error {
	br := bufio.NewReaderSize(r, 32<<10)
	var line []byte
	for {
		chunk, isPrefix, err := br.ReadLine()
		line = append(line, chunk...)
		if err == nil && isPrefix && len(line) < maxLogLine {
			continue
		}
		if len(line) > 0 || err == nil {
			if ferr := fn(LogLine{Stream: stream, Text: string(line)}); ferr != nil {
				return ferr
			}
		}
		line = line[:0]
		if err != nil {
			return eofIsNil(err)
		}
	}
}

// demux splits the engine's multiplexed stream: frames of an 8-byte header
// (stream id, 3 zero bytes, big-endian length) followed by the payload.
func demux(r io.Reader, fn func(LogLine) error) error {
	br := bufio.NewReaderSize(r, 32<<10)
	var hdr [8]byte
	partial := map[string][]byte{}
	flush := func(stream string, final bool) error {
		buf := partial[stream]
		for {
			i := bytes.IndexByte(buf, '\n')
			if i < 0 {
				break
			}
			if err := fn(LogLine{Stream: stream, Text: string(bytes.TrimSuffix(buf[:i], []byte{'\r'}))}); err != nil {
				return err
			}
			buf = buf[i+1:]
		}
		if len(buf) > 0 && (final || len(buf) >= maxLogLine) {
			if err := fn(LogLine{Stream: stream, Text: string(buf)}); err != nil {
				return err
			}
			buf = nil
		}
		partial[stream] = append([]byte(nil), buf...)
		return nil
	}
	for {
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			for _, s := range []string{"stdout", "stderr"} {
				if ferr := flush(s, true); ferr != nil {
					return ferr
				}
			}
			return eofIsNil(err)
		}
		stream := "stdout"
		switch hdr[0] {
		case 0, 1:
		case 2:
			stream = "stderr"
		default:
			return fmt.Errorf("engine: log stream: bad frame header %x", hdr[0])
		}
		n := binary.BigEndian.Uint32(hdr[4:])
		payload := make([]byte, n)
		if _, err := io.ReadFull(br, payload); err != nil {
			return eofIsNil(err)
		}
		partial[stream] = append(partial[stream], payload...)
		if err := flush(stream, false); err != nil {
			return err
		}
	}
}

func eofIsNil(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
