package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/apitest"
	"github.com/berth-dev/berth/server/internal/backup"
	"github.com/berth-dev/berth/server/internal/backupjobs"
	"github.com/berth-dev/berth/server/internal/helperimage/helperimagetest"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/enginetest"
)

// backupHarness is a Berth with the real restic runner, and a local
// repository on the test's host as destination.
type backupHarness struct {
	*harness
	runner *backup.Restic
	where  backup.Where
	destID int64
	repo   backup.Repo
}

const backupTestPassword = "correct horse battery staple"

// newBackupHarness serves a Berth whose backups run restic on the local
// engine, with a destination (initialised) in a temporary directory.
func newBackupHarness(t *testing.T, o apitest.Options) *backupHarness {
	t.Helper()
	enginetest.Require(t)
	enginetest.RequireEnv(t, "restic", "BERTH_TEST_RESTIC")
	set, err := helperimagetest.Set()
	if err != nil {
		t.Fatal(err)
	}
	runner := backup.New(backup.Config{Restic: os.Getenv("BERTH_TEST_RESTIC"), Helper: set})
	if o.DBPath == "" {
		o.DBPath = filepath.Join(t.TempDir(), "berth.db")
	}
	if o.Box == nil {
		o.Box = storetest.Box(t)
	}
	o.Backup = runner
	h := &backupHarness{harness: startHarnessWith(t, o), runner: runner}
	c, err := engine.NewManager(slog.New(slog.DiscardHandler)).Client(t.Context(),
		engine.Endpoint{ID: 1, ConnectionType: engine.Socket, SocketPath: enginetest.Socket})
	if err != nil {
		t.Fatal(err)
	}
	h.where = backup.Where{EnvID: 1, Client: c, Owner: "berth-test-" + h.label}
	h.destID, h.repo = h.localDestination("repo-"+h.label, backupTestPassword, backupTestPassword)
	return h
}

// localDestination stores a local destination whose repository (in a
// temporary directory) is initialised with password; the destination
// itself holds stored as its password.
func (h *backupHarness) localDestination(name, password, stored string) (int64, backup.Repo) {
	h.t.Helper()
	dir := filepath.Join(h.t.TempDir(), "repo")
	h.t.Cleanup(func() { removeRootOwned(h.t, filepath.Dir(dir)) })
	env := int64(1)
	d := store.BackupDestination{Name: name, Type: backup.TypeLocal, Repository: dir, HostPath: dir, Password: stored,
		EnvironmentID: &env}
	if err := h.store.CreateBackupDestination(h.t.Context(), &d); err != nil {
		h.t.Fatal(err)
	}
	repo := backup.Repo{Type: backup.TypeLocal, Repository: dir, Password: password}
	if _, err := h.runner.Init(h.t.Context(), h.where, repo); err != nil {
		h.t.Fatal(err)
	}
	return d.ID, d.Repo()
}

// removeRootOwned removes a directory whose content root wrote (restic in
// a helper container), through a helper container.
func removeRootOwned(t *testing.T, dir string) {
	_ = exec.Command("docker", "run", "--rm", "-v", dir+":/d", enginetest.Image(), "sh", "-c", "rm -rf /d/* /d/.[!.]*").Run()
	_ = os.RemoveAll(dir)
}

// dockerExec runs sh -c script in container name and returns its output.
func dockerExec(t *testing.T, name, script string) string {
	t.Helper()
	out, err := exec.Command("docker", "exec", name, "sh", "-c", script).CombinedOutput()
	if err != nil {
		t.Fatalf("docker exec %s %q: %v: %s", name, script, err, out)
	}
	return string(out)
}

// backupStackCompose is a one-service stack with a named volume, all
// labelled for cleanup.
func backupStackCompose(label string) string {
	return fmt.Sprintf(`services:
  app:
    image: %[1]s
    command: ["sleep", "3600"]
    environment:
      BK_TOKEN: ${BK_TOKEN:-none}
    volumes:
      - data:/data
    labels:
      %[2]s: %[3]s
volumes:
  data:
    labels:
      %[2]s: %[3]s
`, enginetest.Image(), enginetest.Label, label)
}

// deployBackupStack deploys the stack name and writes known files in its
// volume; it returns the app container's name.
func (h *backupHarness) deployBackupStack(name string) string {
	h.t.Helper()
	h.removeStackAtCleanup(name)
	status, messages, res := h.streamStack("POST", "/api/stacks?env=1", map[string]any{"name": name, "compose": backupStackCompose(h.label),
		"envVars": []map[string]any{{"key": "BK_TOKEN", "value": "tok-" + h.label, "isSecret": true}}})
	if status != 200 || !res.Success {
		h.t.Fatalf("deploy: %d %+v %q", status, res, messages)
	}
	app := name + "-app-1"
	dockerExec(h.t, app, "mkdir -p /data/sub && echo one > /data/a.txt && head -c 300000 /dev/urandom > /data/sub/b.bin && echo three > /data/c.txt")
	return app
}

