package agents_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/backup"
	"github.com/berth-dev/berth/server/internal/backupjobs"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/enginetest"
)

// dirSums lists what the directory dir of Berth's host holds: each regular
// file with its checksum, each directory, each other entry with its type
// (a symbolic link with its target); nil when dir does not exist.
func dirSums(t *testing.T, dir string) []string {
	t.Helper()
	if _, err := os.Lstat(dir); os.IsNotExist(err) {
		return nil
	}
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			out = append(out, rel+" "+hex.EncodeToString(sum[:]))
		case d.IsDir():
			out = append(out, rel+"/")
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out = append(out, rel+" -> "+target)
		default:
			out = append(out, rel+" "+d.Type().String())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// TestBackupStackDirectoryOnTheRemoteEngine backs up a Berth stack of the
// second engine, reached through a standard agent, whose directory (on
// Berth's host, not the engine's) holds its compose file, its .env and more
// files: the snapshot holds them at the path a socket environment's
// snapshot has (the preview lists them), a symbolic link escaping the
// directory is neither followed nor copied. Changed and deleted, they come
// back byte-identical with an in-place restore; a restore to a new name
// writes the new stack's directory and records it. A crafted snapshot whose
// stack directory holds a symbolic link escaping it is refused (400) in
// place and to a new name, and writes nothing.
func TestBackupStackDirectoryOnTheRemoteEngine(t *testing.T) {
	h, socket, e := remoteBackupBerth(t)
	stackDirectoryRoundTrip(t, h, socket, e, "bksd"+h.label)
}

// TestBackupStackDirectoryOnAHawserEdge is
// TestBackupStackDirectoryOnTheRemoteEngine on a Hawser edge environment
// (the engine reached through the requests its agent relays).
func TestBackupStackDirectoryOnAHawserEdge(t *testing.T) {
	h, socket, _ := remoteBackupBerth(t)
	ee, tok := h.createHawserEdge("hawser-edge-" + h.label)
	a, err := hawserHello(t, h.url, socket, tok.Token)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.close)
	h.waitConnected(ee.ID, true)
	stackDirectoryRoundTrip(t, h, socket, ee, "bkhe"+h.label)
}

