package engine

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/berth-dev/berth/shared/clocktest"
	"github.com/berth-dev/berth/shared/enginetest"
)

// newTestManager returns a Manager whose breaker runs on a fake clock.
func newTestManager(t *testing.T) (*Manager, *clocktest.Clock) {
	t.Helper()
	clk := clocktest.New(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	m := NewManager(slog.New(slog.NewTextHandler(t.Output(), nil)))
	m.now = clk.Now
	t.Cleanup(m.Close)
	return m, clk
}

var localEnv = Endpoint{ID: 1, ConnectionType: Socket, SocketPath: DefaultSocket}

// deadSocket returns a socket path where nothing listens (yet).
func deadSocket(t *testing.T) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "none.sock")
}

// closingListener accepts connections on a unix socket and closes them at
// once: an engine that is there but never answers a request.
func closingListener(t *testing.T, path string) *atomic.Int64 {
	t.Helper()
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	var n atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Close()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
	})
	return &n
}

type onlineState struct{ Online, Known bool }

func online(m *Manager, id int64) onlineState {
	o, k := m.Online(id)
	return onlineState{o, k}
}

func TestDeadSocketIsOfflineAndBreakerSkipsRedialUntilBackoffEnds(t *testing.T) {
	enginetest.Require(t)
	m, clk := newTestManager(t)
	path := deadSocket(t)
	env := Endpoint{ID: 7, ConnectionType: Socket, SocketPath: path}

	if _, err := m.Test(t.Context(), env); !IsOffline(err) {
		t.Fatalf("Test(dead socket) = %v, want an offline error", err)
	}
	if got, want := online(m, 7), (onlineState{}); got != want {
		t.Fatalf("Online after Test (which bypasses the cache) = %+v, want %+v", got, want)
	}
	c, err := m.Client(t.Context(), env)
	if !IsOffline(err) || c != nil {
		t.Fatalf("Client(dead socket) = %v, %v; want nil and an offline error", c, err)
	}
	var oe *OfflineError
	if !errors.As(err, &oe) || oe.EnvID != 7 || oe.Cause == nil {
		t.Fatalf("Client(dead socket) error = %#v, want *OfflineError for env 7 with a cause", err)
	}
	if got, want := online(m, 7), (onlineState{Online: false, Known: true}); got != want {
		t.Fatalf("Online after failure = %+v, want %+v", got, want)
	}

	// The engine appears, but the breaker is open: no attempt is made.
	ln, _ := serveEngineAt(t, path)
	clk.Advance(breakerMin - time.Nanosecond)
	if _, err := m.Client(t.Context(), env); !IsOffline(err) {
		t.Fatalf("Client within the back-off = %v, want an offline error", err)
	}
	if n := ln.accepted.Load(); n != 0 {
		t.Fatalf("Client within the back-off dialed the engine %d times, want 0", n)
	}

	clk.Advance(time.Nanosecond)
	c, err = m.Client(t.Context(), env)
	if err != nil {
		t.Fatalf("Client after the back-off: %v", err)
	}
	if ln.accepted.Load() == 0 {
		t.Fatal("Client after the back-off did not dial the engine")
	}
	if _, err := c.ListContainers(t.Context(), true); err != nil {
		t.Fatalf("ListContainers after reconnecting: %v", err)
	}
	if got, want := online(m, 7), (onlineState{Online: true, Known: true}); got != want {
		t.Fatalf("Online after reconnecting = %+v, want %+v", got, want)
	}
}

func TestBreakerBackoffDoublesUpToItsMaximum(t *testing.T) {
	m, clk := newTestManager(t)
	path := deadSocket(t)
	dials := closingListener(t, path)
	env := Endpoint{ID: 3, ConnectionType: Socket, SocketPath: path}

	// Each failed attempt opens the breaker for 2s, 4s, 8s, 16s, then 30s.
	steps := []struct {
		advance  time.Duration
		wantDial bool
	}{
		{0, true},
		{2*time.Second - 1, false}, {1, true},
		{4*time.Second - 1, false}, {1, true},
		{8*time.Second - 1, false}, {1, true},
		{16*time.Second - 1, false}, {1, true},
		{30*time.Second - 1, false}, {1, true},
		{30*time.Second - 1, false}, {1, true},
		{0, false},
	}
	var elapsed time.Duration
	for i, s := range steps {
		clk.Advance(s.advance)
		elapsed += s.advance
		before := dials.Load()
		_, err := m.Client(t.Context(), env)
		if !IsOffline(err) {
			t.Fatalf("step %d (t=%v): Client = %v, want an offline error", i, elapsed, err)
		}
		if dialed := dials.Load() > before; dialed != s.wantDial {
			t.Errorf("step %d (t=%v): dialed = %v, want %v", i, elapsed, dialed, s.wantDial)
		}
	}
}

