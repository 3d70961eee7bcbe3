package engine

import (
	"bufio"
	"context"
	"io"
	"net"

	"github.com/moby/moby/client"
)

// ExecSpec describes a process to run in a container.
type ExecSpec struct {
	Cmd  []string
	User string
	Tty  bool
}

// CreateExec prepares a process in a running container (with stdin and
// output attached) and returns the exec id.
func (c *Client) CreateExec(ctx context.Context, containerID string, spec ExecSpec) (string, error) {
	containerID, err := checkContainer(containerID)
	if err != nil {
		return "", err
	}
	if c.hawser != nil && c.hawser.edges != nil {
		return c.createHawserExec(containerID, spec)
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	res, err := c.cli.ExecCreate(ctx, containerID, client.ExecCreateOptions{
		User: spec.User, TTY: spec.Tty, AttachStdin: true, AttachStdout: true, AttachStderr: true,
		Cmd: spec.Cmd, Env: []string{"TERM=xterm-256color"},
	})
	if err != nil {
		return "", c.fail(err)
	}
	return res.ID, nil
}

// ExecStream is an attached exec: reads return the process output, writes
// feed its stdin. It is the engine's hijacked connection, or the agent's exec
// operation for an agent environment.
type ExecStream struct {
	rw execIO
}

// execIO is what an attached exec is read from and written to.
type execIO interface {
	io.ReadWriter
	CloseWrite() error
	Close() error
}

func (s *ExecStream) Read(p []byte) (int, error)  { return s.rw.Read(p) }
func (s *ExecStream) Write(p []byte) (int, error) { return s.rw.Write(p) }

// CloseWrite signals end of input to the process.
func (s *ExecStream) CloseWrite() error { return s.rw.CloseWrite() }

// Close ends the connection (and with it, for a TTY, the session).
func (s *ExecStream) Close() error { return s.rw.Close() }

// hijacked is the engine's hijacked connection of an exec.
type hijacked struct {
	conn   net.Conn
	reader *bufio.Reader
}

func (h *hijacked) Read(p []byte) (int, error)  { return h.reader.Read(p) }
func (h *hijacked) Write(p []byte) (int, error) { return h.conn.Write(p) }
func (h *hijacked) Close() error                { return h.conn.Close() }

func (h *hijacked) CloseWrite() error {
	if cw, ok := h.conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// StartExec starts a created exec and attaches to it. The context only bounds
// the start; the stream lives until closed. Through an agent the exec is the
// agent's typed exec operation (stdin, output and resize on one stream).
func (c *Client) StartExec(ctx context.Context, execID string, tty bool) (*ExecStream, error) {
	if err := CheckExecID(execID); err != nil {
		return nil, err
	}
	if c.agent != nil {
		return c.startAgentExec(ctx, execID, tty)
	}
	if c.hawser != nil && c.hawser.edges != nil {
		return c.startHawserExec(ctx, execID)
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	res, err := c.cli.ExecAttach(ctx, execID, client.ExecAttachOptions{TTY: tty})
	if err != nil {
		return nil, c.fail(err)
	}
	return &ExecStream{rw: &hijacked{conn: res.Conn, reader: res.Reader}}, nil
}

// ResizeExec sets the terminal size of an exec.
func (c *Client) ResizeExec(ctx context.Context, execID string, rows, cols uint) error {
	if err := CheckExecID(execID); err != nil {
		return err
	}
	if c.agent != nil && c.conn.resizeAgentExec(execID, rows, cols) {
		return nil
	}
	if c.hawser != nil && c.hawser.edges != nil {
		return c.resizeHawserExec(ctx, execID, rows, cols)
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	_, err := c.cli.ExecResize(ctx, execID, client.ExecResizeOptions{Height: rows, Width: cols})
	return c.fail(err)
}

// ExecState is what the engine tells about an exec.
type ExecState struct {
	ContainerID string
	Running     bool
	ExitCode    int
}

// InspectExec returns the state of an exec.
func (c *Client) InspectExec(ctx context.Context, execID string) (ExecState, error) {
	if err := CheckExecID(execID); err != nil {
		return ExecState{}, err
	}
	if c.hawser != nil && c.hawser.edges != nil {
		if st, ok := c.hawser.inspectHawserExec(execID); ok {
			return st, nil
		}
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	res, err := c.cli.ExecInspect(ctx, execID, client.ExecInspectOptions{})
	if err != nil {
		return ExecState{}, c.fail(err)
	}
	return ExecState{ContainerID: res.ContainerID, Running: res.Running, ExitCode: res.ExitCode}, nil
}

// Lines calls fn for every line of a non-TTY exec's output (the engine's
// multiplexed stream, as an agent relays it too: standard output and error
// apart) until the output ends.
func (s *ExecStream) Lines(fn func(LogLine) error) error { return demux(s, fn) }
