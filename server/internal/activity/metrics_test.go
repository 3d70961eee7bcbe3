package activity_test

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/berth-dev/berth/server/internal/activity"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/enginetest"
)

const sampleEvery = 30 * time.Second

// countingEngine is a Unix socket in front of the test engine that counts
// the container lists it passes on: one per sample taken of it.
func countingEngine(t *testing.T) (socket string, lists *atomic.Int32) {
	t.Helper()
	lists = &atomic.Int32{}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) { r.Out.URL.Scheme, r.Out.URL.Host = "http", "docker" },
		Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", enginetest.Socket)
		}},
	}
	socket = filepath.Join(t.TempDir(), "engine.sock")
	ln, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && filepath.Base(r.URL.Path) == "json" && filepath.Base(filepath.Dir(r.URL.Path)) == "containers" {
			lists.Add(1)
		}
		proxy.ServeHTTP(w, r)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return socket, lists
}

// replicaSampler is the metrics sampler of one replica over s (Sample is
// called by the test; nothing runs in the background), on the clock now.
func replicaSampler(t *testing.T, s *store.Store, id string, now func() time.Time, elsewhere func(int64) bool) *activity.Service {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	engines := engine.NewManager(log)
	t.Cleanup(engines.Close)
	return activity.New(activity.Options{Store: s, Engines: engines, Log: log, SampleEvery: sampleEvery, Now: now,
		Elsewhere: elsewhere, Replica: id})
}

// fakeClock is a clock the test sets.
type fakeClock struct{ ns atomic.Int64 }

func (c *fakeClock) set(t time.Time)     { c.ns.Store(t.UnixNano()) }
func (c *fakeClock) now() time.Time      { return time.Unix(0, c.ns.Load()).UTC() }
func (c *fakeClock) add(d time.Duration) { c.ns.Add(int64(d)) }

// sampleTogether runs Sample of every sampler at once and returns which
// ones sampled.
func sampleTogether(t *testing.T, env store.Environment, samplers ...*activity.Service) []bool {
	t.Helper()
	out := make([]bool, len(samplers))
	var wg sync.WaitGroup
	for i, a := range samplers {
		wg.Go(func() {
			ok, err := a.Sample(t.Context(), env)
			if err != nil {
				t.Errorf("sampler %d: %v", i, err)
			}
			out[i] = ok
		})
	}
	wg.Wait()
	return out
}

// Two replicas on one database, both sampling the same environment each
// round: the engine is sampled once per round, by one of them, and both
// answer the same history.
func TestTwoReplicasSampleAnEnvironmentOncePerRoundAndShareItsHistory(t *testing.T) {
	enginetest.Require(t)
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		socket, lists := countingEngine(t)
		env := store.Environment{Name: "local", ConnectionType: "socket", SocketPath: socket, CollectMetrics: true}
		if err := s.CreateEnvironment(t.Context(), &env); err != nil {
			t.Fatal(err)
		}
		clock := &fakeClock{}
		clock.set(time.Now().Truncate(time.Second))
		a := replicaSampler(t, s, "replica-a", clock.now, nil)
		b := replicaSampler(t, s, "replica-b", clock.now, nil)
		const rounds = 3
		for round := range rounds {
			got := sampleTogether(t, env, a, b)
			if got[0] == got[1] {
				t.Fatalf("round %d: replica a sampled %v, b %v; want exactly one", round, got[0], got[1])
			}
			clock.add(sampleEvery)
		}
		if n := lists.Load(); n != rounds {
			t.Errorf("the engine's containers were listed %d times in %d rounds; want once per round", n, rounds)
		}
		ha, err := a.History(t.Context(), env.ID)
		if err != nil {
			t.Fatal(err)
		}
		hb, err := b.History(t.Context(), env.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(ha, hb); diff != "" {
			t.Errorf("the two replicas' histories differ (-a +b):\n%s", diff)
		}
		if len(ha.Points) != rounds || ha.Top == nil {
			t.Fatalf("history = %+v; want %d points and a ranking", ha, rounds)
		}
		for i, p := range ha.Points {
			at, err := time.Parse(time.RFC3339, p.Timestamp)
			if err != nil || p.MemoryTotal == 0 || (i > 0 && !at.After(mustParse(t, ha.Points[i-1].Timestamp))) {
				t.Errorf("point %d = %+v (%v)", i, p, err)
			}
		}
	})
}

func mustParse(t *testing.T, s string) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return at
}

