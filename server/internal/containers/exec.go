package containers

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// ExecAttachWindow is how long a created exec waits for its WebSocket.
const ExecAttachWindow = 2 * time.Minute

// ExecInstance is a created, not yet attached, terminal session.
type ExecInstance struct {
	ExecID         string         `json:"execId"`
	ConnectionInfo ConnectionInfo `json:"connectionInfo"`
}

// ConnectionInfo tells how Berth reaches the environment's engine.
type ConnectionInfo struct {
	Type string `json:"type"` // socket, http, https, agent-edge
	Host string `json:"host,omitempty"`
	Port int    `json:"port,omitempty"`
}

// execRegistry tracks exec instances created through Berth so that each is
// attached at most once, by the environment that created it.
type execRegistry struct {
	mu       sync.Mutex
	sessions map[string]*execSession
}

type execSession struct {
	envID    int64
	tty      bool
	created  time.Time
	attached bool
}

// CreateExec prepares an interactive terminal (TTY and stdin) in a running
// container. shell defaults to /bin/sh and user to root.
func (s *Service) CreateExec(ctx context.Context, env store.Environment, id, shell, user string) (ExecInstance, error) {
	shell, user = strings.TrimSpace(shell), strings.TrimSpace(user)
	if shell == "" {
		shell = "/bin/sh"
	}
	if user == "" {
		user = "root"
	}
	c, err := s.client(ctx, env, "create exec")
	if err != nil {
		return ExecInstance{}, err
	}
	_, st, err := c.InspectContainer(ctx, id)
	if err != nil {
		return ExecInstance{}, opFault("create exec", err)
	}
	if !st.Running || st.Paused {
		return ExecInstance{}, fault.New(fault.Invalid, "Container is not running")
	}
	execID, err := c.CreateExec(ctx, st.ID, engine.ExecSpec{Cmd: strings.Fields(shell), User: user, Tty: true})
	if err != nil {
		return ExecInstance{}, opFault("create exec", err)
	}
	now := s.now()
	s.execs.mu.Lock()
	for k, v := range s.execs.sessions { // forget sessions never attached in time
		if now.Sub(v.created) > ExecAttachWindow {
			delete(s.execs.sessions, k)
		}
	}
	s.execs.sessions[execID] = &execSession{envID: env.ID, tty: true, created: now}
	s.execs.mu.Unlock()
	return ExecInstance{ExecID: execID, ConnectionInfo: connectionInfo(env)}, nil
}

func connectionInfo(env store.Environment) ConnectionInfo {
	switch env.ConnectionType {
	case engine.Direct, engine.AgentStandard:
		typ := "http"
		if env.Protocol == "https" {
			typ = "https"
		}
		return ConnectionInfo{Type: typ, Host: env.Host, Port: env.Port}
	case engine.AgentEdge:
		return ConnectionInfo{Type: "agent-edge"}
	}
	return ConnectionInfo{Type: "socket"}
}

// AttachExec starts an exec created by CreateExec and returns its stream.
// Each exec can be attached once.
func (s *Service) AttachExec(ctx context.Context, env store.Environment, execID string) (*engine.ExecStream, error) {
	s.execs.mu.Lock()
	sess, ok := s.execs.sessions[execID]
	switch {
	case !ok || sess.envID != env.ID || s.now().Sub(sess.created) > ExecAttachWindow:
		s.execs.mu.Unlock()
		return nil, fault.New(fault.NotFound, "Exec session not found or expired")
	case sess.attached:
		s.execs.mu.Unlock()
		return nil, fault.New(fault.Conflict, "Exec session already attached")
	}
	sess.attached = true
	s.execs.mu.Unlock()

	c, err := s.client(ctx, env, "attach exec")
	if err != nil {
		return nil, err
	}
	stream, err := c.StartExec(ctx, execID, sess.tty)
	if err != nil {
		return nil, opFault("attach exec", err)
	}
	return stream, nil
}

// EndExec forgets an attached exec once its WebSocket has closed.
func (s *Service) EndExec(execID string) {
	s.execs.mu.Lock()
	delete(s.execs.sessions, execID)
	s.execs.mu.Unlock()
}

// ResizeExec sets the terminal size (rows × columns) of an exec.
func (s *Service) ResizeExec(ctx context.Context, env store.Environment, execID, rows, cols string) error {
	h, errH := strconv.ParseUint(rows, 10, 16)
	w, errW := strconv.ParseUint(cols, 10, 16)
	if errH != nil || errW != nil || h == 0 || w == 0 {
		return fault.New(fault.Invalid, "h and w must be positive integers")
	}
	c, err := s.client(ctx, env, "resize exec")
	if err != nil {
		return err
	}
	if err := c.ResizeExec(ctx, execID, uint(h), uint(w)); err != nil {
		if errors.Is(err, engine.ErrNotFound) {
			return fault.Wrap(fault.NotFound, "Exec session not found", err)
		}
		return opFault("resize exec", err)
	}
	return nil
}
