package api_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/berth-dev/berth/server/internal/api"
	"github.com/berth-dev/berth/server/internal/apitest"
	"github.com/berth-dev/berth/server/internal/store/storetest"
	"github.com/berth-dev/berth/shared/enginetest"
)

// The messages of the host path rule (docs/security.md, "Host paths").
const (
	outsideRoots = "outside the allowed stack roots (DATA_DIR/stacks and the external stack roots an admin listed: EXTERNAL_STACK_ROOTS or PUT /api/settings/stack-roots)"
	ownFiles     = "inside Berth's data directory"
)

// allowStackRoots makes dirs the external stack roots, where stack files
// may live outside DATA_DIR/stacks.
func (h *harness) allowStackRoots(dirs ...string) {
	h.t.Helper()
	h.must(200, "PUT", "/api/settings/stack-roots", map[string]any{"roots": dirs}, nil)
}

// precious writes a file Berth's own data would hold and returns its path
// and a check that it is still there, unchanged.
func precious(t *testing.T, path string) func() {
	t.Helper()
	want := []byte("precious " + filepath.Base(path))
	if err := os.WriteFile(path, want, 0o600); err != nil {
		t.Fatal(err)
	}
	return func() {
		t.Helper()
		if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s = %q, %v: changed by a refused request", path, got, err)
		}
	}
}

