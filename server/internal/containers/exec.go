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
// attached at most once, by the environment and the user that created it.
type execRegistry struct {
	mu       sync.Mutex
	sessions map[string]*execSession
}

type execSession struct {
	envID    int64
	owner    int64 // the user who created it (0: no signed-in user)
	tty      bool
	created  time.Time
	attached bool
}

// ExecCaller is who asks for a terminal session: its creator attaches and
// resizes it; an admin (or anyone when authentication is off) may too.
type ExecCaller struct {
	UserID int64 // 0: no signed-in user
	Admin  bool
}

// mayUse reports whether c may attach or resize a session created by owner.
func (c ExecCaller) mayUse(owner int64) bool { return c.Admin || c.UserID == owner }

var (
	errExecNotFound = fault.New(fault.NotFound, "Exec session not found or expired")
	errExecOfOther  = fault.New(fault.Forbidden, "This terminal session belongs to another user")
)

// CreateExec prepares an interactive terminal (TTY and stdin) in a running
// container, for caller alone. shell defaults to /bin/sh and user to root.
func (s *Service) CreateExec(ctx context.Context, env store.Environment, id, shell, user string, caller ExecCaller) (ExecInstance, error) {
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
	s.execs.sessions[execID] = &execSession{envID: env.ID, owner: caller.UserID, tty: true, created: now}
	s.execs.mu.Unlock()
	return ExecInstance{ExecID: execID, ConnectionInfo: connectionInfo(env)}, nil
}

func connectionInfo(env store.Environment) ConnectionInfo {
	switch env.ConnectionType {
	case engine.Direct, engine.AgentStandard, engine.HawserStandard:
		typ := "http"
		if env.Protocol == "https" {
			typ = "https"
		}
		return ConnectionInfo{Type: typ, Host: env.Host, Port: env.Port}
	case engine.AgentEdge, engine.HawserEdge:
		return ConnectionInfo{Type: "agent-edge"}
	}
	return ConnectionInfo{Type: "socket"}
}

// AttachExec starts an exec created by CreateExec and returns its stream.
// Each exec can be attached once, by the user who created it or an admin.
func (s *Service) AttachExec(ctx context.Context, env store.Environment, execID string, caller ExecCaller) (*engine.ExecStream, error) {
	s.execs.mu.Lock()
	sess, ok := s.execs.sessions[execID]
	switch {
	case !ok || sess.envID != env.ID || s.now().Sub(sess.created) > ExecAttachWindow:
		s.execs.mu.Unlock()
		return nil, errExecNotFound
	case !caller.mayUse(sess.owner):
		s.execs.mu.Unlock()
		return nil, errExecOfOther
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

// ResizeExec sets the terminal size (rows × columns) of an exec: one of
// the caller's sessions; an admin's, any exec of the environment.
func (s *Service) ResizeExec(ctx context.Context, env store.Environment, execID, rows, cols string, caller ExecCaller) error {
	h, errH := strconv.ParseUint(rows, 10, 16)
	w, errW := strconv.ParseUint(cols, 10, 16)
	if errH != nil || errW != nil || h == 0 || w == 0 {
		return fault.New(fault.Invalid, "h and w must be positive integers")
	}
	s.execs.mu.Lock()
	sess, ok := s.execs.sessions[execID]
	owner := int64(-1)
	if ok && sess.envID == env.ID {
		owner = sess.owner
	}
	s.execs.mu.Unlock()
	switch {
	case caller.Admin:
	case owner < 0:
		return errExecNotFound // not a session made through Berth in this environment
	case !caller.mayUse(owner):
		return errExecOfOther
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
