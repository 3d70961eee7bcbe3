package auth

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
)

// Each argon2 computation allocates its memory parameter (64 MiB by
// default): a gate of n slots runs at most n at once, however many callers
// there are, and lets the waiting ones in as slots free up.
func TestGateRunsAtMostItsSizeAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const size, callers = 2, 10
		g := newGate(size)
		var inside atomic.Int64
		release := make(chan struct{})
		done := make(chan error, callers)
		for range callers {
			go func() {
				done <- g.do(t.Context(), func() {
					inside.Add(1)
					<-release
					inside.Add(-1)
				})
			}()
		}
		for left := callers; left > 0; left-- {
			synctest.Wait() // every caller runs or waits for a slot
			if got, want := inside.Load(), int64(min(size, left)); got != want {
				t.Fatalf("with %d callers left, %d computations run at once, want %d", left, got, want)
			}
			release <- struct{}{}
			if err := <-done; err != nil {
				t.Fatalf("do: %v", err)
			}
		}
		if got := g.peak.Load(); got != size {
			t.Errorf("peak = %d, want %d", got, size)
		}
	})
}

// A caller waiting for a slot gives up as soon as its context (the request's)
// ends, with the context's error, and computes nothing.
func TestGateWaitingCallerGivesUpWhenItsContextEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGate(1)
		release := make(chan struct{})
		go g.do(context.Background(), func() { <-release }) // takes the only slot
		synctest.Wait()

		ctx, cancel := context.WithCancel(t.Context())
		ran := false
		errc := make(chan error, 1)
		go func() { errc <- g.do(ctx, func() { ran = true }) }()
		synctest.Wait()
		select {
		case err := <-errc:
			t.Fatalf("do returned %v while the only slot was taken", err)
		default:
		}

		cancel()
		synctest.Wait() // no time passes in the bubble: "promptly"
		select {
		case err := <-errc:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("do after its context ended = %v, want context.Canceled", err)
			}
		default:
			t.Fatal("do still waits after its context ended")
		}
		if ran {
			t.Error("do ran the computation of a caller whose context had ended")
		}
		close(release)
	})
}

// HashPassword and VerifyPassword run argon2 through the package's gate,
// which is as wide as the CPUs that can run Go code.
func TestPasswordHashingGoesThroughTheGate(t *testing.T) {
	if got, want := cap(argonGate.slots), runtime.GOMAXPROCS(0); got != want {
		t.Errorf("argonGate has %d slots, want GOMAXPROCS = %d", got, want)
	}
	h, err := HashPassword(t.Context(), "password", cheapArgon)
	if err != nil {
		t.Fatal(err)
	}
	argonGate.peak.Store(0)
	var wg sync.WaitGroup
	for range 4 * cap(argonGate.slots) {
		wg.Go(func() {
			if ok, err := VerifyPassword(t.Context(), "password", h); err != nil || !ok {
				t.Errorf("VerifyPassword = %v, %v; want true", ok, err)
			}
		})
	}
	wg.Wait()
	if got := argonGate.peak.Load(); got < 1 || got > int64(cap(argonGate.slots)) {
		t.Errorf("peak of computations in the gate = %d, want 1 to %d", got, cap(argonGate.slots))
	}

	// With every slot taken, a caller whose context has ended gets its error.
	for range cap(argonGate.slots) {
		argonGate.slots <- struct{}{}
	}
	defer func() {
		for range cap(argonGate.slots) {
			<-argonGate.slots
		}
	}()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if ok, err := VerifyPassword(ctx, "password", h); !errors.Is(err, context.Canceled) || ok {
		t.Errorf("VerifyPassword with an ended context = %v, %v; want false, context.Canceled", ok, err)
	}
	if _, err := HashPassword(ctx, "password", cheapArgon); !errors.Is(err, context.Canceled) {
		t.Errorf("HashPassword with an ended context: %v, want context.Canceled", err)
	}
}

// Starting the service computes no password hash: the decoy that unknown
// users are verified against (64 MiB with the default parameters) used to
// be hashed at every start, and kept the idle process 64 MiB larger.
func TestNewComputesNoPasswordHash(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		svc := f.newService(t, func(o *Options) { argon := DefaultArgon2; o.Argon2 = &argon })
		runtime.ReadMemStats(&after)
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc >= 8<<20 {
			t.Errorf("New allocated %d MiB, want less than 8 (no argon2 hash of %d MiB)", alloc>>20, DefaultArgon2.Memory>>10)
		}

		// The decoy has the configured parameters, so an unknown user costs
		// what a known one does.
		p, _, _, err := parsePHC(svc.dummyHash)
		if err != nil {
			t.Fatalf("decoy hash %q: %v", svc.dummyHash, err)
		}
		if diff := cmp.Diff(DefaultArgon2, p); diff != "" {
			t.Errorf("decoy hash parameters (-want +got):\n%s", diff)
		}
		if ok, err := VerifyPassword(t.Context(), "no user has this password", svc.dummyHash); err != nil || ok {
			t.Errorf("VerifyPassword(decoy) = %v, %v; want false, nil", ok, err)
		}
	})
}
