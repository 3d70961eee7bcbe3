package containers

import (
	"context"
	"errors"
	"strconv"
	"strings"
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

// ExecCaller is who asks for a terminal session: its creator attaches and
// resizes it; an admin (or anyone when authentication is off) may too.
type ExecCaller struct {
	UserID int64 // 0: no signed-in user
	Admin  bool
}

// mayUse reports whether c may attach or resize a session created by owner.
func (c ExecCaller) mayUse(owner int64) bool { return c.Admin || c.UserID == owner }

// execSessionMaxAge is how long an attached session's row is kept when
// its server stopped without ending it (a session that ends deletes its
// row).
const execSessionMaxAge = 7 * 24 * time.Hour

var (
	errExecNotFound = fault.New(fault.NotFound, "Exec session not found or expired")
	errExecOfOther  = fault.New(fault.Forbidden, "This terminal session belongs to another user")
	errExecAttached = fault.New(fault.Conflict, "Exec session already attached")
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
	// The row also keeps what opening the session needs on a replica that
	// did not create it (a Hawser edge agent's exec is opened at attach).
	sess := store.ExecSession{ExecID: execID, EnvironmentID: env.ID, OwnerID: caller.UserID, TTY: true, CreatedAt: now,
		ContainerID: st.ID, Cmd: strings.Join(strings.Fields(shell), " "), User: user}
	// Sessions never attached in time, and attached ones whose server
	// stopped without ending them, go as a new one comes.
	if err := s.store.CreateExecSession(ctx, &sess, now.Add(-ExecAttachWindow), now.Add(-execSessionMaxAge)); err != nil {
		return ExecInstance{}, opFault("create exec", err)
	}
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
// Each exec can be attached once, by the user who created it or an admin,
// through any server sharing the database.
func (s *Service) AttachExec(ctx context.Context, env store.Environment, execID string, caller ExecCaller) (*engine.ExecStream, error) {
	now := s.now()
	sess, err := s.store.GetExecSession(ctx, execID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, errExecNotFound
	case err != nil:
		return nil, opFault("attach exec", err)
	case sess.EnvironmentID != env.ID || !sess.CreatedAt.After(now.Add(-ExecAttachWindow)):
		return nil, errExecNotFound
	case !caller.mayUse(sess.OwnerID):
		return nil, errExecOfOther
	case sess.AttachedAt != nil:
		return nil, errExecAttached
	}
	if err := s.store.AttachExecSession(ctx, execID, env.ID, now, now.Add(-ExecAttachWindow)); err != nil {
		if errors.Is(err, store.ErrExecAttached) {
			return nil, errExecAttached // another request (through any server) got there first
		}
		return nil, opFault("attach exec", err)
	}

	c, err := s.client(ctx, env, "attach exec")
	if err != nil {
		return nil, err
	}
	c.AdoptExec(execID, pendingExec(sess))
	stream, err := c.StartExec(ctx, execID, sess.TTY)
	if err != nil {
		return nil, opFault("attach exec", err)
	}
	return stream, nil
}

// pendingExec is what sess's row tells about opening it.
func pendingExec(sess store.ExecSession) engine.PendingExec {
	return engine.PendingExec{ContainerID: sess.ContainerID, Rows: sess.Rows, Cols: sess.Cols,
		Spec: engine.ExecSpec{Cmd: strings.Fields(sess.Cmd), User: sess.User, Tty: sess.TTY}}
}

// EndExec forgets an attached exec once its WebSocket has closed.
func (s *Service) EndExec(ctx context.Context, execID string) {
	if err := s.store.DeleteExecSession(ctx, execID); err != nil {
		s.log.Warn("exec session not forgotten", "exec", execID, "err", err)
	}
}

// ResizeExec sets the terminal size (rows × columns) of an exec: one of
// the caller's sessions; an admin's, any exec of the environment.
func (s *Service) ResizeExec(ctx context.Context, env store.Environment, execID, rows, cols string, caller ExecCaller) error {
	h, errH := strconv.ParseUint(rows, 10, 16)
	w, errW := strconv.ParseUint(cols, 10, 16)
	if errH != nil || errW != nil || h == 0 || w == 0 {
		return fault.New(fault.Invalid, "h and w must be positive integers")
	}
	owner := int64(-1)
	sess, err := s.store.GetExecSession(ctx, execID)
	switch {
	case err == nil && sess.EnvironmentID == env.ID:
		owner = sess.OwnerID
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return opFault("resize exec", err)
	}
	hawserEdge := env.ConnectionType == engine.HawserEdge
	switch {
	case caller.Admin && !hawserEdge: // a Hawser edge agent has no exec but Berth's sessions
	case owner < 0:
		return errExecNotFound // not a session made through Berth in this environment
	case !caller.mayUse(owner):
		return errExecOfOther
	}
	c, err := s.client(ctx, env, "resize exec")
	if err != nil {
		return err
	}
	if hawserEdge && sess.AttachedAt == nil {
		// Not opened yet: whichever replica attaches it opens it at this
		// size (the row's).
		if err := s.store.SizeExecSession(ctx, execID, int(h), int(w)); err != nil {
			return opFault("resize exec", err)
		}
		sess.Rows, sess.Cols = int(h), int(w)
		c.AdoptExec(execID, pendingExec(sess))
		return nil
	}
	if err := c.ResizeExec(ctx, execID, uint(h), uint(w)); err != nil {
		if errors.Is(err, engine.ErrNotFound) {
			return fault.Wrap(fault.NotFound, "Exec session not found", err)
		}
		return opFault("resize exec", err)
	}
	return nil
}
