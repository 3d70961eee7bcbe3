package api_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/enginetest"
)

// gitServer is a bare repository in a temporary directory served over HTTP
// by git's own git-http-backend, behind basic authentication, with a work
// tree to commit from.
type gitServer struct {
	t    *testing.T
	git  string
	work string
	URL  string // clone URL of the repository
}

const gitUser, gitPassword = "deployer", "git-pa55word"

func newGitServer(t *testing.T) *gitServer {
	t.Helper()
	return gitServerOf(t, false)
}

// newPublicGitServer is newGitServer that reads without a credential.
func newPublicGitServer(t *testing.T) *gitServer {
	t.Helper()
	return gitServerOf(t, true)
}

func gitServerOf(t *testing.T, public bool) *gitServer {
	t.Helper()
	enginetest.RequireEnv(t, "git", "BERTH_TEST_GIT", "BERTH_TEST_GIT_HTTP_BACKEND")
	root := t.TempDir()
	g := &gitServer{t: t, git: os.Getenv("BERTH_TEST_GIT"), work: filepath.Join(root, "work")}
	g.run(root, "init", "--bare", "--initial-branch=main", "app.git")
	g.run(root, "init", "--initial-branch=main", "work")
	g.run(g.work, "config", "user.email", "dev@example.test")
	g.run(g.work, "config", "user.name", "Dev")
	g.run(g.work, "remote", "add", "origin", filepath.Join(root, "app.git"))
	backend := &cgi.Handler{Path: os.Getenv("BERTH_TEST_GIT_HTTP_BACKEND"),
		Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !public && (!ok || u != gitUser || p != gitPassword) {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		backend.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	g.URL = srv.URL + "/app.git"
	return g
}

func (g *gitServer) run(dir string, args ...string) string {
	g.t.Helper()
	cmd := exec.Command(g.git, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		g.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// commit writes files, commits them to branch and pushes; it returns the
// commit id.
func (g *gitServer) commit(branch string, files map[string]string) string {
	g.t.Helper()
	g.run(g.work, "checkout", "-B", branch)
	for name, content := range files {
		p := filepath.Join(g.work, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			g.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			g.t.Fatal(err)
		}
	}
	g.run(g.work, "add", "-A")
	g.run(g.work, "commit", "-q", "-m", "change on "+branch)
	g.run(g.work, "push", "-q", "origin", branch)
	return g.run(g.work, "rev-parse", "HEAD")
}

func gitCompose(label, version string) string {
	return fmt.Sprintf(`services:
  app:
    image: %[1]s
    command: ["sleep", "3600"]
    environment:
      VERSION: "%[4]s"
      REGION: ${REGION}
      TOKEN: ${TOKEN}
    labels:
      %[2]s: %[3]s
networks:
  default:
    labels:
      %[2]s: %[3]s
`, enginetest.Image(), enginetest.Label, label, version)
}

// hook sends a webhook request and returns the status and {success, message}.
func (h *harness) hook(method, path string, body []byte, headers map[string]string) (int, string) {
	h.t.Helper()
	status, data := h.send(method, path, body, headers)
	var out struct {
		Success bool   `json:"success"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		h.t.Fatalf("%s %s: %s", method, path, data)
	}
	return status, out.Message
}

// send sends a request with a raw body and extra headers (besides the
// harness's own) and returns the status and body.
func (h *harness) send(method, path string, body []byte, headers map[string]string) (int, []byte) {
	h.t.Helper()
	req, _ := http.NewRequest(method, h.url+path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range h.headers {
		req.Header.Set(k, v)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := h.http.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, data
}

func sign(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

func pushPayload(branch, commit string) []byte {
	b, _ := json.Marshal(map[string]any{
		"ref":        "refs/heads/" + branch,
		"repository": map[string]any{"clone_url": "https://example.test/app.git", "ssh_url": "git@example.test:app.git"},
		"pusher":     map[string]any{"name": "dev", "email": "dev@example.test"},
		"commits":    []map[string]any{{"id": commit, "message": "change", "timestamp": "2026-11-22T10:00:00Z"}},
	})
	return b
}

func TestGitStackDeploysAndWebhooksRedeployOnlyWhenVerified(t *testing.T) {
	h := newHarness(t)
	g := newGitServer(t)
	name := "git-" + h.label
	h.removeStackAtCleanup(name)
	first := g.commit("main", map[string]string{"deploy/compose.yaml": gitCompose(h.label, "1"), "deploy/app.env": "REGION=eu\n"})

	var cred, repo struct {
		ID int64 `json:"id"`
	}
	h.must(201, "POST", "/api/git/credentials", map[string]any{"name": "c-" + h.label, "authType": "password",
		"username": gitUser, "password": gitPassword}, &cred)
	h.must(201, "POST", "/api/git/repositories", map[string]any{"name": "r-" + h.label, "url": g.URL, "branch": "main",
		"credentialId": cred.ID, "webhookEnabled": true, "webhookSecret": "repo-secret"}, &repo)
	var gs struct {
		ID          int64  `json:"id"`
		WebhookPath string `json:"webhookPath"`
	}
	h.must(201, "POST", "/api/git/stacks", map[string]any{"stackName": name, "environmentId": 1, "repositoryId": repo.ID,
		"composePath": "deploy/compose.yaml", "envFilePath": "deploy/app.env", "autoUpdate": true, "autoUpdateCron": "*/10 * * * *",
		"webhookEnabled": true, "webhookSecret": "stack-secret",
		"envVars": []map[string]any{{"key": "TOKEN", "value": "tok-123", "isSecret": true}}}, &gs)
	// The reference's ?env= lists one environment's git stacks.
	var inEnv, inOther []struct{ ID int64 }
	h.must(200, "GET", "/api/git/stacks?env=1", nil, &inEnv)
	h.must(200, "GET", "/api/git/stacks?env=424242", nil, &inOther)
	if !slices.ContainsFunc(inEnv, func(g struct{ ID int64 }) bool { return g.ID == gs.ID }) || len(inOther) != 0 {
		t.Errorf("git stacks of env 1 = %v, of env 424242 = %v", inEnv, inOther)
	}
	if status, _ := h.do("GET", "/api/git/stacks?env=x", nil); status != 400 {
		t.Errorf("git stacks of env x = %d, want 400", status)
	}

	// Deploy (synchronous JSON answer of the job).
	code, body := h.doAccept("POST", fmt.Sprintf("/api/git/stacks/%d/deploy", gs.ID), "application/json")
	var res struct {
		Success  bool   `json:"success"`
		Deployed bool   `json:"deployed"`
		Commit   string `json:"commit"`
		Error    string `json:"error"`
	}
	if err := json.Unmarshal(body, &res); err != nil || code != 200 || !res.Success || !res.Deployed || res.Commit != first {
		t.Fatalf("deploy = %d %s", code, body)
	}
	env := containerEnv(t, name, "app")
	if env["VERSION"] != "1" || env["REGION"] != "eu" || env["TOKEN"] != "tok-123" {
		t.Fatalf("app env = %v, want VERSION 1 from the repo, REGION from its env file, TOKEN from the secret", env)
	}
	if e, ok := h.stackEntry(name); !ok || e.SourceType != "git" || e.Status != "running" {
		t.Errorf("list entry = %+v, %v", e, ok)
	}

	second := g.commit("main", map[string]string{"deploy/compose.yaml": gitCompose(h.label, "2")})
	payload := pushPayload("main", second)
	repoHook := fmt.Sprintf("/api/git/webhook/%d", repo.ID)
	stackHook := fmt.Sprintf("/api/git/stacks/%d/webhook", gs.ID)
	refused := []struct {
		name, method, path string
		body               []byte
		headers            map[string]string
		status             int
	}{
		{"wrong signature", "POST", repoHook, payload, map[string]string{"X-Hub-Signature-256": sign("wrong", payload)}, 401},
		{"signature of another body", "POST", repoHook, payload, map[string]string{"X-Hub-Signature-256": sign("repo-secret", []byte("{}"))}, 401},
		{"malformed signature", "POST", repoHook, payload, map[string]string{"X-Hub-Signature-256": "sha1=abc"}, 401},
		{"no proof", "POST", repoHook, payload, nil, 401},
		{"wrong GitLab token", "POST", stackHook, payload, map[string]string{"X-Gitlab-Token": "nope"}, 401},
		{"wrong GET secret", "GET", repoHook + "?secret=nope", nil, nil, 401},
		{"unknown repository", "POST", "/api/git/webhook/999999", payload, map[string]string{"X-Hub-Signature-256": sign("repo-secret", payload)}, 404},
	}
	for _, tt := range refused {
		if code, msg := h.hook(tt.method, tt.path, tt.body, tt.headers); code != tt.status {
			t.Errorf("%s: = %d %q, want %d", tt.name, code, msg, tt.status)
		}
	}
	other := pushPayload("dev", second)
	code, msg := h.hook("POST", repoHook, other, map[string]string{"X-Hub-Signature-256": sign("repo-secret", other)})
	if code != 200 || !strings.Contains(msg, "ignored") || !strings.Contains(msg, "refs/heads/dev") {
		t.Errorf("push to another branch = %d %q, want it ignored", code, msg)
	}
	if got := containerEnv(t, name, "app")["VERSION"]; got != "1" {
		t.Fatalf("after refused and ignored webhooks VERSION = %q, want 1 (no deploy)", got)
	}
	if st := h.gitStack(gs.ID); st.LastCommit != first {
		t.Errorf("last commit after refused webhooks = %s, want %s", st.LastCommit, first)
	}

	// A correctly signed GitHub-style push redeploys.
	code, msg = h.hook("POST", repoHook, payload, map[string]string{"X-Hub-Signature-256": sign("repo-secret", payload),
		"X-GitHub-Event": "push"})
	if code != 200 || !strings.Contains(msg, "Deployed") || !strings.Contains(msg, second[:7]) {
		t.Fatalf("signed webhook = %d %q", code, msg)
	}
	if got := containerEnv(t, name, "app")["VERSION"]; got != "2" {
		t.Errorf("after the signed webhook VERSION = %q, want 2", got)
	}
	st := h.gitStack(gs.ID)
	if st.LastCommit != second || st.LastSync == nil || st.LastSyncStatus != "success" {
		t.Errorf("git stack after webhook = %+v", st)
	}
	entries, _, err := h.store.ListAudit(t.Context(), store.AuditFilter{Action: "git.webhook"})
	if err != nil {
		t.Fatal(err)
	}
	deployed := 0
	for _, e := range entries {
		if strings.Contains(e.Description, "Deployed") && e.EntityName == name && strings.Contains(e.Details, `"pusher":"dev"`) {
			deployed++
		}
	}
	if deployed != 1 || len(entries) != len(refused)+2 {
		t.Errorf("audit: %d deploy entries of %d webhook entries, want 1 of %d", deployed, len(entries), len(refused)+2)
	}
	// The deploy is in the stack's sync history, triggered by webhook; the
	// refused and ignored calls ran nothing.
	var runs struct {
		Executions []execution
		Total      int
	}
	h.must(200, "GET", fmt.Sprintf("/api/schedules/executions?scheduleType=git_stack_sync&scheduleId=%d&triggeredBy=webhook", gs.ID), nil, &runs)
	if runs.Total != 1 || len(runs.Executions) != 1 || runs.Executions[0].Status != "success" ||
		runs.Executions[0].TriggeredBy != "webhook" || !strings.Contains(runs.Executions[0].Logs, "Deployed") ||
		!strings.Contains(string(runs.Executions[0].Details), second) {
		t.Errorf("webhook executions = %+v", runs)
	}

	// The per-stack form with the GitLab token, and the GET trigger, both
	// verified; a sync without a new commit deploys nothing.
	if code, msg := h.hook("POST", stackHook, payload, map[string]string{"X-Gitlab-Token": "stack-secret"}); code != 200 || !strings.Contains(msg, "Deployed") {
		t.Errorf("GitLab-style per-stack webhook = %d %q", code, msg)
	}
	if code, msg := h.hook("GET", stackHook+"?secret=stack-secret", nil, nil); code != 200 || !strings.Contains(msg, "Deployed") {
		t.Errorf("GET trigger = %d %q", code, msg)
	}
	code, body = h.doAccept("POST", fmt.Sprintf("/api/git/stacks/%d/sync", gs.ID), "application/json")
	if err := json.Unmarshal(body, &res); err != nil || code != 200 || !res.Success || res.Deployed {
		t.Errorf("sync without a new commit = %d %s, want success without deploy", code, body)
	}

	// Deleting the git stack removes its stack, clone and schedule record.
	var stackID int64
	if rec, err := h.store.GetStack(t.Context(), 1, name); err == nil {
		stackID = rec.ID
	}
	clone := filepath.Join(h.dataDir, "git", fmt.Sprintf("stack-%d", stackID))
	if _, err := os.Stat(filepath.Join(clone, "deploy", "compose.yaml")); err != nil {
		t.Fatalf("clone before delete: %v", err)
	}
	h.must(200, "DELETE", fmt.Sprintf("/api/git/stacks/%d", gs.ID), nil, nil)
	if _, err := os.Stat(clone); !os.IsNotExist(err) {
		t.Errorf("clone after delete: %v", err)
	}
	if code, _ := h.do("GET", fmt.Sprintf("/api/git/stacks/%d", gs.ID), nil); code != 404 {
		t.Errorf("git stack after delete = %d, want 404", code)
	}
	if _, ok := h.stackEntry(name); ok {
		t.Error("stack still listed after its git stack was deleted")
	}
	h.must(200, "DELETE", fmt.Sprintf("/api/git/repositories/%d", repo.ID), nil, nil)
	h.must(200, "DELETE", fmt.Sprintf("/api/git/credentials/%d", cred.ID), nil, nil)
}

type gitStackState struct {
	LastCommit     string  `json:"lastCommit"`
	LastSync       *string `json:"lastSync"`
	LastSyncStatus string  `json:"lastSyncStatus"`
	LastSyncError  string  `json:"lastSyncError"`
}

func (h *harness) gitStack(id int64) gitStackState {
	h.t.Helper()
	var st gitStackState
	h.must(200, "GET", fmt.Sprintf("/api/git/stacks/%d", id), nil, &st)
	return st
}

// doAccept sends a bodiless request with an Accept header.
func (h *harness) doAccept(method, path, accept string) (int, []byte) {
	h.t.Helper()
	return h.send(method, path, nil, map[string]string{"Accept": accept})
}

// Deleting a repository removes its mirror (DATA_DIR/git/repo-<id>) and the
// clones nothing uses any more (of repositories and git stacks deleted
// earlier); the mirror of another repository and the clone of a live git
// stack stay.
func TestDeleteRepositoryRemovesItsMirrorAndUnusedClones(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	g := newGitServer(t)
	g.commit("main", map[string]string{"compose.yaml": gitCompose(h.label, "1")})
	var cred, gone, kept struct {
		ID int64 `json:"id"`
	}
	h.must(201, "POST", "/api/git/credentials", map[string]any{"name": "c-" + h.label, "authType": "password",
		"username": gitUser, "password": gitPassword}, &cred)
	for _, r := range []*struct {
		ID int64 `json:"id"`
	}{&gone, &kept} {
		h.must(201, "POST", "/api/git/repositories", map[string]any{"name": fmt.Sprintf("r%p-%s", r, h.label), "url": g.URL,
			"branch": "main", "credentialId": cred.ID}, r)
		var st struct{ Status string }
		h.must(200, "POST", fmt.Sprintf("/api/git/repositories/%d/sync", r.ID), nil, &st)
		if st.Status != "success" {
			t.Fatalf("sync of repository %d = %+v", r.ID, st)
		}
	}
	var gs struct {
		ID int64 `json:"id"`
	}
	name := "prune-" + h.label
	h.must(201, "POST", "/api/git/stacks", map[string]any{"stackName": name, "environmentId": 1, "repositoryId": kept.ID}, &gs)
	rec, err := h.store.GetStack(t.Context(), 1, name)
	if err != nil {
		t.Fatal(err)
	}
	gitDir := filepath.Join(h.dataDir, "git")
	mirror := func(id int64) string { return filepath.Join(gitDir, fmt.Sprintf("repo-%d", id)) }
	clone := func(id int64) string { return filepath.Join(gitDir, fmt.Sprintf("stack-%d", id)) }
	// The live stack's clone, and clones left by records deleted before.
	for _, dir := range []string{clone(rec.ID), clone(rec.ID + 1000), mirror(kept.ID + 1000)} {
		if err := os.MkdirAll(filepath.Join(dir, ".git"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	unrelated := filepath.Join(gitDir, "notes")
	if err := os.WriteFile(unrelated, []byte("not a clone"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{mirror(gone.ID), mirror(kept.ID)} {
		if _, err := os.Stat(filepath.Join(dir, "compose.yaml")); err != nil {
			t.Fatalf("mirror before delete: %v", err)
		}
	}

	h.must(200, "DELETE", fmt.Sprintf("/api/git/repositories/%d", gone.ID), nil, nil)
	for dir, want := range map[string]bool{mirror(gone.ID): false, clone(rec.ID + 1000): false, mirror(kept.ID + 1000): false,
		mirror(kept.ID): true, clone(rec.ID): true, unrelated: true} {
		_, err := os.Stat(dir)
		if exists := err == nil; exists != want {
			t.Errorf("%s exists = %v after deleting repository %d, want %v (%v)", dir, exists, gone.ID, want, err)
		}
	}

	// A repository in use is refused and keeps its mirror.
	h.wantError(409, "DELETE", fmt.Sprintf("/api/git/repositories/%d", kept.ID), "Repository is used by a git stack")
	if _, err := os.Stat(mirror(kept.ID)); err != nil {
		t.Errorf("mirror of the refused delete: %v", err)
	}
	h.must(200, "DELETE", fmt.Sprintf("/api/git/stacks/%d", gs.ID), nil, nil)
	h.must(200, "DELETE", fmt.Sprintf("/api/git/repositories/%d", kept.ID), nil, nil)
	for _, dir := range []string{mirror(kept.ID), clone(rec.ID)} {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%s after deleting its stack and repository: %v", dir, err)
		}
	}
}
