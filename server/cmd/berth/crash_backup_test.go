package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/servertest"
	"github.com/berth-dev/berth/shared/enginetest"
)

// Berth killed (SIGKILL) while a backup that stopped its container runs:
// at the next start the container runs again, the interrupted run says
// so, and the repository passes restic check; a next backup succeeds.
func TestKilledDuringABackupTheContainerRunsAgainAndTheRepositoryChecks(t *testing.T) {
	enginetest.Require(t)
	enginetest.RequireEnv(t, "restic", "BERTH_TEST_RESTIC")
	bin := servertest.Build(t)
	dir := t.TempDir()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	label := "berth-crash-" + hex.EncodeToString(b)
	name, vol := "crashbk"+hex.EncodeToString(b), "crashbkvol"+hex.EncodeToString(b)
	docker := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("docker", args...).CombinedOutput()
		if err != nil {
			t.Fatalf("docker %s: %v %s", args[0], err, out)
		}
		return strings.TrimSpace(string(out))
	}
	t.Cleanup(func() {
		// The killed Berth's helper (its owner is this node) may outlive it.
		if ids, err := exec.Command("docker", "ps", "-aq", "--filter", "label=berth.helper=backup",
			"--filter", "label=berth.helper.repository").Output(); err == nil {
			for _, id := range strings.Fields(string(ids)) {
				if m, _ := exec.Command("docker", "inspect", "-f", "{{range .Mounts}}{{.Source}} {{end}}", id).Output(); strings.Contains(string(m), dir) {
					_ = exec.Command("docker", "rm", "-f", id).Run()
				}
			}
		}
		_ = exec.Command("docker", "rm", "-f", name).Run()
		_ = exec.Command("docker", "volume", "rm", "-f", vol).Run()
		enginetest.RemoveLabelled(t, label)
	})
	// 8 MiB of random data, read at most 256 KiB/s: the backup lasts
	// about 30 s, the window the kill aims at.
	docker("volume", "create", "--label", enginetest.Label+"="+label, vol)
	docker("run", "-d", "--name", name, "--label", enginetest.Label+"="+label, "-v", vol+":/d", enginetest.Image(), "sh", "-c",
		"[ -f /d/data ] || head -c 8388608 /dev/urandom > /d/data; sleep 3600")

	base, pid, _ := startServer(t, bin, "berth", "DATA_DIR="+dir, "BERTH_RESTIC="+getenvOr("BERTH_TEST_RESTIC", "restic"))
	cookie := servertest.FirstAdmin(t, base, dir, "admin", "correct horse")
	headers := map[string]string{"Cookie": cookie, "Accept": "application/json"}
	repo := filepath.Join(t.TempDir(), "repo")
	var dest struct {
		ID             int64
		LastTestStatus string
	}
	body, _ := json.Marshal(map[string]any{"name": "crash", "repository": repo, "password": "crash-pw",
		"flags": "--limit-upload 256"})
	if status := do(t, "POST", base+"/api/backup/destinations", headers, string(body), &dest); status != 201 || dest.LastTestStatus != "success" {
		t.Fatalf("create destination = %d %+v", status, dest)
	}
	var cfg struct{ ID int64 }
	body, _ = json.Marshal(map[string]any{"destinationId": dest.ID, "targetName": name, "type": "container", "environmentId": 1,
		"stopBeforeBackup": true})
	if status := do(t, "POST", base+"/api/backup/configs", headers, string(body), &cfg); status != 201 {
		t.Fatalf("create config = %d", status)
	}
	running := func() bool { return docker("inspect", "-f", "{{.State.Running}}", name) == "true" }

	go func() {
		req, _ := http.NewRequest("POST", fmt.Sprintf("%s/api/backup/configs/%d/run", base, cfg.ID), nil)
		req.Header.Set("Cookie", cookie)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body) // until the server dies
			resp.Body.Close()
		}
	}()
	// Killed once the container is stopped and restic is at work.
	deadline := time.Now().Add(time.Minute)
	for running() || docker("ps", "-q", "--filter", "label=berth.helper=backup", "--filter", "status=running") == "" {
		if time.Now().After(deadline) {
			t.Fatal("the backup never stopped the container and started restic")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for syscall.Kill(pid, 0) == nil && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if running() {
		t.Fatal("the container runs right after the kill: the test did not test the recovery")
	}

	// Started again as the same node (host and port), as a restart is.
	port := base[strings.LastIndex(base, ":")+1:]
	base, _, _ = startServer(t, bin, "berth after the kill", "DATA_DIR="+dir, "PORT="+port,
		"BERTH_RESTIC="+getenvOr("BERTH_TEST_RESTIC", "restic"))
	for deadline = time.Now().Add(time.Minute); !running(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the container the killed backup had stopped is not running again after the restart")
		}
	}
	var got struct {
		LastRunStatus  string
		LastRunMessage string
	}
	for deadline = time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		status := do(t, "GET", fmt.Sprintf("%s/api/backup/configs/%d", base, cfg.ID), headers, "", &got)
		if status == 200 && got.LastRunStatus == "failed" && strings.Contains(got.LastRunMessage, "Interrupted: Berth stopped during the run") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the configuration after the restart = %d %+v, want its run interrupted", status, got)
		}
	}

	// The repository is consistent, and usable: a task check, a backup.
	var check struct {
		Success bool
		Error   string
	}
	body, _ = json.Marshal(map[string]any{"task": "check"})
	if status := do(t, "POST", fmt.Sprintf("%s/api/backup/destinations/%d/task", base, dest.ID), headers, string(body), &check); status != 200 || !check.Success {
		t.Errorf("restic check after the kill = %d %+v", status, check)
	}
	body, _ = json.Marshal(map[string]any{"flags": ""})
	if status := do(t, "PUT", fmt.Sprintf("%s/api/backup/destinations/%d", base, dest.ID), headers, string(body), nil); status != 200 {
		t.Fatalf("remove the upload limit = %d", status)
	}
	req, _ := http.NewRequest("POST", fmt.Sprintf("%s/api/backup/configs/%d/run", base, cfg.ID), nil)
	req.Header.Set("Cookie", cookie)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(out), `"status":"success"`) {
		t.Errorf("a backup after the kill: %s", out)
	}
	if !running() {
		t.Error("the container is not running after the next backup")
	}
}

// getenvOr returns the environment variable k, or def when it is empty.
func getenvOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
