package store_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
)

func TestExecSessionRoundTripsAndIsAttachedOnce(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		env := createEnvironment(t, s, "exec-env")
		other := createEnvironment(t, s, "exec-other")
		created := time.Date(2026, 11, 28, 10, 0, 0, 123456000, time.UTC)
		in := store.ExecSession{ExecID: "e1", EnvironmentID: env.ID, OwnerID: 7, TTY: true, CreatedAt: created,
			ContainerID: "c0ffee", Cmd: "/bin/sh -l", User: "root"}
		sess := in
		if err := s.CreateExecSession(ctx, &sess, created.Add(-2*time.Minute), created.Add(-time.Hour)); err != nil {
			t.Fatalf("CreateExecSession: %v", err)
		}
		got, err := s.GetExecSession(ctx, "e1")
		if err != nil {
			t.Fatalf("GetExecSession: %v", err)
		}
		if diff := cmp.Diff(in, got, approxTime); diff != "" {
			t.Errorf("GetExecSession mismatch (-want +got):\n%s", diff)
		}
		if err := s.CreateExecSession(ctx, &store.ExecSession{ExecID: "e1", EnvironmentID: env.ID, CreatedAt: created},
			created.Add(-2*time.Minute), created.Add(-time.Hour)); !errors.Is(err, store.ErrConflict) {
			t.Errorf("second session with one exec id = %v, want ErrConflict", err)
		}
		if err := s.CreateExecSession(ctx, &store.ExecSession{ExecID: "e2", EnvironmentID: 999999, CreatedAt: created},
			created.Add(-2*time.Minute), created.Add(-time.Hour)); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("session of an unknown environment = %v, want ErrNotFound", err)
		}

		// A size asked for before the attach is what any replica opens it at.
		if err := s.SizeExecSession(ctx, "e1", 33, 101); err != nil {
			t.Fatalf("SizeExecSession: %v", err)
		}
		in.Rows, in.Cols = 33, 101
		if got, err := s.GetExecSession(ctx, "e1"); err != nil || cmp.Diff(in, got, approxTime) != "" {
			t.Errorf("sized session = %+v, %v; want %+v", got, err, in)
		}

		at := created.Add(time.Minute)
		window := created.Add(-time.Second) // created after it: the window is open
		if err := s.AttachExecSession(ctx, "e1", other.ID, at, window); !errors.Is(err, store.ErrExecAttached) {
			t.Errorf("attach through another environment = %v, want ErrExecAttached (no row)", err)
		}
		if err := s.AttachExecSession(ctx, "e1", env.ID, at, created); !errors.Is(err, store.ErrExecAttached) {
			t.Errorf("attach after the window = %v, want ErrExecAttached (no row)", err)
		}
		if err := s.AttachExecSession(ctx, "e1", env.ID, at, window); err != nil {
			t.Fatalf("attach: %v", err)
		}
		if err := s.AttachExecSession(ctx, "e1", env.ID, at, window); !errors.Is(err, store.ErrExecAttached) {
			t.Errorf("second attach = %v, want ErrExecAttached", err)
		}
		got, err = s.GetExecSession(ctx, "e1")
		if err != nil || got.AttachedAt == nil || !got.AttachedAt.Equal(at) {
			t.Errorf("attached session = %+v, %v; want attached at %v", got, err, at)
		}
		if err := s.DeleteExecSession(ctx, "e1"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.GetExecSession(ctx, "e1"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("deleted session = %v, want ErrNotFound", err)
		}
		if err := s.DeleteExecSession(ctx, "e1"); err != nil {
			t.Errorf("deleting a missing session = %v, want nil", err)
		}
	})
}

// Of many concurrent attaches of one session, on separate connections of
// the pool (as from several servers), exactly one wins.
func TestExecSessionConcurrentAttachesOneWins(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		env := createEnvironment(t, s, "exec-race")
		now := time.Now().UTC()
		if err := s.CreateExecSession(ctx, &store.ExecSession{ExecID: "race", EnvironmentID: env.ID, TTY: true, CreatedAt: now},
			now.Add(-time.Minute), now.Add(-time.Hour)); err != nil {
			t.Fatal(err)
		}
		const n = 8
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- s.AttachExecSession(ctx, "race", env.ID, now, now.Add(-time.Minute))
			}()
		}
		wg.Wait()
		close(errs)
		won := 0
		for err := range errs {
			switch {
			case err == nil:
				won++
			case !errors.Is(err, store.ErrExecAttached):
				t.Errorf("attach: %v", err)
			}
		}
		if won != 1 {
			t.Errorf("%d attaches won, want exactly 1", won)
		}
	})
}

// Creating a session deletes the unattached ones whose window closed and
// the attached ones past the cutoff; the others stay.
func TestCreateExecSessionSweepsUnusableSessions(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		env := createEnvironment(t, s, "exec-sweep")
		now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
		add := func(id string, created time.Time, attached *time.Time) {
			t.Helper()
			// Cutoffs far in the past: nothing is swept while the fixture is laid out.
			if err := s.CreateExecSession(ctx, &store.ExecSession{ExecID: id, EnvironmentID: env.ID, CreatedAt: created, AttachedAt: attached},
				time.Time{}, time.Time{}); err != nil {
				t.Fatal(err)
			}
		}
		longAgo, recently := now.Add(-48*time.Hour), now.Add(-time.Minute)
		add("stale-unattached", now.Add(-3*time.Minute), nil)
		add("fresh-unattached", recently, nil)
		add("old-attached", now.Add(-3*time.Minute), &recently) // a terminal open for minutes
		add("abandoned-attached", longAgo, &longAgo)            // its server stopped
		if err := s.CreateExecSession(ctx, &store.ExecSession{ExecID: "new", EnvironmentID: env.ID, CreatedAt: now},
			now.Add(-2*time.Minute), now.Add(-24*time.Hour)); err != nil {
			t.Fatal(err)
		}
		for id, want := range map[string]bool{"stale-unattached": false, "fresh-unattached": true, "old-attached": true,
			"abandoned-attached": false, "new": true} {
			_, err := s.GetExecSession(ctx, id)
			if got := err == nil; got != want {
				t.Errorf("session %s kept = %v (%v), want %v", id, got, err, want)
			}
		}
	})
}

// An environment's sessions go with it.
func TestExecSessionsGoWithTheirEnvironment(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		env := createEnvironment(t, s, "exec-gone")
		now := time.Now()
		if err := s.CreateExecSession(ctx, &store.ExecSession{ExecID: "x", EnvironmentID: env.ID, CreatedAt: now},
			now.Add(-time.Minute), now.Add(-time.Hour)); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteEnvironment(ctx, env.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.GetExecSession(ctx, "x"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("session of a deleted environment = %v, want ErrNotFound", err)
		}
	})
}
