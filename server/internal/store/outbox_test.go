package store_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
)

func createChannel(t *testing.T, s *store.Store, name string) store.NotificationChannel {
	t.Helper()
	ch := store.NotificationChannel{Type: "webhook", Name: name, Enabled: true, Config: json.RawMessage(`{"url":"http://127.0.0.1:1"}`)}
	if err := s.CreateNotificationChannel(t.Context(), &ch); err != nil {
		t.Fatal(err)
	}
	return ch
}

func queue(t *testing.T, s *store.Store, key string, due time.Time, channels ...int64) int {
	t.Helper()
	var entries []store.OutboxEntry
	for _, id := range channels {
		entries = append(entries, store.OutboxEntry{ChannelID: id, DedupeKey: key, EventType: "container_exited",
			Payload: `{"type":"container_exited"}`, NextAttemptAt: due})
	}
	n, err := s.QueueNotifications(t.Context(), entries)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func claimIDs(t *testing.T, s *store.Store, node string, at time.Time, limit int) []int64 {
	t.Helper()
	got, err := s.ClaimNotifications(t.Context(), node, at, at.Add(time.Minute), limit)
	if err != nil {
		t.Fatal(err)
	}
	ids := []int64{}
	for _, e := range got {
		if e.ClaimedBy != node || e.ClaimedUntil == nil || !e.ClaimedUntil.Equal(at.Add(time.Minute).UTC().Truncate(time.Microsecond)) {
			t.Errorf("claimed entry %+v, want it held by %s until %s", e, node, at.Add(time.Minute))
		}
		ids = append(ids, e.ID)
	}
	return ids
}

func TestQueuedNotificationIsOnePerChannelAndKey(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		a, b := createChannel(t, s, "a"), createChannel(t, s, "b")
		due := time.Now()
		if n := queue(t, s, "engine:1:42:abc:die", due, a.ID, b.ID); n != 2 {
			t.Fatalf("first queue added %d, want 2", n)
		}
		// Another server producing the same event adds nothing; a channel
		// deleted meanwhile is left out without failing the others.
		if n := queue(t, s, "engine:1:42:abc:die", due, a.ID, b.ID, b.ID+1000); n != 0 {
			t.Fatalf("second queue added %d, want 0", n)
		}
		if n := queue(t, s, "engine:1:43:abc:die", due, b.ID+1000, a.ID); n != 1 {
			t.Fatalf("queue of another key added %d, want 1", n)
		}
		got, err := s.QueuedNotifications(t.Context(), "engine:1:42:abc:die")
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[0].ChannelID != a.ID || got[1].ChannelID != b.ID {
			t.Fatalf("queued = %+v, want one entry per channel", got)
		}
		for _, e := range got {
			if e.Status != store.OutboxPending || e.Attempts != 0 || e.ClaimedUntil != nil || e.ClaimedBy != "" ||
				e.EventType != "container_exited" || e.Payload != `{"type":"container_exited"}` {
				t.Errorf("queued entry = %+v, want pending, unclaimed, never tried", e)
			}
		}
		// Its channel's deletion takes it along.
		if err := s.DeleteNotificationChannel(t.Context(), b.ID); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.QueuedNotifications(t.Context(), "engine:1:42:abc:die"); len(got) != 1 || got[0].ChannelID != a.ID {
			t.Errorf("after the channel's deletion: %+v", got)
		}
	})
}

