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

// remoteBackupBerth starts a Berth with the real restic runner and an
// agent-standard environment on the second engine, and returns it, the
// second engine's socket and the environment.
func remoteBackupBerth(t *testing.T) (*berth, string, environment) {
	t.Helper()
	return remoteBackupBerthWith(t, nil)
}

// remoteBackupBerthWith is remoteBackupBerth whose options opts changes
// first (when not nil).
func remoteBackupBerthWith(t *testing.T, opts func(*apitest.Options)) (*berth, string, environment) {
	t.Helper()
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
	if opts != nil {
		opts(&o)
	}
	h := &berth{t: t, http: &http.Client{Timeout: 5 * time.Minute}, logs: logs, opts: o, label: randomLabel()}
	h.start()
	t.Cleanup(func() {
		h.b.Close()
		if t.Failed() {
			t.Logf("berth log:\n%s", logs.String())
		}
	})
	t.Cleanup(func() { removeLabelled(t, socket, h.label) })
	token := "standard-agent-token-backup-" + h.label + "-0123456789"
	_, port, cert := standardAgent(t, socket, token)
	var e environment
	h.must(201, "POST", "/api/environments", map[string]any{"name": "bkcfg-" + h.label, "connectionType": "agent-standard",
		"host": "127.0.0.1", "port": port, "protocol": "https", "agentToken": token, "tlsCa": cert}, &e)
	return h, socket, e
}

