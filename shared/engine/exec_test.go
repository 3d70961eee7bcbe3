package engine_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/berth-dev/berth/shared/engine"
)

// terminal reads an exec stream in the background so that a test can wait
// for some output without blocking forever.
type terminal struct {
	t      *testing.T
	stream *engine.ExecStream
	chunks chan []byte
	done   chan error // the read error (nil at EOF) once the stream ended
	buf    bytes.Buffer
}

func newTerminal(t *testing.T, s *engine.ExecStream) *terminal {
	term := &terminal{t: t, stream: s, chunks: make(chan []byte), done: make(chan error, 1)}
	go func() {
		for {
			p := make([]byte, 4096)
			n, err := s.Read(p)
			if n > 0 {
				term.chunks <- p[:n]
			}
			if err != nil {
				if errors.Is(err, io.EOF) {
					err = nil
				}
				term.done <- err
				close(term.chunks)
				return
			}
		}
	}()
	t.Cleanup(func() {
		s.Close()
		for range term.chunks { // let the reader finish
		}
	})
	return term
}

// send writes a command line to the terminal.
func (term *terminal) send(line string) {
	term.t.Helper()
	if _, err := io.WriteString(term.stream, line+"\n"); err != nil {
		term.t.Fatalf("write %q: %v", line, err)
	}
}

// expect reads until the output holds want on a line of its own (so that the
// terminal's echo of the command line does not count) and consumes it.
func (term *terminal) expect(want string) {
	term.t.Helper()
	needle := "\n" + want + "\r\n"
	timeout := time.After(30 * time.Second)
	for {
		if i := strings.Index(term.buf.String(), needle); i >= 0 {
			term.buf.Next(i + len(needle))
			return
		}
		select {
		case p, ok := <-term.chunks:
			if !ok {
				term.t.Fatalf("the exec stream ended before %q; output: %q", want, term.buf.String())
			}
			term.buf.Write(p)
		case <-timeout:
			term.t.Fatalf("no %q in the exec output: %q", want, term.buf.String())
		}
	}
}

// wait waits for the end of the stream.
func (term *terminal) wait() {
	term.t.Helper()
	for {
		select {
		case p, ok := <-term.chunks:
			if !ok {
				if err := <-term.done; err != nil {
					term.t.Fatalf("exec stream: %v", err)
				}
				return
			}
			term.buf.Write(p)
		case <-time.After(30 * time.Second):
			term.t.Fatalf("the exec stream did not end; output: %q", term.buf.String())
		}
	}
}

func TestExecWithTTYRoundTrip(t *testing.T) {
	c := localClient(t)
	label := newLabel(t)
	cid := runContainer(t, c, label, engine.CreateSpec{Cmd: []string{"sleep", "300"}})

	execID, err := c.CreateExec(t.Context(), cid, engine.ExecSpec{Cmd: []string{"sh"}, Tty: true})
	if err != nil {
		t.Fatalf("CreateExec: %v", err)
	}
	stream, err := c.StartExec(t.Context(), execID, true)
	if err != nil {
		t.Fatalf("StartExec: %v", err)
	}
	term := newTerminal(t, stream)

	term.send("echo hi")
	term.expect("hi")

	if err := c.ResizeExec(t.Context(), execID, 30, 100); err != nil {
		t.Fatalf("ResizeExec: %v", err)
	}
	term.send("busybox stty size")
	term.expect("30 100")

	st, err := c.InspectExec(t.Context(), execID)
	if err != nil {
		t.Fatalf("InspectExec: %v", err)
	}
	if diff := cmp.Diff(engine.ExecState{ContainerID: cid, Running: true}, st); diff != "" {
		t.Errorf("InspectExec while running (-want +got):\n%s", diff)
	}

	term.send("exit 3")
	term.wait()
	// The engine records the exit code when the process is reaped, which
	// may come just after the stream ends.
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for {
		st, err = c.InspectExec(ctx, execID)
		if err != nil || !st.Running {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond):
		}
	}
	if err != nil {
		t.Fatalf("InspectExec after exit: %v", err)
	}
	if diff := cmp.Diff(engine.ExecState{ContainerID: cid, Running: false, ExitCode: 3}, st); diff != "" {
		t.Errorf("InspectExec after exit (-want +got):\n%s", diff)
	}
}

func TestExecWithoutTTYTakesStdinAndMultiplexesOutput(t *testing.T) {
	c := localClient(t)
	label := newLabel(t)
	cid := runContainer(t, c, label, engine.CreateSpec{Cmd: []string{"sleep", "300"}})

	execID, err := c.CreateExec(t.Context(), cid, engine.ExecSpec{Cmd: []string{"sh", "-c", "cat; echo done"}})
	if err != nil {
		t.Fatalf("CreateExec: %v", err)
	}
	stream, err := c.StartExec(t.Context(), execID, false)
	if err != nil {
		t.Fatalf("StartExec: %v", err)
	}
	defer stream.Close()
	if _, err := io.WriteString(stream, "ping\n"); err != nil {
		t.Fatalf("write: %v", err)
	}
	if err := stream.CloseWrite(); err != nil {
		t.Fatalf("CloseWrite: %v", err)
	}
	out, err := io.ReadAll(stream)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	// Without a TTY the output is multiplexed: 8-byte frame headers precede
	// the text.
	if !bytes.Contains(out, []byte("ping\n")) || !bytes.Contains(out, []byte("done\n")) || out[0] != 1 {
		t.Errorf("exec output = %q, want stdout frames with ping and done", out)
	}
}
