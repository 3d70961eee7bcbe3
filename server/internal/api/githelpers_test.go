package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/store"
)

type probeResult struct {
	Success      bool     `json:"success"`
	Branch       string   `json:"branch"`
	BranchExists bool     `json:"branchExists"`
	Branches     []string `json:"branches"`
	Commit       string   `json:"commit"`
	Error        string   `json:"error"`
}

// gitFixture is a repository on the test git server, with its credential
// and repository records in Berth.
type gitFixture struct {
	g            *gitServer
	head         string
	credID, repo int64
}

func (h *harness) gitFixture(t *testing.T, files map[string]string) gitFixture {
	t.Helper()
	g := newGitServer(t)
	f := gitFixture{g: g, head: g.commit("main", files)}
	var cred, repo struct {
		ID int64 `json:"id"`
	}
	h.must(201, "POST", "/api/git/credentials", map[string]any{"name": "c-" + h.label, "authType": "password",
		"username": gitUser, "password": gitPassword}, &cred)
	h.must(201, "POST", "/api/git/repositories", map[string]any{"name": "r-" + h.label, "url": g.URL, "branch": "main",
		"credentialId": cred.ID}, &repo)
	f.credID, f.repo = cred.ID, repo.ID
	return f
}

func TestGitRepositoryTestListsBranchesWithoutSaving(t *testing.T) {
	h := newHarness(t)
	f := h.gitFixture(t, map[string]string{"compose.yaml": gitCompose(h.label, "1")})
	f.g.commit("dev", map[string]string{"README": "dev\n"})

	var res probeResult
	h.must(200, "POST", "/api/git/repositories/test", map[string]any{"url": f.g.URL, "branch": "main", "authType": "password",
		"username": gitUser, "password": gitPassword}, &res)
	if !res.Success || !res.BranchExists || res.Commit != f.head || !slices.Equal(res.Branches, []string{"dev", "main"}) {
		t.Errorf("test with an inline credential = %+v", res)
	}
	h.must(200, "POST", "/api/git/repositories/test", map[string]any{"url": f.g.URL, "branch": "dev", "credentialId": f.credID}, &res)
	if !res.Success || res.Branch != "dev" {
		t.Errorf("test with the stored credential = %+v", res)
	}
	h.must(200, "POST", "/api/git/repositories/test", map[string]any{"url": f.g.URL, "branch": "nope", "credentialId": f.credID}, &res)
	if res.Success || res.BranchExists || res.Error != "branch 'nope' not found" || len(res.Branches) != 2 {
		t.Errorf("test of a missing branch = %+v", res)
	}
	code, body := h.do("POST", "/api/git/repositories/test", map[string]any{"url": f.g.URL, "authType": "password",
		"username": gitUser, "password": "wrong-pa55"})
	_ = json.Unmarshal(body, &res)
	if code != 200 || res.Success || !strings.Contains(res.Error, "authentication") || strings.Contains(string(body), "wrong-pa55") {
		t.Errorf("test with a wrong password = %d %s", code, body)
	}
	h.must(200, "POST", "/api/git/repositories/test", map[string]any{"url": f.g.URL}, &res)
	if res.Success || !strings.Contains(res.Error, "authentication") {
		t.Errorf("test without credential = %+v", res)
	}
	for _, tt := range []struct {
		body   map[string]any
		status int
		msg    string
	}{
		{map[string]any{"url": "not a url"}, 400, "Invalid repository URL"},
		{map[string]any{"url": ""}, 400, "Repository URL is required"},
		{map[string]any{"url": f.g.URL, "branch": "a..b"}, 400, "Invalid branch"},
		{map[string]any{"url": f.g.URL, "authType": "password"}, 400, "Password or token is required"},
		{map[string]any{"url": f.g.URL, "credentialId": 999999}, 404, "Credential not found"},
	} {
		if code, body := h.do("POST", "/api/git/repositories/test", tt.body); code != tt.status || !strings.Contains(shErrorOf(body), tt.msg) {
			t.Errorf("test %v = %d %s, want %d %q", tt.body, code, body, tt.status, tt.msg)
		}
	}
	var repos []any
	h.must(200, "GET", "/api/git/repositories", nil, &repos)
	if len(repos) != 1 {
		t.Errorf("tests saved repositories: %d, want the fixture's 1", len(repos))
	}

	h.must(200, "POST", fmt.Sprintf("/api/git/repositories/%d/test", f.repo), nil, &res)
	if !res.Success || res.Commit != f.head {
		t.Errorf("test of the saved repository = %+v", res)
	}
	if code, body := h.do("POST", "/api/git/repositories/999999/test", nil); code != 404 || shErrorOf(body) != "Repository not found" {
		t.Errorf("test of an unknown repository = %d %s", code, body)
	}
}