// stackDirectoryRoundTrip is the test of a stack name on environment e
// (whose engine is the second one, at socket).
func stackDirectoryRoundTrip(t *testing.T, h *berth, socket string, e environment, name string) {
	d := store.BackupDestination{Name: "berth-test-" + name, Type: backup.TypeREST, Password: "pw-" + rand.Text(), EnvironmentID: &e.ID,
		Repository: "rest:" + os.Getenv("BERTH_TEST_REST_URL") + "/berth-test-" + name + "/"}
	t.Cleanup(func() { os.RemoveAll(filepath.Join(os.Getenv("BERTH_TEST_REST_DIR"), d.Name)) })
	if err := h.b.Store.CreateBackupDestination(t.Context(), &d); err != nil {
		t.Fatal(err)
	}
	h.must(200, "POST", fmt.Sprintf("/api/backup/destinations/%d/init", d.ID), nil, nil)

	// A Berth stack on the remote engine, with a secret (sealed in the
	// database, never in its directory) and a plain variable (in .env).
	secret := "s3cr3t-" + rand.Text()
	compose := fmt.Sprintf(`services:
  app:
    image: %[1]s
    command: ["sleep", "3600"]
    environment:
      API_KEY: ${API_KEY}
      MODE: ${MODE}
    volumes:
      - data:/d
    labels:
      %[2]s: %[3]s
volumes:
  data:
    labels:
      %[2]s: %[3]s
`, enginetest.Image(), enginetest.Label, h.label)
	copyName := name + "c"
	t.Cleanup(func() {
		for _, n := range []string{name, copyName, copyName + "x"} {
			h.do("DELETE", fmt.Sprintf("/api/stacks/%s?env=%d&force=true", n, e.ID), nil)
		}
		for _, v := range []string{name + "_data", copyName + "_data", copyName + "x_data"} {
			if out, err := onEngine2Quiet(socket, "volume", "rm", "-f", v); err != nil {
				t.Logf("volume rm %s: %v %s", v, err, out)
			}
		}
	})
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	var final map[string]any
	for ev := range h.stream(ctx, "POST", fmt.Sprintf("/api/stacks?env=%d", e.ID), map[string]any{"name": name, "compose": compose,
		"envVars": []map[string]any{{"key": "API_KEY", "value": secret, "isSecret": true}, {"key": "MODE", "value": "plain"}}}) {
		var m map[string]any
		if json.Unmarshal([]byte(ev.Data), &m) == nil {
			if _, ok := m["success"]; ok {
				final = m
			}
		}
	}
	if final == nil || final["success"] != true {
		t.Fatalf("deploy = %v", final)
	}
	stacksDir := filepath.Join(filepath.Dir(h.opts.DBPath), "stacks", fmt.Sprint(e.ID))
	dir := filepath.Join(stacksDir, name)
	for p, body := range map[string]string{"notes.txt": "second file\n", "conf/extra.conf": "answer=42\n"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/etc/hostname", filepath.Join(dir, "escape")); err != nil {
		t.Fatal(err)
	}
	want := dirSums(t, dir)
	if !strings.Contains(strings.Join(want, "\n"), "compose.yaml ") || !strings.Contains(strings.Join(want, "\n"), ".env ") {
		t.Fatalf("the stack's directory holds %q, want its compose file and .env", want)
	}
	want = slicesWithout(want, "escape -> /etc/hostname") // not copied

	var cfg struct {
		ID int64 `json:"id"`
	}
	h.must(201, "POST", "/api/backup/configs", map[string]any{"destinationId": d.ID, "targetName": name, "type": "stack",
		"environmentId": e.ID, "allVolumes": true, "includeStackDir": true}, &cfg)
	status, body := h.do("POST", fmt.Sprintf("/api/backup/configs/%d/run", cfg.ID), nil)
	if status != 200 || !strings.Contains(string(body), `"status":"success"`) {
		t.Fatalf("run = %d %s", status, body)
	}
	if strings.Contains(string(body), "Stack directory not included") || !strings.Contains(string(body), "escape not copied: a symbolic link is not followed") {
		t.Errorf("run's progress: %s\nwant the stack directory copied, its symbolic link not", body)
	}
	runs, err := h.b.Store.ListBackupRuns(t.Context(), cfg.ID, 1)
	if err != nil || len(runs) != 1 || runs[0].SnapshotID == "" {
		t.Fatalf("runs = %+v, %v", runs, err)
	}
	snap := runs[0].SnapshotID

	// The preview lists the directory's files, at the stack's path.
	var preview struct {
		Items []struct {
			Kind    string   `json:"kind"`
			Source  string   `json:"source"`
			Exists  *bool    `json:"exists"`
			Entries []string `json:"entries"`
		} `json:"items"`
	}
	h.must(200, "POST", "/api/backup/restore/preview", map[string]any{"destinationId": d.ID, "snapshotId": snap,
		"includeTargets": true}, &preview)
	var entries []string
	for _, it := range preview.Items {
		if it.Kind == "path" && it.Source == dir {
			entries = it.Entries
			if it.Exists == nil || !*it.Exists {
				t.Errorf("preview: the stack directory exists = %v, want true", it.Exists)
			}
		}
	}
	sort.Strings(entries)
	if got := strings.Join(entries, ","); got != ".env,compose.yaml,conf,notes.txt" {
		t.Errorf("preview of %s: entries %q, want .env,compose.yaml,conf,notes.txt (items %+v)", dir, got, preview.Items)
	}

	// Changed and deleted, then restored in place.
	if err := os.WriteFile(filepath.Join(dir, "compose.yaml"), []byte("services: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "conf")); err != nil {
		t.Fatal(err)
	}
	status, body = h.do("POST", "/api/backup/restore", map[string]any{"destinationId": d.ID, "snapshotId": snap,
		"mode": "in-place", "confirmOverwrite": true})
	if status != 200 || !strings.Contains(string(body), `"status":"success"`) {
		t.Fatalf("restore in place = %d %s", status, body)
	}
	if got := dirSums(t, dir); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("restored in place:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := strings.TrimSpace(onEngine2(t, socket, "inspect", "-f", "{{.State.Running}}", name+"-app-1")); got != "true" {
		t.Errorf("the stack's container runs: %s, want true", got)
	}

	// To a new name: the new stack's directory, recorded as a stack with
	// the original's secret; the secret is in no file.
	status, body = h.do("POST", "/api/backup/restore", map[string]any{"destinationId": d.ID, "snapshotId": snap,
		"mode": "new-location", "targetName": copyName})
	if status != 200 || !strings.Contains(string(body), `"status":"success"`) || !strings.Contains(string(body), "Recorded as stack '"+copyName+"'") {
		t.Fatalf("restore to a new name = %d %s", status, body)
	}
	if got := dirSums(t, filepath.Join(stacksDir, copyName)); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the new stack's directory:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if hits := grepDir(t, filepath.Join(stacksDir, copyName), secret); len(hits) > 0 {
		t.Errorf("the secret is in the restored files: %v", hits)
	}
	var vars struct {
		Variables []struct {
			Key      string `json:"key"`
			IsSecret bool   `json:"isSecret"`
		} `json:"variables"`
	}
	h.must(200, "GET", fmt.Sprintf("/api/stacks/%s/env?env=%d", copyName, e.ID), nil, &vars)
	if !strings.Contains(fmt.Sprintf("%+v", vars.Variables), "{Key:API_KEY IsSecret:true}") {
		t.Errorf("the new stack's variables: %+v, want the secret API_KEY", vars.Variables)
	}

	// The in-place restore left no link (the snapshot holds none).
	if _, err := os.Lstat(filepath.Join(dir, "escape")); !os.IsNotExist(err) {
		t.Errorf("after the in-place restore, the link not in the snapshot is there: %v", err)
	}

	// A crafted snapshot: the stack's directory, read by a helper that
	// bind-mounts it (the second engine is on this host), holds a symbolic
	// link escaping it.
	if err := os.Symlink("/etc/hostname", filepath.Join(dir, "escape")); err != nil {
		t.Fatal(err)
	}
	runner, where := backupRunnerOn(t, h, e.ID)
	repo := backup.Repo{Repository: d.Repository, Password: d.Password}
	sum, err := runner.Backup(t.Context(), where, repo, backup.Source{Paths: []string{dir}, Tags: []string{
		backupjobs.TagType + "stack", backupjobs.TagTarget + name, fmt.Sprintf("%s%d", backupjobs.TagEnv, e.ID),
		backupjobs.TagStackDir + dir}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("changed since\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before, beside := dirSums(t, dir), dirSums(t, stacksDir)
	for _, req := range []map[string]any{
		{"destinationId": d.ID, "snapshotId": sum.SnapshotID, "mode": "in-place", "confirmOverwrite": true},
		{"destinationId": d.ID, "snapshotId": sum.SnapshotID, "mode": "new-location", "targetName": copyName + "x"},
	} {
		status, body := h.do("POST", "/api/backup/restore", req)
		if status != 400 || !strings.Contains(string(body), "escape, which is not a regular file or directory") {
			t.Errorf("restore %v of the crafted snapshot = %d %s, want a 400 naming the link", req["mode"], status, body)
		}
	}
	if got := dirSums(t, dir); strings.Join(got, "\n") != strings.Join(before, "\n") {
		t.Errorf("the refused restores changed the stack's directory:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(before, "\n"))
	}
	if got := dirSums(t, stacksDir); strings.Join(got, "\n") != strings.Join(beside, "\n") {
		t.Errorf("the refused restores wrote in %s:\n%s\nwant\n%s", stacksDir, strings.Join(got, "\n"), strings.Join(beside, "\n"))
	}
	if status, _ := h.do("GET", fmt.Sprintf("/api/stacks/%s/compose?env=%d", copyName+"x", e.ID), nil); status != 404 {
		t.Errorf("the refused restore to a new name recorded a stack: GET its compose = %d", status)
	}

	// A crafted snapshot whose "stack directory" is elsewhere on Berth's
	// host: Berth does not write there, in place either (403).
	outside := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "kept.txt"), []byte("kept\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err = runner.Backup(t.Context(), where, repo, backup.Source{Paths: []string{outside}, Tags: []string{
		backupjobs.TagType + "stack", backupjobs.TagTarget + name, fmt.Sprintf("%s%d", backupjobs.TagEnv, e.ID),
		backupjobs.TagStackDir + outside}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "kept.txt"), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	status, body = h.do("POST", "/api/backup/restore", map[string]any{"destinationId": d.ID, "snapshotId": sum.SnapshotID,
		"mode": "in-place", "confirmOverwrite": true})
	if status != 403 || !strings.Contains(string(body), "Invalid targetPath") {
		t.Errorf("restore in place of a directory outside the stacks' = %d %s, want a 403", status, body)
	}
	if b, err := os.ReadFile(filepath.Join(outside, "kept.txt")); err != nil || string(b) != "changed\n" {
		t.Errorf("the refused restore wrote %s: %q, %v", outside, b, err)
	}
}

func slicesWithout(s []string, v string) []string {
	var out []string
	for _, x := range s {
		if x != v {
			out = append(out, x)
		}
	}
	return out
}

// onEngine2Quiet runs docker against the second engine without failing
// the test (for cleanups).
func onEngine2Quiet(socket string, args ...string) (string, error) {
	cmd := exec.Command("docker", args...)
	cmd.Env = append(os.Environ(), "DOCKER_HOST=unix://"+socket)
	out, err := cmd.CombinedOutput()
	return string(out), err
}