// sums returns the sha256 of every file under /data of container name.
func sums(t *testing.T, name string) string {
	t.Helper()
	return dockerExec(t, name, "cd /data && find . -type f | sort | xargs sha256sum")
}

// backupConfig creates a configuration and returns its id.
func (h *backupHarness) backupConfig(body map[string]any) int64 {
	h.t.Helper()
	var out struct {
		ID int64 `json:"id"`
	}
	h.must(201, "POST", "/api/backup/configs", body, &out)
	return out.ID
}

// backupResult is the final event of a run or restore stream.
type backupResult struct {
	Status     string `json:"status"`
	Message    string `json:"message"`
	Error      string `json:"error"`
	SnapshotID string `json:"snapshotId"`
	Files      int64  `json:"files"`
}

// stream opens an SSE route and returns its result event and the phases of
// its progress events.
func (h *backupHarness) stream(path string, body any) (backupResult, []string) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ch, resp := h.openStream(ctx, "POST", path, body)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		h.t.Fatalf("POST %s = %d %s, want an event stream", path, resp.StatusCode, b)
	}
	var res backupResult
	var phases []string
	got := false
	for ev := range ch {
		switch ev.Name {
		case "progress":
			var e backupjobs.Event
			if json.Unmarshal([]byte(ev.Data), &e) == nil && e.Message != "" {
				phases = append(phases, e.Phase+": "+e.Message)
			}
		case "result":
			got = true
			if err := json.Unmarshal([]byte(ev.Data), &res); err != nil {
				h.t.Fatal(err)
			}
		}
	}
	if !got {
		h.t.Fatalf("POST %s: no result event (progress %q)", path, phases)
	}
	return res, phases
}

func (h *backupHarness) running(name string) bool {
	h.t.Helper()
	out, err := exec.Command("docker", "inspect", "-f", "{{.State.Running}}", name).CombinedOutput()
	if err != nil {
		h.t.Fatalf("inspect %s: %v %s", name, err, out)
	}
	return strings.TrimSpace(string(out)) == "true"
}

