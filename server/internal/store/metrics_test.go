package store_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
)

const metricsInterval = 30 * time.Second

// claim is ClaimMetricsRound at the test's interval, failing the test on an
// error.
func claim(t *testing.T, s *store.Store, envID int64, replica string, at time.Time) bool {
	t.Helper()
	ok, err := s.ClaimMetricsRound(t.Context(), envID, replica, at, metricsInterval)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

// liveReplica writes a replica's row, live until until.
func liveReplica(t *testing.T, s *store.Store, id string, at, until time.Time) {
	t.Helper()
	err := s.RenewReplica(t.Context(), store.Replica{ID: id, HTTPURL: "http://" + id + ":3000", RelayAddr: id + ":3001",
		StartedAt: at, RenewedAt: at, ExpiresAt: until})
	if err != nil {
		t.Fatal(err)
	}
}

// Replicas sharing the database claim each round of an environment once:
// of many concurrent claims, one wins; the holder keeps the environment
// round after round; another live replica takes it over only once the
// holder has missed a round (an interval and a quarter), or half an
// interval after the last round when the holder's replica row is gone or
// the holder released its rounds.
func TestMetricsRoundIsClaimedOnceAcrossReplicas(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		env := createEnvironment(t, s, "sampled")
		t0 := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
		liveReplica(t, s, "a", t0, t0.Add(time.Hour))
		liveReplica(t, s, "b", t0, t0.Add(time.Hour))

		// Round 1: eight claims of each replica at once, one winner.
		var won atomic.Int32
		var winner atomic.Value
		var wg sync.WaitGroup
		for i := range 16 {
			id := []string{"a", "b"}[i%2]
			wg.Go(func() {
				ok, err := s.ClaimMetricsRound(t.Context(), env.ID, id, t0, metricsInterval)
				if err != nil {
					t.Error(err)
				}
				if ok {
					won.Add(1)
					winner.Store(id)
				}
			})
		}
		wg.Wait()
		if n := won.Load(); n != 1 {
			t.Fatalf("%d concurrent claims of one round won; want 1", n)
		}
		holder := winner.Load().(string)
		other := map[string]string{"a": "b", "b": "a"}[holder]

		// The holder's next round; the other, a moment later, finds it taken.
		t1 := t0.Add(metricsInterval)
		if !claim(t, s, env.ID, holder, t1) {
			t.Fatal("the holder did not get its next round")
		}
		if claim(t, s, env.ID, holder, t1.Add(time.Second)) {
			t.Error("the holder got a second round a second after the first")
		}
		if claim(t, s, env.ID, other, t1.Add(metricsInterval*3/4)) {
			t.Error("the other replica took the round of a live holder that has not missed one")
		}
		// The holder misses its round: the other takes the environment over,
		// and keeps it.
		t2 := t1.Add(metricsInterval + metricsInterval/4)
		if !claim(t, s, env.ID, other, t2) {
			t.Fatal("the other replica did not take over a round the holder missed")
		}
		if claim(t, s, env.ID, holder, t2.Add(metricsInterval/2)) {
			t.Error("the former holder took back a round half an interval after the new holder's")
		}
		// The new holder's replica dies (its row expires): the former holder
		// takes the next round after half an interval, without waiting for
		// the holder to miss one.
		liveReplica(t, s, other, t0, t2.Add(time.Second))
		t3 := t2.Add(metricsInterval / 2)
		if !claim(t, s, env.ID, holder, t3) {
			t.Error("the round of a dead replica was not taken over half an interval later")
		}
		// Both live again: the holder hands its rounds over (its agent
		// moved), and the other takes the next one half an interval later.
		// A replica that does not hold the rounds hands nothing over.
		liveReplica(t, s, other, t0, t3.Add(time.Hour))
		if err := s.ReleaseMetricsRounds(t.Context(), env.ID, other); err != nil {
			t.Fatal(err)
		}
		if claim(t, s, env.ID, other, t3.Add(metricsInterval/2)) {
			t.Error("the rounds of a live holder were taken after a release by another replica")
		}
		if err := s.ReleaseMetricsRounds(t.Context(), env.ID, holder); err != nil {
			t.Fatal(err)
		}
		if claim(t, s, env.ID, other, t3.Add(metricsInterval/2-time.Second)) {
			t.Error("released rounds were taken less than half an interval after the last one")
		}
		if !claim(t, s, env.ID, other, t3.Add(metricsInterval/2)) {
			t.Error("released rounds were not taken half an interval after the last one")
		}
	})
}