func TestClaimedNotificationIsOneServersUntilItsLeaseRunsOut(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		ch := createChannel(t, s, "hook")
		t0 := time.Now().UTC().Truncate(time.Second)
		queue(t, s, "k1", t0, ch.ID)
		queue(t, s, "k2", t0.Add(-time.Second), ch.ID) // due longer: claimed first
		queue(t, s, "later", t0.Add(time.Hour), ch.ID) // not due yet
		k1, _ := s.QueuedNotifications(ctx, "k1")
		k2, _ := s.QueuedNotifications(ctx, "k2")

		if got := claimIDs(t, s, "a", t0, 10); !slices.Equal(got, []int64{k2[0].ID, k1[0].ID}) {
			t.Fatalf("a claimed %v, want the two due entries, the longest due first", got)
		}
		if got := claimIDs(t, s, "b", t0.Add(30*time.Second), 10); len(got) != 0 {
			t.Fatalf("b claimed %v while a holds them", got)
		}
		// a's lease runs out (a stopped): b takes them over, a can no longer
		// settle them.
		if got := claimIDs(t, s, "b", t0.Add(2*time.Minute), 1); !slices.Equal(got, []int64{k2[0].ID}) {
			t.Fatalf("b claimed %v after a's lease, want %d (limit 1)", got, k2[0].ID)
		}
		if err := s.MarkNotificationSent(ctx, k2[0].ID, "a"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("a marked sent what b holds: %v", err)
		}
		if err := s.MarkNotificationSent(ctx, k2[0].ID, "b"); err != nil {
			t.Fatal(err)
		}
		if e, _ := s.GetQueuedNotification(ctx, k2[0].ID); e.Status != store.OutboxSent || e.Attempts != 2 || e.ClaimedUntil != nil {
			t.Errorf("sent entry = %+v, want sent after 2 attempts, released", e)
		}

		// A failed attempt makes it due again later; then another attempt;
		// the last one fails it for good.
		if got := claimIDs(t, s, "b", t0.Add(2*time.Minute), 10); !slices.Equal(got, []int64{k1[0].ID}) {
			t.Fatalf("b claimed %v, want %d", got, k1[0].ID)
		}
		retryAt := t0.Add(10 * time.Minute)
		if err := s.RetryNotification(ctx, k1[0].ID, "b", retryAt, "the service answered 503"); err != nil {
			t.Fatal(err)
		}
		e, _ := s.GetQueuedNotification(ctx, k1[0].ID)
		if e.Status != store.OutboxPending || e.Attempts != 2 || !e.NextAttemptAt.Equal(retryAt) ||
			e.LastError != "the service answered 503" || e.ClaimedBy != "" {
			t.Errorf("entry to retry = %+v", e)
		}
		if got := claimIDs(t, s, "a", retryAt.Add(-time.Second), 10); len(got) != 0 {
			t.Fatalf("claimed %v before its retry is due", got)
		}
		if got := claimIDs(t, s, "a", retryAt, 10); !slices.Equal(got, []int64{k1[0].ID}) {
			t.Fatalf("a claimed %v when its retry is due, want %d", got, k1[0].ID)
		}
		if err := s.FailNotification(ctx, k1[0].ID, "a", "refused"); err != nil {
			t.Fatal(err)
		}
		if e, _ := s.GetQueuedNotification(ctx, k1[0].ID); e.Status != store.OutboxFailed || e.Attempts != 3 || e.LastError != "refused" {
			t.Errorf("failed entry = %+v", e)
		}

		// Given back by a server that stops: due at once, the attempt not
		// counted. Held by a server that restarts: released when it starts.
		later, _ := s.QueuedNotifications(ctx, "later")
		at := t0.Add(2 * time.Hour)
		if got := claimIDs(t, s, "a", at, 10); !slices.Equal(got, []int64{later[0].ID}) {
			t.Fatalf("claimed %v, want %d", got, later[0].ID)
		}
		if err := s.ReleaseNotification(ctx, later[0].ID, "a"); err != nil {
			t.Fatal(err)
		}
		if e, _ := s.GetQueuedNotification(ctx, later[0].ID); e.Attempts != 0 || e.ClaimedUntil != nil {
			t.Errorf("released entry = %+v, want no attempt counted, unclaimed", e)
		}
		claimIDs(t, s, "a", at, 10)
		if n, err := s.ReleaseNotificationClaims(ctx, "b"); err != nil || n != 0 {
			t.Fatalf("ReleaseNotificationClaims(b) = %d, %v; want 0", n, err)
		}
		if n, err := s.ReleaseNotificationClaims(ctx, "a"); err != nil || n != 1 {
			t.Fatalf("ReleaseNotificationClaims(a) = %d, %v; want 1", n, err)
		}
		if got := claimIDs(t, s, "b", at, 10); !slices.Equal(got, []int64{later[0].ID}) {
			t.Fatalf("after a's restart b claimed %v, want %d", got, later[0].ID)
		}
	})
}

