package api_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/enginetest"
)

// errorOf returns the error message of an error body.
func shErrorOf(body []byte) string {
	var e struct {
		Error string `json:"error"`
	}
	_ = json.Unmarshal(body, &e)
	return e.Error
}

// createStoppedStack creates a stack with start false (files and record only).
func (h *harness) createStoppedStack(name, compose string, extra map[string]any) {
	h.t.Helper()
	body := map[string]any{"name": name, "compose": compose, "start": false}
	for k, v := range extra {
		body[k] = v
	}
	status, _, res := h.streamStack("POST", "/api/stacks?env=1", body)
	if status != 200 || !res.Success {
		h.t.Fatalf("create %s: %d %+v", name, status, res)
	}
}

// plainCompose is a one-service stack without env_file (a custom location
// is validated in place, where no .env exists yet).
func plainCompose(label string) string {
	return fmt.Sprintf("services:\n  app:\n    image: %s\n    command: [\"sleep\", \"3600\"]\n    labels:\n      %s: %s\n",
		enginetest.Image(), enginetest.Label, label)
}

type pathCheck struct {
	Valid          bool   `json:"valid"`
	Message        string `json:"message"`
	Directory      string `json:"directory"`
	Exists         bool   `json:"exists"`
	Writable       bool   `json:"writable"`
	HasComposeFile bool   `json:"hasComposeFile"`
	ComposeFile    string `json:"composeFile"`
}