// TestBackupConfigOnTheRemoteEngineThroughAnAgent runs a backup
// configuration of a container on the second engine, reached through a
// standard agent, to a REST repository (the container stopped during the
// backup and running again), then restores it in place through the API:
// the bytes are the same.
func TestBackupConfigOnTheRemoteEngineThroughAnAgent(t *testing.T) {
	h, socket, e := remoteBackupBerth(t)
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

// TestBackupStackOnTheRemoteEngineToEveryDestinationType backs up a stack
// (its compose project's container and volume) on the second engine,
// reached through a standard agent, to each destination type (a path on
// that host, SFTP, REST, S3); after files are changed and deleted, an
// in-place restore brings back the same bytes with the stack running, and a
// restore to a new name writes a new volume and leaves the original as it
// is.
func TestBackupStackOnTheRemoteEngineToEveryDestinationType(t *testing.T) {
	enginetest.RequireEnv(t, "backup repositories", "BERTH_TEST_SFTP_HOST", "BERTH_TEST_SFTP_PORT", "BERTH_TEST_SFTP_USER",
		"BERTH_TEST_SFTP_DIR", "BERTH_TEST_SFTP_KEY", "BERTH_TEST_SFTP_KNOWN_HOSTS", "BERTH_TEST_S3_URL", "BERTH_TEST_S3_BUCKET",
		"BERTH_TEST_S3_ACCESS_KEY", "BERTH_TEST_S3_SECRET_KEY", "BERTH_TEST_S3_DIR",
		"BERTH_TEST_S3_META_DIR")
	h, socket, e := remoteBackupBerth(t)
	key, err := os.ReadFile(os.Getenv("BERTH_TEST_SFTP_KEY"))
	if err != nil {
		t.Fatal(err)
	}
	known, err := os.ReadFile(os.Getenv("BERTH_TEST_SFTP_KNOWN_HOSTS"))
	if err != nil {
		t.Fatal(err)
	}
	repo := "berth-test-stack-" + h.label
	sftpDir := filepath.Join(os.Getenv("BERTH_TEST_SFTP_DIR"), repo)
	restDir := filepath.Join(os.Getenv("BERTH_TEST_REST_DIR"), repo)
	s3Dir := filepath.Join(os.Getenv("BERTH_TEST_S3_DIR"), os.Getenv("BERTH_TEST_S3_BUCKET"), repo)
	// versitygw keeps each object's metadata in a sidecar tree of its own.
	s3Meta := filepath.Join(os.Getenv("BERTH_TEST_S3_META_DIR"), os.Getenv("BERTH_TEST_S3_BUCKET"), repo)
	t.Cleanup(func() {
		for _, d := range []string{sftpDir, restDir, s3Dir, s3Meta} {
			os.RemoveAll(d)
		}
	})
	password := "pw-" + rand.Text()
	dests := []store.BackupDestination{
		{Type: backup.TypeLocal, Repository: filepath.Join(t.TempDir(), "repo")},
		{Type: backup.TypeSFTP, SSHKey: string(key), SSHKnownHosts: string(known), Repository: "sftp://" +
			os.Getenv("BERTH_TEST_SFTP_USER") + "@" + os.Getenv("BERTH_TEST_SFTP_HOST") + ":" + os.Getenv("BERTH_TEST_SFTP_PORT") + "/" + sftpDir},
		{Type: backup.TypeREST, Repository: "rest:" + os.Getenv("BERTH_TEST_REST_URL") + "/" + repo + "/"},
		{Type: backup.TypeS3, Repository: "s3:" + os.Getenv("BERTH_TEST_S3_URL") + "/" + os.Getenv("BERTH_TEST_S3_BUCKET") + "/" + repo,
			EnvVars: map[string]string{"AWS_ACCESS_KEY_ID": os.Getenv("BERTH_TEST_S3_ACCESS_KEY"),
				"AWS_SECRET_ACCESS_KEY": os.Getenv("BERTH_TEST_S3_SECRET_KEY")}},
	}

	// The stack: a compose project's volume and container on the remote host.
	project := "bkst" + h.label
	vol, app := project+"_data", project+"-app-1"
	compose := map[string]string{"com.docker.compose.project": project}
	label := func(args ...string) []string {
		out := []string{"--label", enginetest.Label + "=" + h.label}
		for k, v := range compose {
			out = append(out, "--label", k+"="+v)
		}
		return append(out, args...)
	}
	onEngine2(t, socket, append([]string{"volume", "create"}, label(vol)...)...)
	onEngine2(t, socket, append([]string{"run", "-d", "--name", app}, label("-v", vol+":/d", enginetest.Image(), "sh", "-c",
		"[ -f /d/a.txt ] || (mkdir -p /d/dir && echo remote > /d/a.txt && head -c 300000 /dev/urandom > /d/dir/b.bin); touch /tmp/ready; sleep 3600")...)...)
	sums := func(volume string) string {
		return onEngine2(t, socket, "run", "--rm", "--label", enginetest.Label+"="+h.label, "-v", volume+":/d", enginetest.Image(),
			"sh", "-c", "cd /d && find . -type f | sort | xargs sha256sum")
	}
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(onEngine2(t, socket, "exec", app, "sh", "-c", "test -f /tmp/ready && echo ready || true"), "ready") &&
		time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	want := sums(vol)

	for _, d := range dests {
		t.Run(d.Type, func(t *testing.T) {
			d.Name, d.Password, d.EnvironmentID = repo+"-"+d.Type, password, &e.ID
			if err := h.b.Store.CreateBackupDestination(t.Context(), &d); err != nil {
				t.Fatal(err)
			}
			h.must(200, "POST", fmt.Sprintf("/api/backup/destinations/%d/init", d.ID), nil, nil)
			var cfg struct {
				ID int64 `json:"id"`
			}
			h.must(201, "POST", "/api/backup/configs", map[string]any{"destinationId": d.ID, "targetName": project, "type": "stack",
				"environmentId": e.ID, "allVolumes": true, "stopBeforeBackup": true}, &cfg)
			status, body := h.do("POST", fmt.Sprintf("/api/backup/configs/%d/run", cfg.ID), nil)
			if status != 200 || !strings.Contains(string(body), `"status":"success"`) {
				t.Fatalf("run = %d %s", status, body)
			}
			runs, err := h.b.Store.ListBackupRuns(t.Context(), cfg.ID, 1)
			if err != nil || len(runs) != 1 || runs[0].SnapshotID == "" {
				t.Fatalf("runs = %+v, %v", runs, err)
			}
			snap := runs[0].SnapshotID

			onEngine2(t, socket, "exec", app, "sh", "-c", "echo changed > /d/a.txt && rm /d/dir/b.bin")
			status, body = h.do("POST", "/api/backup/restore", map[string]any{"destinationId": d.ID, "snapshotId": snap,
				"mode": "in-place", "confirmOverwrite": true})
			if status != 200 || !strings.Contains(string(body), `"status":"success"`) {
				t.Fatalf("restore in place = %d %s", status, body)
			}
			if got := sums(vol); got != want {
				t.Errorf("restored in place:\n%s\nwant\n%s", got, want)
			}
			if got := strings.TrimSpace(onEngine2(t, socket, "inspect", "-f", "{{.State.Running}}", app)); got != "true" {
				t.Errorf("the stack's container runs: %s, want true", got)
			}

			// To a new name: the original, changed again, stays as it is.
			onEngine2(t, socket, "exec", app, "sh", "-c", "echo kept > /d/a.txt")
			original := sums(vol)
			copyName := project + "c" + d.Type
			t.Cleanup(func() { onEngine2(t, socket, "volume", "rm", "-f", copyName+"_data") })
			status, body = h.do("POST", "/api/backup/restore", map[string]any{"destinationId": d.ID, "snapshotId": snap,
				"mode": "new-location", "targetName": copyName})
			if status != 200 || !strings.Contains(string(body), `"status":"success"`) {
				t.Fatalf("restore to a new name = %d %s", status, body)
			}
			if got := sums(copyName + "_data"); got != want {
				t.Errorf("the new volume:\n%s\nwant\n%s", got, want)
			}
			if got := sums(vol); got != original {
				t.Errorf("the original changed:\n%s\nwant\n%s", got, original)
			}
			// Back to the snapshot's content for the next destination.
			onEngine2(t, socket, "exec", app, "sh", "-c", "echo remote > /d/a.txt")
		})
	}
}
