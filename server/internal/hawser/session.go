package hawser

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/berth-dev/berth/shared/engine"
)

// session is a terminal session on an agent (exec_* frames).
type session struct {
	c  *agentConn
	id string

	ready chan error // the agent's exec_ready (nil) or error

	output
	closed sync.Once
}

// output is a terminal session's output as it arrives, read by Read until
// the session ends.
type output struct {
	mu    sync.Mutex
	cond  *sync.Cond
	buf   bytes.Buffer
	ended bool
	err   error
	done  chan struct{}
}

// init readies o for use (it is embedded by value).
func (o *output) init() {
	o.cond = sync.NewCond(&o.mu)
	o.done = make(chan struct{})
}

// write adds output and wakes a Read.
func (o *output) write(b []byte) {
	o.mu.Lock()
	o.buf.Write(b)
	o.cond.Broadcast()
	o.mu.Unlock()
}

// finish marks the session over (err nil: it ended normally).
func (o *output) finish(err error) {
	o.mu.Lock()
	if !o.ended {
		o.ended, o.err = true, err
		close(o.done)
	}
	o.cond.Broadcast()
	o.mu.Unlock()
}

// Read returns output; io.EOF once the session ended normally.
func (o *output) Read(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for o.buf.Len() == 0 && !o.ended {
		o.cond.Wait()
	}
	if o.buf.Len() > 0 {
		return o.buf.Read(p)
	}
	if o.err != nil {
		return 0, o.err
	}
	return 0, io.EOF
}

// Done is closed when the session ended.
func (o *output) Done() <-chan struct{} { return o.done }

func (o *output) isEnded() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.ended
}

// Exec opens a terminal session on envID's agent (engine.HawserEdges).
func (h *Hub) Exec(ctx context.Context, envID int64, x engine.HawserExec) (engine.HawserSession, error) {
	if h.get(envID) == nil && h.replicas != nil {
		// The agent may be connected to another replica.
		return h.execRelayed(ctx, envID, x)
	}
	return h.execLocal(ctx, envID, x)
}

// execLocal opens a terminal session on envID's agent connected here.
func (h *Hub) execLocal(ctx context.Context, envID int64, x engine.HawserExec) (engine.HawserSession, error) {
	c := h.get(envID)
	if c == nil {
		return nil, errAbsent
	}
	s := &session{c: c, id: x.ExecID, ready: make(chan error, 1)}
	s.init()
	c.mu.Lock()
	c.execs[x.ExecID] = s
	c.mu.Unlock()
	err := c.write(ctx, execStartFrame{Type: "exec_start", ExecID: x.ExecID, ContainerID: x.ContainerID, Cmd: x.Cmd,
		User: x.User, Cols: x.Cols, Rows: x.Rows})
	if err != nil {
		s.end(err)
		return nil, lost(c, err)
	}
	select {
	case err := <-s.ready:
		if err != nil {
			s.end(err)
			return nil, err
		}
	case <-ctx.Done():
		_ = s.Close()
		return nil, ctx.Err()
	case <-c.ctx.Done():
		s.end(lost(c, nil))
		return nil, lost(c, nil)
	}
	go func() {
		select {
		case <-c.ctx.Done():
			s.end(lost(c, nil))
		case <-s.done:
		}
	}()
	return s, nil
}

// Resize sends exec_resize for execID to envID's agent, here or through the
// replica holding it (engine.HawserEdges): the session may have been opened
// through any replica; the agent knows it by id.
func (h *Hub) Resize(ctx context.Context, envID int64, execID string, cols, rows int) error {
	if h.get(envID) == nil && h.replicas != nil {
		return h.resizeRelayed(ctx, envID, execID, cols, rows)
	}
	return h.resizeLocal(ctx, envID, execID, cols, rows)
}

func (h *Hub) resizeLocal(ctx context.Context, envID int64, execID string, cols, rows int) error {
	c := h.get(envID)
	if c == nil {
		return errAbsent
	}
	if err := c.write(ctx, execResizeFrame{Type: "exec_resize", ExecID: execID, Cols: cols, Rows: rows}); err != nil {
		return lost(c, err)
	}
	return nil
}

func (c *agentConn) execOf(id string) *session {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.execs[id]
}

// frame handles an exec_ready, exec_output or exec_end of this session.
func (s *session) frame(typ string, data []byte) {
	switch typ {
	case "exec_ready":
		select {
		case s.ready <- nil:
		default:
		}
	case "exec_output":
		var f execDataFrame
		if json.Unmarshal(data, &f) != nil {
			return
		}
		b, err := base64.StdEncoding.DecodeString(f.Data)
		if err != nil {
			return
		}
		s.write(b)
	case "exec_end":
		s.end(nil)
	}
}

// fail handles the agent's error frame for this session.
func (s *session) fail(data []byte) {
	var e errorFrame
	_ = json.Unmarshal(data, &e)
	err := &engine.Error{Msg: "The Hawser agent could not start the terminal: " + e.Error}
	select {
	case s.ready <- err:
	default:
	}
	s.end(fmt.Errorf("hawser: %s", e.Error))
}

// end marks the session over (err nil: the agent ended it).
func (s *session) end(err error) {
	s.finish(err)
	s.c.mu.Lock()
	if s.c.execs[s.id] == s {
		delete(s.c.execs, s.id)
	}
	s.c.mu.Unlock()
}

// Write sends input.
func (s *session) Write(p []byte) (int, error) {
	if s.isEnded() {
		return 0, io.ErrClosedPipe
	}
	err := s.c.write(s.c.ctx, execDataFrame{Type: "exec_input", ExecID: s.id, Data: base64.StdEncoding.EncodeToString(p)})
	if err != nil {
		return 0, lost(s.c, err)
	}
	return len(p), nil
}

// Resize sends exec_resize.
func (s *session) Resize(cols, rows int) error {
	if s.isEnded() {
		return errors.New("hawser: the terminal session ended")
	}
	return s.c.write(s.c.ctx, execResizeFrame{Type: "exec_resize", ExecID: s.id, Cols: cols, Rows: rows})
}

// Close ends the session from Berth's side (exec_end, reason user_closed).
func (s *session) Close() error {
	s.closed.Do(func() {
		if !s.isEnded() {
			_ = s.c.write(context.Background(), execEndFrame{Type: "exec_end", ExecID: s.id, Reason: "user_closed"})
		}
		s.end(nil)
	})
	return nil
}