func TestHangingEngineIsIsolatedFromOtherEnvironments(t *testing.T) {
	enginetest.Require(t)
	m, clk := newTestManager(t)

	// An engine that accepts connections and never answers.
	hanging := enginetest.NewHanging(t)
	_, portText, _ := net.SplitHostPort(hanging.Addr)
	port, _ := strconv.Atoi(portText)
	hang := Endpoint{ID: 9, ConnectionType: Direct, Host: "127.0.0.1",
		Port: port, Protocol: "http"}

	type result struct {
		err     error
		elapsed time.Duration
	}
	connect := func(ctx context.Context) <-chan result {
		ch := make(chan result, 1)
		go func() {
			start := time.Now()
			_, err := m.Client(ctx, hang)
			ch <- result{err, time.Since(start)}
		}()
		return ch
	}
	waitAccept := func() {
		t.Helper()
		select {
		case <-hanging.Accepted:
		case <-time.After(2 * PingTimeout):
			t.Fatal("the hanging engine was never dialed")
		}
	}

	first := connect(t.Context())
	waitAccept()

	// The local engine answers while the other environment's attempt hangs.
	local, err := m.Client(t.Context(), localEnv)
	if err != nil {
		t.Fatalf("Client(local) while another environment hangs: %v", err)
	}
	if _, err := local.ListContainers(t.Context(), true); err != nil {
		t.Fatalf("ListContainers(local) while another environment hangs: %v", err)
	}
	select {
	case r := <-first:
		t.Fatalf("the hanging attempt ended (%v after %v) before the local call completed", r.err, r.elapsed)
	default:
	}

	// It holds the connection without answering: busy, not offline (the
	// breaker stays closed). Telling the two apart took one more connection.
	r := <-first
	if !errors.Is(r.err, ErrBusy) || IsOffline(r.err) {
		t.Fatalf("Client(hanging) = %v, want busy and not offline", r.err)
	}
	if r.elapsed < PingTimeout || r.elapsed > 3*PingTimeout {
		t.Errorf("Client(hanging) took %v, want about PingTimeout (%v)", r.elapsed, PingTimeout)
	}
	waitAccept() // the reachability probe
	if n := hanging.Count(); n != 2 {
		t.Fatalf("connections after the first attempt = %d, want 2 (the ping and the reachability probe)", n)
	}
	if got, want := online(m, 9), (onlineState{Online: false, Known: true}); got != want {
		t.Errorf("Online(hanging) = %+v, want %+v", got, want)
	}
	if got, want := online(m, 1), (onlineState{Online: true, Known: true}); got != want {
		t.Errorf("Online(local) = %+v, want %+v", got, want)
	}

	// Within the busy window callers are told so without a new dial.
	start := time.Now()
	if _, err := m.Client(t.Context(), hang); !errors.Is(err, ErrBusy) {
		t.Fatalf("second Client(hanging) = %v, want busy", err)
	}
	if d := time.Since(start); d >= PingTimeout {
		t.Errorf("second Client(hanging) took %v, want an immediate answer", d)
	}
	if n := hanging.Count(); n != 2 {
		t.Fatalf("connections after the second attempt = %d, want still 2", n)
	}

	// After the window the next call dials again.
	clk.Advance(busyFor)
	ctx, cancel := context.WithCancel(t.Context())
	third := connect(ctx)
	waitAccept()
	cancel()
	if r := <-third; r.err == nil {
		t.Fatal("Client(hanging) after the busy window succeeded")
	}
	if n := hanging.Count(); n != 3 {
		t.Fatalf("connections after the busy window = %d, want 3", n)
	}

	// A caller that leaves before the engine answers says nothing about the
	// engine: the breaker stays closed, so the next callers try the engine
	// again (and run out of their own time) instead of being refused at once.
	// (They may reuse a connection the transport kept from a caller that left
	// while it was being dialed, so the test counts attempts, not dials.)
	for i := range 2 {
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		r := <-connect(ctx)
		cancel()
		if IsOffline(r.err) || !errors.Is(r.err, context.DeadlineExceeded) {
			t.Fatalf("Client(hanging) %d after a caller left = %v, want the caller's own deadline, not an offline refusal (breaker not tripped)", i+1, r.err)
		}
	}
	if got, want := online(m, 9), (onlineState{Online: false, Known: true}); got != want {
		t.Errorf("Online(hanging) after callers left = %+v, want %+v", got, want)
	}
}

