package api_test

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/apitest"
	"github.com/berth-dev/berth/server/internal/backup"
	"github.com/berth-dev/berth/server/internal/backupjobs"
	"github.com/berth-dev/berth/server/internal/helperimage/helperimagetest"
	"github.com/berth-dev/berth/server/internal/schedule"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/enginetest"
)

// Two Berth replicas sharing a PostgreSQL database both find a backup
// schedule due at the same tick: it runs once (one execution, one
// snapshot).
func TestBackupScheduleRunsOnceAcrossTwoReplicas(t *testing.T) {
	enginetest.Require(t)
	enginetest.RequireEnv(t, "restic", "BERTH_TEST_RESTIC")
	ctx := t.Context()
	dbURL, box := storetest.PostgresDatabase(t), storetest.Box(t)
	own, err := store.Open(ctx, dbURL, box) // migrates before either server starts
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { own.Close() })
	set, err := helperimagetest.Set()
	if err != nil {
		t.Fatal(err)
	}
	label := randomLabel()
	t.Cleanup(func() { enginetest.RemoveLabelled(t, label) })
	start := func(node string) *apitest.Berth {
		b, err := apitest.Start(context.Background(), apitest.Options{DBPath: dbURL, DataDir: t.TempDir(), Box: box,
			Node: node, Log: slog.New(slog.DiscardHandler),
			Backup: backup.New(backup.Config{Restic: os.Getenv("BERTH_TEST_RESTIC"), Helper: set})})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(b.Close)
		return b
	}
	a, b := start("replica-a-"+label), start("replica-b-"+label)

	runner := backup.New(backup.Config{Restic: os.Getenv("BERTH_TEST_RESTIC"), Helper: set})
	c, err := engine.NewManager(slog.New(slog.DiscardHandler)).Client(ctx,
		engine.Endpoint{ID: 1, ConnectionType: engine.Socket, SocketPath: enginetest.Socket})
	if err != nil {
		t.Fatal(err)
	}
	where := backup.Where{EnvID: 1, Client: c, Owner: "berth-test-" + label}
	dir := filepath.Join(t.TempDir(), "repo")
	env := int64(1)
	d := store.BackupDestination{Name: "repo-" + label, Type: backup.TypeLocal, Repository: dir, HostPath: dir,
		Password: backupTestPassword, EnvironmentID: &env}
	if err := own.CreateBackupDestination(ctx, &d); err != nil {
		t.Fatal(err)
	}
	if _, err := runner.Init(ctx, where, d.Repo()); err != nil {
		t.Fatal(err)
	}
	name, volume := "bkrep-"+label, "bkrepvol-"+label
	t.Cleanup(func() { _ = exec.Command("docker", "volume", "rm", "-f", volume).Run() })
	if out, err := exec.Command("docker", "run", "-d", "--name", name, "--label", enginetest.Label+"="+label,
		"-v", volume+":/data", enginetest.Image(), "sh", "-c", "echo hi > /data/f.txt; sleep 3600").CombinedOutput(); err != nil {
		t.Fatalf("docker run: %v %s", err, out)
	}
	cfg := store.BackupConfig{Name: name, Type: store.BackupContainer, TargetName: name, EnvironmentID: 1, DestinationID: d.ID,
		AllVolumes: true, Schedule: "0 3 * * *", Enabled: true, Options: "{}"}
	if err := own.CreateBackupConfig(ctx, &cfg); err != nil {
		t.Fatal(err)
	}

	def, err := a.Schedules.Definition(ctx, schedule.Backup, cfg.ID)
	if err != nil {
		t.Fatal(err)
	}
	tick := time.Now().UTC().Truncate(time.Minute)
	var wg sync.WaitGroup
	dones := make([]<-chan struct{}, 2)
	for i, r := range []*apitest.Berth{a, b} {
		wg.Go(func() {
			_, done, err := r.Schedules.RunDue(ctx, def, tick)
			if err != nil {
				t.Error(err)
			}
			dones[i] = done
		})
	}
	wg.Wait()
	ran := 0
	for _, done := range dones {
		if done != nil {
			ran++
			<-done
		}
	}
	if ran != 1 {
		t.Fatalf("%d replicas ran the tick, want 1", ran)
	}
	execs, _, err := own.ListExecutions(ctx, store.ExecutionFilter{ScheduleType: string(schedule.Backup), ScheduleID: cfg.ID, Limit: 10})
	if err != nil || len(execs) != 1 || execs[0].Status != store.ExecutionSuccess {
		t.Errorf("executions = %+v, %v; want one success", execs, err)
	}
	snaps, err := runner.Snapshots(ctx, where, d.Repo(), []string{backupjobs.ConfigTag(cfg.ID)})
	if err != nil || len(snaps) != 1 {
		t.Errorf("snapshots = %v, %v; want exactly one", snaps, err)
	}
}
