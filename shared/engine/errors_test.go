package engine

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"

	cerrdefs "github.com/containerd/errdefs"
)

func TestTranslate(t *testing.T) {
	sentinels := []error{ErrNotFound, ErrConflict, ErrInvalid, ErrOffline, ErrUnsupported, ErrNotModified, ErrUnauthorized}
	tests := []struct {
		name string
		err  error
		want error // the one sentinel the result must match; nil for none
	}{
		{"not found", cerrdefs.ErrNotFound.WithMessage("No such container: x"), ErrNotFound},
		{"wrapped not found", fmt.Errorf("inspect: %w", cerrdefs.ErrNotFound.WithMessage("x")), ErrNotFound},
		{"conflict", cerrdefs.ErrConflict.WithMessage("You cannot remove a running container"), ErrConflict},
		{"invalid argument", cerrdefs.ErrInvalidArgument.WithMessage("bad parameter"), ErrInvalid},
		{"not modified", cerrdefs.ErrNotModified.WithMessage("container already started"), ErrNotModified},
		{"unauthenticated", cerrdefs.ErrUnauthenticated.WithMessage("login required"), ErrUnauthorized},
		{"permission denied", cerrdefs.ErrPermissionDenied.WithMessage("denied"), ErrUnauthorized},
		{"connection refused", &net.OpError{Op: "dial", Net: "unix", Err: syscall.ECONNREFUSED}, ErrOffline},
		{"missing socket", fmt.Errorf("dial: %w", syscall.ENOENT), ErrOffline},
		{"other engine failure", cerrdefs.ErrInternal.WithMessage("boom"), nil},
		{"plain error", errors.New("boom"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := translate(tt.err)
			var e *Error
			if !errors.As(got, &e) {
				t.Fatalf("translate(%v) = %#v, want an *Error", tt.err, got)
			}
			if e.Kind != tt.want {
				t.Errorf("Kind = %v, want %v", e.Kind, tt.want)
			}
			for _, s := range sentinels {
				if is := errors.Is(got, s); is != (s == tt.want) {
					t.Errorf("errors.Is(translate(%v), %v) = %v, want %v", tt.err, s, is, !is)
				}
			}
			if !errors.Is(got, tt.err) {
				t.Errorf("translate(%v) lost the original error", tt.err)
			}
			if got.Error() != tt.err.Error() {
				t.Errorf("message = %q, want the engine's %q", got.Error(), tt.err.Error())
			}
		})
	}
}

func TestTranslateKeepsContextErrors(t *testing.T) {
	for _, err := range []error{nil, context.Canceled, context.DeadlineExceeded, fmt.Errorf("get: %w", context.DeadlineExceeded)} {
		if got := translate(err); got != err {
			t.Errorf("translate(%v) = %v, want it unchanged", err, got)
		}
	}
}

func TestOfflineError(t *testing.T) {
	cause := errors.New("dial unix /x: connect: no such file or directory")
	err := fmt.Errorf("list: %w", &OfflineError{EnvID: 4, Cause: cause})
	if !IsOffline(err) || !errors.Is(err, ErrOffline) || !errors.Is(err, cause) {
		t.Errorf("OfflineError chain: IsOffline %v, Is(ErrOffline) %v, Is(cause) %v; want all true",
			IsOffline(err), errors.Is(err, ErrOffline), errors.Is(err, cause))
	}
	if errors.Is(err, ErrNotFound) {
		t.Error("OfflineError matches ErrNotFound")
	}
	if got, want := (&OfflineError{EnvID: 4}).Error(), "environment 4 is offline"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if IsOffline(errors.New("other")) || IsOffline(nil) {
		t.Error("IsOffline is true for an unrelated error")
	}
}
