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

// running returns a running execution of (typ, id) held by node.
func running(typ string, id int64, node string, at time.Time) store.Execution {
	lease := at.Add(time.Minute)
	return store.Execution{ScheduleType: typ, ScheduleID: id, EntityName: "web", TriggeredBy: "manual",
		TriggeredAt: at, StartedAt: &at, Status: store.ExecutionRunning, Node: node, LeaseUntil: &lease}
}

func TestExecutionRoundTripsAndFinishes(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		env := createEnvironment(t, s, "env")
		at := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
		tick := at.Truncate(time.Minute)
		e := running("container_update", 7, "node-a", at)
		e.EnvironmentID, e.TriggeredBy, e.ScheduledFor = &env.ID, "cron", &tick
		if err := s.AddExecution(ctx, &e); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetExecution(ctx, e.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(e, got, approxTime); diff != "" {
			t.Errorf("read back (-want +got):\n%s", diff)
		}
		if err := s.RenewExecution(ctx, e.ID, "node-b", at.Add(time.Hour), "x"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("renewal by another node = %v, want ErrNotFound", err)
		}
		if err := s.RenewExecution(ctx, e.ID, "node-a", at.Add(2*time.Minute), "line 1\n"); err != nil {
			t.Fatal(err)
		}
		if err := s.CheckpointExecution(ctx, e.ID, "node-b", "x", `{"x":1}`); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("checkpoint by another node = %v, want ErrNotFound", err)
		}
		if err := s.CheckpointExecution(ctx, e.ID, "node-a", "line 1\n", `{"step":"renamed"}`); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.GetExecution(ctx, e.ID); got.Details != `{"step":"renamed"}` || got.Logs != "line 1\n" ||
			got.Status != store.ExecutionRunning {
			t.Errorf("after a checkpoint: details %q, logs %q, status %s", got.Details, got.Logs, got.Status)
		}

		done := at.Add(3 * time.Second)
		ms, msg := int64(3000), "boom"
		e.Status, e.CompletedAt, e.DurationMS, e.ErrorMessage = store.ExecutionFailed, &done, &ms, &msg
		e.Details, e.Logs, e.LeaseUntil = `{"reason":"x"}`, "line 1\nline 2\n", nil
		if err := s.FinishExecution(ctx, &e); err != nil {
			t.Fatal(err)
		}
		if err := s.FinishExecution(ctx, &e); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("second finish = %v, want ErrNotFound", err)
		}
		got, _ = s.GetExecution(ctx, e.ID)
		if diff := cmp.Diff(e, got, approxTime); diff != "" {
			t.Errorf("finished (-want +got):\n%s", diff)
		}

		if err := s.AnnotateExecution(ctx, e.ID, "boom; restored", "line 3"); err != nil {
			t.Fatal(err)
		}
		got, _ = s.GetExecution(ctx, e.ID)
		if got.ErrorMessage == nil || *got.ErrorMessage != "boom; restored" || got.Logs != "line 1\nline 2\nline 3\n" ||
			got.Status != store.ExecutionFailed {
			t.Errorf("annotated: %+v", got)
		}
		if err := s.AnnotateExecution(ctx, e.ID+100, "x", "y"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("annotate a missing execution = %v, want ErrNotFound", err)
		}
	})
}

func TestOneRunningExecutionPerSchedule(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		at := time.Now().UTC()
		first := running("git_stack_sync", 1, "a", at)
		if err := s.AddExecution(ctx, &first); err != nil {
			t.Fatal(err)
		}
		second := running("git_stack_sync", 1, "b", at)
		if err := s.AddExecution(ctx, &second); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("second running execution = %v, want ErrConflict", err)
		}
		other := running("git_stack_sync", 2, "b", at)
		if err := s.AddExecution(ctx, &other); err != nil {
			t.Fatalf("another schedule: %v", err)
		}
		skipped := running("git_stack_sync", 1, "b", at)
		skipped.Status = store.ExecutionSkipped
		if err := s.AddExecution(ctx, &skipped); err != nil {
			t.Fatalf("a skipped execution beside the running one: %v", err)
		}
		first.Status = store.ExecutionSuccess
		if err := s.FinishExecution(ctx, &first); err != nil {
			t.Fatal(err)
		}
		if err := s.AddExecution(ctx, &second); err != nil {
			t.Fatalf("after the first finished: %v", err)
		}
	})
}

