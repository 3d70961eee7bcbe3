package helperbin

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// volume makes a tree like a volume's: files, a directory, links inside,
// links out (absolute, climbing) whose targets exist and do not.
func volume(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "volume")
	mk := func(p, content string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ln := func(target, p string) {
		if err := os.Symlink(target, filepath.Join(root, p)); err != nil {
			t.Fatal(err)
		}
	}
	mk("hello.txt", "hello\n")
	mk("sub/deeper/n.txt", "nested\n")
	// Outside the volume, next to it: what an escaping link would reveal.
	if err := os.WriteFile(filepath.Join(filepath.Dir(root), "secret"), []byte("s"), 0o644); err != nil {
		t.Fatal(err)
	}
	ln("hello.txt", "link")
	ln("sub/deeper", "deep")
	ln("../hello.txt", "sub/up")       // climbs, stays inside
	ln("/etc", "abs")                  // absolute: out, whatever /etc is
	ln("/berth-nowhere", "absgone")    // absolute, target missing
	ln("../secret", "climb")           // out by one level, target exists
	ln("../nothing-here", "climbgone") // out, target missing
	ln("sub/../../secret", "indirect")
	ln("loop2", "loop1")
	ln("loop1", "loop2")
	return root
}

func TestListAndReadStayInTheVolume(t *testing.T) {
	root := volume(t)
	for _, c := range []struct {
		path string
		list Status
		read Status
	}{
		{"/", OK, IsDirectory},
		{"/hello.txt", NotDirectory, OK},
		{"/link", NotDirectory, OK},
		{"/deep", OK, IsDirectory},
		{"/deep/n.txt", NotDirectory, OK},
		{"/sub/up", NotDirectory, OK},
		{"/missing", NotFound, NotFound},
		{"/hello.txt/x", NotFound, NotFound},
		// Out of the volume: refused on the link's text, the same whether
		// the target exists or not.
		{"/abs", Escapes, Escapes},
		{"/abs/passwd", Escapes, Escapes},
		{"/absgone", Escapes, Escapes},
		{"/climb", Escapes, Escapes},
		{"/climbgone", Escapes, Escapes},
		{"/indirect", Escapes, Escapes},
		{"/..", Escapes, Escapes},
		{"/sub/../../secret", Escapes, Escapes},
		{"/loop1", TooManyLinks, TooManyLinks},
	} {
		l, err := List(root, c.path)
		if err != nil || l.Status != c.list {
			t.Errorf("List(%s) = %s, %v; want %s", c.path, l.Status, err, c.list)
		}
		var out bytes.Buffer
		if err := Read(root, c.path, 100, &out); err != nil {
			t.Fatalf("Read(%s): %v", c.path, err)
		}
		var hdr FileHeader
		line, _, _ := strings.Cut(out.String(), "\n")
		if err := json.Unmarshal([]byte(line), &hdr); err != nil || hdr.Status != c.read {
			t.Errorf("Read(%s) = %q, %v; want %s", c.path, out.String(), err, c.read)
		}
	}
}

func TestResolveFollowsLinksInsideOnly(t *testing.T) {
	root := volume(t)
	for _, c := range []struct {
		path string
		want Resolved
	}{
		{"/", Resolved{Status: OK, Path: ".", Dir: true}},
		{"/hello.txt", Resolved{Status: OK, Path: "hello.txt"}},
		{"/link", Resolved{Status: OK, Path: "hello.txt"}},
		{"/deep", Resolved{Status: OK, Path: "sub/deeper", Dir: true}},
		{"/sub/up", Resolved{Status: OK, Path: "hello.txt"}},
		{"/missing", Resolved{Status: NotFound}},
		{"/abs", Resolved{Status: Escapes}},
		{"/climb", Resolved{Status: Escapes}},
		{"/indirect", Resolved{Status: Escapes}},
		{"/..", Resolved{Status: Escapes}},
		{"/loop1", Resolved{Status: TooManyLinks}},
	} {
		got, err := Resolve(root, c.path)
		if err != nil || got != c.want {
			t.Errorf("Resolve(%s) = %+v, %v; want %+v", c.path, got, err, c.want)
		}
	}
}

func TestListEntries(t *testing.T) {
	root := volume(t)
	l, err := List(root, "/")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Entry{}
	var names []string
	for _, e := range l.Entries {
		got[e.Name] = e
		names = append(names, e.Name)
	}
	want := "abs absgone climb climbgone deep hello.txt indirect link loop1 loop2 sub"
	if strings.Join(names, " ") != want {
		t.Errorf("names = %v, want %s (sorted)", names, want)
	}
	if e := got["hello.txt"]; e.Size != 6 || !e.Mode.IsRegular() || e.Mode.Perm() != 0o644 || e.MTime == 0 {
		t.Errorf("hello.txt = %+v", e)
	}
	if e := got["abs"]; e.Link != "/etc" || e.Mode&os.ModeSymlink == 0 {
		t.Errorf("abs = %+v, want a link to /etc (shown, not followed)", e)
	}
	if e := got["sub"]; !e.Mode.IsDir() {
		t.Errorf("sub = %+v", e)
	}
}

func TestReadLimitAndContent(t *testing.T) {
	root := volume(t)
	var out bytes.Buffer
	if err := Read(root, "/deep/n.txt", 100, &out); err != nil {
		t.Fatal(err)
	}
	line, data, _ := strings.Cut(out.String(), "\n")
	var hdr FileHeader
	if err := json.Unmarshal([]byte(line), &hdr); err != nil || hdr.Size != 7 || data != "nested\n" {
		t.Errorf("Read = %q (%v)", out.String(), err)
	}
	out.Reset()
	if err := Read(root, "/hello.txt", 5, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), `{"status":"too-large"}`) {
		t.Errorf("Read over the limit = %q", out.String())
	}
}

func TestMainUsage(t *testing.T) {
	var out, errOut bytes.Buffer
	for _, args := range [][]string{nil, {"list"}, {"read", "/", "/", "x"}, {"rm", "-rf"}} {
		if code := Main(args, &out, &errOut); code != 2 {
			t.Errorf("Main(%q) = %d, want 2", args, code)
		}
	}
	if code := Main([]string{"list", filepath.Join(t.TempDir(), "none"), "/"}, &out, &errOut); code != 1 {
		t.Errorf("list of a missing root = %d, want 1", code)
	}
}
