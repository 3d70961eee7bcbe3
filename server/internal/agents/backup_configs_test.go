package agents_test

import (
	"crypto/rand"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/apitest"
	"github.com/berth-dev/berth/server/internal/backup"
	"github.com/berth-dev/berth/server/internal/helperimage/helperimagetest"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
	"github.com/berth-dev/berth/shared/enginetest"
)

// TestBackupConfigOnTheRemoteEngineThroughAnAgent runs a backup
// configuration of a container on the second engine, reached through a
// standard agent, to a REST repository (the container stopped during the
// backup and running again), then restores it in place through the API:
// the bytes are the same.
func TestBackupConfigOnTheRemoteEngineThroughAnAgent(t *testing.T) {
	enginetest.RequireEnv(t, "backup repositories", "BERTH_TEST_RESTIC", "BERTH_TEST_REST_URL", "BERTH_TEST_REST_DIR")
	socket := engine2(t)
	enginetest.Require(t)
	set, err := helperimagetest.Set()
	if err != nil {
		t.Fatal(err)
	}
	logs := &apitest.LockedBuffer{}
	o := apitest.Options{DBPath: filepath.Join(t.TempDir(), "berth.db"), Box: storetest.Box(t),
		Log:    slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Backup: backup.New(backup.Config{Restic: os.Getenv("BERTH_TEST_RESTIC"), Helper: set})}
	h := &berth{t: t, http: &http.Client{Timeout: 5 * time.Minute}, logs: logs, opts: o, label: randomLabel()}
	h.start()
	t.Cleanup(func() {
		h.b.Close()
		if t.Failed() {
			t.Logf("berth log:\n%s", logs.String())
		}
	})
	t.Cleanup(func() { removeLabelled(t, socket, h.label) })
	const token = "standard-agent-token-backupcfg-0123456789"
	_, port, cert := standardAgent(t, socket, token)
	var e environment
	h.must(201, "POST", "/api/environments", map[string]any{"name": "bkcfg-" + h.label, "connectionType": "agent-standard",
		"host": "127.0.0.1", "port": port, "protocol": "https", "agentToken": token, "tlsCa": cert}, &e)

	name := "berth-test-" + h.label
	d := store.BackupDestination{Name: name, Type: backup.TypeREST, Password: "pw-" + rand.Text(), EnvironmentID: &e.ID,
		Repository: "rest:" + os.Getenv("BERTH_TEST_REST_URL") + "/" + name + "/"}
	t.Cleanup(func() { os.RemoveAll(filepath.Join(os.Getenv("BERTH_TEST_REST_DIR"), name)) })
	if err := h.b.Store.CreateBackupDestination(t.Context(), &d); err != nil {
		t.Fatal(err)
	}
	h.must(200, "POST", fmt.Sprintf("/api/backup/destinations/%d/init", d.ID), nil, nil)

	vol := "berth-bkcfg-" + h.label
	onEngine2(t, socket, "volume", "create", "--label", enginetest.Label+"="+h.label, vol)
	onEngine2(t, socket, "run", "-d", "--name", name, "--label", enginetest.Label+"="+h.label, "-v", vol+":/d",
		enginetest.Image(), "sh", "-c", "[ -f /d/a.txt ] || (mkdir -p /d/dir && echo remote > /d/a.txt && head -c 200000 /dev/urandom > /d/dir/b.bin); touch /tmp/ready; sleep 3600")
	sums := "cd /d && find . -type f | sort | xargs sha256sum"
	inCt := func(script string) string { return onEngine2(t, socket, "exec", name, "sh", "-c", script) }
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(inCt("test -f /tmp/ready && echo ready || true"), "ready") && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	want := inCt(sums)

	var cfg struct {
		ID int64 `json:"id"`
	}
	h.must(201, "POST", "/api/backup/configs", map[string]any{"destinationId": d.ID, "targetName": name, "type": "container",
		"environmentId": e.ID, "stopBeforeBackup": true, "schedule": "0 4 * * *"}, &cfg)
	var run struct {
		Execution struct {
			Status string `json:"status"`
			Logs   string `json:"logs"`
		} `json:"execution"`
	}
	h.must(200, "POST", fmt.Sprintf("/api/schedules/backup/%d/run?wait=true", cfg.ID), nil, &run)
	if run.Execution.Status != "success" || !strings.Contains(run.Execution.Logs, "Stopping 1 container") {
		t.Fatalf("execution = %+v, want success after stopping the container", run.Execution)
	}
	if got := strings.TrimSpace(onEngine2(t, socket, "inspect", "-f", "{{.State.Running}}", name)); got != "true" {
		t.Errorf("the container runs: %s, want true", got)
	}
	runs, err := h.b.Store.ListBackupRuns(t.Context(), cfg.ID, 1)
	if err != nil || len(runs) != 1 || runs[0].SnapshotID == "" {
		t.Fatalf("runs = %+v, %v", runs, err)
	}

	inCt("echo changed > /d/a.txt && rm /d/dir/b.bin")
	status, body := h.do("POST", "/api/backup/restore", map[string]any{"destinationId": d.ID, "snapshotId": runs[0].SnapshotID,
		"mode": "in-place", "confirmOverwrite": true})
	if status != 200 || !strings.Contains(string(body), `"status":"success"`) {
		t.Fatalf("restore = %d %s", status, body)
	}
	if got := inCt(sums); got != want {
		t.Errorf("restored volume:\n%s\nwant\n%s", got, want)
	}
}