// Two servers claiming the same cron tick at once: exactly one insert wins,
// even after the winner finished.
func TestOneExecutionPerCronTick(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		tick := time.Date(2026, 11, 23, 4, 0, 0, 0, time.UTC)
		var wg sync.WaitGroup
		var mu sync.Mutex
		var wins, conflicts int
		for _, node := range []string{"a", "b", "c", "d"} {
			wg.Go(func() {
				e := running("image_prune", 3, node, tick)
				e.ScheduledFor = &tick
				err := s.AddExecution(ctx, &e)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					wins++
				case errors.Is(err, store.ErrConflict):
					conflicts++
				default:
					t.Errorf("node %s: %v", node, err)
				}
			})
		}
		wg.Wait()
		if wins != 1 || conflicts != 3 {
			t.Fatalf("wins %d, conflicts %d; want 1 and 3", wins, conflicts)
		}
		list, total, err := s.ListExecutions(ctx, store.ExecutionFilter{ScheduleType: "image_prune", Limit: 10})
		if err != nil || total != 1 || len(list) != 1 {
			t.Fatalf("executions = %d (%v), want 1", total, err)
		}
		list[0].Status = store.ExecutionSuccess
		if err := s.FinishExecution(ctx, &list[0]); err != nil {
			t.Fatal(err)
		}
		late := running("image_prune", 3, "e", tick)
		late.ScheduledFor = &tick
		if err := s.AddExecution(ctx, &late); !errors.Is(err, store.ErrConflict) {
			t.Errorf("late claim of a finished tick = %v, want ErrConflict", err)
		}
		next := tick.Add(24 * time.Hour)
		late.ScheduledFor = &next
		if err := s.AddExecution(ctx, &late); err != nil {
			t.Errorf("the next tick: %v", err)
		}
	})
}

func TestFailInterruptedExecutions(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		at := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
		mine := running("container_update", 1, "me", at)       // lease still valid, but my own
		expired := running("container_update", 2, "other", at) // lease ran out
		alive := running("container_update", 3, "other", at)   // another server, still renewing
		finished := running("container_update", 4, "me", at)   // not running
		past := at.Add(-time.Hour)
		expired.LeaseUntil = &past
		later := at.Add(time.Hour)
		alive.LeaseUntil = &later
		for _, e := range []*store.Execution{&mine, &expired, &alive, &finished} {
			if err := s.AddExecution(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
		finished.Status = store.ExecutionSuccess
		if err := s.FinishExecution(ctx, &finished); err != nil {
			t.Fatal(err)
		}
		failed, err := s.FailInterruptedExecutions(ctx, "me", at, "Interrupted")
		if err != nil || len(failed) != 2 || failed[0].ID != mine.ID || failed[1].ID != expired.ID ||
			failed[0].Status != store.ExecutionFailed {
			t.Fatalf("failed %+v (%v), want mine and expired", failed, err)
		}
		// A second sweep (another server's) finds nothing left to mark.
		if again, err := s.FailInterruptedExecutions(ctx, "", at, "Interrupted"); err != nil || len(again) != 0 {
			t.Fatalf("second sweep failed %+v (%v), want none", again, err)
		}
		for _, c := range []struct {
			e    store.Execution
			want string
		}{{mine, store.ExecutionFailed}, {expired, store.ExecutionFailed}, {alive, store.ExecutionRunning}, {finished, store.ExecutionSuccess}} {
			got, _ := s.GetExecution(ctx, c.e.ID)
			if got.Status != c.want {
				t.Errorf("execution of schedule %d: %s, want %s", c.e.ScheduleID, got.Status, c.want)
			}
			if c.want == store.ExecutionFailed && (got.ErrorMessage == nil || *got.ErrorMessage != "Interrupted" || got.CompletedAt == nil) {
				t.Errorf("execution of schedule %d: %+v", c.e.ScheduleID, got)
			}
		}
	})
}

