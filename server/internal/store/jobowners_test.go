package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
)

func TestJobOwnersRoundTripAndSweep(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
		if err := s.AddJobOwner(ctx, "old", "replica-a", now.Add(-2*time.Hour), time.Time{}); err != nil {
			t.Fatal(err)
		}
		if err := s.AddJobOwner(ctx, "recent", "replica-b", now.Add(-time.Minute), time.Time{}); err != nil {
			t.Fatal(err)
		}
		if err := s.AddJobOwner(ctx, "recent", "replica-a", now, time.Time{}); !errors.Is(err, store.ErrConflict) {
			t.Errorf("second owner of one job = %v, want ErrConflict", err)
		}
		if err := s.AddJobOwner(ctx, "new", "replica-a", now, now.Add(-70*time.Minute)); err != nil {
			t.Fatal(err)
		}
		for id, want := range map[string]string{"old": "", "recent": "replica-b", "new": "replica-a"} {
			got, err := s.JobOwner(ctx, id)
			if want == "" {
				if !errors.Is(err, store.ErrNotFound) {
					t.Errorf("owner of swept job %s = %q %v, want ErrNotFound", id, got, err)
				}
				continue
			}
			if err != nil || got != want {
				t.Errorf("owner of %s = %q %v, want %q", id, got, err, want)
			}
		}
		if err := s.DeleteJobOwner(ctx, "new"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.JobOwner(ctx, "new"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("deleted owner = %v, want ErrNotFound", err)
		}
	})
}