func TestConcurrentClaimsTakeEachNotificationOnce(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ch := createChannel(t, s, "hook")
		t0 := time.Now()
		for i := range 40 {
			queue(t, s, fmt.Sprintf("k%d", i), t0, ch.ID)
		}
		var mu sync.Mutex
		seen := map[int64]string{}
		var wg sync.WaitGroup
		for _, node := range []string{"a", "b", "c", "d"} {
			wg.Go(func() {
				for {
					got, err := s.ClaimNotifications(t.Context(), node, t0, t0.Add(time.Minute), 7)
					if err != nil {
						t.Error(err)
						return
					}
					if len(got) == 0 {
						return
					}
					mu.Lock()
					for _, e := range got {
						if other, ok := seen[e.ID]; ok {
							t.Errorf("entry %d claimed by %s and %s", e.ID, other, node)
						}
						seen[e.ID] = node
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if len(seen) != 40 {
			t.Errorf("claimed %d entries, want all 40", len(seen))
		}
	})
}

func TestPruneNotificationsKeepsPendingOnes(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		ch := createChannel(t, s, "hook")
		t0 := time.Now()
		for _, k := range []string{"sent", "failed", "pending"} {
			queue(t, s, k, t0, ch.ID)
		}
		for _, e := range mustClaim(t, s, t0) {
			var err error
			switch e.DedupeKey {
			case "sent":
				err = s.MarkNotificationSent(ctx, e.ID, "a")
			case "failed":
				err = s.FailNotification(ctx, e.ID, "a", "refused")
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if n, err := s.PruneNotifications(ctx, time.Now().Add(-time.Hour)); err != nil || n != 0 {
			t.Fatalf("prune of an hour ago = %d, %v; want 0", n, err)
		}
		if n, err := s.PruneNotifications(ctx, time.Now().Add(time.Hour)); err != nil || n != 2 {
			t.Fatalf("prune = %d, %v; want the sent and the failed one", n, err)
		}
		if got, _ := s.QueuedNotifications(ctx, "pending"); len(got) != 1 {
			t.Errorf("the pending entry was pruned")
		}
	})
}

func mustClaim(t *testing.T, s *store.Store, at time.Time) []store.OutboxEntry {
	t.Helper()
	got, err := s.ClaimNotifications(t.Context(), "a", at, at.Add(time.Minute), 100)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestSwitchNotificationStateTellsOneServer(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		steps := []struct {
			value string
			want  bool
		}{
			{"online", false}, // never set: absent stands for online
			{"offline", true},
			{"offline", false}, // a second server finds it switched
			{"online", true},
			{"online", false},
			{"offline", true},
		}
		for i, st := range steps {
			got, err := s.SwitchNotificationState(ctx, "environment:1:reachability", st.value, "online")
			if err != nil || got != st.want {
				t.Fatalf("step %d: switch to %s = %v, %v; want %v", i, st.value, got, err, st.want)
			}
		}
		// Servers racing to the same value: exactly one changes it.
		var wg sync.WaitGroup
		var mu sync.Mutex
		changed := 0
		for range 6 {
			wg.Go(func() {
				ok, err := s.SwitchNotificationState(ctx, "environment:2:disk", "above", "below")
				if err != nil {
					t.Error(err)
				}
				if ok {
					mu.Lock()
					changed++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if changed != 1 {
			t.Errorf("%d servers changed the state, want 1", changed)
		}
	})
}