// A stack's volume is backed up by a run; after files are changed and
// deleted, an in-place restore brings back the same bytes with the stack
// running; a restore to a new name writes new volumes and leaves the
// original untouched.
func TestBackupStackRunThenRestoreInPlaceAndToNewName(t *testing.T) {
	h := newBackupHarness(t, apitest.Options{})
	name := "bk-" + h.label
	app := h.deployBackupStack(name)
	before := sums(t, app)
	id := h.backupConfig(map[string]any{"destinationId": h.destID, "targetName": name, "type": "stack", "environmentId": 1,
		"stopBeforeBackup": true, "retention": map[string]int{"keepLast": 3}})

	res, phases := h.stream(fmt.Sprintf("/api/backup/configs/%d/run", id), nil)
	if res.Status != "success" || res.SnapshotID == "" {
		t.Fatalf("run = %+v (progress %q), want success with a snapshot", res, phases)
	}
	if !strings.Contains(strings.Join(phases, "\n"), "stop: Stopping 1 container") || !h.running(app) {
		t.Errorf("stop-during-backup: progress %q, running %v; want the container stopped and running again", phases, h.running(app))
	}
	var cfg struct {
		LastRunStatus *string `json:"lastRunStatus"`
	}
	h.must(200, "GET", fmt.Sprintf("/api/backup/configs/%d", id), nil, &cfg)
	if cfg.LastRunStatus == nil || *cfg.LastRunStatus != "success" {
		t.Errorf("lastRunStatus = %v, want success", cfg.LastRunStatus)
	}
	snaps, err := h.runner.Snapshots(t.Context(), h.where, h.repo, []string{backupjobs.ConfigTag(id)})
	if err != nil || len(snaps) != 1 || !strings.HasPrefix(snaps[0].ID, res.SnapshotID[:8]) {
		t.Fatalf("snapshots of the config = %+v, %v; want the run's", snaps, err)
	}

	dockerExec(t, app, "echo changed > /data/a.txt && rm /data/c.txt && rm -r /data/sub")
	var preview struct {
		TargetType string `json:"targetType"`
		TargetName string `json:"targetName"`
		Own        bool   `json:"own"`
		Items      []struct {
			Kind    string   `json:"kind"`
			Source  string   `json:"source"`
			Target  string   `json:"target"`
			Exists  *bool    `json:"exists"`
			Entries []string `json:"entries"`
		} `json:"items"`
	}
	h.must(200, "POST", "/api/backup/restore/preview", map[string]any{"destinationId": h.destID, "snapshotId": res.SnapshotID,
		"includeTargets": true}, &preview)
	volume := name + "_data"
	var sawVolume bool
	for _, it := range preview.Items {
		if it.Kind == "volume" && it.Source == volume {
			sawVolume = it.Target == volume && it.Exists != nil && *it.Exists && strings.Contains(strings.Join(it.Entries, ","), "a.txt")
		}
	}
	if preview.TargetType != "stack" || preview.TargetName != name || !preview.Own || !sawVolume {
		t.Errorf("preview = %+v, want this install's stack %s with volume %s (existing, holding a.txt)", preview, name, volume)
	}

	// In place: refused without the confirmation, then the same bytes.
	h.expectRefusals([]refusal{{"in place unconfirmed", "POST", "/api/backup/restore", map[string]any{"destinationId": h.destID,
		"snapshotId": res.SnapshotID, "mode": "in-place"}, 400, "confirmOverwrite"}})
	rres, rphases := h.stream("/api/backup/restore", map[string]any{"destinationId": h.destID, "snapshotId": res.SnapshotID,
		"mode": "in-place", "confirmOverwrite": true})
	if rres.Status != "success" {
		t.Fatalf("restore in place = %+v (%q)", rres, rphases)
	}
	if !h.running(app) {
		t.Error("the stack's container is not running after the in-place restore")
	}
	if after := sums(t, app); after != before {
		t.Errorf("after the in-place restore:\n%s\nwant\n%s", after, before)
	}

	// To a new name: the original (changed again) stays as it is.
	dockerExec(t, app, "echo kept > /data/d.txt")
	original := sums(t, app)
	copyName := "bkcopy-" + h.label
	newVolume := copyName + "_data"
	t.Cleanup(func() {
		_ = exec.Command("docker", "volume", "rm", "-f", newVolume).Run()
		removeRootOwned(t, filepath.Join(h.dataDir, "stacks", "1", copyName))
	})
	nres, nphases := h.stream("/api/backup/restore", map[string]any{"destinationId": h.destID, "snapshotId": res.SnapshotID,
		"mode": "new-location", "targetName": copyName})
	if nres.Status != "success" {
		t.Fatalf("restore to a new name = %+v (%q)", nres, nphases)
	}
	if got := sums(t, app); got != original {
		t.Errorf("the original changed:\n%s\nwant\n%s", got, original)
	}
	out, err := exec.Command("docker", "run", "--rm", "-v", newVolume+":/data", enginetest.Image(), "sh", "-c",
		"cd /data && find . -type f | sort | xargs sha256sum").CombinedOutput()
	if err != nil || string(out) != before {
		t.Errorf("the new volume %s holds\n%s (%v)\nwant\n%s", newVolume, out, err, before)
	}
	if _, err := os.Stat(filepath.Join(h.dataDir, "stacks", "1", copyName, "compose.yaml")); err != nil {
		t.Errorf("the stack directory restored to the new name: %v", err)
	}
	// It is a Berth stack, with the original's secret, that deploys onto
	// the restored volume.
	t.Cleanup(func() { h.do("DELETE", "/api/stacks/"+copyName+"?env=1&force=true", nil) })
	if !strings.Contains(strings.Join(nphases, "\n"), "stack: Recorded as stack '"+copyName+"'") {
		t.Errorf("restore to a new name: progress %q, want the new stack recorded", nphases)
	}
	if status, msgs, dres := h.streamStack("POST", "/api/stacks/"+copyName+"/deploy?env=1", map[string]any{}); status != 200 || !dres.Success {
		t.Fatalf("deploy of the restored stack: %d %+v %q", status, dres, msgs)
	}
	if got := sums(t, copyName+"-app-1"); got != before {
		t.Errorf("the restored stack's container sees\n%s\nwant\n%s", got, before)
	}
	if got := strings.TrimSpace(dockerExec(t, copyName+"-app-1", "echo $BK_TOKEN")); got != "tok-"+h.label {
		t.Errorf("the restored stack's secret = %q, want the original's", got)
	}
	// A new location's host path is confined like stack files (Berth's
	// stacks directory, the stack roots an admin allowed): the helper
	// writes there as root.
	outside := "/root/.berth-restore-" + h.label
	h.expectRefusals([]refusal{{"targetPath outside the stack roots", "POST", "/api/backup/restore", map[string]any{
		"destinationId": h.destID, "snapshotId": res.SnapshotID, "mode": "new-location", "targetName": "bkout-" + h.label,
		"targetPath": outside}, 403, "Invalid targetPath"}})
	if _, err := os.Stat(outside); !os.IsNotExist(err) {
		t.Errorf("the refused restore wrote %s: %v", outside, err)
	}
	// A restore onto a volume a running container outside the target uses.
	h.expectRefusals([]refusal{{"volume in use", "POST", "/api/backup/restore", map[string]any{"destinationId": h.destID,
		"snapshotId": res.SnapshotID, "mode": "in-place", "confirmOverwrite": true, "targetName": "someone-else"}, 409, app}})
}