// An environment whose agent another replica holds is not sampled here
// (not even claimed: the holder samples it); a replica that stops sampling
// is taken over by another once it has missed a round; a replica whose
// agent moved away hands its rounds over to the agent's new holder.
func TestAnEnvironmentHeldElsewhereIsNotSampledAndAStoppedSamplerIsTakenOver(t *testing.T) {
	enginetest.Require(t)
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		socket, lists := countingEngine(t)
		env := store.Environment{Name: "local", ConnectionType: "socket", SocketPath: socket, CollectMetrics: true}
		if err := s.CreateEnvironment(t.Context(), &env); err != nil {
			t.Fatal(err)
		}
		clock := &fakeClock{}
		t0 := time.Now().Truncate(time.Second)
		clock.set(t0)
		for _, id := range []string{"replica-a", "replica-b"} { // both live throughout
			err := s.RenewReplica(t.Context(), store.Replica{ID: id, HTTPURL: "http://" + id, RelayAddr: id,
				StartedAt: t0, RenewedAt: t0, ExpiresAt: t0.Add(time.Hour)})
			if err != nil {
				t.Fatal(err)
			}
		}
		var away atomic.Bool
		away.Store(true)
		a := replicaSampler(t, s, "replica-a", clock.now, func(id int64) bool { return id == env.ID && away.Load() })
		b := replicaSampler(t, s, "replica-b", clock.now, nil)

		// a first: it leaves the round to b, which holds the agent.
		if ok, err := a.Sample(t.Context(), env); ok || err != nil {
			t.Fatalf("an environment held elsewhere was sampled: %v, %v", ok, err)
		}
		if ok, err := b.Sample(t.Context(), env); !ok || err != nil {
			t.Fatalf("the holder did not sample: %v, %v", ok, err)
		}
		// The agent comes to a; b still samples, round after round.
		away.Store(false)
		clock.add(sampleEvery)
		if got := sampleTogether(t, env, a, b); got[0] || !got[1] {
			t.Fatalf("second round: a sampled %v, b %v; want b, the live holder", got[0], got[1])
		}
		// b stops: a takes over once b has missed a round.
		clock.add(sampleEvery)
		if ok, err := a.Sample(t.Context(), env); ok || err != nil {
			t.Fatalf("a took b's round while b may still sample it: %v, %v", ok, err)
		}
		clock.add(sampleEvery / 4)
		if ok, err := a.Sample(t.Context(), env); !ok || err != nil {
			t.Fatalf("a did not take over the rounds b missed: %v, %v", ok, err)
		}
		// The agent moves from a to b, both live: a hands its rounds over,
		// and b takes the next one (without waiting for a to miss one).
		away.Store(true)
		clock.add(sampleEvery)
		if ok, err := a.Sample(t.Context(), env); ok || err != nil {
			t.Fatalf("a sampled an environment whose agent moved away: %v, %v", ok, err)
		}
		if ok, err := b.Sample(t.Context(), env); !ok || err != nil {
			t.Fatalf("b, the agent's new holder, did not take the round a handed over: %v, %v", ok, err)
		}
		if n := lists.Load(); n != 4 {
			t.Errorf("the engine's containers were listed %d times; want 4 (one per sample)", n)
		}
		h, err := a.History(t.Context(), env.ID)
		if err != nil || len(h.Points) != 4 {
			t.Errorf("history = %+v, %v; want 4 points", h, err)
		}
	})
}

// An edge environment's round is claimed only once its sample is taken: an
// agent that cannot answer costs the database nothing, and the round stays
// free.
func TestAnEdgeSampleThatFailsClaimsNoRound(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		env := store.Environment{Name: "edge", ConnectionType: "agent-edge", CollectMetrics: true}
		if err := s.CreateEnvironment(t.Context(), &env); err != nil {
			t.Fatal(err)
		}
		clock := &fakeClock{}
		clock.set(time.Now().Truncate(time.Second))
		a := replicaSampler(t, s, "replica-a", clock.now, nil) // no agent behind the environment
		if ok, err := a.Sample(t.Context(), env); ok || err == nil {
			t.Fatalf("Sample of an edge environment without its agent = %v, %v", ok, err)
		}
		claimed, err := s.ClaimMetricsRound(t.Context(), env.ID, "replica-b", clock.now(), sampleEvery)
		if err != nil || !claimed {
			t.Fatalf("the round after a failed edge sample: claimed %v, %v; want it free", claimed, err)
		}
	})
}
