package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/berth-dev/berth/server/internal/servertest"
	"github.com/berth-dev/berth/shared/enginetest"
)

// TestServedBerthBacksItselfUpToADestination: berth serve, as its main
// wires it, runs a backup configuration of type berth to a local restic
// repository; the snapshot's archive, downloaded, restores with berth admin
// restore onto an empty data directory whose key opens the stack's secret.
func TestServedBerthBacksItselfUpToADestination(t *testing.T) {
	enginetest.Require(t)
	enginetest.RequireEnv(t, "restic", "BERTH_TEST_RESTIC")
	bin := servertest.Build(t)
	orig := backupTarget{dataDir: filepath.Join(t.TempDir(), "data")}
	p := servertest.Start(t, bin, "original", append(orig.env(), "BERTH_RESTIC="+os.Getenv("BERTH_TEST_RESTIC"))...)
	cookie := fillBerth(t, p.URL, orig.dataDir)
	h := map[string]string{"Cookie": cookie, "Accept": "application/json"}

	repo := filepath.Join(t.TempDir(), "repo")
	var dest struct {
		ID             int64
		LastTestStatus string
	}
	body, _ := json.Marshal(map[string]any{"name": "self", "repository": repo, "password": "self-backup-pw"})
	if status := do(t, "POST", p.URL+"/api/backup/destinations", h, string(body), &dest); status != 201 || dest.LastTestStatus != "success" {
		t.Fatalf("create destination = %d %+v", status, dest)
	}
	var cfg struct{ ID int64 }
	body, _ = json.Marshal(map[string]any{"destinationId": dest.ID, "type": "berth", "environmentId": 1, "schedule": "0 2 * * *"})
	if status := do(t, "POST", p.URL+"/api/backup/configs", h, string(body), &cfg); status != 201 {
		t.Fatalf("create config = %d", status)
	}
	var run struct {
		Execution struct{ Status, Logs string }
	}
	if status := do(t, "POST", fmt.Sprintf("%s/api/schedules/backup/%d/run?wait=true", p.URL, cfg.ID), h, "", &run); status != 200 ||
		run.Execution.Status != "success" {
		t.Fatalf("run = %d %+v", status, run)
	}
	var snaps struct {
		Snapshots []struct{ ID string }
	}
	if status := do(t, "GET", fmt.Sprintf("%s/api/backup/snapshots?configId=%d", p.URL, cfg.ID), h, "", &snaps); status != 200 ||
		len(snaps.Snapshots) != 1 {
		t.Fatalf("snapshots = %d %+v", status, snaps)
	}
	req, err := http.NewRequest("GET", fmt.Sprintf("%s/api/backup/snapshots/%s/dump?destinationId=%d&path=/berth-backup.tar.gz&download=true",
		p.URL, snaps.Snapshots[0].ID, dest.ID), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Cookie", cookie)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	archive := filepath.Join(t.TempDir(), "berth-backup.tar.gz")
	f, err := os.OpenFile(archive, os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.Copy(f, resp.Body)
	f.Close()
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("download = %d %v", resp.StatusCode, err)
	}
	restored := backupTarget{dataDir: filepath.Join(t.TempDir(), "restored")}
	if out, err := berthAdmin(t, bin, restored.env(), "", "restore", archive); err != nil || !strings.Contains(out, "restored") {
		t.Fatalf("restore of the downloaded archive: %v\n%s", err, out)
	}
	checkRestoredStackSecret(t, openRestored(t, restored))
}
