package store_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
)

// addActivity stores an event of env and fails the test if it was not new.
func addActivity(t *testing.T, s *store.Store, env int64, typ, action, id, name string, at time.Time) store.ActivityEvent {
	t.Helper()
	e := store.ActivityEvent{EnvironmentID: env, Type: typ, Action: action, ActorID: id, ActorName: name, Time: at}
	added, err := s.AddActivity(t.Context(), &e)
	if err != nil || !added {
		t.Fatalf("AddActivity(%s %s %s) = %v, %v", typ, action, name, added, err)
	}
	return e
}

func activityKeys(events []store.ActivityEvent) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = e.ActorName + ":" + e.Action
	}
	return out
}

func TestActivityIsListedNewestFirstAndFiltered(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a := createEnvironment(t, s, "a")
		b := createEnvironment(t, s, "b")
		t0 := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
		web := "0123456789abcdef0123456789abcdef"
		addActivity(t, s, a.ID, "container", "create", web, "web", t0)
		addActivity(t, s, a.ID, "container", "start", web, "web", t0.Add(time.Second))
		addActivity(t, s, a.ID, "container", "start", "ffff", "db", t0.Add(2*time.Second))
		addActivity(t, s, b.ID, "container", "die", "eeee", "cache", t0.Add(time.Hour))
		addActivity(t, s, b.ID, "image", "pull", "busybox:1", "busybox:1", t0.Add(2*time.Hour))

		since, until := t0.Add(time.Second), t0.Add(time.Hour)
		tests := []struct {
			name  string
			f     store.ActivityFilter
			want  []string
			total int
		}{
			{"all", store.ActivityFilter{}, []string{"busybox:1:pull", "cache:die", "db:start", "web:start", "web:create"}, 5},
			{"environment", store.ActivityFilter{EnvironmentIDs: []int64{a.ID}}, []string{"db:start", "web:start", "web:create"}, 3},
			{"no environment", store.ActivityFilter{EnvironmentIDs: []int64{}}, []string{}, 0},
			{"container name", store.ActivityFilter{Container: "web"}, []string{"web:start", "web:create"}, 2},
			{"container id prefix", store.ActivityFilter{Container: web[:12]}, []string{"web:start", "web:create"}, 2},
			{"short id is not a prefix", store.ActivityFilter{Container: web[:4]}, []string{}, 0},
			{"action", store.ActivityFilter{Action: "start"}, []string{"db:start", "web:start"}, 2},
			{"type", store.ActivityFilter{Type: "image"}, []string{"busybox:1:pull"}, 1},
			{"time range", store.ActivityFilter{Since: &since, Until: &until}, []string{"db:start", "web:start"}, 2},
			{"page", store.ActivityFilter{Limit: 2, Offset: 1}, []string{"cache:die", "db:start"}, 5},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got, total, err := s.ListActivity(ctx, tt.f)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.want, activityKeys(got)); diff != "" || total != tt.total {
					t.Errorf("ListActivity: total %d, want %d (-want +got):\n%s", total, tt.total, diff)
				}
			})
		}
	})
}

func TestActivityOccurrenceIsStoredOnce(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		env := createEnvironment(t, s, "env")
		at := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
		first := addActivity(t, s, env.ID, "container", "start", "abc", "web", at)
		again := store.ActivityEvent{EnvironmentID: env.ID, Type: "container", Action: "start", ActorID: "abc", ActorName: "web", Time: at}
		added, err := s.AddActivity(t.Context(), &again)
		if err != nil || added {
			t.Fatalf("second AddActivity = %v, %v; want false, nil", added, err)
		}
		gone := store.ActivityEvent{EnvironmentID: env.ID + 1000, Type: "container", Action: "start", ActorID: "abc", Time: at}
		if added, err := s.AddActivity(t.Context(), &gone); err != nil || added {
			t.Fatalf("AddActivity of an unknown environment = %v, %v; want false, nil", added, err)
		}
		got, total, err := s.ListActivity(t.Context(), store.ActivityFilter{})
		if err != nil || total != 1 || got[0].ID != first.ID {
			t.Fatalf("ListActivity = %+v, %d, %v; want only the first", got, total, err)
		}
		if diff := cmp.Diff(first, got[0], approxTime); diff != "" {
			t.Errorf("read back (-want +got):\n%s", diff)
		}
	})
}