type syncStatus struct {
	Success  bool    `json:"success"`
	Status   string  `json:"status"`
	Commit   string  `json:"commit"`
	Error    string  `json:"error"`
	SyncedAt *string `json:"syncedAt"`
	LastSync *string `json:"lastSync"`
}

func TestGitRepositorySyncAndStackFileHelpersReadTheBranchHead(t *testing.T) {
	h := newHarness(t)
	f := h.gitFixture(t, map[string]string{"deploy/compose.yaml": gitCompose(h.label, "1"), "deploy/app.env": "REGION=eu\n# note\nLEVEL=debug\n",
		"deploy/.env.example": "REGION=\n", "other/prod.env": "REGION=us\n"})
	if err := os.Symlink("/etc/hostname", filepath.Join(f.g.work, "deploy", "host.env")); err != nil {
		t.Fatal(err)
	}
	f.head = f.g.commit("main", map[string]string{"README": "with a link out of the repository\n"})
	syncPath := fmt.Sprintf("/api/git/repositories/%d/sync", f.repo)

	var st syncStatus
	h.must(200, "GET", syncPath, nil, &st)
	if st.Status != "never" || st.SyncedAt != nil || st.LastSync != nil {
		t.Errorf("status before any sync = %+v", st)
	}
	h.must(200, "POST", syncPath, nil, &st)
	if !st.Success || st.Status != "success" || st.Commit != f.head || st.SyncedAt == nil || st.LastSync == nil {
		t.Errorf("sync = %+v", st)
	}
	h.must(200, "GET", syncPath, nil, &st)
	if st.Status != "success" || st.Commit != f.head {
		t.Errorf("status after sync = %+v", st)
	}
	// The repository itself tells its last sync (the console's list).
	var repo struct {
		SyncStatus string  `json:"syncStatus"`
		SyncCommit string  `json:"syncCommit"`
		SyncedAt   *string `json:"syncedAt"`
		LastSync   *string `json:"lastSync"`
	}
	h.must(200, "GET", fmt.Sprintf("/api/git/repositories/%d", f.repo), nil, &repo)
	if repo.SyncStatus != "success" || repo.SyncCommit != f.head || repo.SyncedAt == nil || st.SyncedAt == nil || *repo.SyncedAt != *st.SyncedAt {
		t.Errorf("repository after sync = %+v, want the sync's status %+v", repo, st)
	}
	entries, _, err := h.store.ListAudit(t.Context(), store.AuditFilter{Action: "git_repository.sync"})
	if err != nil || len(entries) != 1 {
		t.Errorf("audit of sync = %d, %v", len(entries), err)
	}
	if code, _ := h.do("POST", "/api/git/repositories/999999/sync", nil); code != 404 {
		t.Errorf("sync of an unknown repository = %d", code)
	}

	name := "gh-" + h.label
	h.removeStackAtCleanup(name)
	var gs struct {
		ID int64 `json:"id"`
	}
	h.must(201, "POST", "/api/git/stacks", map[string]any{"stackName": name, "environmentId": 1, "repositoryId": f.repo,
		"composePath": "deploy/compose.yaml", "envFilePath": "deploy/app.env"}, &gs)

	var test struct {
		Success           bool   `json:"success"`
		Commit            string `json:"commit"`
		ComposeFileExists bool   `json:"composeFileExists"`
		EnvFileExists     *bool  `json:"envFileExists"`
		Error             string `json:"error"`
	}
	h.must(200, "POST", fmt.Sprintf("/api/git/stacks/%d/test", gs.ID), nil, &test)
	if !test.Success || test.Commit != f.head || !test.ComposeFileExists || test.EnvFileExists == nil || !*test.EnvFileExists {
		t.Errorf("stack test = %+v", test)
	}
	// The test reads the mirror: the stack's own clone is not made.
	if rec, err := h.store.GetStack(t.Context(), 1, name); err != nil {
		t.Fatal(err)
	} else if _, err := os.Stat(filepath.Join(h.dataDir, "git", fmt.Sprintf("stack-%d", rec.ID))); !os.IsNotExist(err) {
		t.Errorf("the test made the deploy clone: %v", err)
	}
	h.must(200, "PUT", fmt.Sprintf("/api/git/stacks/%d", gs.ID), map[string]any{"repositoryId": f.repo,
		"composePath": "deploy/missing.yaml", "envFilePath": "deploy/app.env"}, nil)
	h.must(200, "POST", fmt.Sprintf("/api/git/stacks/%d/test", gs.ID), nil, &test)
	if test.Success || test.ComposeFileExists || !strings.Contains(test.Error, "compose file 'deploy/missing.yaml' not found") {
		t.Errorf("test of a missing compose file = %+v", test)
	}
	h.must(200, "PUT", fmt.Sprintf("/api/git/stacks/%d", gs.ID), map[string]any{"repositoryId": f.repo,
		"composePath": "deploy/compose.yaml", "envFilePath": "deploy/app.env"}, nil)
	if code, _ := h.do("POST", "/api/git/stacks/999999/test", nil); code != 404 {
		t.Errorf("test of an unknown git stack = %d", code)
	}

	// Env files: those next to the compose file first; never a link out.
	var ef struct {
		Commit   string   `json:"commit"`
		EnvFiles []string `json:"files"`
	}
	h.must(200, "GET", fmt.Sprintf("/api/git/stacks/%d/env-files", gs.ID), nil, &ef)
	if want := []string{"deploy/.env.example", "deploy/app.env", "other/prod.env"}; !slices.Equal(ef.EnvFiles, want) || ef.Commit != f.head {
		t.Errorf("env files = %+v, want %v", ef, want)
	}
	var vars struct {
		Path string            `json:"path"`
		Vars map[string]string `json:"vars"`
	}
	h.must(200, "POST", fmt.Sprintf("/api/git/stacks/%d/env-files", gs.ID), map[string]string{"path": "other/prod.env"}, &vars)
	if vars.Path != "other/prod.env" || len(vars.Vars) != 1 || vars.Vars["REGION"] != "us" {
		t.Errorf("variables of other/prod.env = %+v", vars)
	}
	for _, tt := range []struct {
		path   string
		status int
		msg    string
	}{
		{"../etc/passwd", 400, "a path inside the repository is required"},
		{"", 400, "Env file path is required"},
		{"deploy/none.env", 404, "Env file 'deploy/none.env' not found in the repository"},
		{"deploy/host.env", 404, "Env file 'deploy/host.env' not found in the repository"},
	} {
		if code, body := h.do("POST", fmt.Sprintf("/api/git/stacks/%d/env-files", gs.ID), map[string]string{"path": tt.path}); code != tt.status ||
			!strings.Contains(shErrorOf(body), tt.msg) {
			t.Errorf("env file %q = %d %s, want %d %q", tt.path, code, body, tt.status, tt.msg)
		}
	}

	// Preview: a saved repository (its mirror), and an unsaved URL on
	// another branch (a temporary clone).
	var pv struct {
		Commit    string `json:"commit"`
		Branch    string `json:"branch"`
		Variables []struct {
			Key string `json:"key"`
		} `json:"variables"`
		ComposeVariables []struct {
			Name     string `json:"name"`
			Required bool   `json:"required"`
		} `json:"composeVariables"`
		Missing []string `json:"missing"`
	}
	h.must(200, "POST", "/api/git/preview-env", map[string]any{"repositoryId": f.repo, "composePath": "deploy/compose.yaml",
		"envFilePath": "deploy/app.env"}, &pv)
	if pv.Commit != f.head || pv.Branch != "main" || len(pv.Variables) != 2 || len(pv.ComposeVariables) != 2 ||
		!slices.Equal(pv.Missing, []string{"TOKEN"}) {
		t.Errorf("preview of the saved repository = %+v", pv)
	}
	devHead := f.g.commit("dev", map[string]string{"deploy/app.env": "REGION=eu\nTOKEN=dev-token\n"})
	h.must(200, "POST", "/api/git/preview-env", map[string]any{"url": f.g.URL, "branch": "dev", "credentialId": f.credID,
		"composePath": "deploy/compose.yaml", "envFilePath": "deploy/app.env"}, &pv)
	if pv.Commit != devHead || pv.Branch != "dev" || len(pv.Missing) != 0 {
		t.Errorf("preview of branch dev = %+v", pv)
	}
	for _, tt := range []struct {
		body   map[string]any
		status int
		msg    string
	}{
		{map[string]any{"repositoryId": f.repo, "composePath": "nope.yaml"}, 400, "Compose file 'nope.yaml' not found in the repository"},
		{map[string]any{"repositoryId": f.repo, "composePath": "deploy/compose.yaml", "envFilePath": "x.env"}, 400, "Env file 'x.env' not found"},
		{map[string]any{"repositoryId": f.repo, "composePath": "/etc/passwd"}, 400, "a path inside the repository is required"},
		{map[string]any{"repositoryId": 999999}, 404, "Repository not found"},
		{map[string]any{"url": f.g.URL, "branch": "nope", "credentialId": f.credID}, 400, "branch 'nope' not found"},
	} {
		if code, body := h.do("POST", "/api/git/preview-env", tt.body); code != tt.status || !strings.Contains(shErrorOf(body), tt.msg) {
			t.Errorf("preview %v = %d %s, want %d %q", tt.body, code, body, tt.status, tt.msg)
		}
	}

	// A git stack's files live in its repository: it cannot be relocated.
	if code, body := h.do("POST", "/api/stacks/"+name+"/relocate?env=1", map[string]string{"path": t.TempDir()}); code != 400 ||
		!strings.Contains(shErrorOf(body), "deployed from git") {
		t.Errorf("relocate of a git stack = %d %s", code, body)
	}
}