// A backup that fails (the destination's password is wrong) still starts
// again the container it stopped, says why it failed, and notifies
// backup_failed through the channels subscribed to it.
func TestBackupStopDuringBackupRestartsTheContainerWhenTheBackupFails(t *testing.T) {
	h := newBackupHarness(t, apitest.Options{})
	rcv := newHookReceiver(t, nil)
	var ch notificationOut
	h.must(201, "POST", "/api/notifications", map[string]any{"name": "bk-" + h.label, "type": "webhook",
		"config": map[string]any{"url": rcv.URL}, "eventTypes": []string{"backup_failed", "backup_success"}}, &ch)
	h.must(201, "POST", "/api/environments/1/notifications", map[string]any{"notificationId": ch.ID}, nil)
	badID, _ := h.localDestination("bad-"+h.label, backupTestPassword, "not the password")
	name := "bkc-" + h.label
	h.createContainerWithVolume(name, "bkvol-"+h.label)
	id := h.backupConfig(map[string]any{"destinationId": badID, "targetName": name, "type": "container", "environmentId": 1,
		"stopBeforeBackup": true})
	res, phases := h.stream(fmt.Sprintf("/api/backup/configs/%d/run", id), nil)
	if res.Status != "error" || !strings.Contains(strings.ToLower(res.Message), "password") {
		t.Errorf("run with a wrong password = %+v, want an error about the password", res)
	}
	if !strings.Contains(strings.Join(phases, "\n"), "Stopping 1 container") {
		t.Errorf("progress %q: the container was not stopped", phases)
	}
	if !h.running(name) {
		t.Error("the container is not running after the failed backup")
	}
	runs, err := h.store.ListBackupRuns(t.Context(), id, 1)
	if err != nil || len(runs) != 1 || runs[0].Status != store.BackupFailed {
		t.Errorf("runs = %+v, %v; want one failed", runs, err)
	}
	deadline := time.Now().Add(time.Minute)
	for len(rcv.received()) == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	got := rcv.received()
	if len(got) != 1 || got[0]["event"] != "backup_failed" || !strings.Contains(fmt.Sprint(got[0]["title"]), name) {
		t.Errorf("the channel got %v, want one backup_failed naming %s", got, name)
	}
}

// createContainerWithVolume runs a labelled container with volume at /data
// holding one file.
func (h *backupHarness) createContainerWithVolume(name, volume string) {
	h.t.Helper()
	h.t.Cleanup(func() {
		_ = exec.Command("docker", "rm", "-f", name).Run() // before its volume
		_ = exec.Command("docker", "volume", "rm", "-f", volume).Run()
	})
	out, err := exec.Command("docker", "run", "-d", "--name", name, "--label", enginetest.Label+"="+h.label,
		"-v", volume+":/data", enginetest.Image(), "sh", "-c", "echo hi > /data/f.txt; sleep 3600").CombinedOutput()
	if err != nil {
		h.t.Fatalf("docker run: %v %s", err, out)
	}
}

// A configuration's paths are only its target's own (bind mounts, the
// stack's directory): a path of the host it does not mount is refused at
// the run, and nothing is backed up.
func TestBackupReadsOnlyItsTargetsOwnPaths(t *testing.T) {
	h := newBackupHarness(t, apitest.Options{})
	name := "bkp-" + h.label
	h.createContainerWithVolume(name, "bkpvol-"+h.label)
	id := h.backupConfig(map[string]any{"destinationId": h.destID, "targetName": name, "type": "container", "environmentId": 1,
		"allVolumes": true, "paths": []string{"/etc"}})
	res, phases := h.stream(fmt.Sprintf("/api/backup/configs/%d/run", id), nil)
	if res.Status != "error" || !strings.Contains(res.Message, "Path '/etc' is not a bind mount of container") {
		t.Errorf("run = %+v (%q), want failed: /etc is not the container's", res, phases)
	}
	snaps, err := h.runner.Snapshots(t.Context(), h.where, h.repo, []string{backupjobs.ConfigTag(id)})
	if err != nil || len(snaps) != 0 {
		t.Errorf("snapshots of the refused run = %v (%v), want none", snaps, err)
	}
}

