package store_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/berth-dev/berth/server/internal/backup"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
)

// A backup configuration round-trips every field, is filtered, updated
// (environment kept), switched off, loses its cron, records its last run
// and is deleted; its runs stay, without it.
func TestBackupConfigRoundTripAndRunsOutliveIt(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		env := createEnvironment(t, s, "env")
		d := store.BackupDestination{Name: "local", Type: backup.TypeLocal, Repository: "/srv/restic", HostPath: "/srv/restic",
			Password: "p", EnvironmentID: &env.ID}
		if err := s.CreateBackupDestination(ctx, &d); err != nil {
			t.Fatal(err)
		}
		c := store.BackupConfig{Name: "db", Type: store.BackupStack, TargetName: "db", EnvironmentID: env.ID,
			DestinationID: d.ID, AllVolumes: false, Volumes: []string{"db_data"}, Paths: []string{"/srv/db"},
			IncludeStackDir: true, Excludes: []string{"*.tmp"}, Tags: []string{"prod"}, Schedule: "0 3 * * *", Enabled: true,
			Retention: store.BackupRetention{KeepLast: 3, KeepDaily: 7}, StopDuringBackup: true, PreHook: "pg_dump",
			PostHook: "true", HookContainer: "postgres", Options: `{"compression":"auto"}`}
		if err := s.CreateBackupConfig(ctx, &c); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetBackupConfig(ctx, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(c, got, cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })); diff != "" {
			t.Errorf("GetBackupConfig (-want +got):\n%s", diff)
		}
		for _, f := range []store.BackupConfigFilter{{Type: store.BackupStack}, {TargetName: "db"}, {EnvironmentID: env.ID},
			{DestinationID: d.ID}} {
			if list, err := s.ListBackupConfigs(ctx, f); err != nil || len(list) != 1 {
				t.Errorf("ListBackupConfigs(%+v) = %d, %v; want 1", f, len(list), err)
			}
		}
		if list, _ := s.ListBackupConfigs(ctx, store.BackupConfigFilter{Type: store.BackupContainer}); len(list) != 0 {
			t.Errorf("containers = %d, want 0", len(list))
		}

		c.Retention, c.EnvironmentID = store.BackupRetention{KeepLast: 1}, env.ID+99
		if err := s.UpdateBackupConfig(ctx, &c); err != nil {
			t.Fatal(err)
		}
		if err := s.SetBackupConfigEnabled(ctx, c.ID, false); err != nil {
			t.Fatal(err)
		}
		if err := s.ClearBackupConfigSchedule(ctx, c.ID); err != nil {
			t.Fatal(err)
		}
		at := time.Now().UTC().Truncate(time.Second)
		if err := s.SetBackupConfigLastRun(ctx, c.ID, store.BackupFailed, "Wrong repository password", at); err != nil {
			t.Fatal(err)
		}
		got, _ = s.GetBackupConfig(ctx, c.ID)
		if got.Retention.KeepLast != 1 || got.EnvironmentID != env.ID || got.Enabled || got.Schedule != "" ||
			got.LastRunStatus != store.BackupFailed || got.LastRunAt == nil || !got.LastRunAt.Equal(at) {
			t.Errorf("after the changes: %+v", got)
		}

		run := store.BackupRun{ConfigID: &c.ID, DestinationID: &d.ID, EnvironmentID: &env.ID, Kind: store.BackupKindBackup,
			Status: store.BackupRunning}
		if err := s.AddBackupRun(ctx, &run); err != nil {
			t.Fatal(err)
		}
		run.Status, run.SnapshotID, run.Files, run.Bytes = store.BackupSuccess, "0123456789abcdef", 3, 42
		if err := s.FinishBackupRun(ctx, &run); err != nil {
			t.Fatal(err)
		}
		if r, err := s.BackupRunOfSnapshot(ctx, "0123456789abcdef"); err != nil || r.ID != run.ID || r.Files != 3 || r.FinishedAt == nil {
			t.Errorf("BackupRunOfSnapshot = %+v, %v", r, err)
		}
		if err := s.DeleteBackupConfig(ctx, c.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.GetBackupConfig(ctx, c.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetBackupConfig after delete: %v, want ErrNotFound", err)
		}
		if err := s.DeleteBackupConfig(ctx, c.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("second delete: %v, want ErrNotFound", err)
		}
		runs, err := s.ListBackupRuns(ctx, 0, 0)
		if err != nil || len(runs) != 1 || runs[0].ConfigID != nil || runs[0].Status != store.BackupSuccess {
			t.Errorf("runs after the config's deletion = %+v, %v; want the run, without its config", runs, err)
		}
	})
}

// The containers a run stopped are kept with it until it clears them; the
// runs of a node left running before a time are the interrupted ones, with
// those containers.
func TestInterruptedBackupRunsKeepTheirStoppedContainers(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		env := createEnvironment(t, s, "env")
		start := time.Now()
		add := func(node, status string, at time.Time) store.BackupRun {
			r := store.BackupRun{EnvironmentID: &env.ID, Kind: store.BackupKindBackup, Status: status, StartedAt: at, Node: node}
			if err := s.AddBackupRun(ctx, &r); err != nil {
				t.Fatal(err)
			}
			return r
		}
		left := add("n1", store.BackupRunning, start.Add(-time.Minute))
		add("n1", store.BackupSuccess, start.Add(-time.Minute))
		add("n2", store.BackupRunning, start.Add(-time.Minute))
		add("n1", store.BackupRunning, start.Add(time.Second)) // this process's own
		if err := s.SetBackupRunStopped(ctx, left.ID, []string{"a", "b"}); err != nil {
			t.Fatal(err)
		}
		got, err := s.InterruptedBackupRuns(ctx, "n1", start)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].ID != left.ID || !slices.Equal(got[0].Stopped, []string{"a", "b"}) {
			t.Fatalf("InterruptedBackupRuns = %+v, want run %d with a and b", got, left.ID)
		}
		if err := s.SetBackupRunStopped(ctx, left.ID, nil); err != nil {
			t.Fatal(err)
		}
		if got, err = s.InterruptedBackupRuns(ctx, "n1", start); err != nil || len(got) != 1 || len(got[0].Stopped) != 0 {
			t.Fatalf("after clearing: %+v (%v), want the run with no container", got, err)
		}
	})
}
