package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
)

func TestReplicaRowIsRenewedAndDeleted(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		t0 := time.Date(2026, 11, 28, 10, 0, 0, 123456000, time.UTC)
		r := store.Replica{ID: "r-1", HTTPURL: "http://10.0.0.1:3000", RelayAddr: "10.0.0.1:3001", StartedAt: t0, RenewedAt: t0, ExpiresAt: t0.Add(6 * time.Second)}
		if err := s.RenewReplica(ctx, r); err != nil {
			t.Fatal(err)
		}
		// A renewal moves the expiry and keeps the start.
		r2 := r
		r2.StartedAt, r2.RenewedAt, r2.ExpiresAt = t0.Add(time.Hour), t0.Add(2*time.Second), t0.Add(8*time.Second)
		if err := s.RenewReplica(ctx, r2); err != nil {
			t.Fatal(err)
		}
		got, err := s.Replica(ctx, "r-1")
		want := store.Replica{ID: "r-1", HTTPURL: r.HTTPURL, RelayAddr: r.RelayAddr, StartedAt: t0, RenewedAt: r2.RenewedAt, ExpiresAt: r2.ExpiresAt}
		if err != nil || !cmp.Equal(got, want) {
			t.Fatalf("Replica = %+v, %v; want %+v", got, err, want)
		}
		if !got.Live(t0.Add(7*time.Second)) || got.Live(t0.Add(8*time.Second)) {
			t.Errorf("Live around the expiry %v is wrong", got.ExpiresAt)
		}
		if _, err := s.Replica(ctx, "r-2"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("unknown replica: err = %v, want ErrNotFound", err)
		}
		if err := s.DeleteReplica(ctx, "r-1"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Replica(ctx, "r-1"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("deleted replica: err = %v, want ErrNotFound", err)
		}
	})
}

func TestAgentLeaseOneLiveAgentPerEnvironment(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		env := createEnvironment(t, s, "edge")
		t0 := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
		liveReplicas(t, s, t0, "A", "B")
		lease := func(replica, agent string, at time.Time) store.AgentLease {
			return store.AgentLease{EnvironmentID: env.ID, ReplicaID: replica, AgentID: agent, AgentName: "host-" + agent,
				AgentVersion: "1.2.3", Capabilities: []string{"exec", "compose"}, Remote: "192.0.2.1:5000", ConnectedAt: at, ClaimedAt: at}
		}
		claim := func(l store.AgentLease, want bool) store.HeldLease {
			t.Helper()
			held, claimed, err := s.ClaimAgentLease(ctx, l)
			if err != nil || claimed != want {
				t.Fatalf("ClaimAgentLease(%s, %s) = %v, %v; want claimed %v", l.ReplicaID, l.AgentID, claimed, err, want)
			}
			return held
		}
		// No lease: claimed.
		claim(lease("A", "agent-1", t0.Add(time.Second)), true)
		got, err := s.AgentLease(ctx, env.ID)
		if err != nil || got.ReplicaID != "A" || got.AgentID != "agent-1" || got.Holder.RelayAddr != "A:3001" ||
			!cmp.Equal(got.Capabilities, []string{"exec", "compose"}) || !got.Live(t0.Add(2*time.Second)) {
			t.Fatalf("AgentLease = %+v, %v", got, err)
		}
		// Another agent through B while A is live: refused, the holder returned.
		held := claim(lease("B", "agent-2", t0.Add(2*time.Second)), false)
		if held.ReplicaID != "A" || held.AgentID != "agent-1" || held.Holder.ID != "A" {
			t.Fatalf("refused claim returned %+v, want A's lease", held)
		}
		// The same agent through B: taken over.
		claim(lease("B", "agent-1", t0.Add(3*time.Second)), true)
		if got, _ := s.AgentLease(ctx, env.ID); got.ReplicaID != "B" || !got.ClaimedAt.Equal(t0.Add(3*time.Second)) {
			t.Fatalf("after the same agent came through B: %+v", got)
		}
		// A releasing does not remove B's lease; the holder claiming again is fine.
		if err := s.ReleaseAgentLease(ctx, env.ID, "A"); err != nil {
			t.Fatal(err)
		}
		claim(lease("B", "agent-1", t0.Add(4*time.Second)), true)
		// B's row expired: another agent through A takes the lease.
		claim(lease("A", "agent-3", t0.Add(7*time.Second)), true)
		leases, err := s.AgentLeases(ctx)
		if err != nil || len(leases) != 1 || leases[0].ReplicaID != "A" || leases[0].AgentID != "agent-3" {
			t.Fatalf("AgentLeases = %+v, %v", leases, err)
		}
		// A replica that stops takes its leases with it.
		if err := s.DeleteReplica(ctx, "A"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AgentLease(ctx, env.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("lease of a deleted replica: err = %v, want ErrNotFound", err)
		}
		// A replica with no row holds nothing: its lease is claimable.
		claim(lease("gone", "agent-4", t0), true)
		if got, _ := s.AgentLease(ctx, env.ID); got.Holder.ID != "" || got.Live(t0) {
			t.Fatalf("lease of a replica without a row: %+v", got)
		}
		claim(lease("B", "agent-5", t0.Add(5*time.Second)), true)
		// Release by the holder, and a forced drop (token rotation).
		if err := s.ReleaseAgentLease(ctx, env.ID, "B"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AgentLease(ctx, env.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("released lease: err = %v", err)
		}
		claim(lease("B", "agent-5", t0.Add(5*time.Second)), true)
		if err := s.DeleteAgentLease(ctx, env.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AgentLease(ctx, env.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("dropped lease: err = %v", err)
		}
		// A lease of a missing environment, and the environment's deletion.
		if _, _, err := s.ClaimAgentLease(ctx, store.AgentLease{EnvironmentID: 9999, ReplicaID: "B", ConnectedAt: t0, ClaimedAt: t0}); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("claim for a missing environment: err = %v, want ErrNotFound", err)
		}
		claim(lease("B", "agent-5", t0.Add(5*time.Second)), true)
		if err := s.DeleteEnvironment(ctx, env.ID); err != nil {
			t.Fatal(err)
		}
		if leases, err := s.AgentLeases(ctx); err != nil || len(leases) != 0 {
			t.Fatalf("leases after the environment's deletion = %+v, %v", leases, err)
		}
	})
}