// Retention keeps exactly the policy's snapshots: three runs with
// keepLast 2 leave two, the newest.
func TestBackupRetentionKeepsExactlyTheLastN(t *testing.T) {
	h := newBackupHarness(t, apitest.Options{})
	name := "bkr-" + h.label
	h.createContainerWithVolume(name, "bkrvol-"+h.label)
	id := h.backupConfig(map[string]any{"destinationId": h.destID, "targetName": name, "type": "container", "environmentId": 1,
		"retention": map[string]int{"keepLast": 2}})
	var made []string
	for i := range 3 {
		dockerExec(t, name, fmt.Sprintf("echo %d > /data/run.txt", i))
		res, phases := h.stream(fmt.Sprintf("/api/backup/configs/%d/run", id), nil)
		if res.Status != "success" {
			t.Fatalf("run %d = %+v (%q)", i, res, phases)
		}
		made = append(made, res.SnapshotID)
	}
	snaps, err := h.runner.Snapshots(t.Context(), h.where, h.repo, []string{backupjobs.ConfigTag(id)})
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, s := range snaps {
		kept = append(kept, s.ID)
	}
	if len(kept) != 2 || !hasSnapshot(kept, made[1]) || !hasSnapshot(kept, made[2]) {
		t.Errorf("kept %v, want exactly the last two of %v", kept, made)
	}

	// keepYearly alone: every snapshot is of this year, the newest stays.
	h.must(200, "PUT", fmt.Sprintf("/api/backup/configs/%d", id), map[string]any{"retention": map[string]int{"keepYearly": 1}}, nil)
	res, phases := h.stream(fmt.Sprintf("/api/backup/configs/%d/run", id), nil)
	if res.Status != "success" {
		t.Fatalf("keepYearly run = %+v (%q)", res, phases)
	}
	snaps, err = h.runner.Snapshots(t.Context(), h.where, h.repo, []string{backupjobs.ConfigTag(id)})
	if err != nil || len(snaps) != 1 || snaps[0].ID != res.SnapshotID {
		t.Errorf("with keepYearly 1: %v (%v), want only %s", snaps, err, res.SnapshotID)
	}
}

func hasSnapshot(ids []string, id string) bool {
	for _, x := range ids {
		if strings.HasPrefix(x, id) || strings.HasPrefix(id, x) {
			return true
		}
	}
	return false
}

// A configuration with a cron is a schedule of type backup: listed by GET
// /api/schedules, and run through the schedules' run-now route as an
// execution that makes a snapshot.
func TestBackupScheduledConfigIsListedAndRunsFromTheSchedules(t *testing.T) {
	h := newBackupHarness(t, apitest.Options{})
	name := "bks-" + h.label
	h.createContainerWithVolume(name, "bksvol-"+h.label)
	id := h.backupConfig(map[string]any{"destinationId": h.destID, "targetName": name, "type": "container", "environmentId": 1,
		"schedule": "0 3 * * *", "enabled": true,
		"preHook": "echo dumped > /data/dump.sql", "postHook": "rm /data/dump.sql"})
	var list struct {
		Schedules []struct {
			ID      int64   `json:"id"`
			Type    string  `json:"type"`
			Enabled bool    `json:"enabled"`
			NextRun *string `json:"nextRun"`
		} `json:"schedules"`
	}
	h.must(200, "GET", "/api/schedules", nil, &list)
	found := false
	for _, s := range list.Schedules {
		found = found || s.Type == "backup" && s.ID == id && s.Enabled && s.NextRun != nil
	}
	if !found {
		t.Fatalf("schedules %+v: no enabled backup schedule %d", list, id)
	}
	var run struct {
		Execution struct {
			Status      string `json:"status"`
			TriggeredBy string `json:"triggeredBy"`
		} `json:"execution"`
	}
	h.must(200, "POST", fmt.Sprintf("/api/schedules/backup/%d/run?wait=true", id), nil, &run)
	if run.Execution.Status != "success" {
		t.Fatalf("execution = %+v, want success", run.Execution)
	}
	snaps, err := h.runner.Snapshots(t.Context(), h.where, h.repo, []string{backupjobs.ConfigTag(id)})
	if err != nil || len(snaps) != 1 {
		t.Fatalf("snapshots after the scheduled run = %v, %v; want one", snaps, err)
	}
	// The pre hook's file is in the snapshot; the post hook removed it.
	nodes, err := h.runner.Ls(t.Context(), h.where, h.repo, snaps[0].ID, backup.VolumesDir+"/bksvol-"+h.label)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range nodes {
		names = append(names, n.Name)
	}
	if !strings.Contains(strings.Join(names, ","), "dump.sql") {
		t.Errorf("snapshot holds %v, want the pre hook's dump.sql", names)
	}
	if out := dockerExec(t, name, "ls /data"); strings.Contains(out, "dump.sql") {
		t.Errorf("/data after the run holds %q: the post hook did not run", out)
	}
	// The run is in the audit log, by the schedule's trigger (run now).
	entries, _, err := h.store.ListAudit(t.Context(), store.AuditFilter{Action: "backup_config.run"})
	if err != nil || len(entries) != 1 || entries[0].EntityID != fmt.Sprint(id) || !strings.Contains(entries[0].Description, "(manual): success") {
		t.Errorf("audit entries of the run = %+v, %v", entries, err)
	}
	// Deleting the schedule keeps the configuration, without its cron.
	h.must(200, "DELETE", fmt.Sprintf("/api/schedules/backup/%d", id), nil, nil)
	var cfg struct {
		Schedule string `json:"schedule"`
	}
	h.must(200, "GET", fmt.Sprintf("/api/backup/configs/%d", id), nil, &cfg)
	if cfg.Schedule != "" {
		t.Errorf("schedule after its deletion = %q, want none", cfg.Schedule)
	}
}