func TestGitDeployStreamAndRepositoryDeploy(t *testing.T) {
	h := newHarness(t)
	f := h.gitFixture(t, map[string]string{"compose.yaml": gitCompose(h.label, "1"), "app.env": "REGION=eu\nTOKEN=t\n"})
	name := "gds-" + h.label
	h.removeStackAtCleanup(name)
	var gs struct {
		ID int64 `json:"id"`
	}
	h.must(201, "POST", "/api/git/stacks", map[string]any{"stackName": name, "environmentId": 1, "repositoryId": f.repo,
		"composePath": "compose.yaml", "envFilePath": "app.env"}, &gs)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ch, resp := h.openStream(ctx, "POST", fmt.Sprintf("/api/git/stacks/%d/deploy-stream", gs.ID), nil)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") || resp.Header.Get("X-Job-Id") == "" {
		t.Fatalf("deploy-stream = %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var messages []string
	var last string
	for ev := range ch {
		var m struct {
			Message string `json:"message"`
		}
		if json.Unmarshal([]byte(ev.Data), &m) == nil && m.Message != "" {
			messages = append(messages, m.Message)
		}
		last = ev.Data
	}
	var final struct {
		Success  bool   `json:"success"`
		Deployed bool   `json:"deployed"`
		Commit   string `json:"commit"`
		Output   string `json:"output"`
	}
	if err := json.Unmarshal([]byte(last), &final); err != nil || !final.Success || !final.Deployed || final.Commit != f.head {
		t.Fatalf("final event %s: %v", last, err)
	}
	if len(messages) < 2 || !strings.Contains(messages[0], "Pulling") {
		t.Errorf("progress lines = %q, want the pull then compose's progress", messages)
	}
	if e, ok := h.stackEntry(name); !ok || e.Status != "running" {
		t.Errorf("after deploy-stream: %+v", e)
	}
	if got := containerEnv(t, name, "app")["REGION"]; got != "eu" {
		t.Errorf("REGION = %q", got)
	}

	// Deploy every stack of the repository (synchronous answer).
	second := f.g.commit("main", map[string]string{"compose.yaml": gitCompose(h.label, "2")})
	code, body := h.doAccept("POST", fmt.Sprintf("/api/git/repositories/%d/deploy", f.repo), "application/json")
	var res struct {
		Success bool `json:"success"`
		Results []struct {
			GitStackID int64  `json:"gitStackId"`
			StackName  string `json:"stackName"`
			Success    bool   `json:"success"`
			Deployed   bool   `json:"deployed"`
			Commit     string `json:"commit"`
		} `json:"results"`
	}
	if err := json.Unmarshal(body, &res); err != nil || code != 200 || !res.Success || len(res.Results) != 1 ||
		res.Results[0].GitStackID != gs.ID || !res.Results[0].Deployed || res.Results[0].Commit != second {
		t.Fatalf("repository deploy = %d %s", code, body)
	}
	if got := containerEnv(t, name, "app")["VERSION"]; got != "2" {
		t.Errorf("VERSION after the repository deploy = %q, want 2", got)
	}
	var runs struct {
		Executions []execution
		Total      int
	}
	h.must(200, "GET", fmt.Sprintf("/api/schedules/executions?scheduleType=git_stack_sync&scheduleId=%d&triggeredBy=manual", gs.ID), nil, &runs)
	if runs.Total != 1 {
		t.Errorf("manual executions of the repository deploy = %+v", runs)
	}
	entries, _, err := h.store.ListAudit(t.Context(), store.AuditFilter{Action: "git_repository.deploy"})
	if err != nil || len(entries) != 1 {
		t.Errorf("audit of repository deploy = %d, %v", len(entries), err)
	}
	if code, body := h.doAccept("POST", "/api/git/repositories/999999/deploy", "application/json"); code != 404 || shErrorOf(body) != "Repository not found" {
		t.Errorf("deploy of an unknown repository = %d %s", code, body)
	}
	if code, _ := h.doAccept("POST", "/api/git/stacks/999999/deploy-stream", "text/event-stream"); code != 404 {
		t.Errorf("deploy-stream of an unknown git stack = %d", code)
	}
}
