package agents_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/berth-dev/berth/server/internal/apitest"
	"github.com/berth-dev/berth/server/internal/backup"
	"github.com/berth-dev/berth/server/internal/backupjobs"
	"github.com/berth-dev/berth/server/internal/secret"
	"github.com/berth-dev/berth/server/internal/selfbackup"
	"github.com/berth-dev/berth/server/internal/store"
)

// TestBackupOfBerthItselfThroughAnAgent runs a backup configuration of
// Berth itself whose restic runs on the second engine, reached through a
// standard agent: the archive streams through the agent's exec into a
// REST repository, and the snapshot's file, downloaded, is a whole archive
// that selfbackup.Restore verifies and restores.
func TestBackupOfBerthItselfThroughAnAgent(t *testing.T) {
	dataDir := t.TempDir()
	dbPath := filepath.Join(dataDir, "berth.db")
	h, _, e := remoteBackupBerthWith(t, func(o *apitest.Options) {
		key, err := secret.LoadKey(dataDir, "")
		if err != nil {
			t.Fatal(err)
		}
		if o.Box, err = secret.New(key); err != nil {
			t.Fatal(err)
		}
		o.DBPath = dbPath
		o.SelfArchive = func(ctx context.Context, includeGit bool, w io.Writer) error {
			return selfbackup.Write(ctx, selfbackup.Options{DataDir: dataDir, DatabaseURL: dbPath, WithGit: includeGit, TempDir: dataDir}, w)
		}
	})
	name := "berth-test-self-" + h.label
	d := store.BackupDestination{Name: name, Type: backup.TypeREST, Password: "pw-" + rand.Text(), EnvironmentID: &e.ID,
		Repository: "rest:" + os.Getenv("BERTH_TEST_REST_URL") + "/" + name + "/"}
	t.Cleanup(func() { os.RemoveAll(filepath.Join(os.Getenv("BERTH_TEST_REST_DIR"), name)) })
	if err := h.b.Store.CreateBackupDestination(t.Context(), &d); err != nil {
		t.Fatal(err)
	}
	h.must(200, "POST", fmt.Sprintf("/api/backup/destinations/%d/init", d.ID), nil, nil)

	var cfg struct {
		ID int64 `json:"id"`
	}
	h.must(201, "POST", "/api/backup/configs", map[string]any{"destinationId": d.ID, "type": "berth", "environmentId": e.ID,
		"schedule": "0 4 * * *", "options": map[string]any{"includeGit": true}}, &cfg)
	var run struct {
		Execution struct {
			Status string `json:"status"`
			Logs   string `json:"logs"`
		} `json:"execution"`
	}
	h.must(200, "POST", fmt.Sprintf("/api/schedules/backup/%d/run?wait=true", cfg.ID), nil, &run)
	if run.Execution.Status != "success" || !strings.Contains(run.Execution.Logs, "git checkouts and mirrors") {
		t.Fatalf("execution = %+v, want success of a backup with git", run.Execution)
	}
	runs, err := h.b.Store.ListBackupRuns(t.Context(), cfg.ID, 1)
	if err != nil || len(runs) != 1 || runs[0].SnapshotID == "" {
		t.Fatalf("runs = %+v, %v", runs, err)
	}
	status, archive := h.do("GET", fmt.Sprintf("/api/backup/snapshots/%s/dump?destinationId=%d&path=/%s&download=true",
		runs[0].SnapshotID, d.ID, backupjobs.SelfFile), nil)
	if status != 200 {
		t.Fatalf("download = %d %s", status, archive)
	}
	file := filepath.Join(t.TempDir(), backupjobs.SelfFile)
	if err := os.WriteFile(file, archive, 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := selfbackup.Restore(t.Context(), selfbackup.RestoreOptions{DataDir: filepath.Join(t.TempDir(), "restored")}, file)
	if err != nil {
		t.Fatalf("restore of the archive sent through the agent: %v", err)
	}
	if !m.WithGit || m.Database != selfbackup.SQLite {
		t.Errorf("manifest = %+v, want SQLite with git", m)
	}
}
