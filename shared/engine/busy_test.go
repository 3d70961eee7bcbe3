package engine

import (
	"errors"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/berth-dev/berth/shared/enginetest"
)

func TestEngineThatHoldsTheConnectionWithoutAnsweringIsBusyNotOffline(t *testing.T) {
	m, _ := newTestManager(t)
	hanging := enginetest.NewHanging(t) // what a stopped or overloaded dockerd looks like from outside
	host, port, _ := net.SplitHostPort(hanging.Addr)
	p, _ := strconv.Atoi(port)
	env := Endpoint{ID: 9, ConnectionType: Direct, Host: host, Port: p}

	_, err := m.Client(t.Context(), env)
	if !errors.Is(err, ErrBusy) || IsOffline(err) {
		t.Fatalf("Client(silent engine) = %v, want busy and not offline", err)
	}
	if secs, ok := RetryAfter(err); !ok || secs < 1 {
		t.Fatalf("RetryAfter(%v) = %d, %v; want at least 1 s", err, secs, ok)
	}
	if h := m.Health(9); h.Online || h.LastError != nil || !h.RetryAt.IsZero() {
		t.Fatalf("Health after a busy ping = %+v: the breaker must stay closed", h)
	}
	if Details(err) == "Environment is offline" {
		t.Fatalf("Details(busy) = %q", Details(err))
	}

	// Callers right after are told "busy" at once instead of each waiting out
	// a ping of its own.
	start := time.Now()
	if _, err := m.Client(t.Context(), env); !errors.Is(err, ErrBusy) {
		t.Fatalf("second Client = %v, want busy", err)
	}
	if d := time.Since(start); d >= PingTimeout {
		t.Fatalf("second Client took %s: it pinged again instead of answering busy at once", d)
	}

}
