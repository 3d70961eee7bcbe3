package engine

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"
)

// Errors returned by Client methods, wrapped with the engine's own message.
var (
	ErrNotFound     = errors.New("engine: not found")
	ErrConflict     = errors.New("engine: conflict")
	ErrInvalid      = errors.New("engine: invalid argument")
	ErrOffline      = errors.New("engine: offline")
	ErrBusy         = errors.New("engine: busy")
	ErrUnsupported  = errors.New("engine: unsupported connection type")
	ErrNotModified  = errors.New("engine: not modified")
	ErrUnauthorized = errors.New("engine: unauthorized")
)

// ErrWrongState is a conflict with an object's state: pausing a container
// that is paused or not running, unpausing one that is not paused. It is
// also ErrConflict.
var ErrWrongState = fmt.Errorf("%w: the object is not in the state the operation needs", ErrConflict)

// Error is an engine failure: the sentinel kind plus the engine's message.
type Error struct {
	Kind error  // one of the sentinels above, or nil for other failures
	Msg  string // the engine's own message
	err  error
}

func (e *Error) Error() string { return e.Msg }

// Unwrap exposes both the kind and the original error to errors.Is / As.
func (e *Error) Unwrap() []error {
	if e.Kind == nil {
		return []error{e.err}
	}
	return []error{e.Kind, e.err}
}

// translate turns an SDK error into an *Error with a sentinel kind.
func translate(err error) error {
	if err == nil {
		return nil
	}
	var kind error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return err
	case cerrdefs.IsNotFound(err):
		kind = ErrNotFound
	case cerrdefs.IsConflict(err):
		kind = ErrConflict
	case cerrdefs.IsInvalidArgument(err):
		kind = ErrInvalid
	case cerrdefs.IsNotModified(err):
		kind = ErrNotModified
	case cerrdefs.IsUnauthorized(err), cerrdefs.IsPermissionDenied(err):
		kind = ErrUnauthorized
	case isConnectionError(err):
		kind = ErrOffline
	}
	return &Error{Kind: kind, Msg: err.Error(), err: err}
}

// stateConflict makes err ErrWrongState when the engine refused an operation
// for the object's state: a conflict, or (engines before API 1.42 answer
// 500) a message containing one of says.
func stateConflict(err error, says ...string) error {
	var e *Error
	if !errors.As(err, &e) || errors.Is(err, ErrOffline) {
		return err
	}
	if errors.Is(err, ErrConflict) {
		return reclassify(err, ErrWrongState)
	}
	if e.Kind == nil {
		for _, s := range says {
			if strings.Contains(e.Msg, s) {
				return reclassify(err, ErrWrongState)
			}
		}
	}
	return err
}

// isConnectionError reports whether err means the engine could not be reached.
func isConnectionError(err error) bool {
	var ce *connectError
	if client.IsErrConnectionFailed(err) || errors.As(err, &ce) {
		return true
	}
	var nerr *net.OpError
	if errors.As(err, &nerr) {
		return true
	}
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT) ||
		errors.Is(err, os.ErrDeadlineExceeded)
}

// unsupported is returned for connection types this build cannot dial yet.
func unsupported(connType string) error {
	return fmt.Errorf("%w: %s", ErrUnsupported, connType)
}

// Details is the client-facing detail of an engine failure: what an offline
// environment or a timeout means, else the engine's own message without the
// SDK's prefix.
func Details(err error) string {
	switch {
	case errors.Is(err, ErrAgentAbsent):
		return ErrAgentAbsent.Error()
	case errors.Is(err, ErrOffline):
		return "Environment is offline"
	case errors.Is(err, ErrBusy):
		return "The engine is busy: it accepts connections but did not answer in time. Try again shortly"
	case errors.Is(err, context.DeadlineExceeded):
		return "The engine did not answer in time"
	}
	var e *Error
	if errors.As(err, &e) {
		return strings.TrimPrefix(e.Msg, "Error response from daemon: ")
	}
	return err.Error()
}
