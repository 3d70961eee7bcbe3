package engine

import (
	"errors"
	"net"
	"sync"
	"testing"
	"time"
)

// silentListener accepts connections on a unix socket and holds them open
// without ever answering: an engine that is there but too busy to answer
// (what a stopped or overloaded dockerd looks like from outside).
func silentListener(t *testing.T, path string) {
	t.Helper()
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	var mu sync.Mutex
	var held []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	})
}

func TestEngineThatHoldsTheConnectionWithoutAnsweringIsBusyNotOffline(t *testing.T) {
	m, _ := newTestManager(t)
	path := deadSocket(t)
	silentListener(t, path)
	env := Endpoint{ID: 9, ConnectionType: Socket, SocketPath: path}

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
