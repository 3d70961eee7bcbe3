package api_test

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/apitest"
	"github.com/berth-dev/berth/server/internal/backup"
	"github.com/berth-dev/berth/server/internal/helperimage/helperimagetest"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/enginetest"
)

// backupRunner is the real restic runner (h-run's backup.Restic) on this
// host's restic, skipping (failing in CI) without it.
func backupRunner(t *testing.T) *backup.Restic {
	t.Helper()
	enginetest.Require(t)
	enginetest.RequireEnv(t, "restic", "BERTH_TEST_RESTIC")
	set, err := helperimagetest.Set()
	if err != nil {
		t.Fatal(err)
	}
	return backup.New(backup.Config{Restic: os.Getenv("BERTH_TEST_RESTIC"), Helper: set})
}

// newDestinationsHarness serves a Berth with the real restic runner and
// authentication enabled, signed in as its admin.
func newDestinationsHarness(t *testing.T) *harness {
	t.Helper()
	h := newAuthHarness(t, apitest.Options{Backup: backupRunner(t)})
	user, pw := h.setupAdmin()
	h.as(h.login(user, pw))
	return h
}

// restRepository returns a new repository URL on the test REST server
// (with its credentials), removed after the test.
func restRepository(t *testing.T, name string) string {
	t.Helper()
	enginetest.RequireEnv(t, "restic REST server", "BERTH_TEST_REST_URL", "BERTH_TEST_REST_DIR")
	t.Cleanup(func() { os.RemoveAll(filepath.Join(os.Getenv("BERTH_TEST_REST_DIR"), name)) })
	return "rest:" + os.Getenv("BERTH_TEST_REST_URL") + "/" + name + "/"
}

// backupDestination is a destination as the API answers it.
type backupDestination struct {
	ID              int64
	Name            string
	Type            string
	Repository      string
	EnvironmentID   *int64
	EnvVars         map[string]string
	EnvVarNames     []string
	HasPassword     bool
	LastTestStatus  string
	LastTestMessage string
	Initialized     bool
}

// getJSON sends a request asking for a JSON answer (job-polled routes
// then answer their result instead of {jobId}).
func (h *harness) getJSON(want int, method, path string, body, out any) {
	h.t.Helper()
	h.headers["Accept"] = "application/json"
	defer delete(h.headers, "Accept")
	h.must(want, method, path, body, out)
}