func TestListRecentAndPruneExecutions(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		env := createEnvironment(t, s, "env")
		other := createEnvironment(t, s, "other")
		base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
		add := func(typ string, id int64, envID *int64, day int, status string) store.Execution {
			t.Helper()
			e := running(typ, id, "n", base.AddDate(0, 0, day))
			e.EnvironmentID, e.Status = envID, status
			if err := s.AddExecution(ctx, &e); err != nil {
				t.Fatal(err)
			}
			return e
		}
		for day := range 7 {
			add("container_update", 1, &env.ID, day, store.ExecutionSuccess)
		}
		add("image_prune", other.ID, &other.ID, 0, store.ExecutionFailed)
		add("system_cleanup", 1, nil, 1, store.ExecutionSkipped)

		recent, err := s.RecentExecutions(ctx, 5)
		if err != nil {
			t.Fatal(err)
		}
		cu := recent[store.ScheduleKey{Type: "container_update", ID: 1}]
		if len(cu) != 5 || cu[0].TriggeredAt.Day() != 7 || cu[4].TriggeredAt.Day() != 3 {
			t.Errorf("recent container_update = %d, newest day %v", len(cu), cu)
		}
		if len(recent[store.ScheduleKey{Type: "image_prune", ID: other.ID}]) != 1 || len(recent) != 3 {
			t.Errorf("recent = %v", recent)
		}

		list, total, err := s.ListExecutions(ctx, store.ExecutionFilter{EnvironmentIDs: []int64{env.ID}, Limit: 3, Offset: 1})
		if err != nil || total != 8 || len(list) != 3 || list[0].TriggeredAt.Day() != 7 {
			t.Errorf("env page = %d of %d (%v)", len(list), total, err)
		}
		_, total, _ = s.ListExecutions(ctx, store.ExecutionFilter{EnvironmentIDs: []int64{}, Limit: 10})
		if total != 1 {
			t.Errorf("no environment accessible: %d executions, want the system one", total)
		}
		_, total, _ = s.ListExecutions(ctx, store.ExecutionFilter{Status: store.ExecutionFailed, Limit: 10})
		if total != 1 {
			t.Errorf("failed: %d", total)
		}

		n, err := s.DeleteExecutionsBefore(ctx, base.AddDate(0, 0, 2))
		if err != nil || n != 4 {
			t.Errorf("pruned %d (%v), want 4", n, err)
		}
	})
}