func TestExpiredReplicasAreSwept(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		env := createEnvironment(t, s, "edge")
		t0 := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
		for i, id := range []string{"old", "new"} {
			at := t0.Add(time.Duration(i) * time.Hour)
			if err := s.RenewReplica(ctx, store.Replica{ID: id, StartedAt: at, RenewedAt: at, ExpiresAt: at.Add(6 * time.Second)}); err != nil {
				t.Fatal(err)
			}
		}
		if _, claimed, err := s.ClaimAgentLease(ctx, store.AgentLease{EnvironmentID: env.ID, ReplicaID: "old", ConnectedAt: t0, ClaimedAt: t0}); err != nil || !claimed {
			t.Fatal(claimed, err)
		}
		n, err := s.DeleteReplicasExpiredBefore(ctx, t0.Add(time.Minute))
		if err != nil || n != 1 {
			t.Fatalf("DeleteReplicasExpiredBefore = %d, %v; want 1", n, err)
		}
		reps, err := s.Replicas(ctx)
		if err != nil || len(reps) != 1 || reps[0].ID != "new" {
			t.Fatalf("Replicas = %+v, %v", reps, err)
		}
		if _, err := s.AgentLease(ctx, env.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("the swept replica's lease: err = %v, want ErrNotFound", err)
		}
	})
}

func TestStackLockOneOperationAcrossReplicas(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		env := createEnvironment(t, s, "stacklock")
		t0 := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
		liveReplicas(t, s, t0, "A", "B")
		claim := func(replica, holder string, at time.Time, want bool, wantHeldBy string) {
			t.Helper()
			claimed, heldBy, err := s.ClaimStackLock(ctx, env.ID, "web", replica, holder, at)
			if err != nil || claimed != want || heldBy != wantHeldBy {
				t.Fatalf("ClaimStackLock(%s, %s) = %v, %q, %v; want %v, %q", replica, holder, claimed, heldBy, err, want, wantHeldBy)
			}
		}
		claim("A", "a1", t0.Add(time.Second), true, "")
		// B waits while A is live; another stack is not held by it.
		claim("B", "b1", t0.Add(2*time.Second), false, "A")
		if claimed, _, err := s.ClaimStackLock(ctx, env.ID, "db", "B", "b2", t0.Add(2*time.Second)); err != nil || !claimed {
			t.Fatalf("another stack: %v, %v", claimed, err)
		}
		// A release by a holder that no longer holds it changes nothing.
		if err := s.ReleaseStackLock(ctx, env.ID, "web", "b1"); err != nil {
			t.Fatal(err)
		}
		claim("B", "b1", t0.Add(3*time.Second), false, "A")
		if err := s.ReleaseStackLock(ctx, env.ID, "web", "a1"); err != nil {
			t.Fatal(err)
		}
		claim("B", "b1", t0.Add(3*time.Second), true, "")
		// B's replica row expires (it died): A takes the lock over.
		claim("A", "a2", t0.Add(5*time.Second), false, "B")
		claim("A", "a2", t0.Add(7*time.Second), true, "")
		// A replica that stops frees its locks.
		if err := s.DeleteReplica(ctx, "A"); err != nil {
			t.Fatal(err)
		}
		claim("B", "b3", t0.Add(time.Second), true, "")
		// An environment that does not exist.
		if _, _, err := s.ClaimStackLock(ctx, env.ID+1000, "web", "B", "b4", t0); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("missing environment: %v", err)
		}
	})
}

// liveReplicas writes the rows of replicas ids, live for 6 s from t0
// (their relay at <id>:3001).
func liveReplicas(t *testing.T, s *store.Store, t0 time.Time, ids ...string) {
	t.Helper()
	for _, id := range ids {
		if err := s.RenewReplica(t.Context(), store.Replica{ID: id, HTTPURL: "http://" + id, RelayAddr: id + ":3001",
			StartedAt: t0, RenewedAt: t0, ExpiresAt: t0.Add(6 * time.Second)}); err != nil {
			t.Fatal(err)
		}
	}
}
