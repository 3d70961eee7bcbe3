package store_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
)

func TestAutoUpdateUpsertGetDelete(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		env := createEnvironment(t, s, "env")
		tests := []struct {
			name  string
			envID *int64
		}{
			{"in an environment", &env.ID},
			{"without environment", nil},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				ctx := t.Context()
				a := store.AutoUpdate{
					ContainerName:         "web",
					EnvironmentID:         tt.envID,
					Enabled:               true,
					ScheduleType:          "daily",
					VulnerabilityCriteria: "critical_high",
				}
				if err := s.UpsertAutoUpdate(ctx, &a); err != nil {
					t.Fatalf("UpsertAutoUpdate (create): %v", err)
				}
				if a.ID == 0 || a.CreatedAt.IsZero() || !a.UpdatedAt.Equal(a.CreatedAt) {
					t.Errorf("created: ID %d, CreatedAt %v, UpdatedAt %v; want them set", a.ID, a.CreatedAt, a.UpdatedAt)
				}
				got, err := s.GetAutoUpdate(ctx, tt.envID, "web")
				if err != nil {
					t.Fatalf("GetAutoUpdate: %v", err)
				}
				if diff := cmp.Diff(a, got, approxTime); diff != "" {
					t.Errorf("GetAutoUpdate after create (-want +got):\n%s", diff)
				}

				b := store.AutoUpdate{
					ContainerName:         "web",
					EnvironmentID:         tt.envID,
					Enabled:               false,
					ScheduleType:          "custom",
					CronExpression:        "0 4 * * 1",
					VulnerabilityCriteria: "more_than_current",
				}
				if err := s.UpsertAutoUpdate(ctx, &b); err != nil {
					t.Fatalf("UpsertAutoUpdate (update): %v", err)
				}
				if b.ID != a.ID || !b.CreatedAt.Equal(a.CreatedAt) || b.UpdatedAt.Before(a.UpdatedAt) {
					t.Errorf("updated: ID %d, CreatedAt %v, UpdatedAt %v; want ID %d, CreatedAt %v, UpdatedAt not before %v",
						b.ID, b.CreatedAt, b.UpdatedAt, a.ID, a.CreatedAt, a.UpdatedAt)
				}
				got, err = s.GetAutoUpdate(ctx, tt.envID, "web")
				if err != nil {
					t.Fatalf("GetAutoUpdate: %v", err)
				}
				if diff := cmp.Diff(b, got, approxTime); diff != "" {
					t.Errorf("GetAutoUpdate after update (-want +got):\n%s", diff)
				}

				deleted, err := s.DeleteAutoUpdate(ctx, tt.envID, "web")
				if err != nil || !deleted {
					t.Fatalf("DeleteAutoUpdate = %v, %v; want true, nil", deleted, err)
				}
				if _, err := s.GetAutoUpdate(ctx, tt.envID, "web"); !errors.Is(err, store.ErrNotFound) {
					t.Errorf("GetAutoUpdate after delete: err = %v, want ErrNotFound", err)
				}
				deleted, err = s.DeleteAutoUpdate(ctx, tt.envID, "web")
				if err != nil || deleted {
					t.Errorf("second DeleteAutoUpdate = %v, %v; want false, nil", deleted, err)
				}
			})
		}
	})
}

func TestAutoUpdatesWithAndWithoutEnvironmentAreDistinct(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		env1 := createEnvironment(t, s, "one")
		env2 := createEnvironment(t, s, "two")
		var want []store.AutoUpdate
		for i, envID := range []*int64{nil, &env1.ID, &env2.ID} {
			a := store.AutoUpdate{ContainerName: "db", EnvironmentID: envID, ScheduleType: "weekly",
				VulnerabilityCriteria: "never", CronExpression: string(rune('a' + i))}
			if err := s.UpsertAutoUpdate(ctx, &a); err != nil {
				t.Fatalf("UpsertAutoUpdate: %v", err)
			}
			want = append(want, a)
		}
		got, err := s.ListAutoUpdates(ctx)
		if err != nil {
			t.Fatalf("ListAutoUpdates: %v", err)
		}
		if diff := cmp.Diff(want, got, approxTime); diff != "" {
			t.Errorf("ListAutoUpdates (-want +got):\n%s", diff)
		}
		for _, w := range want {
			got, err := s.GetAutoUpdate(ctx, w.EnvironmentID, "db")
			if err != nil {
				t.Fatalf("GetAutoUpdate: %v", err)
			}
			if diff := cmp.Diff(w, got, approxTime); diff != "" {
				t.Errorf("GetAutoUpdate (-want +got):\n%s", diff)
			}
		}
		if deleted, err := s.DeleteAutoUpdate(ctx, nil, "db"); err != nil || !deleted {
			t.Fatalf("DeleteAutoUpdate(nil) = %v, %v; want true, nil", deleted, err)
		}
		got, err = s.ListAutoUpdates(ctx)
		if err != nil {
			t.Fatalf("ListAutoUpdates: %v", err)
		}
		if diff := cmp.Diff(want[1:], got, approxTime); diff != "" {
			t.Errorf("ListAutoUpdates after deleting the one without environment (-want +got):\n%s", diff)
		}
	})
}

func TestListAutoUpdatesOnEmptyStoreIsEmpty(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		got, err := s.ListAutoUpdates(t.Context())
		if err != nil || got == nil || len(got) != 0 {
			t.Fatalf("ListAutoUpdates = %#v, %v; want empty non-nil slice", got, err)
		}
	})
}

func TestUpsertAutoUpdateForMissingEnvironmentIsNotFound(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		missing := int64(999)
		a := store.AutoUpdate{ContainerName: "web", EnvironmentID: &missing, ScheduleType: "daily", VulnerabilityCriteria: "never"}
		if err := s.UpsertAutoUpdate(t.Context(), &a); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("UpsertAutoUpdate for a missing environment: err = %v, want ErrNotFound", err)
		}
	})
}

func TestConcurrentUpsertAutoUpdateKeepsOneRow(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		env := createEnvironment(t, s, "busy")
		const n = 32
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() {
				a := store.AutoUpdate{ContainerName: "web", EnvironmentID: &env.ID, ScheduleType: "daily", VulnerabilityCriteria: "never"}
				errs[i] = s.UpsertAutoUpdate(ctx, &a)
			})
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("UpsertAutoUpdate #%d: %v", i, err)
			}
		}
		list, err := s.ListAutoUpdates(ctx)
		if err != nil {
			t.Fatalf("ListAutoUpdates: %v", err)
		}
		if len(list) != 1 {
			t.Errorf("ListAutoUpdates = %d rows, want 1", len(list))
		}
	})
}