// Stopping a run cancels it: the result and the run say "stopped", not
// failed, and the container stopped for the backup is... never stopped
// here (the stop comes during the pre hook), but stays running.
func TestBackupStopEndsTheRunAsStopped(t *testing.T) {
	h := newBackupHarness(t, apitest.Options{})
	name := "bkst-" + h.label
	h.createContainerWithVolume(name, "bkstvol-"+h.label)
	id := h.backupConfig(map[string]any{"destinationId": h.destID, "targetName": name, "type": "container", "environmentId": 1,
		"preHook": "sleep 120", "stopBeforeBackup": true})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ch, resp := h.openStream(ctx, "POST", fmt.Sprintf("/api/backup/configs/%d/run", id), nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("run = %d", resp.StatusCode)
	}
	var res backupResult
	for ev := range ch {
		var e backupjobs.Event
		if ev.Name == "progress" && json.Unmarshal([]byte(ev.Data), &e) == nil && e.Phase == "pre-hook" {
			var stop struct {
				Stopped bool `json:"stopped"`
			}
			h.must(200, "POST", fmt.Sprintf("/api/backup/configs/%d/stop", id), nil, &stop)
			if !stop.Stopped {
				t.Error("stop answered stopped false during the run")
			}
		}
		if ev.Name == "result" {
			_ = json.Unmarshal([]byte(ev.Data), &res)
		}
	}
	if res.Status != "stopped" {
		t.Errorf("result = %+v, want stopped", res)
	}
	runs, err := h.store.ListBackupRuns(t.Context(), id, 1)
	if err != nil || len(runs) != 1 || runs[0].Status != store.BackupStopped {
		t.Errorf("runs = %+v, %v; want one stopped", runs, err)
	}
	if !h.running(name) {
		t.Error("the container is not running after the stopped run")
	}
	var stop struct {
		Stopped bool `json:"stopped"`
	}
	h.must(200, "POST", fmt.Sprintf("/api/backup/configs/%d/stop", id), nil, &stop)
	if stop.Stopped {
		t.Error("stop with no run in progress answered stopped true")
	}
}

// Bad configurations are refused with why, and nothing is stored.
func TestBackupConfigRefusesBadInput(t *testing.T) {
	h := newBackupHarness(t, apitest.Options{})
	other := store.Environment{Name: "other-" + h.label, ConnectionType: "direct", Host: "127.0.0.1", Port: 1, Protocol: "http"}
	if err := h.store.CreateEnvironment(t.Context(), &other); err != nil {
		t.Fatal(err)
	}
	ok := map[string]any{"destinationId": h.destID, "targetName": "app", "type": "container", "environmentId": 1}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for key, val := range ok {
			m[key] = val
		}
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	h.expectRefusals([]refusal{
		{"no destination", "POST", "/api/backup/configs", with("destinationId", nil), 400, "destinationId is required"},
		{"no target", "POST", "/api/backup/configs", with("targetName", nil), 400, "targetName is required"},
		{"bad target", "POST", "/api/backup/configs", with("targetName", "../etc"), 400, "Invalid targetName"},
		{"bad type", "POST", "/api/backup/configs", with("type", "vm"), 400, "Invalid type"},
		{"bad cron", "POST", "/api/backup/configs", with("schedule", "every day"), 400, "Invalid cron expression"},
		{"negative retention", "POST", "/api/backup/configs", with("retention", map[string]int{"keepLast": -1}), 400, "Invalid retention"},
		{"relative path", "POST", "/api/backup/configs", with("paths", []string{"data"}), 400, "Invalid path"},
		{"berth tag", "POST", "/api/backup/configs", with("tags", []string{"berth:instance=x"}), 400, "Invalid tag"},
		{"unknown destination", "POST", "/api/backup/configs", with("destinationId", 999), 400, "Destination 999 not found"},
		{"local repository of another environment", "POST", "/api/backup/configs", with("environmentId", other.ID), 400,
			"A local repository is on the host of environment 1"},
		{"stack hooks without a service", "POST", "/api/backup/configs", map[string]any{"destinationId": h.destID,
			"targetName": "st", "type": "stack", "preHook": "true"}, 400, "hookService is required"},
		{"restore without a snapshot", "POST", "/api/backup/restore", map[string]any{"destinationId": h.destID}, 400, "snapshotId is required"},
		{"restore of a bad snapshot id", "POST", "/api/backup/restore/preview", map[string]any{"destinationId": h.destID,
			"snapshotId": "zz;rm"}, 400, "snapshotId is not a snapshot id"},
	})
	var list []json.RawMessage
	h.must(200, "GET", "/api/backup/configs", nil, &list)
	if len(list) != 0 {
		t.Errorf("configs after refusals = %d, want none", len(list))
	}
	id := h.backupConfig(ok)
	h.expectRefusals([]refusal{
		{"environment change", "PUT", fmt.Sprintf("/api/backup/configs/%d", id), map[string]any{"environmentId": other.ID}, 400,
			"cannot be changed"},
		{"unknown config", "GET", "/api/backup/configs/999", nil, 404, "Backup configuration not found"},
	})
}

