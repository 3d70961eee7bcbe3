package replica_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/replica"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
	"github.com/berth-dev/berth/shared/testwait"
)

func TestTokenIsDerivedFromTheSharedKey(t *testing.T) {
	k1, k2 := []byte("0123456789abcdef0123456789abcdef"), []byte("0123456789abcdef0123456789abcdeX")
	if replica.DeriveToken(k1) == replica.DeriveToken(k2) {
		t.Fatal("the token must depend on the key")
	}
	// hex(HMAC-SHA256(key, "berth/replica-relay/v1")), computed independently:
	// printf 'berth/replica-relay/v1' | openssl dgst -sha256 -hmac 0123456789abcdef0123456789abcdef
	if got, want := replica.DeriveToken(k1), "fc72ef645d52300b9305ac3091751675462f5fdd9d4370ea421c14bc379d1221"; got != want {
		t.Fatalf("DeriveToken = %s, want %s", got, want)
	}
	r, err := replica.New(nil, replica.Config{}, k1, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if r.Token() != replica.DeriveToken(k1) || !r.ValidToken(replica.DeriveToken(k1)) ||
		r.ValidToken(replica.DeriveToken(k2)) || r.ValidToken("") {
		t.Fatal("ValidToken accepts exactly the replicas' token")
	}
	r2, _ := replica.New(nil, replica.Config{}, k1, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if r.Self() == r2.Self() || len(r.Self()) != 36 {
		t.Fatalf("replica ids %q and %q: want two random UUIDs", r.Self(), r2.Self())
	}
	if _, err := replica.New(nil, replica.Config{}, nil, nil); err == nil {
		t.Fatal("a registry without the key")
	}
}

func TestRunKeepsTheRowLiveAndRemovesItAtTheEnd(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		log := slog.New(slog.NewTextHandler(io.Discard, nil))
		r, err := replica.New(s, replica.Config{HTTPURL: "http://10.0.0.2:3000", RelayAddr: "10.0.0.2:3001"}, []byte("k"), log)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			r.Run(ctx)
		}()
		defer func() { cancel(); <-done }()
		testwait.Until(t, "the replica's row", func() bool {
			_, live, err := r.Live(t.Context(), r.Self())
			return err == nil && live
		})
		url, live, err := r.HTTPURLOf(t.Context(), r.Self())
		if err != nil || !live || url != "http://10.0.0.2:3000" {
			t.Fatalf("HTTPURLOf(self) = %q, %v, %v", url, live, err)
		}
		if _, live, err := r.Live(t.Context(), "no-such-replica"); err != nil || live {
			t.Fatalf("Live(unknown) = %v, %v", live, err)
		}
		// A replica that died an hour ago (row expired) is not live, and
		// is swept with its leases by the next renewal.
		old := time.Now().Add(-time.Hour)
		if err := s.RenewReplica(t.Context(), store.Replica{ID: "dead", StartedAt: old, RenewedAt: old, ExpiresAt: old.Add(replica.TTL)}); err != nil {
			t.Fatal(err)
		}
		if _, live, err := r.Live(t.Context(), "dead"); err != nil || live {
			t.Fatalf("Live(dead) = %v, %v", live, err)
		}
		testwait.Until(t, "the dead replica swept", func() bool {
			reps, err := s.Replicas(t.Context())
			return err == nil && len(reps) == 1 && reps[0].ID == r.Self()
		})
		cancel()
		<-done
		if reps, err := s.Replicas(t.Context()); err != nil || len(reps) != 0 {
			t.Fatalf("rows after Run ended: %+v, %v", reps, err)
		}
	})
}