func TestStackRootsSettingDefaultsToTheEnvironmentAndRefusesBadRoots(t *testing.T) {
	enginetest.Require(t)
	def := t.TempDir()
	h := startHarnessWith(t, apitest.Options{DBPath: filepath.Join(t.TempDir(), "berth.db"), Box: storetest.Box(t),
		Boundaries: api.Boundaries{ExternalStackRoots: []string{def}}})
	var got struct {
		Roots []string `json:"roots"`
	}
	h.must(200, "GET", "/api/settings/stack-roots", nil, &got)
	if !slices.Equal(got.Roots, []string{def}) {
		t.Errorf("default roots = %v, want EXTERNAL_STACK_ROOTS %v", got.Roots, []string{def})
	}
	aFile := filepath.Join(def, "file")
	if err := os.WriteFile(aFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	inData := filepath.Join(h.dataDir, "stacks")
	if err := os.MkdirAll(inData, 0o750); err != nil {
		t.Fatal(err)
	}
	h.expectRefusals([]refusal{
		{"relative", "PUT", "/api/settings/stack-roots", map[string]any{"roots": []string{"stacks"}}, 400, "an absolute path is required"},
		{"traversal", "PUT", "/api/settings/stack-roots", map[string]any{"roots": []string{def + "/../x"}}, 400, "path traversal"},
		{"the root directory", "PUT", "/api/settings/stack-roots", map[string]any{"roots": []string{"/"}}, 400, "the root directory / cannot be a stack root"},
		{"the data directory", "PUT", "/api/settings/stack-roots", map[string]any{"roots": []string{h.dataDir}}, 400, "Berth's data directory"},
		{"inside the data directory", "PUT", "/api/settings/stack-roots", map[string]any{"roots": []string{inData}}, 400, "Berth's data directory"},
		{"missing", "PUT", "/api/settings/stack-roots", map[string]any{"roots": []string{filepath.Join(def, "nope")}}, 400, "an existing directory is required"},
		{"a file", "PUT", "/api/settings/stack-roots", map[string]any{"roots": []string{aFile}}, 400, "an existing directory is required"},
		{"no list", "PUT", "/api/settings/stack-roots", map[string]any{}, 400, "roots is required"},
	})
	other := t.TempDir()
	h.must(200, "PUT", "/api/settings/stack-roots", map[string]any{"roots": []string{other, other + "/"}}, &got)
	if !slices.Equal(got.Roots, []string{other}) {
		t.Errorf("saved roots = %v", got.Roots)
	}
	h.must(200, "GET", "/api/settings/stack-roots", nil, &got)
	if !slices.Equal(got.Roots, []string{other}) {
		t.Errorf("roots after save = %v", got.Roots)
	}
}

func TestStackCreateIsConfinedToTheAllowedRoots(t *testing.T) {
	h := newHarness(t)
	root := t.TempDir()
	h.allowStackRoots(root)
	outside := t.TempDir()
	keyIntact := precious(t, filepath.Join(h.dataDir, ".encryption_key"))
	dbHeader, err := os.ReadFile(filepath.Join(h.dataDir, "berth.db"))
	if err != nil || !bytes.HasPrefix(dbHeader, []byte("SQLite format 3")) {
		t.Fatalf("database before: %v", err)
	}
	keyLink := filepath.Join(root, "key.yaml")
	if err := os.Symlink(filepath.Join(h.dataDir, ".encryption_key"), keyLink); err != nil {
		t.Fatal(err)
	}
	dataLink := filepath.Join(root, "data")
	if err := os.Symlink(h.dataDir, dataLink); err != nil {
		t.Fatal(err)
	}
	aDir := filepath.Join(root, "adir.yaml")
	if err := os.MkdirAll(aDir, 0o750); err != nil {
		t.Fatal(err)
	}
	name := "conf-" + h.label
	h.removeStackAtCleanup(name)
	create := func(extra map[string]any) map[string]any {
		body := map[string]any{"name": name, "compose": plainCompose(h.label), "start": false}
		for k, v := range extra {
			body[k] = v
		}
		return body
	}
	h.expectRefusals([]refusal{
		{"database", "POST", "/api/stacks?env=1", create(map[string]any{"composePath": filepath.Join(h.dataDir, "berth.db")}), 403, ownFiles},
		{"encryption key", "POST", "/api/stacks?env=1", create(map[string]any{"composePath": filepath.Join(h.dataDir, ".encryption_key")}), 403, ownFiles},
		{"database WAL as env file", "POST", "/api/stacks?env=1", create(map[string]any{"envPath": filepath.Join(h.dataDir, "berth.db-wal")}), 403, ownFiles},
		{"git mirrors", "POST", "/api/stacks?env=1", create(map[string]any{"composePath": filepath.Join(h.dataDir, "git", "x", "compose.yaml")}), 403, ownFiles},
		{"another environment's stacks", "POST", "/api/stacks?env=1", create(map[string]any{"composePath": filepath.Join(h.dataDir, "stacks", "2", "x", "compose.yaml")}), 403, ownFiles},
		{"outside the roots", "POST", "/api/stacks?env=1", create(map[string]any{"composePath": filepath.Join(outside, "compose.yaml")}), 403, outsideRoots},
		{"a directory outside the roots", "POST", "/api/stacks?env=1", create(map[string]any{"composePath": outside}), 403, outsideRoots},
		{"link in a root to the key", "POST", "/api/stacks?env=1", create(map[string]any{"composePath": keyLink}), 403, ownFiles},
		{"through a linked directory to the database", "POST", "/api/stacks?env=1", create(map[string]any{"envPath": filepath.Join(dataLink, "berth.db")}), 403, ownFiles},
		{"a directory in a root", "POST", "/api/stacks?env=1", create(map[string]any{"composePath": aDir}), 400, "it is a directory"},
		{"relative", "POST", "/api/stacks?env=1", create(map[string]any{"composePath": "compose.yaml"}), 400, "absolute path"},
	})
	keyIntact()
	if got, err := os.ReadFile(filepath.Join(h.dataDir, "berth.db")); err != nil || !bytes.HasPrefix(got, []byte("SQLite format 3")) {
		t.Errorf("database after the refusals: %q %v", got[:min(len(got), 16)], err)
	}
	if _, err := os.Stat(filepath.Join(outside, "compose.yaml")); !os.IsNotExist(err) {
		t.Errorf("a refused create wrote outside the roots: %v", err)
	}
	if _, ok := h.stackEntry(name); ok {
		t.Fatal("a refused create recorded the stack")
	}
	// Inside an allowed root: accepted.
	compose := filepath.Join(root, "app", "compose.yaml")
	h.createStoppedStack(name, plainCompose(h.label), map[string]any{"composePath": compose})
	if data, err := os.ReadFile(compose); err != nil || string(data) != plainCompose(h.label) {
		t.Errorf("compose file in the root = %q, %v", data, err)
	}
}

func TestStackPathRoutesAreConfinedLikeCreation(t *testing.T) {
	h := newHarness(t)
	root := t.TempDir()
	h.allowStackRoots(root)
	outside := t.TempDir()
	keyIntact := precious(t, filepath.Join(h.dataDir, ".encryption_key"))
	keyLink := filepath.Join(root, "key.yaml")
	if err := os.Symlink(filepath.Join(h.dataDir, ".encryption_key"), keyLink); err != nil {
		t.Fatal(err)
	}
	name := "confr-" + h.label
	h.removeStackAtCleanup(name)
	h.createStoppedStack(name, plainCompose(h.label), nil)
	db := filepath.Join(h.dataDir, "berth.db")
	update := func(k, v string) map[string]any {
		return map[string]any{"content": plainCompose(h.label), k: v}
	}
	h.expectRefusals([]refusal{
		{"update to the database", "PUT", "/api/stacks/" + name + "/compose?env=1", update("composePath", db), 403, ownFiles},
		{"update env to the key", "PUT", "/api/stacks/" + name + "/compose?env=1", update("envPath", filepath.Join(h.dataDir, ".encryption_key")), 403, ownFiles},
		{"update outside the roots", "PUT", "/api/stacks/" + name + "/compose?env=1", update("composePath", filepath.Join(outside, "c.yaml")), 403, outsideRoots},
		{"update through a link to the key", "PUT", "/api/stacks/" + name + "/compose?env=1", update("composePath", keyLink), 403, ownFiles},
		{"update to a directory", "PUT", "/api/stacks/" + name + "/compose?env=1", update("composePath", root), 400, "it is a directory"},
		{"relocate into the data directory", "POST", "/api/stacks/" + name + "/relocate?env=1", map[string]string{"path": h.dataDir}, 403, ownFiles},
		{"relocate into the templates directory", "POST", "/api/stacks/" + name + "/relocate?env=1", map[string]string{"path": filepath.Join(h.dataDir, "templates", "x.yaml")}, 403, ownFiles},
		{"relocate outside the roots", "POST", "/api/stacks/" + name + "/relocate?env=1", map[string]string{"path": outside}, 403, outsideRoots},
		{"relocate through a link", "POST", "/api/stacks/" + name + "/relocate?env=1", map[string]string{"path": keyLink}, 403, ownFiles},
		{"check a move outside the roots", "POST", "/api/stacks/" + name + "/check-path-change?env=1", map[string]string{"path": outside}, 403, outsideRoots},
		{"check a move into the data directory", "POST", "/api/stacks/" + name + "/check-path-change?env=1", map[string]string{"path": filepath.Join(h.dataDir, "git")}, 403, ownFiles},
		{"validate the data directory", "POST", "/api/stacks/validate-path?env=1", map[string]string{"path": h.dataDir}, 403, ownFiles},
		{"validate outside the roots", "POST", "/api/stacks/validate-path?env=1", map[string]string{"path": outside}, 403, outsideRoots},
		{"adopt from the database", "POST", "/api/stacks/adopt?env=1", map[string]any{"name": "adopt-" + h.label, "composePath": db}, 403, ownFiles},
		{"adopt from outside the roots", "POST", "/api/stacks/adopt?env=1", map[string]any{"name": "adopt-" + h.label, "composePath": filepath.Join(outside, "compose.yaml")}, 403, outsideRoots},
		{"adopt with the key as env file", "POST", "/api/stacks/adopt?env=1", map[string]any{"name": "adopt-" + h.label, "composePath": filepath.Join(root, "compose.yaml"), "envPath": keyLink}, 403, ownFiles},
	})
	keyIntact()
	var cf struct {
		ComposePath string `json:"composePath"`
	}
	h.must(200, "GET", "/api/stacks/"+name+"/compose?env=1", nil, &cf)
	if want := filepath.Join(h.dataDir, "stacks", "1", name, "compose.yaml"); cf.ComposePath != want {
		t.Errorf("compose path after the refusals = %s, want %s", cf.ComposePath, want)
	}

	// The hints list nothing of DATA_DIR outside the environment's stacks,
	// nor of directories outside the roots.
	for _, dir := range []string{"git", "templates", "hidden"} {
		if err := os.MkdirAll(filepath.Join(h.dataDir, dir, "compose-"+h.label), 0o750); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(outside, "compose-"+h.label), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "compose-"+h.label), 0o750); err != nil {
		t.Fatal(err)
	}
	var hints struct {
		Directories []string `json:"directories"`
	}
	for _, prefix := range []string{h.dataDir + "/", filepath.Join(h.dataDir, "git") + "/", outside + "/"} {
		h.must(200, "GET", "/api/stacks/path-hints?env=1&prefix="+prefix, nil, &hints)
		for _, d := range hints.Directories {
			if strings.HasPrefix(d, outside) || strings.HasPrefix(d, h.dataDir) && !strings.HasPrefix(d, filepath.Join(h.dataDir, "stacks", "1")) {
				t.Errorf("hints for %s list %s", prefix, d)
			}
		}
	}
	h.must(200, "GET", "/api/stacks/path-hints?env=1&prefix="+root+"/", nil, &hints)
	if !slices.Contains(hints.Directories, filepath.Join(root, "compose-"+h.label)) {
		t.Errorf("hints for an allowed root = %v", hints.Directories)
	}
}