// A sample is stored only while its round is its replica's; the newest keep
// samples are kept; the history goes when the environment's metrics are
// switched off, and with the environment.
func TestMetricHistoryIsBoundedAndGoesWithTheEnvironmentOrItsMetrics(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		env := createEnvironment(t, s, "sampled")
		quiet := createEnvironment(t, s, "quiet")
		t0 := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
		const keep = 120 // the activity collector's HistorySize
		record := func(replica string, claimed, at time.Time, cpu float64, top []store.MetricTop) bool {
			t.Helper()
			ok, err := s.RecordMetrics(ctx, replica, claimed, store.MetricSample{EnvironmentID: env.ID, SampledAt: at,
				CPUPercent: cpu, MemoryPercent: cpu / 2, MemoryUsed: 1 << 33, MemoryTotal: 1 << 34}, top, keep)
			if err != nil {
				t.Fatal(err)
			}
			return ok
		}
		for i := range keep + 3 {
			at := t0.Add(time.Duration(i) * metricsInterval)
			if !claim(t, s, env.ID, "a", at) {
				t.Fatalf("round %d not claimed", i)
			}
			top := []store.MetricTop{{ID: "c1", Name: "web", CPUPercent: float64(i), MemoryPercent: 1.5, MemoryUsage: 1 << 20}}
			if !record("a", at, at.Add(time.Second), float64(i), top) {
				t.Fatalf("round %d not recorded", i)
			}
		}
		// A round another replica took over: its late sample is dropped.
		last := t0.Add((keep + 2) * metricsInterval)
		if !claim(t, s, env.ID, "b", last.Add(2*metricsInterval)) {
			t.Fatal("round not taken over")
		}
		if record("a", last, last.Add(5*time.Second), 99, nil) {
			t.Error("a sample of a round taken over was stored")
		}

		h, err := s.MetricHistory(ctx, env.ID)
		if err != nil {
			t.Fatal(err)
		}
		var cpus, want []float64
		for i := 3; i < keep+3; i++ {
			want = append(want, float64(i))
		}
		for _, m := range h.Samples {
			cpus = append(cpus, m.CPUPercent)
			if m.EnvironmentID != env.ID || m.MemoryUsed != 1<<33 || m.MemoryTotal != 1<<34 || m.MemoryPercent != m.CPUPercent/2 {
				t.Errorf("sample = %+v", m)
			}
		}
		if diff := cmp.Diff(want, cpus); diff != "" {
			t.Errorf("kept samples, oldest first (-want +got):\n%s", diff)
		}
		if want := t0.Add(3*metricsInterval + time.Second); len(h.Samples) > 0 && !h.Samples[0].SampledAt.Equal(want) {
			t.Errorf("oldest sample at %v, want %v", h.Samples[0].SampledAt, want)
		}
		wantTop := []store.MetricTop{{ID: "c1", Name: "web", CPUPercent: keep + 2, MemoryPercent: 1.5, MemoryUsage: 1 << 20}}
		if diff := cmp.Diff(wantTop, h.Top); diff != "" {
			t.Errorf("ranking of the latest sample (-want +got):\n%s", diff)
		}
		// The batch read gives the same, and nothing for an environment
		// without samples.
		all, err := s.MetricHistories(ctx, []int64{env.ID, quiet.ID})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(map[int64]store.MetricHistory{env.ID: h}, all); diff != "" {
			t.Errorf("MetricHistories (-want +got):\n%s", diff)
		}

		// Metrics switched off: the history goes, and no round is claimed.
		env.CollectMetrics = false
		if err := s.UpdateEnvironment(ctx, &env); err != nil {
			t.Fatal(err)
		}
		if h, err := s.MetricHistory(ctx, env.ID); err != nil || h.Samples != nil || h.Top != nil {
			t.Errorf("history with metrics off = %+v, %v", h, err)
		}
		if claim(t, s, env.ID, "a", last.Add(time.Hour)) {
			t.Error("a round of an environment with metrics off was claimed")
		}
		// On again: sampled from scratch; the environment deleted: its rows go.
		env.CollectMetrics = true
		if err := s.UpdateEnvironment(ctx, &env); err != nil {
			t.Fatal(err)
		}
		at := last.Add(2 * time.Hour)
		if !claim(t, s, env.ID, "a", at) || !record("a", at, at, 1, nil) {
			t.Fatal("not sampled once metrics were on again")
		}
		if err := s.DeleteEnvironment(ctx, env.ID); err != nil {
			t.Fatal(err)
		}
		for _, table := range []string{"metric_samples", "metric_claims"} {
			var n int
			if err := s.DB().QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&n); err != nil || n != 0 {
				t.Errorf("%s rows after the environment was deleted: %d, %v", table, n, err)
			}
		}
		if claim(t, s, env.ID, "a", at.Add(time.Hour)) {
			t.Error("a round of a deleted environment was claimed")
		}
	})
}