func TestStackPathHelpersApplyTheCreationRules(t *testing.T) {
	h := newHarness(t)
	base, err := filepath.Abs(filepath.Join(h.dataDir, "stacks", "1"))
	if err != nil {
		t.Fatal(err)
	}
	var bp struct {
		BasePath      string `json:"basePath"`
		EnvironmentID int64  `json:"environmentId"`
	}
	h.must(200, "GET", "/api/stacks/base-path?env=1", nil, &bp)
	if bp.BasePath != base || bp.EnvironmentID != 1 {
		t.Errorf("base path = %+v, want %s", bp, base)
	}

	var dp struct {
		Directory, ComposePath, EnvPath string
		Exists, Taken                   bool
	}
	name := "dp-" + h.label
	h.must(200, "GET", "/api/stacks/default-path?env=1&name="+name, nil, &dp)
	if dp.Directory != filepath.Join(base, name) || dp.ComposePath != filepath.Join(base, name, "compose.yaml") ||
		dp.EnvPath != filepath.Join(base, name, ".env") || dp.Exists || dp.Taken {
		t.Errorf("default path = %+v", dp)
	}
	for _, bad := range []string{"", "../etc", "Upper"} {
		if code, body := h.do("GET", "/api/stacks/default-path?env=1&name="+bad, nil); code != 400 ||
			!(strings.Contains(shErrorOf(body), "Invalid stack name") || strings.Contains(shErrorOf(body), "Stack name is required")) {
			t.Errorf("default path of %q = %d %s, want 400", bad, code, body)
		}
	}

	// validate-path: the rules of stack creation.
	root := t.TempDir()
	h.allowStackRoots(root)
	withCompose := filepath.Join(root, "existing")
	if err := os.MkdirAll(withCompose, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(withCompose, "docker-compose.yml"), []byte("services: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	aFile := filepath.Join(root, "plain.txt")
	if err := os.WriteFile(aFile, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	readOnly := filepath.Join(root, "ro")
	if err := os.MkdirAll(readOnly, 0o555); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		path    string
		want    pathCheck
		message string
	}{
		{"relative", "stacks/web", pathCheck{}, "absolute path"},
		{"traversal", root + "/../etc", pathCheck{}, "path traversal"},
		{"new directory", filepath.Join(root, "new", "web"), pathCheck{Valid: true, Directory: filepath.Join(root, "new", "web"), Writable: true}, ""},
		{"existing with a compose file", withCompose, pathCheck{Valid: true, Directory: withCompose, Exists: true, Writable: true,
			HasComposeFile: true, ComposeFile: filepath.Join(withCompose, "docker-compose.yml")}, "would be replaced"},
		{"compose file path", filepath.Join(withCompose, "docker-compose.yml"), pathCheck{Valid: true, Directory: withCompose, Exists: true,
			Writable: true, HasComposeFile: true, ComposeFile: filepath.Join(withCompose, "docker-compose.yml")}, "would be replaced"},
		{"a file", aFile, pathCheck{Directory: aFile}, "not a directory"},
	}
	if os.Geteuid() != 0 { // root writes anywhere: the check then answers writable, rightly
		tests = append(tests, struct {
			name    string
			path    string
			want    pathCheck
			message string
		}{"read-only directory", readOnly, pathCheck{Directory: readOnly, Exists: true}, "not writable"})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got pathCheck
			h.must(200, "POST", "/api/stacks/validate-path?env=1", map[string]string{"path": tt.path}, &got)
			msg := got.Message
			got.Message = ""
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("validate %s (-want +got):\n%s", tt.path, diff)
			}
			if !strings.Contains(msg, tt.message) {
				t.Errorf("message %q, want %q", msg, tt.message)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(root, "new")); !os.IsNotExist(err) {
		t.Errorf("validating a new directory created it: %v", err)
	}
	if entries, _ := os.ReadDir(withCompose); len(entries) != 1 {
		t.Errorf("validation left files behind: %v", entries)
	}
	if code, body := h.do("POST", "/api/stacks/validate-path?env=1", map[string]string{"path": ""}); code != 400 || shErrorOf(body) != "Path is required" {
		t.Errorf("empty path = %d %s", code, body)
	}
	if code, _ := h.do("POST", "/api/stacks/validate-path?env=1", `{"path": 5}`); code != 400 {
		t.Errorf("wrong type = %d, want 400", code)
	}

	// path-hints: directories under the base path, compose files there and
	// next to stacks with custom locations; a prefix completes.
	custom := filepath.Join(root, "custom", name)
	h.createStoppedStack(name, plainCompose(h.label), map[string]any{"composePath": filepath.Join(custom, "compose.yaml")})
	h.removeStackAtCleanup(name)
	other := "hint-" + h.label
	h.createStoppedStack(other, stackCompose(h.label), nil)
	h.removeStackAtCleanup(other)
	var hints struct {
		BasePath     string   `json:"basePath"`
		Directories  []string `json:"directories"`
		ComposeFiles []string `json:"composeFiles"`
		Truncated    bool     `json:"truncated"`
	}
	h.must(200, "GET", "/api/stacks/path-hints?env=1", nil, &hints)
	if hints.BasePath != base || !slices.Contains(hints.Directories, filepath.Join(base, other)) ||
		!slices.Contains(hints.Directories, custom) ||
		!slices.Contains(hints.ComposeFiles, filepath.Join(base, other, "compose.yaml")) ||
		!slices.Contains(hints.ComposeFiles, filepath.Join(custom, "compose.yaml")) {
		t.Errorf("hints = %+v", hints)
	}
	h.must(200, "GET", "/api/stacks/path-hints?env=1&prefix="+filepath.Join(root, "ex"), nil, &hints)
	if !slices.Contains(hints.Directories, withCompose) || slices.Contains(hints.Directories, filepath.Join(root, "ro")) {
		t.Errorf("hints for prefix %s/ex = %v", root, hints.Directories)
	}
}

type sourceGroup struct {
	Count  int `json:"count"`
	Stacks []struct {
		Name    string `json:"name"`
		Status  string `json:"status"`
		Adopted bool   `json:"adopted"`
	} `json:"stacks"`
}

func (g sourceGroup) has(name string) bool {
	return slices.ContainsFunc(g.Stacks, func(s struct {
		Name    string `json:"name"`
		Status  string `json:"status"`
		Adopted bool   `json:"adopted"`
	}) bool {
		return s.Name == name
	})
}

func TestStackSourcesGroupStacksBySource(t *testing.T) {
	h := newHarness(t)
	internal, git := "src-"+h.label, "srcgit-"+h.label
	h.createStoppedStack(internal, stackCompose(h.label), nil)
	h.removeStackAtCleanup(internal)
	var repo struct {
		ID int64 `json:"id"`
	}
	h.must(201, "POST", "/api/git/repositories", map[string]any{"name": "r-" + h.label, "url": "https://example.test/app.git"}, &repo)
	h.must(201, "POST", "/api/git/stacks", map[string]any{"stackName": git, "environmentId": 1, "repositoryId": repo.ID}, nil)
	h.removeStackAtCleanup(git)
	var src struct {
		EnvironmentID int64       `json:"environmentId"`
		Total         int         `json:"total"`
		Internal      sourceGroup `json:"internal"`
		Git           sourceGroup `json:"git"`
		External      sourceGroup `json:"external"`
	}
	h.must(200, "GET", "/api/stacks/sources?env=1", nil, &src)
	if src.EnvironmentID != 1 || !src.Internal.has(internal) || !src.Git.has(git) || src.Internal.has(git) || src.External.has(internal) {
		t.Errorf("sources = %+v", src)
	}
	if src.Internal.Count != len(src.Internal.Stacks) || src.Git.Count != len(src.Git.Stacks) ||
		src.Total != src.Internal.Count+src.Git.Count+src.External.Count {
		t.Errorf("counts do not add up: %+v", src)
	}
	if code, body := h.do("GET", "/api/stacks/sources?env=999", nil); code != 404 || shErrorOf(body) != "Environment not found" {
		t.Errorf("unknown environment = %d %s", code, body)
	}
}

type envReport struct {
	Valid  bool `json:"valid"`
	Errors []struct {
		Line    int    `json:"line"`
		Message string `json:"message"`
	} `json:"errors"`
	Warnings   []struct{ Key string } `json:"warnings"`
	Duplicates []struct {
		Key   string `json:"key"`
		Lines []int  `json:"lines"`
	} `json:"duplicates"`
	Missing    []string `json:"missing"`
	Unused     []string `json:"unused"`
	Required   []string `json:"required"`
	Optional   []string `json:"optional"`
	Defined    []string `json:"defined"`
	Referenced []struct {
		Name     string `json:"name"`
		Required bool   `json:"required"`
	} `json:"referenced"`
}

func TestStackEnvValidateReportsLinesDuplicatesAndMissingVariables(t *testing.T) {
	h := newHarness(t)
	name := "ev-" + h.label
	compose := stackCompose(h.label) + "x-extra:\n  port: ${PORT:-8080}\n"
	h.createStoppedStack(name, compose, map[string]any{"rawEnvContent": "GREETING=hi\n",
		"envVars": []map[string]any{{"key": "API_TOKEN", "value": "s3cret-tok", "isSecret": true}}})
	h.removeStackAtCleanup(name)
	path := "/api/stacks/" + name + "/env/validate?env=1"

	// The file on disk with the stored secret: everything is set.
	var r envReport
	h.must(200, "POST", path, nil, &r)
	if !r.Valid || len(r.Missing) != 0 || len(r.Errors) != 0 || !slices.Contains(r.Defined, "API_TOKEN") {
		t.Errorf("stored env = %+v, want valid", r)
	}
	refs := map[string]bool{}
	for _, v := range r.Referenced {
		refs[v.Name] = v.Required
	}
	if diff := cmp.Diff(map[string]bool{"GREETING": true, "API_TOKEN": true, "PORT": false}, refs); diff != "" {
		t.Errorf("referenced (-want +got):\n%s", diff)
	}

	// Duplicates with their lines, a missing variable, an unused one.
	h.must(200, "POST", path, map[string]any{"content": "# comment\nFOO=1\nFOO=2\nMULTI=\"a\nGREETING=inside the quotes\"\n"}, &r)
	if r.Valid || len(r.Duplicates) != 1 || r.Duplicates[0].Key != "FOO" || !slices.Equal(r.Duplicates[0].Lines, []int{2, 3}) ||
		!slices.Equal(r.Missing, []string{"GREETING"}) || !slices.Contains(r.Unused, "FOO") || len(r.Errors) != 0 {
		t.Errorf("duplicates report = %+v", r)
	}
	// A syntax error names its line.
	h.must(200, "POST", path, map[string]any{"content": "GREETING=ok\nBAD KEY=2\n"}, &r)
	if r.Valid || len(r.Errors) != 1 || r.Errors[0].Line != 2 || r.Errors[0].Message == "" {
		t.Errorf("syntax report = %+v, want one error on line 2", r)
	}
	// Variables as a list: a key given twice and one that is not a name.
	h.must(200, "POST", path, map[string]any{"variables": []map[string]any{{"key": "GREETING", "value": "a"},
		{"key": "GREETING", "value": "b"}, {"key": "1BAD", "value": "c"}}}, &r)
	if r.Valid || len(r.Duplicates) != 1 || len(r.Warnings) != 1 || r.Warnings[0].Key != "1BAD" {
		t.Errorf("list report = %+v", r)
	}
	body, _ := json.Marshal(r)
	if strings.Contains(string(body), "s3cret-tok") {
		t.Error("the report holds the secret's value")
	}
	if code, body := h.do("POST", "/api/stacks/nope-"+h.label+"/env/validate?env=1", nil); code != 404 || !strings.Contains(shErrorOf(body), "not found") {
		t.Errorf("unknown stack = %d %s", code, body)
	}
	if code, _ := h.do("POST", path, `{"content": 3}`); code != 400 {
		t.Errorf("wrong type = %d, want 400", code)
	}
	// Nothing was written.
	var raw struct {
		Content string `json:"content"`
	}
	h.must(200, "GET", "/api/stacks/"+name+"/env/raw?env=1", nil, &raw)
	if raw.Content != "GREETING=hi\n" {
		t.Errorf("env file after validations = %q", raw.Content)
	}
}

type deletePreview struct {
	SourceType    string `json:"sourceType"`
	Running       bool   `json:"running"`
	RequiresForce bool   `json:"requiresForce"`
	Containers    []struct {
		Service string `json:"service"`
		State   string `json:"state"`
	} `json:"containers"`
	Networks    []string `json:"networks"`
	Volumes     []string `json:"volumes"`
	KeptVolumes []string `json:"keptVolumes"`
	Files       []string `json:"files"`
	Directories []string `json:"directories"`
	Records     bool     `json:"records"`
	Message     string   `json:"message"`
}

func TestStackDeletePreviewListsWhatDeleteRemoves(t *testing.T) {
	h := newHarness(t)
	name := "dpv-" + h.label
	h.removeStackAtCleanup(name)
	status, _, res := h.streamStack("POST", "/api/stacks?env=1", map[string]any{"name": name, "compose": stackCompose(h.label),
		"envVars": []map[string]any{{"key": "GREETING", "value": "hi"}}})
	if status != 200 || !res.Success {
		t.Fatalf("deploy: %+v", res)
	}
	dir, _ := filepath.Abs(filepath.Join(h.dataDir, "stacks", "1", name))
	var p deletePreview
	h.must(200, "GET", "/api/stacks/"+name+"/delete-preview?env=1", nil, &p)
	if p.SourceType != "internal" || !p.Running || !p.RequiresForce || len(p.Containers) != 2 || !p.Records ||
		!slices.Equal(p.Networks, []string{name + "_default"}) || len(p.Volumes) != 0 ||
		!slices.Equal(p.KeptVolumes, []string{name + "_data"}) ||
		!slices.Equal(p.Files, []string{filepath.Join(dir, ".env"), filepath.Join(dir, "compose.yaml")}) ||
		!slices.Equal(p.Directories, []string{dir}) || !strings.Contains(p.Message, "is running") {
		t.Errorf("preview = %+v", p)
	}
	h.must(200, "GET", "/api/stacks/"+name+"/delete-preview?env=1&force=true", nil, &p)
	if !slices.Equal(p.Volumes, []string{name + "_data"}) || len(p.KeptVolumes) != 0 {
		t.Errorf("preview with force: volumes %v kept %v", p.Volumes, p.KeptVolumes)
	}
	// The preview changed nothing; the delete then removes what it listed.
	if e, _ := h.stackEntry(name); e.Status != "running" {
		t.Fatalf("after previews: %+v", e)
	}
	h.must(200, "DELETE", "/api/stacks/"+name+"?env=1&force=true", nil, nil)
	if engineHas(t, "volumes", name+"_data") || engineHas(t, "networks", name+"_default") {
		t.Error("delete kept what the preview listed")
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("stack directory after delete: %v", err)
	}
	if code, body := h.do("GET", "/api/stacks/"+name+"/delete-preview?env=1", nil); code != 404 || !strings.Contains(shErrorOf(body), "not found") {
		t.Errorf("preview of a deleted stack = %d %s", code, body)
	}
	if code, _ := h.do("GET", "/api/stacks/"+name+"/delete-preview?env=1&force=maybe", nil); code != 400 {
		t.Errorf("bad force = %d, want 400", code)
	}
}

type pathChange struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Files []struct {
		From     string `json:"from"`
		To       string `json:"to"`
		Conflict bool   `json:"conflict"`
	} `json:"files"`
	Conflicts   []string `json:"conflicts"`
	Warnings    []string `json:"warnings"`
	CanRelocate bool     `json:"canRelocate"`
}

func TestStackRelocateOfARunningStackKeepsItRunning(t *testing.T) {
	h := newHarness(t)
	name := "rel-" + h.label
	h.removeStackAtCleanup(name)
	status, _, res := h.streamStack("POST", "/api/stacks?env=1", map[string]any{"name": name, "compose": stackCompose(h.label),
		"envVars": []map[string]any{{"key": "GREETING", "value": "moved"}, {"key": "API_TOKEN", "value": "tok", "isSecret": true}}})
	if status != 200 || !res.Success {
		t.Fatalf("deploy: %+v", res)
	}
	before, _ := h.stackEntry(name)
	slices.Sort(before.Containers)
	oldDir, _ := filepath.Abs(filepath.Join(h.dataDir, "stacks", "1", name))
	targetRoot := t.TempDir()
	target := filepath.Join(targetRoot, "moved", name)
	h.allowStackRoots(targetRoot)

	var ch pathChange
	h.must(200, "POST", "/api/stacks/"+name+"/check-path-change?env=1", map[string]string{"path": target}, &ch)
	if !ch.CanRelocate || ch.From != oldDir || ch.To != target || len(ch.Files) != 2 || len(ch.Conflicts) != 0 ||
		ch.Files[0].To != filepath.Join(target, "compose.yaml") || ch.Files[1].To != filepath.Join(target, ".env") {
		t.Errorf("check = %+v", ch)
	}

	// A conflicting target is listed, and refused by relocate: nothing moves.
	taken := t.TempDir()
	if err := os.WriteFile(filepath.Join(taken, "compose.yaml"), []byte("services: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.allowStackRoots(targetRoot, taken)
	h.must(200, "POST", "/api/stacks/"+name+"/check-path-change?env=1", map[string]string{"path": taken}, &ch)
	if ch.CanRelocate || !slices.Equal(ch.Conflicts, []string{filepath.Join(taken, "compose.yaml")}) {
		t.Errorf("check of a taken directory = %+v", ch)
	}
	refused := []struct {
		path   string
		status int
		msg    string
	}{
		{taken, 409, "already exists"},
		{"relative/dir", 400, "absolute path"},
		{"/tmp/../etc", 400, "path traversal"},
		{"", 400, "Path is required"},
		{oldDir, 400, "already in"},
	}
	for _, tt := range refused {
		if code, body := h.do("POST", "/api/stacks/"+name+"/relocate?env=1", map[string]string{"path": tt.path}); code != tt.status ||
			!strings.Contains(shErrorOf(body), tt.msg) {
			t.Errorf("relocate to %q = %d %s, want %d %q", tt.path, code, body, tt.status, tt.msg)
		}
	}
	if data, err := os.ReadFile(filepath.Join(taken, "compose.yaml")); err != nil || string(data) != "services: {}\n" {
		t.Errorf("refused relocate touched the target: %q %v", data, err)
	}
	if _, err := os.Stat(filepath.Join(oldDir, "compose.yaml")); err != nil {
		t.Fatalf("refused relocate moved the files: %v", err)
	}
	if code, _ := h.do("POST", "/api/stacks/nope-"+h.label+"/relocate?env=1", map[string]string{"path": target}); code != 404 {
		t.Errorf("relocate of an unknown stack = %d, want 404", code)
	}

	// The reference's names: newComposePath (a compose file path), oldDir
	// checked against the stack's directory, hasChanges false in place.
	var refCh struct {
		HasChanges         bool   `json:"hasChanges"`
		OldDir             string `json:"oldDir"`
		NewDir             string `json:"newDir"`
		FileCount          int    `json:"fileCount"`
		CurrentComposePath string `json:"currentComposePath"`
	}
	h.must(200, "POST", "/api/stacks/"+name+"/check-path-change?env=1", map[string]string{"newComposePath": filepath.Join(target, "compose.yaml")}, &refCh)
	if !refCh.HasChanges || refCh.OldDir != oldDir || refCh.NewDir != target || refCh.FileCount != 2 ||
		refCh.CurrentComposePath != filepath.Join(oldDir, "compose.yaml") {
		t.Errorf("check with newComposePath = %+v", refCh)
	}
	h.must(200, "POST", "/api/stacks/"+name+"/check-path-change?env=1", map[string]string{"newComposePath": filepath.Join(oldDir, "compose.yaml")}, &refCh)
	if refCh.HasChanges {
		t.Errorf("check of the current place = %+v, want hasChanges false", refCh)
	}
	for _, tt := range []struct {
		body   map[string]string
		status int
		msg    string
	}{
		{map[string]string{"oldDir": targetRoot, "newComposePath": filepath.Join(target, "compose.yaml")}, 400, "is not the directory of stack"},
		{map[string]string{"newComposePath": filepath.Join(target, "compose.yaml"), "newEnvPath": "/etc/x/.env"}, 403, ""},
		{map[string]string{"newComposePath": filepath.Join(target, "compose.yaml"), "newEnvPath": "rel/.env"}, 400, "absolute path"},
	} {
		if code, body := h.do("POST", "/api/stacks/"+name+"/relocate?env=1", tt.body); code != tt.status || !strings.Contains(shErrorOf(body), tt.msg) {
			t.Errorf("relocate %v = %d %s, want %d %q", tt.body, code, body, tt.status, tt.msg)
		}
	}

	// The move, as the reference asks for it.
	var moved struct {
		Success        bool     `json:"success"`
		MovedFiles     []string `json:"movedFiles"`
		ComposeContent string   `json:"composeContent"`
		RawEnvContent  string   `json:"rawEnvContent"`
		EnvVars        []struct {
			Key string `json:"key"`
		} `json:"envVars"`
	}
	h.must(200, "POST", "/api/stacks/"+name+"/relocate?env=1", map[string]string{"oldDir": oldDir,
		"newComposePath": filepath.Join(target, "compose.yaml"), "newEnvPath": filepath.Join(target, ".env")}, &moved)
	if !moved.Success || !slices.Equal(moved.MovedFiles, []string{"compose.yaml", ".env"}) || moved.ComposeContent != stackCompose(h.label) ||
		!strings.Contains(moved.RawEnvContent, "GREETING=moved") || len(moved.EnvVars) == 0 {
		t.Errorf("relocate answer = %+v", moved)
	}
	if _, err := os.Stat(oldDir); !os.IsNotExist(err) {
		t.Errorf("old directory after relocate: %v", err)
	}
	if data, err := os.ReadFile(filepath.Join(target, "compose.yaml")); err != nil || string(data) != stackCompose(h.label) {
		t.Errorf("moved compose file = %q, %v", data, err)
	}
	if data, err := os.ReadFile(filepath.Join(target, ".env")); err != nil || !strings.Contains(string(data), "GREETING=moved") ||
		strings.Contains(string(data), "tok") {
		t.Errorf("moved env file = %q, %v", data, err)
	}
	var cf struct {
		ComposePath string `json:"composePath"`
		EnvPath     string `json:"envPath"`
	}
	h.must(200, "GET", "/api/stacks/"+name+"/compose?env=1", nil, &cf)
	if cf.ComposePath != filepath.Join(target, "compose.yaml") || cf.EnvPath != filepath.Join(target, ".env") {
		t.Errorf("compose after relocate = %+v", cf)
	}
	after, _ := h.stackEntry(name)
	slices.Sort(after.Containers)
	if after.Status != "running" || !slices.Equal(after.Containers, before.Containers) {
		t.Errorf("after relocate: %s %v, want the same containers running (%v)", after.Status, after.Containers, before.Containers)
	}
	entries, _, err := h.store.ListAudit(t.Context(), store.AuditFilter{Action: "stack.relocate"})
	if err != nil || len(entries) != 1 || entries[0].EntityName != name {
		t.Errorf("audit of relocate = %+v, %v", entries, err)
	}

	// Compose commands work from the new place, under the same project.
	h.must(200, "POST", "/api/stacks/"+name+"/stop?env=1", nil, nil)
	if e, _ := h.stackEntry(name); e.Status != "stopped" {
		t.Errorf("after stop: %s", e.Status)
	}
	h.must(200, "POST", "/api/stacks/"+name+"/start?env=1", nil, nil)
	if e, _ := h.stackEntry(name); e.Status != "running" || len(e.Containers) != len(before.Containers) {
		t.Errorf("after start: %s %v", e.Status, e.Containers)
	}
	env := containerEnv(t, name, "web")
	if env["GREETING"] != "moved" || env["API_TOKEN"] != "tok" {
		t.Errorf("env after relocate = %v", env)
	}
	h.must(200, "DELETE", "/api/stacks/"+name+"?env=1&force=true", nil, nil)
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Errorf("relocated directory after delete: %v", err)
	}
}
