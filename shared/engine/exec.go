package engine

import (
	"bufio"
	"context"
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

// ExecStream is the hijacked connection of a started exec: reads return the
// process output, writes feed its stdin.
type ExecStream struct {
	conn   net.Conn
	reader *bufio.Reader
}

func (s *ExecStream) Read(p []byte) (int, error)  { return s.reader.Read(p) }
func (s *ExecStream) Write(p []byte) (int, error) { return s.conn.Write(p) }

// CloseWrite signals end of input to the process.
func (s *ExecStream) CloseWrite() error {
	if cw, ok := s.conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// Close ends the connection (and with it, for a TTY, the session).
func (s *ExecStream) Close() error { return s.conn.Close() }

// StartExec starts a created exec and attaches to it. The context only bounds
// the start; the stream lives until closed.
func (c *Client) StartExec(ctx context.Context, execID string, tty bool) (*ExecStream, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	res, err := c.cli.ExecAttach(ctx, execID, client.ExecAttachOptions{TTY: tty})
	if err != nil {
		return nil, c.fail(err)
	}
	return &ExecStream{conn: res.Conn, reader: res.Reader}, nil
}

// ResizeExec sets the terminal size of an exec.
func (c *Client) ResizeExec(ctx context.Context, execID string, rows, cols uint) error {
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
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	res, err := c.cli.ExecInspect(ctx, execID, client.ExecInspectOptions{})
	if err != nil {
		return ExecState{}, c.fail(err)
	}
	return ExecState{ContainerID: res.ContainerID, Running: res.Running, ExitCode: res.ExitCode}, nil
}