func TestChangedEnvironmentRebuildsClient(t *testing.T) {
	enginetest.Require(t)
	tests := []struct {
		name       string
		change     func(m *Manager, env Endpoint) Endpoint
		wantOnline bool
	}{
		{
			name: "new UpdatedAt and socket path",
			change: func(_ *Manager, env Endpoint) Endpoint {
				env.SocketPath = DefaultSocket
				env.UpdatedAt = env.UpdatedAt.Add(time.Second)
				return env
			},
			wantOnline: true,
		},
		{
			name: "Forget then new socket path",
			change: func(m *Manager, env Endpoint) Endpoint {
				m.Forget(env.ID)
				if got, want := online(m, env.ID), (onlineState{}); got != want {
					t.Errorf("Online after Forget = %+v, want %+v", got, want)
				}
				env.SocketPath = DefaultSocket
				return env
			},
			wantOnline: true,
		},
		{
			name: "new socket path without new UpdatedAt keeps the cached client",
			change: func(_ *Manager, env Endpoint) Endpoint {
				env.SocketPath = DefaultSocket
				return env
			},
			wantOnline: false,
		},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, _ := newTestManager(t)
			id := int64(20 + i)
			env := Endpoint{ID: id, ConnectionType: Socket, SocketPath: deadSocket(t),
				UpdatedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
			if _, err := m.Client(t.Context(), env); !IsOffline(err) {
				t.Fatalf("Client(dead socket) = %v, want an offline error", err)
			}

			env = tt.change(m, env)
			c, err := m.Client(t.Context(), env)
			if tt.wantOnline {
				if err != nil {
					t.Fatalf("Client after the change: %v", err)
				}
				if _, err := c.ListContainers(t.Context(), false); err != nil {
					t.Fatalf("ListContainers after the change: %v", err)
				}
			} else if !IsOffline(err) {
				t.Fatalf("Client after the change = %v, want an offline error", err)
			}
			if got, want := online(m, id), (onlineState{Online: tt.wantOnline, Known: true}); got != want {
				t.Errorf("Online after the change = %+v, want %+v", got, want)
			}

			m.Forget(id)
			if got, want := online(m, id), (onlineState{}); got != want {
				t.Errorf("Online after the final Forget = %+v, want %+v", got, want)
			}
		})
	}
}

func TestEngineVanishingAfterConnectOpensBreaker(t *testing.T) {
	enginetest.Require(t)
	m, clk := newTestManager(t)
	path := filepath.Join(t.TempDir(), "engine.sock")
	_, stop := serveEngineAt(t, path)
	env := Endpoint{ID: 5, ConnectionType: Socket, SocketPath: path}

	c, err := m.Client(t.Context(), env)
	if err != nil {
		t.Fatalf("Client: %v", err)
	}
	if _, err := c.ListContainers(t.Context(), false); err != nil {
		t.Fatalf("ListContainers while the engine is up: %v", err)
	}

	stop()
	_, err = c.ListContainers(t.Context(), false)
	if !IsOffline(err) {
		t.Fatalf("ListContainers after the engine vanished = %v, want an offline error", err)
	}
	if got, want := online(m, 5), (onlineState{Online: false, Known: true}); got != want {
		t.Errorf("Online after the engine vanished = %+v, want %+v", got, want)
	}

	ln, _ := serveEngineAt(t, path)
	if _, err := m.Client(t.Context(), env); !IsOffline(err) {
		t.Fatalf("Client within the back-off = %v, want an offline error", err)
	}
	if n := ln.accepted.Load(); n != 0 {
		t.Fatalf("Client within the back-off dialed %d times, want 0", n)
	}
	clk.Advance(breakerMin)
	if _, err := m.Client(t.Context(), env); err != nil {
		t.Fatalf("Client after the back-off: %v", err)
	}
	if got, want := online(m, 5), (onlineState{Online: true, Known: true}); got != want {
		t.Errorf("Online after reconnecting = %+v, want %+v", got, want)
	}
}

func TestInvalidEnvironmentIsRejectedBeforeDialing(t *testing.T) {
	tests := []struct {
		name string
		env  Endpoint
		want error
	}{
		{"direct without host", Endpoint{ID: 1, ConnectionType: Direct}, ErrInvalid},
		{"unknown connection type", Endpoint{ID: 1, ConnectionType: "carrier-pigeon"}, ErrInvalid},
		{"agent", Endpoint{ID: 1, ConnectionType: AgentEdge}, ErrUnsupported},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, _ := newTestManager(t)
			_, err := m.Client(t.Context(), tt.env)
			if !errors.Is(err, tt.want) || IsOffline(err) {
				t.Errorf("Client = %v, want %v (and not offline)", err, tt.want)
			}
			if _, err := m.Test(t.Context(), tt.env); !errors.Is(err, tt.want) {
				t.Errorf("Test = %v, want %v", err, tt.want)
			}
			if got, want := online(m, tt.env.ID), (onlineState{}); got != want {
				t.Errorf("Online = %+v, want %+v", got, want)
			}
		})
	}
}
