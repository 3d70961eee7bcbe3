package api_test

import (
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/berth-dev/berth/server/internal/apitest"
)

type hostListing struct {
	Path    string `json:"path"`
	Parent  string `json:"parent"`
	Entries []struct {
		Name    string `json:"name"`
		Path    string `json:"path"`
		Type    string `json:"type"`
		Symlink bool   `json:"symlink"`
		Mode    string `json:"mode"`
	} `json:"entries"`
	Roots []string `json:"roots"`
}

func q(p string) string { return url.QueryEscape(p) }

// The path pickers' file browser shows only the stack roots: links leading
// out are hidden, and listing, reading or creating anything outside them,
// in Berth's own files, through a link, with .. (also encoded) is refused;
// Viewers and Operators are refused everything.
func TestHostFileBrowserIsConfinedToTheStackRoots(t *testing.T) {
	t.Parallel()
	h := newAuthHarness(t, apitest.Options{})
	admin, operator := h.withOperator()
	root, outside := t.TempDir(), t.TempDir()
	h.allowStackRoots(root)
	keyIntact := precious(t, filepath.Join(h.dataDir, ".encryption_key"))
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(root, "sub"), 0o750))
	must(os.WriteFile(filepath.Join(root, "compose.yaml"), []byte("services: {}\n"), 0o640))
	must(os.WriteFile(filepath.Join(root, "blob.bin"), []byte{0x7f, 'E', 'L', 'F', 0, 1}, 0o640))
	must(os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("outside"), 0o600))
	must(os.Symlink(outside, filepath.Join(root, "out")))
	must(os.Symlink(filepath.Join(h.dataDir, ".encryption_key"), filepath.Join(root, "key")))
	must(os.Symlink(filepath.Join(root, "sub"), filepath.Join(root, "in")))

	var got hostListing
	h.must(200, "GET", "/api/system/files", nil, &got)
	home := filepath.Join(h.dataDir, "stacks", "1")
	if got.Path != home || len(got.Entries) != 0 || !slices.Equal(got.Roots, []string{home, root}) {
		t.Errorf("default listing = %+v, want the empty stack directory %s and roots", got, home)
	}
	h.must(200, "GET", "/api/system/files?path="+q(root), nil, &got)
	var names []string
	for _, e := range got.Entries {
		names = append(names, e.Name)
		if e.Name == "in" && (!e.Symlink || e.Type != "directory") {
			t.Errorf("link in = %+v", e)
		}
		if e.Name == "compose.yaml" && (e.Type != "file" || e.Mode != "640" || e.Path != filepath.Join(root, "compose.yaml")) {
			t.Errorf("compose.yaml = %+v", e)
		}
	}
	if !slices.Equal(names, []string{"in", "sub", "blob.bin", "compose.yaml"}) {
		t.Errorf("entries = %v, want the links leading out hidden, directories first", names)
	}
	if got.Parent != "" {
		t.Errorf("parent of a root = %q, want none (outside)", got.Parent)
	}
	h.must(200, "GET", "/api/system/files?path="+q(filepath.Join(root, "sub")), nil, &got)
	if got.Parent != root {
		t.Errorf("parent = %q, want %s", got.Parent, root)
	}

	var file struct {
		Path    string `json:"path"`
		Content string `json:"content"`
		Size    int64  `json:"size"`
	}
	h.must(200, "GET", "/api/system/files/content?path="+q(filepath.Join(root, "compose.yaml")), nil, &file)
	if file.Content != "services: {}\n" || file.Size != 13 {
		t.Errorf("content = %+v", file)
	}
	var made struct {
		Success bool   `json:"success"`
		Path    string `json:"path"`
	}
	deep := filepath.Join(root, "new", "deep")
	h.must(200, "POST", "/api/system/files", map[string]string{"path": deep}, &made)
	if fi, err := os.Stat(deep); err != nil || !fi.IsDir() || !made.Success || made.Path != deep {
		t.Errorf("mkdir = %+v, %v", made, err)
	}

	h.expectRefusals([]refusal{
		{"list outside", "GET", "/api/system/files?path=" + q(outside), nil, 403, outsideRoots},
		{"list /", "GET", "/api/system/files?path=/", nil, 403, outsideRoots},
		{"list the data directory", "GET", "/api/system/files?path=" + q(h.dataDir), nil, 403, ownFiles},
		{"list through a link out", "GET", "/api/system/files?path=" + q(filepath.Join(root, "out")), nil, 403, outsideRoots},
		{"list with ..", "GET", "/api/system/files?path=" + q(root+"/../"+filepath.Base(outside)), nil, 400, "path traversal"},
		{"list with encoded ..%2F", "GET", "/api/system/files?path=" + root + "/..%2F..%2Fetc", nil, 400, "path traversal"},
		{"list relative", "GET", "/api/system/files?path=etc", nil, 400, "an absolute path is required"},
		{"list a file", "GET", "/api/system/files?path=" + q(filepath.Join(root, "compose.yaml")), nil, 400, "a directory is required"},
		{"list missing", "GET", "/api/system/files?path=" + q(filepath.Join(root, "nope")), nil, 404, "Path not found"},
		{"read the key through a link", "GET", "/api/system/files/content?path=" + q(filepath.Join(root, "key")), nil, 403, ownFiles},
		{"read the database", "GET", "/api/system/files/content?path=" + q(filepath.Join(h.dataDir, "berth.db")), nil, 403, ownFiles},
		{"read through a link out", "GET", "/api/system/files/content?path=" + q(filepath.Join(root, "out", "secret.txt")), nil, 403, outsideRoots},
		{"read outside", "GET", "/api/system/files/content?path=" + q(filepath.Join(outside, "secret.txt")), nil, 403, outsideRoots},
		{"read /etc/passwd", "GET", "/api/system/files/content?path=/etc/passwd", nil, 403, outsideRoots},
		{"read with ..", "GET", "/api/system/files/content?path=" + q(root+"/../"+filepath.Base(outside)+"/secret.txt"), nil, 400, "path traversal"},
		{"read a directory", "GET", "/api/system/files/content?path=" + q(root), nil, 400, "a file path is required"},
		{"read binary", "GET", "/api/system/files/content?path=" + q(filepath.Join(root, "blob.bin")), nil, 400, "not a text file"},
		{"read missing", "GET", "/api/system/files/content?path=" + q(filepath.Join(root, "nope.yaml")), nil, 404, "File not found"},
		{"read without path", "GET", "/api/system/files/content", nil, 400, "path is required"},
		{"mkdir again", "POST", "/api/system/files", map[string]string{"path": deep}, 409, "Path already exists"},
		{"mkdir outside", "POST", "/api/system/files", map[string]string{"path": filepath.Join(outside, "x")}, 403, outsideRoots},
		{"mkdir through a link out", "POST", "/api/system/files", map[string]string{"path": filepath.Join(root, "out", "x")}, 403, outsideRoots},
		{"mkdir in the data directory", "POST", "/api/system/files", map[string]string{"path": filepath.Join(h.dataDir, "git", "x")}, 403, ownFiles},
		{"mkdir with ..", "POST", "/api/system/files", map[string]string{"path": root + "/../x"}, 400, "path traversal"},
		{"mkdir without path", "POST", "/api/system/files", map[string]string{}, 400, "path is required"},
	})
	for _, p := range []string{filepath.Join(outside, "x"), filepath.Join(h.dataDir, "git", "x")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was created by a refused request", p)
		}
	}
	keyIntact()

	h.userWithRole("vera", "Viewer")
	for name, who := range map[string]func(){"operator": func() { h.as(operator) }, "viewer": func() { h.as(h.login("vera", "vera-password-1")) }} {
		who()
		h.expectRefusals([]refusal{
			{name + " lists", "GET", "/api/system/files?path=" + q(root), nil, 403, "Permission denied"},
			{name + " reads", "GET", "/api/system/files/content?path=" + q(filepath.Join(root, "compose.yaml")), nil, 403, "Permission denied"},
			{name + " creates", "POST", "/api/system/files", map[string]string{"path": filepath.Join(root, "by-"+name)}, 403, "Permission denied"},
		})
		h.as(admin)
	}
}
