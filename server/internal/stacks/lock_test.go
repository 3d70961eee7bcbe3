package stacks

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
)

// Two replicas on one database never hold one stack at once: the second
// waits while the first's operation runs, and takes the lock once it ends.
func TestStackLockHeldByOneReplicaAtATime(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := t.Context()
		env := store.Environment{Name: "locks", ConnectionType: "socket"}
		if err := st.CreateEnvironment(ctx, &env); err != nil {
			t.Fatal(err)
		}
		now := time.Now()
		for _, id := range []string{"A", "B"} {
			if err := st.RenewReplica(ctx, store.Replica{ID: id, HTTPURL: "http://" + id, RelayAddr: id + ":3001",
				StartedAt: now, RenewedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
				t.Fatal(err)
			}
		}
		log := slog.New(slog.NewTextHandler(io.Discard, nil))
		a := New(st, nil, nil, t.TempDir(), log).UseReplica("A")
		b := New(st, nil, nil, t.TempDir(), log).UseReplica("B")

		unlockA, err := a.lock(ctx, env.ID, "web")
		if err != nil {
			t.Fatal(err)
		}
		// While A holds it, B's operation waits until its context ends.
		wctx, cancel := context.WithTimeout(ctx, 3*stackLockPoll)
		_, err = b.lock(wctx, env.ID, "web")
		cancel()
		if err == nil || !strings.Contains(err.Error(), "another Berth replica") {
			t.Fatalf("B's lock while A holds it: %v", err)
		}
		// Another stack is free.
		unlockDB, err := b.lock(ctx, env.ID, "db")
		if err != nil {
			t.Fatal(err)
		}
		unlockDB()
		// A's operation ends: B's waiting operation goes on.
		got := make(chan error, 1)
		go func() {
			unlock, err := b.lock(ctx, env.ID, "web")
			if err == nil {
				unlock()
			}
			got <- err
		}()
		unlockA()
		if err := <-got; err != nil {
			t.Fatalf("B after A released: %v", err)
		}
		// B released too: A takes it again at once.
		unlockA, err = a.lock(ctx, env.ID, "web")
		if err != nil {
			t.Fatal(err)
		}
		unlockA()
	})
}