// A Viewer sees configurations but may not create, run or restore; an
// Operator may.
func TestBackupViewerMayListButNotRunOrRestore(t *testing.T) {
	enginetest.Require(t)
	enginetest.RequireEnv(t, "restic", "BERTH_TEST_RESTIC")
	h := newBackupHarness(t, apitest.Options{Auth: true})
	user, pw := h.setupAdmin()
	admin := h.login(user, pw)
	h.as(admin)
	id := h.backupConfig(map[string]any{"destinationId": h.destID, "targetName": "app", "type": "container", "environmentId": 1})
	h.userWithRole("vera", "Viewer")
	h.userWithRole("otto", "Operator")
	h.as(h.login("vera", "vera-password-1"))
	var list []json.RawMessage
	h.must(200, "GET", "/api/backup/configs", nil, &list)
	if len(list) != 1 {
		t.Errorf("a Viewer lists %d configurations, want 1", len(list))
	}
	h.expectRefusals([]refusal{
		{"create", "POST", "/api/backup/configs", map[string]any{"destinationId": h.destID, "targetName": "x"}, 403, "Permission denied"},
		{"run", "POST", fmt.Sprintf("/api/backup/configs/%d/run", id), nil, 403, "Permission denied"},
		{"delete", "DELETE", fmt.Sprintf("/api/backup/configs/%d", id), nil, 403, "Permission denied"},
		{"restore", "POST", "/api/backup/restore", map[string]any{"destinationId": h.destID, "snapshotId": "abcdef12",
			"mode": "in-place", "confirmOverwrite": true}, 403, "Permission denied"},
	})
	h.as(h.login("otto", "otto-password-1"))
	h.must(200, "PUT", fmt.Sprintf("/api/backup/configs/%d", id), map[string]any{"retention": map[string]int{"keepLast": 5}}, nil)
}

// A destination's maintenance policy with a cron is a schedule (type
// backup_check): listed, run from the schedules (restic check passes on
// the repository), switched off and removed through the schedules' routes,
// which write the destination's policies.
func TestBackupDestinationMaintenanceIsASchedule(t *testing.T) {
	h := newBackupHarness(t, apitest.Options{})
	d, err := h.store.GetBackupDestination(t.Context(), h.destID)
	if err != nil {
		t.Fatal(err)
	}
	d.Policies = `{"checkEnabled":true,"checkSchedule":"0 5 * * 0"}`
	if err := h.store.UpdateBackupDestination(t.Context(), &d); err != nil {
		t.Fatal(err)
	}
	var list struct {
		Schedules []struct {
			ID      int64  `json:"id"`
			Type    string `json:"type"`
			Enabled bool   `json:"enabled"`
		} `json:"schedules"`
	}
	h.must(200, "GET", "/api/schedules", nil, &list)
	found := false
	for _, s := range list.Schedules {
		found = found || s.Type == "backup_check" && s.ID == h.destID && s.Enabled
	}
	if !found {
		t.Fatalf("schedules %+v: no backup_check of destination %d", list, h.destID)
	}
	path := fmt.Sprintf("/api/schedules/backup_check/%d", h.destID)
	var run struct {
		Execution struct {
			Status string `json:"status"`
			Logs   string `json:"logs"`
		} `json:"execution"`
	}
	h.must(200, "POST", path+"/run?wait=true", nil, &run)
	if run.Execution.Status != "success" {
		t.Fatalf("check execution = %+v, want success", run.Execution)
	}
	h.must(200, "POST", path+"/toggle", nil, nil)
	d, _ = h.store.GetBackupDestination(t.Context(), h.destID)
	if !strings.Contains(d.Policies, `"checkEnabled":false`) {
		t.Errorf("policies after the toggle = %s, want checkEnabled false", d.Policies)
	}
	h.must(200, "DELETE", path, nil, nil)
	d, _ = h.store.GetBackupDestination(t.Context(), h.destID)
	if strings.Contains(d.Policies, "checkSchedule") {
		t.Errorf("policies after the delete = %s, want no checkSchedule", d.Policies)
	}
}