// Destinations are checked before anything is saved, never answer their
// password (nor the REST password of their URL), answer envVars only to
// backups:manage, and keep their secrets for the host they were saved for.
func TestBackupDestinationsAreValidatedAndNeverAnswerTheirSecrets(t *testing.T) {
	h := newDestinationsHarness(t)
	localRepo := filepath.Join(t.TempDir(), "repo")
	restName := "berth-test-dest-" + h.label
	restRepo := restRepository(t, restName)
	restPassword := mustRESTPassword(t, restRepo)

	h.expectRefusals([]refusal{
		{"no name", "POST", "/api/backup/destinations", map[string]any{"repository": localRepo, "password": "p"}, 400, "Name is required"},
		{"no password", "POST", "/api/backup/destinations", map[string]any{"name": "x", "repository": localRepo}, 400, "Password is required"},
		{"no repository", "POST", "/api/backup/destinations", map[string]any{"name": "x", "password": "p"}, 400, "Repository is required"},
		{"unknown type", "POST", "/api/backup/destinations", map[string]any{"name": "x", "repository": "ftp://h/x", "password": "p"}, 400, "Unsupported repository"},
		{"rclone", "POST", "/api/backup/destinations", map[string]any{"name": "x", "repository": "rclone:remote:x", "password": "p"}, 400, "rclone"},
		{"local /", "POST", "/api/backup/destinations", map[string]any{"name": "x", "repository": "/", "password": "p"}, 400, "local repository"},
		{"password command", "POST", "/api/backup/destinations", map[string]any{"name": "x", "repository": localRepo, "password": "p",
			"flags": "--password-command cat"}, 400, "not allowed"},
		{"sftp command", "POST", "/api/backup/destinations", map[string]any{"name": "x", "repository": localRepo, "password": "p",
			"flags": "-o sftp.command=sh"}, 400, "not allowed"},
		{"env name", "POST", "/api/backup/destinations", map[string]any{"name": "x", "repository": "s3:s3.example.com/b/r", "password": "p",
			"envVars": map[string]string{"LD_PRELOAD": "/x.so"}}, 400, "LD_PRELOAD"},
		{"metadata host", "POST", "/api/backup/destinations", map[string]any{"name": "x", "repository": "rest:http://169.254.169.254/r/",
			"password": "p"}, 400, "Repository refused"},
		{"policy cron", "POST", "/api/backup/destinations", map[string]any{"name": "x", "repository": localRepo, "password": "p",
			"policies": `{"pruneEnabled":true,"pruneSchedule":"every day"}`}, 400, "pruneSchedule"},
		{"policies not JSON", "POST", "/api/backup/destinations", map[string]any{"name": "x", "repository": localRepo, "password": "p",
			"policies": `prune`}, 400, "JSON object"},
		{"ssh key on rest", "POST", "/api/backup/destinations", map[string]any{"name": "x", "repository": restRepo, "password": "p",
			"sshKey": "-----BEGIN OPENSSH PRIVATE KEY-----"}, 400, "sftp repositories only"},
		{"no environment", "POST", "/api/backup/destinations", map[string]any{"name": "x", "repository": localRepo, "password": "p",
			"environmentId": 999}, 400, "no such environment"},
	})
	var list []backupDestination
	h.must(200, "GET", "/api/backup/destinations", nil, &list)
	if len(list) != 0 {
		t.Fatalf("refused creations saved destinations: %+v", list)
	}

	// A local repository: saved, initialised and tested at once.
	var local backupDestination
	h.must(201, "POST", "/api/backup/destinations", map[string]any{"name": "local", "repository": localRepo,
		"password": "local-secret-pw"}, &local)
	if local.Type != backup.TypeLocal || !local.Initialized || local.LastTestStatus != "success" ||
		local.EnvironmentID == nil || *local.EnvironmentID != 1 || !local.HasPassword {
		t.Errorf("created local destination = %+v; want type local, initialised, tested, on environment 1", local)
	}
	if _, err := os.Stat(filepath.Join(localRepo, "config")); err != nil {
		t.Errorf("the local repository was not initialised on the host: %v", err)
	}
	h.must(409, "POST", "/api/backup/destinations", map[string]any{"name": "local", "repository": localRepo + "2", "password": "p"}, nil)

	// A REST repository with credentials in its URL: they move to the
	// sealed environment, the stored URL holds none.
	var rest backupDestination
	status, body := h.do("POST", "/api/backup/destinations", map[string]any{"name": "rest", "repository": restRepo,
		"password": "rest-secret-pw"})
	if status != 201 {
		t.Fatalf("create REST destination = %d %s", status, body)
	}
	if err := json.Unmarshal(body, &rest); err != nil {
		t.Fatal(err)
	}
	if rest.LastTestStatus != "success" || strings.Contains(rest.Repository, restPassword) || strings.Contains(rest.Repository, "@") {
		t.Errorf("created REST destination = %+v; want tested, its URL without credentials", rest)
	}
	if rest.EnvVars["RESTIC_REST_PASSWORD"] != "********" || rest.EnvVars["RESTIC_REST_USERNAME"] == "" {
		t.Errorf("envVars answered to the creator = %v; want the REST user and the password masked", rest.EnvVars)
	}
	for _, path := range []string{"/api/backup/destinations", fmt.Sprintf("/api/backup/destinations/%d", rest.ID),
		fmt.Sprintf("/api/backup/destinations/%d", local.ID)} {
		_, body := h.do("GET", path, nil)
		for _, secret := range []string{"local-secret-pw", "rest-secret-pw", restPassword} {
			if strings.Contains(string(body), secret) {
				t.Errorf("GET %s answers the repository password: %s", path, body)
			}
		}
	}
	h.must(200, "GET", "/api/backup/destinations", nil, &list)
	for _, d := range list {
		if d.EnvVars != nil {
			t.Errorf("the list answers envVars of %s: %v", d.Name, d.EnvVars)
		}
	}
	var got backupDestination
	h.must(200, "GET", fmt.Sprintf("/api/backup/destinations/%d", rest.ID), nil, &got)
	if got.EnvVars["RESTIC_REST_PASSWORD"] != "********" || !slices.Contains(got.EnvVarNames, "RESTIC_REST_USERNAME") {
		t.Errorf("an admin's GET = %+v; want envVars, the password masked", got)
	}
	// The masked envVars sent back keep the stored password: the
	// repository still opens.
	h.must(200, "PUT", fmt.Sprintf("/api/backup/destinations/%d", rest.ID), map[string]any{"envVars": got.EnvVars}, nil)
	var test struct{ Success bool }
	h.must(200, "POST", fmt.Sprintf("/api/backup/destinations/%d/test", rest.ID), nil, &test)
	if !test.Success {
		t.Errorf("after sending the masked envVars back the repository does not open")
	}

	// Moving the repository to another host without sending the secrets
	// again is refused; a rename keeps the test's outcome.
	h.must(403, "PUT", fmt.Sprintf("/api/backup/destinations/%d", rest.ID),
		map[string]any{"repository": "rest:http://127.0.0.2:8008/elsewhere/"}, nil)
	h.must(200, "PUT", fmt.Sprintf("/api/backup/destinations/%d", rest.ID), map[string]any{"name": "rest-renamed"}, &got)
	if got.Name != "rest-renamed" || got.LastTestStatus != "success" || got.Repository != rest.Repository {
		t.Errorf("after rename = %+v", got)
	}
	h.must(409, "PUT", fmt.Sprintf("/api/backup/destinations/%d", rest.ID), map[string]any{"name": "local"}, nil)

	// A Viewer lists and reads (without envVars), changes nothing.
	admin := h.headers
	h.signInWithRole("vera", "Viewer")
	h.must(200, "GET", "/api/backup/destinations", nil, &list)
	got = backupDestination{}
	h.must(200, "GET", fmt.Sprintf("/api/backup/destinations/%d", rest.ID), nil, &got)
	if got.EnvVars != nil || len(got.EnvVarNames) != 2 {
		t.Errorf("a Viewer's GET = %+v; want the names of envVars only", got)
	}
	h.must(200, "GET", "/api/backup/instance", nil, nil)
	h.expectRefusals([]refusal{
		{"viewer create", "POST", "/api/backup/destinations", map[string]any{"name": "v", "repository": localRepo + "v", "password": "p"}, 403, "Permission denied"},
		{"viewer update", "PUT", fmt.Sprintf("/api/backup/destinations/%d", local.ID), map[string]any{"name": "v"}, 403, "Permission denied"},
		{"viewer delete", "DELETE", fmt.Sprintf("/api/backup/destinations/%d", local.ID), nil, 403, "Permission denied"},
		{"viewer test", "POST", fmt.Sprintf("/api/backup/destinations/%d/test", local.ID), nil, 403, "Permission denied"},
		{"viewer forget", "DELETE", fmt.Sprintf("/api/backup/snapshots/0123abcd?destinationId=%d", local.ID), nil, 403, "Permission denied"},
		{"viewer rotate", "POST", fmt.Sprintf("/api/backup/destinations/%d/rotate-key", local.ID),
			map[string]any{"currentPassword": "local-secret-pw", "newPassword": "x"}, 403, "Permission denied"},
	})

	// An Operator manages destinations.
	h.headers = admin
	h.signInWithRole("otto", "Operator")
	var op backupDestination
	h.must(201, "POST", "/api/backup/destinations", map[string]any{"name": "operator", "repository": localRepo + "-op",
		"password": "op-pw"}, &op)
	h.must(200, "DELETE", fmt.Sprintf("/api/backup/destinations/%d", op.ID), nil, nil)

	// A destination a backup is writing to is neither changed nor deleted.
	h.headers = admin
	_, err := h.store.DB().ExecContext(t.Context(), `INSERT INTO backup_runs (destination_id, kind, status, started_at)
		VALUES ($1, 'backup', 'running', $2)`, local.ID, time.Now().UTC().Format("2006-01-02T15:04:05.000000000Z"))
	if err != nil {
		t.Fatal(err)
	}
	h.must(409, "PUT", fmt.Sprintf("/api/backup/destinations/%d", local.ID), map[string]any{"name": "busy"}, nil)
	h.must(409, "DELETE", fmt.Sprintf("/api/backup/destinations/%d", local.ID), nil, nil)
	if _, err := h.store.DB().ExecContext(t.Context(), "DELETE FROM backup_runs"); err != nil {
		t.Fatal(err)
	}

	// A destination in use by a configuration is not deleted.
	_, err = h.store.DB().ExecContext(t.Context(), `INSERT INTO backup_configs (type, target_name, environment_id,
		destination_id, created_at, updated_at) VALUES ('stack', 'web', 1, $1, $2, $2)`, local.ID, "2026-01-01T00:00:00.000000000Z")
	if err != nil {
		t.Fatal(err)
	}
	status, body = h.do("DELETE", fmt.Sprintf("/api/backup/destinations/%d", local.ID), nil)
	if status != 409 || !strings.Contains(string(body), "web") {
		t.Errorf("delete of a destination in use = %d %s; want 409 naming the configuration", status, body)
	}
	if _, err := h.store.DB().ExecContext(t.Context(), "DELETE FROM backup_configs"); err != nil {
		t.Fatal(err)
	}
	h.must(200, "DELETE", fmt.Sprintf("/api/backup/destinations/%d", local.ID), nil, nil)
	h.must(404, "GET", fmt.Sprintf("/api/backup/destinations/%d", local.ID), nil, nil)

	// Every change was audited.
	entries, _, err := h.store.ListAudit(t.Context(), store.AuditFilter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, e := range entries {
		actions = append(actions, e.Action)
	}
	for _, want := range []string{"backup.destination.create", "backup.destination.update", "backup.destination.delete"} {
		if !slices.Contains(actions, want) {
			t.Errorf("audit has no %s: %v", want, actions)
		}
	}
}

// mustRESTPassword is the password in a REST repository URL.
func mustRESTPassword(t *testing.T, repo string) string {
	t.Helper()
	u, err := url.Parse(strings.TrimPrefix(repo, "rest:"))
	if err != nil {
		t.Fatal(err)
	}
	p, ok := u.User.Password()
	if !ok || p == "" {
		t.Fatalf("BERTH_TEST_REST_URL has no password: the test needs one")
	}
	return p
}

// backupSnapshot is a snapshot as the API lists it.
type backupSnapshot struct {
	ID         string
	ShortID    string
	Tags       []string
	Paths      []string
	Own        bool
	ConfigID   *int64
	InstanceID string
}

// backupVolume creates a volume labelled for the test holding what script
// (sh, in /d) writes, and returns its name.
func backupVolume(t *testing.T, h *harness, name, script string) string {
	t.Helper()
	name = "berth-test-" + h.label + "-" + name
	docker(t, "volume", "create", "--label", enginetest.Label+"="+h.label, name)
	t.Cleanup(func() { _ = exec.Command("docker", "volume", "rm", "-f", name).Run() })
	inBackupVolume(t, h, name, script)
	return name
}

func inBackupVolume(t *testing.T, h *harness, name, script string) {
	t.Helper()
	docker(t, "run", "--rm", "--label", enginetest.Label+"="+h.label, "-v", name+":/d", "-w", "/d",
		enginetest.Image(), "sh", "-c", "set -e; "+script)
}

func docker(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("docker", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("docker %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// A destination's snapshots, on a local path and on the REST server: made
// by the runner as a configuration's run makes them, listed with this
// install's told from another's, filtered by configuration, browsed,
// dumped, laid out, diffed, and forgotten (this install's only).
func TestBackupSnapshotsAreListedBrowsedDumpedDiffedAndForgotten(t *testing.T) {
	h := newDestinationsHarness(t)
	runner := backupRunner(t)
	cl, err := engine.NewManager(nil).Client(t.Context(), engine.Endpoint{ID: 1, ConnectionType: engine.Socket, SocketPath: enginetest.Socket})
	if err != nil {
		t.Fatal(err)
	}
	where := backup.Where{EnvID: 1, Client: cl, Owner: "berth-test-" + h.label}
	var instance struct{ InstanceID string }
	h.must(200, "GET", "/api/backup/instance", nil, &instance)
	if len(instance.InstanceID) < 16 {
		t.Fatalf("instance id = %q", instance.InstanceID)
	}
	repos := map[string]string{
		"local": filepath.Join(t.TempDir(), "repo"),
		"rest":  restRepository(t, "berth-test-snap-"+h.label),
	}
	for kind, repository := range repos {
		t.Run(kind, func(t *testing.T) {
			password := "pw-" + rand.Text()
			var d backupDestination
			h.must(201, "POST", "/api/backup/destinations", map[string]any{"name": kind, "repository": repository, "password": password}, &d)
			if d.LastTestStatus != "success" {
				t.Fatalf("destination %s = %+v", kind, d)
			}
			_, err := h.store.DB().ExecContext(t.Context(), `INSERT INTO backup_configs (type, target_name, environment_id,
				destination_id, created_at, updated_at) VALUES ('container', 'app', 1, $1, $2, $2)`, d.ID, "2026-01-01T00:00:00.000000000Z")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _, _ = h.store.DB().Exec("DELETE FROM backup_configs WHERE destination_id = $1", d.ID) })
			var configID int64
			if err := h.store.DB().QueryRowContext(t.Context(), "SELECT id FROM backup_configs WHERE destination_id = $1", d.ID).Scan(&configID); err != nil {
				t.Fatal(err)
			}
			repo, _, err := h.store.BackupDestinationRepo(t.Context(), d.ID)
			if err != nil {
				t.Fatal(err)
			}
			vol := backupVolume(t, h, "snap-"+kind, "echo hello > a.txt; echo gone > b.txt")
			own := []string{"berth:instance=" + instance.InstanceID, fmt.Sprintf("berth:config=%d", configID)}
			first, err := runner.Backup(t.Context(), where, repo, backup.Source{Volumes: []string{vol}, Tags: own, Host: instance.InstanceID}, nil)
			if err != nil {
				t.Fatal(err)
			}
			inBackupVolume(t, h, vol, "echo changed > a.txt; rm b.txt; echo new > c.txt")
			second, err := runner.Backup(t.Context(), where, repo, backup.Source{Volumes: []string{vol}, Tags: own, Host: instance.InstanceID}, nil)
			if err != nil {
				t.Fatal(err)
			}
			foreign, err := runner.Backup(t.Context(), where, repo, backup.Source{Volumes: []string{vol},
				Tags: []string{"berth:instance=another-install"}, Host: "another-install"}, nil)
			if err != nil {
				t.Fatal(err)
			}

			var listed struct {
				InstanceID string
				Snapshots  []backupSnapshot
			}
			h.getJSON(200, "GET", fmt.Sprintf("/api/backup/snapshots?destinationId=%d", d.ID), nil, &listed)
			ownOf := map[string]bool{}
			for _, s := range listed.Snapshots {
				ownOf[s.ID] = s.Own
				if s.ID != foreign.SnapshotID && (s.ConfigID == nil || *s.ConfigID != configID) {
					t.Errorf("snapshot %s: configId %v, want %d", s.ID, s.ConfigID, configID)
				}
			}
			want := map[string]bool{first.SnapshotID: true, second.SnapshotID: true, foreign.SnapshotID: false}
			if fmt.Sprint(ownOf) != fmt.Sprint(want) {
				t.Errorf("snapshots by own = %v, want %v", ownOf, want)
			}
			h.getJSON(200, "GET", fmt.Sprintf("/api/backup/snapshots?configId=%d", configID), nil, &listed)
			if len(listed.Snapshots) != 2 {
				t.Errorf("the configuration's snapshots = %+v, want its 2", listed.Snapshots)
			}
			var jobStart struct{ JobID string }
			h.must(200, "GET", fmt.Sprintf("/api/backup/snapshots?destinationId=%d", d.ID), nil, &jobStart)
			if jobStart.JobID == "" {
				t.Errorf("without Accept: application/json the list is not job-polled")
			}

			root := backup.VolumesDir + "/" + vol
			var dir struct {
				Path    string
				Entries []struct{ Name, Type string }
			}
			h.getJSON(200, "GET", fmt.Sprintf("/api/backup/snapshots/%s/browse?destinationId=%d&path=%s", first.SnapshotID, d.ID,
				url.QueryEscape(root)), nil, &dir)
			var names []string
			for _, e := range dir.Entries {
				names = append(names, e.Name+":"+e.Type)
			}
			if strings.Join(names, ",") != "a.txt:file,b.txt:file" {
				t.Errorf("browse of %s = %v", root, names)
			}
			var preview struct {
				Content   string
				Truncated bool
				Binary    bool
			}
			h.getJSON(200, "GET", fmt.Sprintf("/api/backup/snapshots/%s/dump?destinationId=%d&path=%s", first.SnapshotID, d.ID,
				url.QueryEscape(root+"/a.txt")), nil, &preview)
			if preview.Content != "hello\n" || preview.Truncated || preview.Binary {
				t.Errorf("dump preview = %+v, want hello", preview)
			}
			status, raw := h.do("GET", fmt.Sprintf("/api/backup/snapshots/%s/dump?destinationId=%d&download=true&path=%s",
				second.SnapshotID, d.ID, url.QueryEscape(root+"/a.txt")), nil)
			if status != 200 || string(raw) != "changed\n" {
				t.Errorf("download = %d %q, want changed", status, raw)
			}
			h.must(400, "GET", fmt.Sprintf("/api/backup/snapshots/%s/dump?destinationId=%d&path=/etc/passwd", first.SnapshotID, d.ID), nil, nil)

			var meta struct {
				Snapshot backupSnapshot
				Volumes  []string
			}
			h.getJSON(200, "GET", fmt.Sprintf("/api/backup/snapshots/%s/metadata?destinationId=%d", first.SnapshotID[:8], d.ID), nil, &meta)
			if !slices.Equal(meta.Volumes, []string{vol}) || !meta.Snapshot.Own {
				t.Errorf("metadata = %+v, want volume %s, own", meta, vol)
			}

			var diff backup.Diff
			h.getJSON(200, "GET", fmt.Sprintf("/api/backup/snapshots/diff?destinationId=%d&snapshotA=%s&snapshotB=%s", d.ID,
				first.SnapshotID, second.SnapshotID), nil, &diff)
			wantDiff := backup.Diff{Added: []string{root + "/c.txt"}, Removed: []string{root + "/b.txt"}, Modified: []string{root + "/a.txt"}}
			if fmt.Sprint(diff) != fmt.Sprint(wantDiff) {
				t.Errorf("diff = %+v, want %+v", diff, wantDiff)
			}

			h.must(404, "DELETE", fmt.Sprintf("/api/backup/snapshots/%s?destinationId=%d", foreign.SnapshotID, d.ID), nil, nil)
			h.must(400, "DELETE", fmt.Sprintf("/api/backup/snapshots/%s", first.SnapshotID), nil, nil)
			h.must(200, "DELETE", fmt.Sprintf("/api/backup/snapshots/%s?destinationId=%d", first.SnapshotID, d.ID), nil, nil)
			h.getJSON(200, "GET", fmt.Sprintf("/api/backup/snapshots?destinationId=%d", d.ID), nil, &listed)
			var left []string
			for _, s := range listed.Snapshots {
				left = append(left, s.ID)
			}
			slices.Sort(left)
			wantLeft := []string{second.SnapshotID, foreign.SnapshotID}
			slices.Sort(wantLeft)
			if !slices.Equal(left, wantLeft) {
				t.Errorf("after forgetting the first: %v, want %v", left, wantLeft)
			}
		})
	}
}

// Maintenance of a destination: a task answers its result (JSON) or streams
// it, verify streams progress and a result, a wrong current password does
// not rotate the key, a rotated key opens the repository from then on, and
// an inline test tells a repository to initialise from a wrong password.
func TestBackupDestinationMaintenanceVerifyRotateAndTest(t *testing.T) {
	h := newDestinationsHarness(t)
	repo := filepath.Join(t.TempDir(), "repo")
	var d backupDestination
	h.must(201, "POST", "/api/backup/destinations", map[string]any{"name": "m", "repository": repo, "password": "first-pw"}, &d)

	var task struct {
		Success bool
		Task    string
		Stats   *backup.Stats
		Error   string
	}
	h.getJSON(200, "POST", fmt.Sprintf("/api/backup/destinations/%d/task", d.ID), map[string]string{"task": "stats"}, &task)
	if !task.Success || task.Task != "stats" || task.Stats == nil {
		t.Errorf("stats task = %+v", task)
	}
	h.must(400, "POST", fmt.Sprintf("/api/backup/destinations/%d/task", d.ID), map[string]string{"task": "rm -rf"}, nil)
	h.must(400, "POST", fmt.Sprintf("/api/backup/destinations/%d/verify", d.ID), map[string]string{"dataSubset": "--x"}, nil)

	events, resp := h.openStream(t.Context(), "POST", fmt.Sprintf("/api/backup/destinations/%d/verify", d.ID), map[string]string{"dataSubset": "10%"})
	if resp.StatusCode != 200 || resp.Header.Get("X-Job-Id") == "" {
		t.Fatalf("verify = %d (job %q)", resp.StatusCode, resp.Header.Get("X-Job-Id"))
	}
	var last sseEvent
	for e := range events {
		last = e
	}
	if last.Name != "result" || !strings.Contains(last.Data, `"success":true`) || !strings.Contains(last.Data, `"task":"check"`) {
		t.Errorf("verify's last event = %+v, want a successful check result", last)
	}

	h.must(400, "POST", fmt.Sprintf("/api/backup/destinations/%d/rotate-key", d.ID),
		map[string]string{"currentPassword": "wrong", "newPassword": "second-pw"}, nil)
	h.must(200, "POST", fmt.Sprintf("/api/backup/destinations/%d/rotate-key", d.ID),
		map[string]string{"currentPassword": "first-pw", "newPassword": "second-pw"}, nil)
	var test struct {
		Success   bool
		Status    string
		NeedsInit bool
		Error     string
	}
	h.must(200, "POST", fmt.Sprintf("/api/backup/destinations/%d/test", d.ID), nil, &test)
	if !test.Success || test.Status != "success" {
		t.Errorf("test after rotation = %+v", test)
	}
	h.must(200, "POST", "/api/backup/destinations/test", map[string]any{"repository": repo, "password": "second-pw"}, &test)
	if !test.Success {
		t.Errorf("inline test with the new password = %+v", test)
	}
	h.must(200, "POST", "/api/backup/destinations/test", map[string]any{"repository": repo, "password": "first-pw"}, &test)
	if test.Success || test.Status != "failed" || test.Error == "" {
		t.Errorf("inline test with the old password = %+v, want failed", test)
	}
	h.must(200, "POST", "/api/backup/destinations/test", map[string]any{"repository": repo + "-new", "password": "x"}, &test)
	if test.Success || test.Status != "needs_init" || !test.NeedsInit {
		t.Errorf("inline test of a path without repository = %+v, want needs_init", test)
	}
	h.must(200, "POST", "/api/backup/destinations/test", map[string]any{"destinationId": d.ID}, &test)
	if !test.Success {
		t.Errorf("test by destinationId = %+v", test)
	}
	var init struct {
		Success bool
		Message string
	}
	h.must(200, "POST", fmt.Sprintf("/api/backup/destinations/%d/init", d.ID), nil, &init)
	if !init.Success || !strings.Contains(init.Message, "already") {
		t.Errorf("init of an existing repository = %+v", init)
	}
}

// An SFTP destination opens with the private key and known hosts it was
// given; the key is never answered.
func TestBackupDestinationOnSFTPUsesItsKeyAndNeverAnswersIt(t *testing.T) {
	h := newDestinationsHarness(t)
	enginetest.RequireEnv(t, "SFTP server", "BERTH_TEST_SFTP_HOST", "BERTH_TEST_SFTP_PORT", "BERTH_TEST_SFTP_USER",
		"BERTH_TEST_SFTP_DIR", "BERTH_TEST_SFTP_KEY", "BERTH_TEST_SFTP_KNOWN_HOSTS")
	key, err := os.ReadFile(os.Getenv("BERTH_TEST_SFTP_KEY"))
	if err != nil {
		t.Fatal(err)
	}
	known, err := os.ReadFile(os.Getenv("BERTH_TEST_SFTP_KNOWN_HOSTS"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(os.Getenv("BERTH_TEST_SFTP_DIR"), "berth-test-dest-"+h.label)
	t.Cleanup(func() { os.RemoveAll(dir) })
	repo := "sftp://" + os.Getenv("BERTH_TEST_SFTP_USER") + "@" + os.Getenv("BERTH_TEST_SFTP_HOST") + ":" +
		os.Getenv("BERTH_TEST_SFTP_PORT") + "/" + dir
	h.must(400, "POST", "/api/backup/destinations", map[string]any{"name": "sftp", "repository": repo, "password": "p"}, nil)
	status, body := h.do("POST", "/api/backup/destinations", map[string]any{"name": "sftp", "repository": repo,
		"password": "sftp-pw", "sshKey": string(key), "sshKnownHosts": string(known)})
	var d struct {
		ID             int64
		Type           string
		HasSSHKey      bool `json:"hasSshKey"`
		LastTestStatus string
		Initialized    bool
	}
	if status != 201 {
		t.Fatalf("create SFTP destination = %d %s", status, body)
	}
	if err := json.Unmarshal(body, &d); err != nil {
		t.Fatal(err)
	}
	if d.Type != backup.TypeSFTP || !d.HasSSHKey || !d.Initialized || d.LastTestStatus != "success" {
		t.Errorf("SFTP destination = %+v; want initialised and tested with its key", d)
	}
	_, got := h.do("GET", fmt.Sprintf("/api/backup/destinations/%d", d.ID), nil)
	for _, b := range [][]byte{body, got} {
		if strings.Contains(string(b), "PRIVATE KEY") || strings.Contains(string(b), "sftp-pw") {
			t.Errorf("the answer holds the key or the password: %s", b)
		}
	}
}
