package api_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/backup"
	"github.com/berth-dev/berth/shared/engine"
)

// recordingHost is a local HTTP listener standing for "another host": it
// answers 404 to everything and keeps what it was sent.
type recordingHost struct {
	url string

	mu       sync.Mutex
	requests []string // method, path and Authorization of each request
	auth     []string // the decoded basic credentials sent, "user:password"
}

func newRecordingHost(t *testing.T, addr string) *recordingHost {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	r := &recordingHost{url: "http://" + ln.Addr().String()}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.Copy(io.Discard, req.Body)
		r.mu.Lock()
		r.requests = append(r.requests, req.Method+" "+req.URL.Path+" "+req.Header.Get("Authorization"))
		if u, p, ok := req.BasicAuth(); ok {
			r.auth = append(r.auth, u+":"+p)
		}
		r.mu.Unlock()
		http.NotFound(w, req)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	return r
}

func (r *recordingHost) seen() ([]string, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.requests...), append([]string(nil), r.auth...)
}

// withoutCredentials is a REST repository URL without its user and password.
func withoutCredentials(t *testing.T, repo string) string {
	t.Helper()
	u, err := url.Parse(strings.TrimPrefix(repo, "rest:"))
	if err != nil {
		t.Fatal(err)
	}
	u.User = nil
	return "rest:" + u.String()
}