func TestEnvSchedulesDefaultsSaveAndDelete(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		e := store.Environment{Name: "plain", ConnectionType: "socket", Labels: []string{}, AgentCapabilities: []string{}}
		if err := s.CreateEnvironment(ctx, &e); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetEnvSchedule(ctx, e.ID, store.EnvUpdateCheck)
		if err != nil {
			t.Fatal(err)
		}
		want := store.EnvSchedule{EnvironmentID: e.ID, Kind: store.EnvUpdateCheck, CronExpression: "0 4 * * *",
			VulnerabilityCriteria: "never", PruneMode: "dangling"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("defaults (-want +got):\n%s", diff)
		}
		if list, _ := s.ListEnvSchedules(ctx); len(list) != 0 {
			t.Errorf("listed before saving: %+v", list)
		}

		es := store.EnvSchedule{EnvironmentID: e.ID, Kind: store.EnvUpdateCheck, Enabled: true, AutoUpdate: true,
			CronExpression: "30 2 * * 1", VulnerabilityCriteria: "critical"}
		if err := s.SaveEnvSchedule(ctx, &es); err != nil {
			t.Fatal(err)
		}
		if !es.Configured || !es.Enabled || !es.AutoUpdate || es.CronExpression != "30 2 * * 1" || es.VulnerabilityCriteria != "critical" {
			t.Errorf("saved = %+v", es)
		}
		env, _ := s.GetEnvironment(ctx, e.ID)
		if !env.UpdateCheckEnabled || !env.UpdateCheckAutoUpdate || env.ImagePruneEnabled {
			t.Errorf("environment flags = %v %v %v", env.UpdateCheckEnabled, env.UpdateCheckAutoUpdate, env.ImagePruneEnabled)
		}
		es.Enabled, es.CronExpression = false, "0 1 * * *"
		if err := s.SaveEnvSchedule(ctx, &es); err != nil {
			t.Fatal(err)
		}
		prune := store.EnvSchedule{EnvironmentID: e.ID, Kind: store.EnvImagePrune, Enabled: true, CronExpression: "0 3 * * 0", PruneMode: "all"}
		if err := s.SaveEnvSchedule(ctx, &prune); err != nil {
			t.Fatal(err)
		}
		list, err := s.ListEnvSchedules(ctx)
		if err != nil || len(list) != 2 || list[0].Enabled || list[0].CronExpression != "0 1 * * *" || list[1].PruneMode != "all" {
			t.Fatalf("list = %+v (%v)", list, err)
		}
		if err := s.DeleteEnvSchedule(ctx, e.ID, store.EnvImagePrune); err != nil {
			t.Fatal(err)
		}
		if list, _ := s.ListEnvSchedules(ctx); len(list) != 1 || list[0].Kind != store.EnvUpdateCheck {
			t.Errorf("after delete = %+v", list)
		}
		if env, _ := s.GetEnvironment(ctx, e.ID); env.ImagePruneEnabled {
			t.Error("image prune still switched on after delete")
		}
		if err := s.SaveEnvSchedule(ctx, &store.EnvSchedule{EnvironmentID: 999, Kind: store.EnvImagePrune, CronExpression: "* * * * *"}); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("unknown environment = %v", err)
		}

		tz := "Europe/Berlin"
		if err := s.SetEnvironmentTimezone(ctx, e.ID, &tz); err != nil {
			t.Fatal(err)
		}
		if env, _ := s.GetEnvironment(ctx, e.ID); env.Timezone == nil || *env.Timezone != tz {
			t.Errorf("timezone = %v", env.Timezone)
		}
		if err := s.SetEnvironmentTimezone(ctx, e.ID, nil); err != nil {
			t.Fatal(err)
		}
		if env, _ := s.GetEnvironment(ctx, e.ID); env.Timezone != nil {
			t.Errorf("timezone after clearing = %v", *env.Timezone)
		}
	})
}

func TestPendingUpdatesReplaceAndDelete(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		env := createEnvironment(t, s, "env")
		at := time.Date(2026, 11, 23, 4, 0, 0, 0, time.UTC)
		list := []store.PendingUpdate{
			{ContainerName: "web", ContainerID: "c1", Image: "r/web:1", CurrentImageID: "sha256:a", NewDigest: "sha256:b", CheckedAt: at},
			{ContainerName: "db", ContainerID: "c2", Image: "r/db:1", CurrentImageID: "sha256:c", NewDigest: "sha256:d", CheckedAt: at},
		}
		if err := s.ReplacePendingUpdates(ctx, env.ID, list); err != nil {
			t.Fatal(err)
		}
		if err := s.ReplacePendingUpdates(ctx, env.ID, list[:1]); err != nil {
			t.Fatal(err)
		}
		got, err := s.ListPendingUpdates(ctx, env.ID)
		if err != nil || len(got) != 1 || got[0].ContainerName != "web" || got[0].NewDigest != "sha256:b" || !got[0].CheckedAt.Equal(at) {
			t.Fatalf("pending = %+v (%v)", got, err)
		}
		if deleted, err := s.DeletePendingUpdate(ctx, env.ID, "web"); err != nil || !deleted {
			t.Errorf("delete = %v, %v", deleted, err)
		}
		if deleted, _ := s.DeletePendingUpdate(ctx, env.ID, "web"); deleted {
			t.Error("deleted twice")
		}
	})
}