// A run that stops its containers keeps their ids with the run until it
// starts them again; a Berth killed meanwhile starts them at its next
// start (RecoverInterrupted) and marks the run failed, saying why.
func TestBackupInterruptedByBerthsStopStartsItsContainersAgain(t *testing.T) {
	h := newBackupHarness(t, apitest.Options{})
	name := "bki-" + h.label
	h.createContainerWithVolume(name, "bkivol-"+h.label)
	id := h.backupConfig(map[string]any{"destinationId": h.destID, "targetName": name, "type": "container", "environmentId": 1,
		"stopBeforeBackup": true})
	stoppedOf := func(run int64) string {
		var v string
		if err := h.store.DB().QueryRowContext(t.Context(), "SELECT stopped_containers FROM backup_runs WHERE id = $1", run).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}

	// While the backup runs, the stopped container is recorded; after, not.
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	ch, resp := h.openStream(ctx, "POST", fmt.Sprintf("/api/backup/configs/%d/run", id), nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("run = %d", resp.StatusCode)
	}
	var during string
	for ev := range ch {
		var e backupjobs.Event
		if ev.Name == "progress" && json.Unmarshal([]byte(ev.Data), &e) == nil && e.Phase == "backup" && during == "" {
			var run int64
			if err := h.store.DB().QueryRowContext(t.Context(), "SELECT id FROM backup_runs WHERE config_id = $1 AND status = 'running'", id).Scan(&run); err != nil {
				t.Fatal(err)
			}
			during = stoppedOf(run)
		}
	}
	ct := strings.TrimSpace(dockerOut(t, "inspect", "-f", "{{.Id}}", name))
	if !strings.Contains(during, ct) {
		t.Errorf("stopped containers recorded during the backup = %q, want %s", during, ct)
	}
	runs, err := h.store.ListBackupRuns(t.Context(), id, 1)
	if err != nil || len(runs) != 1 || runs[0].Status != "success" || stoppedOf(runs[0].ID) != "" {
		t.Fatalf("the finished run = %+v (%v), want a success with no stopped container left", runs, err)
	}

	// A run left "running" by a killed Berth, its container stopped.
	dockerOut(t, "stop", "-t", "0", name)
	node := "node-" + h.label
	envID := int64(1)
	left := store.BackupRun{ConfigID: &id, DestinationID: &h.destID, EnvironmentID: &envID, Kind: store.BackupKindBackup,
		Status: store.BackupRunning, StartedAt: time.Now().Add(-time.Minute), Node: node}
	if err := h.store.AddBackupRun(t.Context(), &left); err != nil {
		t.Fatal(err)
	}
	if err := h.store.SetBackupRunStopped(t.Context(), left.ID, []string{ct}); err != nil {
		t.Fatal(err)
	}
	other := store.BackupRun{ConfigID: &id, DestinationID: &h.destID, EnvironmentID: &envID, Kind: store.BackupKindBackup,
		Status: store.BackupRunning, StartedAt: time.Now().Add(-time.Minute), Node: "another-" + h.label}
	if err := h.store.AddBackupRun(t.Context(), &other); err != nil {
		t.Fatal(err)
	}
	svc := backupjobs.New(backupjobs.Options{Store: h.store, Engines: engine.NewManager(slog.New(slog.DiscardHandler)), Node: node})
	svc.RecoverInterrupted(t.Context(), time.Now())
	if !h.running(name) {
		t.Error("the container the interrupted run had stopped is not running again")
	}
	runs, err = h.store.ListBackupRuns(t.Context(), id, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		switch r.ID {
		case left.ID:
			if r.Status != "failed" || !strings.Contains(r.Message, "Interrupted: Berth stopped during the run; the 1 container(s) it had stopped were started again") {
				t.Errorf("the interrupted run = %+v", r)
			}
		case other.ID:
			if r.Status != "running" {
				t.Errorf("another node's run = %+v, want left to that node", r)
			}
		}
	}
	if _, err := h.store.DB().ExecContext(t.Context(), "DELETE FROM backup_runs WHERE id = $1", other.ID); err != nil {
		t.Fatal(err)
	}
}

// dockerOut runs the docker CLI on the local engine and returns its output.
func dockerOut(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("docker", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("docker %s: %v %s", args[0], err, out)
	}
	return string(out)
}