func TestActivitySinceStatsAndContainers(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		env := createEnvironment(t, s, "env")
		t0 := time.Date(2026, 11, 23, 10, 15, 0, 0, time.UTC)
		first := addActivity(t, s, env.ID, "container", "start", "aaa", "web", t0)
		addActivity(t, s, env.ID, "container", "die", "aaa", "web", t0.Add(time.Hour))
		addActivity(t, s, env.ID, "container", "start", "bbb", "db", t0.Add(time.Minute))
		addActivity(t, s, env.ID, "network", "connect", "nnn", "bridge", t0.Add(2*time.Minute))

		after, err := s.ActivitySince(ctx, store.ActivityFilter{AfterID: first.ID})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"web:die", "db:start", "bridge:connect"}, activityKeys(after)); diff != "" {
			t.Errorf("ActivitySince (-want +got):\n%s", diff)
		}
		last, err := s.LastActivityID(ctx)
		if err != nil || last != after[2].ID {
			t.Errorf("LastActivityID = %d, %v; want %d", last, err, after[2].ID)
		}

		byAction, byHour, err := s.ActivityStats(ctx, store.ActivityFilter{})
		if err != nil {
			t.Fatal(err)
		}
		wantActions := []store.ActivityCount{{Key: "start", Count: 2}, {Key: "connect", Count: 1}, {Key: "die", Count: 1}}
		if diff := cmp.Diff(wantActions, byAction); diff != "" {
			t.Errorf("per action (-want +got):\n%s", diff)
		}
		wantHours := []store.ActivityCount{{Key: "2026-11-23T10", Count: 3}, {Key: "2026-11-23T11", Count: 1}}
		if diff := cmp.Diff(wantHours, byHour); diff != "" {
			t.Errorf("per hour (-want +got):\n%s", diff)
		}

		cs, err := s.ActivityContainers(ctx, store.ActivityFilter{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range cs {
			got = append(got, c.Last.ActorName+":"+c.Last.Action+":"+string(rune('0'+c.Events)))
		}
		if diff := cmp.Diff([]string{"web:die:2", "db:start:1"}, got); diff != "" {
			t.Errorf("ActivityContainers (-want +got):\n%s", diff)
		}
	})
}

func TestActivityIsDeletedAndPruned(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a := createEnvironment(t, s, "a")
		b := createEnvironment(t, s, "b")
		t0 := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
		for i := range 6 {
			addActivity(t, s, a.ID, "container", "start", "aaa", "web", t0.Add(time.Duration(i)*time.Hour))
		}
		addActivity(t, s, b.ID, "container", "start", "bbb", "db", t0)

		n, err := s.DeleteActivity(ctx, &b.ID)
		if err != nil || n != 1 {
			t.Fatalf("DeleteActivity(b) = %d, %v; want 1", n, err)
		}
		// Older than t0+2h: 2 rows; then a cap of 3 leaves the newest 3.
		n, err = s.PruneActivity(ctx, t0.Add(2*time.Hour), 3)
		if err != nil || n != 3 {
			t.Fatalf("PruneActivity = %d, %v; want 3", n, err)
		}
		left, total, err := s.ListActivity(ctx, store.ActivityFilter{})
		if err != nil || total != 3 || !left[2].Time.Equal(t0.Add(3*time.Hour)) {
			t.Fatalf("after prune: %+v, %d, %v; want the 3 newest", left, total, err)
		}
		if n, err := s.DeleteActivity(ctx, nil); err != nil || n != 3 {
			t.Fatalf("DeleteActivity(all) = %d, %v; want 3", n, err)
		}
	})
}