// storedDestination is a destination's stored row, secrets included.
func storedDestination(t *testing.T, h *harness, id int64) string {
	t.Helper()
	d, err := h.store.GetBackupDestination(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	last := d.LastTest
	d.LastTest = nil
	return fmt.Sprintf("%+v last test %+v", d, last)
}

// A saved destination's form, edited, is tested as edited: a corrected
// repository on the same REST server opens with the saved password and
// REST credentials, and nothing of the destination is stored (not even the
// test's outcome).
func TestBackupDestinationTestOfAnEditedFormUsesItsSavedSecretsAndStoresNothing(t *testing.T) {
	h := newDestinationsHarness(t)
	name := "berth-test-edit-" + h.label
	restRepo := restRepository(t, name)
	var d backupDestination
	h.must(201, "POST", "/api/backup/destinations", map[string]any{"name": "edited", "repository": restRepo,
		"password": "saved-pw"}, &d)
	if d.LastTestStatus != "success" {
		t.Fatalf("created destination = %+v", d)
	}
	// The repository moves on the server: the destination as saved no
	// longer opens.
	dir := os.Getenv("BERTH_TEST_REST_DIR")
	moved := name + "-moved"
	t.Cleanup(func() { os.RemoveAll(filepath.Join(dir, moved)) })
	if err := os.Rename(filepath.Join(dir, name), filepath.Join(dir, moved)); err != nil {
		t.Fatal(err)
	}
	var test struct {
		Success bool
		Status  string
		Error   string
	}
	h.must(200, "POST", fmt.Sprintf("/api/backup/destinations/%d/test", d.ID), nil, &test)
	if test.Success {
		t.Fatalf("the saved destination still opens after its repository moved: %+v", test)
	}
	before := storedDestination(t, h, d.ID)
	var answered backupDestination
	h.must(200, "GET", fmt.Sprintf("/api/backup/destinations/%d", d.ID), nil, &answered)

	corrected := strings.Replace(withoutCredentials(t, restRepo), "/"+name+"/", "/"+moved+"/", 1)
	h.must(200, "POST", "/api/backup/destinations/test", map[string]any{"destinationId": d.ID, "name": "edited",
		"repository": corrected, "envVars": answered.EnvVars}, &test)
	if !test.Success || test.Status != "success" {
		t.Errorf("test of the corrected form (saved password and REST credentials) = %+v, want success", test)
	}
	// The password in the form is the one tested: a wrong one fails.
	h.must(200, "POST", "/api/backup/destinations/test", map[string]any{"destinationId": d.ID,
		"repository": corrected, "password": "not-the-saved-pw"}, &test)
	if test.Success || test.Status != "failed" {
		t.Errorf("test of the corrected form with a wrong password = %+v, want failed", test)
	}
	if after := storedDestination(t, h, d.ID); after != before {
		t.Errorf("a test of an edited form changed the stored destination:\n before %s\n after  %s", before, after)
	}
	h.must(404, "POST", "/api/backup/destinations/test", map[string]any{"destinationId": d.ID + 100, "repository": corrected}, nil)
}

// The saved secrets of a destination are never sent to another endpoint
// by a test of its edited form: another host, or another port of its
// host, without the password and credentials sent again is a 400 saying
// so, and that host hears nothing; sent again, they are what it gets.
func TestBackupDestinationTestOfAFormMovedToAnotherHostNeedsItsSecretsAgain(t *testing.T) {
	h := newDestinationsHarness(t)
	restRepo := restRepository(t, "berth-test-edit-host-"+h.label)
	savedREST := mustRESTPassword(t, restRepo)
	var d backupDestination
	h.must(201, "POST", "/api/backup/destinations", map[string]any{"name": "home", "repository": restRepo,
		"password": "saved-pw"}, &d)
	if d.LastTestStatus != "success" {
		t.Fatalf("created destination = %+v", d)
	}
	var answered backupDestination
	h.must(200, "GET", fmt.Sprintf("/api/backup/destinations/%d", d.ID), nil, &answered)
	before := storedDestination(t, h, d.ID)

	otherHost := newRecordingHost(t, "127.0.0.2:0")
	otherPort := newRecordingHost(t, "127.0.0.1:0")
	again := "The credentials must be entered again for a new host"
	for _, other := range []*recordingHost{otherHost, otherPort} {
		elsewhere := "rest:" + other.url + "/repo/"
		h.expectRefusals([]refusal{
			{"nothing sent again " + other.url, "POST", "/api/backup/destinations/test",
				map[string]any{"destinationId": d.ID, "repository": elsewhere}, 400, again},
			{"masked credentials " + other.url, "POST", "/api/backup/destinations/test",
				map[string]any{"destinationId": d.ID, "repository": elsewhere, "password": "new-pw", "envVars": answered.EnvVars}, 400, again},
			{"password only " + other.url, "POST", "/api/backup/destinations/test",
				map[string]any{"destinationId": d.ID, "repository": elsewhere, "password": "new-pw"}, 400, again},
			{"credentials only " + other.url, "POST", "/api/backup/destinations/test",
				map[string]any{"destinationId": d.ID, "repository": "rest:http://u:new-rest-pw@" + strings.TrimPrefix(other.url, "http://") + "/repo/"},
				400, again},
		})
		if reqs, _ := other.seen(); len(reqs) != 0 {
			t.Errorf("%s was contacted by a refused test: %v", other.url, reqs)
		}
	}
	// Everything sent again: the test reaches that host with what was sent.
	var test struct{ Success bool }
	h.must(200, "POST", "/api/backup/destinations/test", map[string]any{"destinationId": d.ID, "password": "new-pw",
		"repository": "rest:http://u:new-rest-pw@" + strings.TrimPrefix(otherHost.url, "http://") + "/repo/"}, &test)
	reqs, auth := otherHost.seen()
	if test.Success || len(reqs) == 0 {
		t.Errorf("test with the secrets sent again = %+v, requests %v; want a failed test that reached the host", test, reqs)
	}
	for _, a := range auth {
		if a != "u:new-rest-pw" || strings.Contains(a, savedREST) {
			t.Errorf("the other host got credentials %q, want only u:new-rest-pw", a)
		}
	}
	if len(auth) == 0 {
		t.Errorf("the other host got no credentials: %v", reqs)
	}
	for _, r := range reqs {
		if strings.Contains(r, base64.StdEncoding.EncodeToString([]byte(savedREST))) {
			t.Errorf("the stored REST credentials reached another host: %s", r)
		}
	}
	if after := storedDestination(t, h, d.ID); after != before {
		t.Errorf("a test of an edited form changed the stored destination:\n before %s\n after  %s", before, after)
	}

	// An update moving the repository with the masked credentials is
	// refused the same way (403), and changes nothing.
	h.must(403, "PUT", fmt.Sprintf("/api/backup/destinations/%d", d.ID), map[string]any{"password": "new-pw",
		"repository": "rest:" + otherHost.url + "/repo/", "envVars": answered.EnvVars}, nil)
	if after := storedDestination(t, h, d.ID); after != before {
		t.Errorf("a refused update changed the stored destination")
	}

	// Roles: a Viewer may not test; an Operator tests the edited form of a
	// remote destination but only an admin moves a local one's path.
	local := filepath.Join(t.TempDir(), "repo")
	var l backupDestination
	h.must(201, "POST", "/api/backup/destinations", map[string]any{"name": "local", "repository": local, "password": "local-pw"}, &l)
	admin := h.headers
	h.signInWithRole("vera", "Viewer")
	h.expectRefusals([]refusal{
		{"viewer edited test", "POST", "/api/backup/destinations/test", map[string]any{"destinationId": d.ID, "name": "x"}, 403, "Permission denied"},
	})
	h.headers = admin
	h.signInWithRole("otto", "Operator")
	h.expectRefusals([]refusal{
		{"operator moves a local path", "POST", "/api/backup/destinations/test", map[string]any{"destinationId": l.ID,
			"repository": "/etc"}, 403, "Only an admin may choose a host path"},
		{"operator other host", "POST", "/api/backup/destinations/test",
			map[string]any{"destinationId": d.ID, "repository": "rest:" + otherHost.url + "/repo/"}, 400, again},
	})
	h.must(200, "POST", "/api/backup/destinations/test", map[string]any{"destinationId": l.ID, "flags": ""}, &test)
	if !test.Success {
		t.Errorf("an Operator's test of a local destination's form, path unchanged = %+v", test)
	}
}

// A maintenance task stopped with DELETE /api/jobs/{jobId} interrupts
// restic: its helper is gone, the lock it held is released (another's
// stays), and the job ends as cancelled, not as a failure.
func TestBackupTaskStoppedReleasesItsLockAndLeavesNoHelper(t *testing.T) {
	h := newDestinationsHarness(t)
	repo := filepath.Join(t.TempDir(), "repo")
	var d backupDestination
	h.must(201, "POST", "/api/backup/destinations", map[string]any{"name": "stalled", "repository": repo, "password": "pw"}, &d)
	if !d.Initialized {
		t.Fatalf("destination = %+v", d)
	}
	// An index file that is a named pipe no one writes: restic, having
	// taken its lock, waits on it as on a stalled disk, until stopped.
	name := make([]byte, 32)
	if _, err := rand.Read(name); err != nil {
		t.Fatal(err)
	}
	stall := filepath.Join(repo, "index", hex.EncodeToString(name))
	if err := syscall.Mkfifo(stall, 0o644); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		task    string
		foreign bool // another host holds a lock meanwhile (stats takes a shared one)
	}{{"check", false}, {"stats", true}} {
		t.Run(tc.task, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
			defer cancel()
			foreign := map[string]bool{}
			if tc.foreign {
				cmd := exec.CommandContext(ctx, os.Getenv("BERTH_TEST_RESTIC"), "-r", repo, "--no-cache", "stats")
				cmd.Env = append(os.Environ(), "RESTIC_PASSWORD=pw")
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() })
				waitLocks(t, ctx, repo, 1)
				for _, l := range locks(t, repo) {
					foreign[l] = true
				}
			}
			events, resp := h.openStream(ctx, "POST", fmt.Sprintf("/api/backup/destinations/%d/task", d.ID), map[string]string{"task": tc.task})
			jobID := resp.Header.Get("X-Job-Id")
			if resp.StatusCode != 200 || jobID == "" {
				t.Fatalf("task = %d (job %q)", resp.StatusCode, jobID)
			}
			helper := waitStalled(t, ctx, repo)
			own := locks(t, repo)
			if len(own) != len(foreign)+1 {
				t.Fatalf("locks while the task runs = %v, want its own and another host's %v", own, foreign)
			}
			if helpers := repoHelpers(t, repo); len(helpers) != 1 || helpers[0] != helper {
				t.Fatalf("helpers of the repository while the task runs = %v, want %s", helpers, helper)
			}
			var ans struct{ Cancelled bool }
			h.must(200, "DELETE", "/api/jobs/"+jobID, nil, &ans)
			if !ans.Cancelled {
				t.Errorf("DELETE of the running task's job = %+v, want cancelled", ans)
			}
			var last sseEvent
			for e := range events {
				last = e
			}
			if last.Name != "result" || !strings.Contains(last.Data, `"cancelled":true`) || !strings.Contains(last.Data, `"success":false`) ||
				!strings.Contains(last.Data, "Stopped before it finished") {
				t.Errorf("the stopped task's last event = %+v, want a cancelled result", last)
			}
			if left := repoHelpers(t, repo); len(left) != 0 {
				t.Errorf("helpers left after the stop: %v", left)
			}
			left := locks(t, repo)
			for _, l := range left {
				if !foreign[l] {
					t.Errorf("the stopped task's lock %s is still in the repository (locks %v, while running %v)", l, left, own)
				}
			}
			if len(left) != len(foreign) {
				t.Errorf("locks after the stop = %v, want another host's %v kept", left, foreign)
			}
		})
	}
}