func TestStackDeleteLeavesFilesItDidNotCreate(t *testing.T) {
	h := newHarness(t)
	root := t.TempDir()
	h.allowStackRoots(root)
	envFile := filepath.Join(root, "shared.env")
	if err := os.WriteFile(envFile, []byte("SHARED=1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	name := "keep-" + h.label
	h.removeStackAtCleanup(name)
	compose := filepath.Join(root, "app", "compose.yaml")
	h.createStoppedStack(name, plainCompose(h.label), map[string]any{"composePath": compose, "envPath": envFile,
		"rawEnvContent": "SHARED=1\n"})
	h.must(200, "DELETE", "/api/stacks/"+name+"?env=1", nil, nil)
	if data, err := os.ReadFile(envFile); err != nil || string(data) != "SHARED=1\n" {
		t.Errorf("env file the stack did not create, after delete: %q %v", data, err)
	}
	if _, err := os.Stat(filepath.Join(root, "app")); !os.IsNotExist(err) {
		t.Errorf("directory the stack created, after delete: %v", err)
	}
}

func TestGitStackComposeFileLinkedOutOfItsRepositoryIsRefused(t *testing.T) {
	h := newHarness(t)
	secret := "secret-" + h.label
	target := filepath.Join(h.dataDir, "leak.yaml")
	if err := os.WriteFile(target, []byte("services:\n  app:\n    image: "+secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := h.gitFixture(t, map[string]string{"README": "x"})
	// Relative, as a repository can hold it: from the clone in
	// DATA_DIR/git/stack-<id> it leads to DATA_DIR/leak.yaml.
	if err := os.Symlink("../../leak.yaml", filepath.Join(f.g.work, "compose.yaml")); err != nil {
		t.Fatal(err)
	}
	f.g.commit("main", map[string]string{"README": "linked"})
	name := "gitlink-" + h.label
	h.removeStackAtCleanup(name)
	var gs struct {
		ID int64 `json:"id"`
	}
	h.must(201, "POST", "/api/git/stacks", map[string]any{"stackName": name, "environmentId": 1, "repositoryId": f.repo,
		"composePath": "compose.yaml"}, &gs)
	code, body := h.doAccept("POST", fmt.Sprintf("/api/git/stacks/%d/deploy", gs.ID), "application/json")
	if !strings.Contains(string(body), "leads outside the stack's repository") || strings.Contains(string(body), secret) {
		t.Errorf("deploy of a compose file linked out of the repository = %d %s", code, body)
	}
	h.expectRefusals([]refusal{
		{"absolute compose path", "POST", "/api/git/stacks", map[string]any{"stackName": name + "-2", "environmentId": 1, "repositoryId": f.repo,
			"composePath": filepath.Join(h.dataDir, "berth.db")}, 400, "a path inside the repository is required"},
		{"climbing compose path", "POST", "/api/git/stacks", map[string]any{"stackName": name + "-2", "environmentId": 1, "repositoryId": f.repo,
			"composePath": "../../berth.db"}, 400, "a path inside the repository is required"},
	})
}
