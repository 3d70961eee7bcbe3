package dashboard

import (
	"context"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"sync"
	"testing"

	"github.com/berth-dev/berth/server/internal/scan"
	"github.com/berth-dev/berth/server/internal/stacks"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
	"github.com/berth-dev/berth/shared/engine"
)

// hungEngine listens on a Unix socket, accepts connections and never
// answers: an engine that hangs.
func hungEngine(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "hung.sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return path
}

func TestAHungAndAMissingEngineAreOfflineWithinTheTimeLimit(t *testing.T) {
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "berth.db"), storetest.Box(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	engines := engine.NewManager(log)
	t.Cleanup(engines.Close)
	sc := scan.New(engines, st, log, scan.Config{})
	s := New(st, engines, stacks.New(st, engines, nil, t.TempDir(), log), sc, log)
	// Shorter than the engine's own connection attempt (engine.PingTimeout):
	// the hung engine is cut off by the dashboard's limit, not the ping's.
	s.timeout = engine.PingTimeout / 10

	envs := []store.Environment{
		{Name: "hung", ConnectionType: engine.Socket, SocketPath: hungEngine(t), Port: 2375, Protocol: "http", Icon: "globe", Labels: []string{"a"}},
		{Name: "missing", ConnectionType: engine.Socket, SocketPath: "/nonexistent/docker.sock", Port: 2375, Protocol: "http", Icon: "globe"},
	}
	for i := range envs {
		if err := st.CreateEnvironment(ctx, &envs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := sc.SetSetting(ctx, envs[1].ID, scan.SettingBoth); err != nil {
		t.Fatal(err)
	}
	got := s.All(ctx, envs)
	if len(got) != 2 {
		t.Fatalf("All = %+v", got)
	}
	hung, missing := got[0], got[1]
	if hung.ID != envs[0].ID || hung.Online || hung.Error != "The engine did not answer in time" ||
		len(hung.Labels) != 1 || hung.ScannerEnabled {
		t.Errorf("hung engine = %+v", hung)
	}
	if missing.ID != envs[1].ID || missing.Online || missing.Error == "" || missing.Labels == nil || !missing.ScannerEnabled {
		t.Errorf("missing engine = %+v", missing)
	}
}

func TestCounts(t *testing.T) {
	cs := countContainers([]engine.Container{
		{State: "running", Health: "healthy"}, {State: "running", Health: "unhealthy"}, {State: "exited"},
		{State: "created"}, {State: "dead"}, {State: "paused"}, {State: "restarting"},
	})
	if want := (Containers{Total: 7, Running: 2, Stopped: 3, Paused: 1, Restarting: 1, Unhealthy: 1}); cs != want {
		t.Errorf("containers = %+v, want %+v", cs, want)
	}
	ss := countStacks([]stacks.Entry{{Status: stacks.StatusRunning}, {Status: stacks.StatusPartial},
		{Status: stacks.StatusStopped}, {Status: stacks.StatusCreated}})
	if want := (Stacks{Total: 4, Running: 1, Partial: 1, Stopped: 2}); ss != want {
		t.Errorf("stacks = %+v, want %+v", ss, want)
	}
}
