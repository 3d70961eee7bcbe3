package dashboard

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/activity"
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

// The dashboard carries the stored metrics history of each environment that
// collects metrics, read in one go for many environments (All, Each) or on
// its own (Environment): the same figures either way.
func TestTheMetricsHistoryIsReadForManyEnvironmentsAtOnceOrEachAlone(t *testing.T) {
	ctx := t.Context()
	log := slog.New(slog.DiscardHandler)
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "berth.db"), storetest.Box(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	engines := engine.NewManager(log)
	t.Cleanup(engines.Close)
	sc := scan.New(engines, st, log, scan.Config{})
	s := New(st, engines, stacks.New(st, engines, nil, t.TempDir(), log), sc, log).
		UseActivity(activity.New(activity.Options{Store: st, Engines: engines, Log: log}))
	// Engines that are not there: offline at once; the history is the
	// database's.
	envs := make([]store.Environment, historyBatch+2)
	for i := range envs {
		envs[i] = store.Environment{Name: fmt.Sprintf("env-%d", i), ConnectionType: engine.Socket,
			SocketPath: "/nonexistent/docker.sock", CollectMetrics: i%2 == 0}
		if err := st.CreateEnvironment(ctx, &envs[i]); err != nil {
			t.Fatal(err)
		}
	}
	t0 := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	for _, i := range []int{0, historyBatch} { // one in each batch
		for k := range 2 {
			at := t0.Add(time.Duration(k) * time.Minute)
			if ok, err := st.ClaimMetricsRound(ctx, envs[i].ID, "r", at, 30*time.Second); !ok || err != nil {
				t.Fatalf("claim: %v %v", ok, err)
			}
			m := store.MetricSample{EnvironmentID: envs[i].ID, SampledAt: at, CPUPercent: float64(i + k), MemoryPercent: 50,
				MemoryUsed: 1 << 30, MemoryTotal: 1 << 31}
			top := []store.MetricTop{{ID: "c", Name: "web", CPUPercent: float64(i + k)}}
			if ok, err := st.RecordMetrics(ctx, "r", at, m, top, activity.HistorySize); !ok || err != nil {
				t.Fatalf("record: %v %v", ok, err)
			}
		}
	}
	check := func(how string, got Stats) {
		t.Helper()
		i := int(got.ID - envs[0].ID)
		if i != 0 && i != historyBatch {
			if got.Metrics != nil || got.MetricsHistory != nil || len(got.TopContainers) != 0 {
				t.Errorf("%s: environment %d without samples: metrics %+v, history %+v, top %+v", how, i, got.Metrics,
					got.MetricsHistory, got.TopContainers)
			}
			return
		}
		want := []activity.Point{
			{CPUPercent: float64(i), MemoryPercent: 50, Timestamp: "2026-11-28T10:00:00Z", MemoryUsed: 1 << 30, MemoryTotal: 1 << 31},
			{CPUPercent: float64(i + 1), MemoryPercent: 50, Timestamp: "2026-11-28T10:01:00Z", MemoryUsed: 1 << 30, MemoryTotal: 1 << 31},
		}
		if !reflect.DeepEqual(got.MetricsHistory, want) {
			t.Errorf("%s: environment %d history = %+v, want %+v", how, i, got.MetricsHistory, want)
		}
		if got.Metrics == nil || got.Metrics.CPUPercent != float64(i+1) || got.Metrics.MemoryUsed != 1<<30 {
			t.Errorf("%s: environment %d metrics = %+v", how, i, got.Metrics)
		}
		if len(got.TopContainers) != 1 || got.TopContainers[0].CPUPercent != float64(i+1) {
			t.Errorf("%s: environment %d top = %+v", how, i, got.TopContainers)
		}
	}
	for _, got := range s.All(ctx, envs) {
		check("All", got)
	}
	n := 0
	if err := s.Each(ctx, envs, func(got Stats) error { n++; check("Each", got); return nil }); err != nil || n != len(envs) {
		t.Fatalf("Each: %d of %d, %v", n, len(envs), err)
	}
	check("Environment", s.Environment(ctx, envs[historyBatch]))
	check("Environment", s.Environment(ctx, envs[1]))
}