// locks lists the lock files of local repository repo.
func locks(t *testing.T, repo string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(repo, "locks"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// waitLocks waits until repo holds n locks (or ctx ends) and returns them.
func waitLocks(t *testing.T, ctx context.Context, repo string, n int) []string {
	t.Helper()
	for {
		if l := locks(t, repo); len(l) == n {
			return l
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the repository never held %d locks: %v", n, locks(t, repo))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// waitStalled waits until the one backup helper of repo runs restic
// blocked on the named pipe in the repository (a thread of it waits in
// the kernel for the pipe's writer: restic holds its lock then), and
// returns the helper's id.
func waitStalled(t *testing.T, ctx context.Context, repo string) string {
	t.Helper()
	for {
		for _, id := range repoHelpers(t, repo) {
			pid, err := exec.Command("docker", "inspect", "-f", "{{.State.Pid}}", id).Output()
			if err != nil {
				continue
			}
			waits, _ := filepath.Glob("/proc/" + strings.TrimSpace(string(pid)) + "/task/*/wchan")
			for _, f := range waits {
				if b, err := os.ReadFile(f); err == nil && string(b) == "wait_for_partner" {
					return id
				}
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("restic never waited on the repository's named pipe (helpers %v)", repoHelpers(t, repo))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// repoHelpers lists the backup helpers (running or not) that mount repo.
func repoHelpers(t *testing.T, repo string) []string {
	t.Helper()
	out := docker(t, "ps", "-a", "-q", "--filter", "label="+engine.HelperLabel+"="+backup.HelperKind)
	var ids []string
	for _, id := range strings.Fields(out) {
		mounts, err := exec.Command("docker", "inspect", "-f", "{{range .Mounts}}{{.Source}} {{end}}", id).Output()
		if err != nil {
			continue // removed meanwhile
		}
		for _, m := range strings.Fields(string(mounts)) {
			if m == repo {
				ids = append(ids, id)
			}
		}
	}
	return ids
}
