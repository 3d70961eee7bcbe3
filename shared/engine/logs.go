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
	Since      string // as the engine takes it: Unix time, RFC 3339 or a duration back from now
	Until      string // the same
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
	id, err := checkContainer(id)
	if err != nil {
		return err
	}
	if !o.Follow {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, callTimeout)
		defer cancel()
	}
	rc, err := c.cli.ContainerLogs(ctx, id, client.ContainerLogsOptions{
		ShowStdout: true, ShowStderr: true, Follow: o.Follow, Tail: o.Tail, Timestamps: o.Timestamps, Since: o.Since, Until: o.Until,
	})
	if err != nil {
		return c.fail(err)
	}
	defer rc.Close()
	if tty {
		err = splitLines(rc, "stdout", fn)
	} else {
		err = demux(rc, fn)
	}
	// The caller ending ctx ends the logs: the read then fails with
	// context.Canceled or, when the transport closed the connection
	// first, "use of closed network connection".
	if err != nil && errors.Is(ctx.Err(), context.Canceled) {
		return nil
	}
	return err
}

// splitLines calls fn for every line of r.
func splitLines(r io.Reader, stream string, fn func(LogLine) error) error {
	l := &lineBuffer{stream: stream}
	chunk := make([]byte, 32<<10)
	for {
		n, err := r.Read(chunk)
		if werr := l.write(chunk[:n], err != nil, fn); werr != nil {
			return werr
		}
		if err != nil {
			return eofIsNil(err)
		}
	}
}

// demux splits the engine's multiplexed stream: frames of an 8-byte header
// (stream id, 3 zero bytes, big-endian length) followed by the payload. The
// stream is untrusted: a payload is read in bounded chunks whatever length
// its header announces.
func demux(r io.Reader, fn func(LogLine) error) error {
	br := bufio.NewReaderSize(r, 32<<10)
	stdout, stderr := &lineBuffer{stream: "stdout"}, &lineBuffer{stream: "stderr"}
	// end flushes both streams' last lines when the input ends.
	end := func(err error) error {
		if ferr := stdout.write(nil, true, fn); ferr != nil {
			return ferr
		}
		if ferr := stderr.write(nil, true, fn); ferr != nil {
			return ferr
		}
		return eofIsNil(err)
	}
	var hdr [8]byte
	chunk := make([]byte, 32<<10)
	for {
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			return end(err)
		}
		l := stdout
		switch hdr[0] {
		case 0, 1:
		case 2:
			l = stderr
		default:
			return fmt.Errorf("engine: log stream: bad frame header %x", hdr[0])
		}
		for n := int(binary.BigEndian.Uint32(hdr[4:])); n > 0; {
			k, err := io.ReadFull(br, chunk[:min(n, len(chunk))])
			n -= k
			if werr := l.write(chunk[:k], false, fn); werr != nil {
				return werr
			}
			if err != nil {
				return end(err)
			}
		}
	}
}

// lineBuffer holds the unfinished line of one stream.
type lineBuffer struct {
	stream string
	buf    []byte
}

// write appends p and calls fn for every complete line; with final (the
// stream ended) also for the rest.
func (l *lineBuffer) write(p []byte, final bool, fn func(LogLine) error) error {
	l.buf = append(l.buf, p...)
	rest := l.buf
	for len(rest) > 0 {
		text, n := cutLine(rest, final)
		if n == 0 {
			break
		}
		rest = rest[n:]
		if err := fn(LogLine{Stream: l.stream, Text: string(text)}); err != nil {
			return err
		}
	}
	l.buf = append(l.buf[:0], rest...)
	return nil
}

// cutLine returns the first line of buf without its line end ("\n" or
// "\r\n") and the number of bytes it takes, or 0 when buf holds no complete
// line yet. A line longer than maxLogLine is cut into pieces of maxLogLine
// bytes; a line of exactly maxLogLine bytes stays whole.
func cutLine(buf []byte, final bool) ([]byte, int) {
	if i := bytes.IndexByte(buf, '\n'); i >= 0 {
		end := i
		if end > 0 && buf[end-1] == '\r' {
			end--
		}
		if end <= maxLogLine {
			return buf[:end], i + 1
		}
		return buf[:maxLogLine], maxLogLine
	}
	switch {
	case len(buf) > maxLogLine+1, final && len(buf) > maxLogLine:
		// Too long for one line even if "\r\n" comes next.
		return buf[:maxLogLine], maxLogLine
	case final:
		return buf, len(buf)
	}
	return nil, 0
}

func eofIsNil(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
