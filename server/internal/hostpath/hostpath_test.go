package hostpath_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/berth-dev/berth/server/internal/hostpath"
	"github.com/berth-dev/berth/shared/fault"
)

func TestCheckFormRefusesRelativeTraversalAndNUL(t *testing.T) {
	for _, p := range []string{"/opt/stacks/web/compose.yaml", "/srv/x.yml"} {
		if err := hostpath.CheckForm("p", p); err != nil {
			t.Errorf("CheckForm(%q) = %v", p, err)
		}
	}
	for _, p := range []string{"", "compose.yaml", "./x", "/opt/../etc/cron.d/x", "/a/..", "/a\x00b"} {
		if err := hostpath.CheckForm("p", p); fault.KindOf(err) != fault.Invalid {
			t.Errorf("CheckForm(%q) = %v, want invalid", p, err)
		}
	}
}

// layout is a data directory with its stack directory, an allowed root and
// a directory outside both, each resolved (t.TempDir may sit behind a link).
type layout struct {
	data, home, root, outside string
	pol                       hostpath.Policy
}

func newLayout(t *testing.T) layout {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	l := layout{data: filepath.Join(base, "data"), root: filepath.Join(base, "root"), outside: filepath.Join(base, "outside")}
	l.home = filepath.Join(l.data, "stacks", "1")
	for _, d := range []string{l.home, l.root, l.outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(l.data, "berth.db"), filepath.Join(l.data, ".encryption_key")} {
		if err := os.WriteFile(f, []byte("precious"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	l.pol = hostpath.Policy{Home: l.home, Roots: []string{l.root}, Own: l.data, Outside: "outside the roots", OwnFiles: "Berth's own files"}
	return l
}

func link(t *testing.T, target, name string) string {
	t.Helper()
	if err := os.Symlink(target, name); err != nil {
		t.Fatal(err)
	}
	return name
}

func TestConfineAllowsOnlyHomeAndRootsAndNeverBerthsOwnFiles(t *testing.T) {
	l := newLayout(t)
	if err := os.MkdirAll(filepath.Join(l.root, "adir"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		path string
		kind hostpath.Kind
		want fault.Kind // -1: allowed
	}{
		{"new file in home", filepath.Join(l.home, "web", "compose.yaml"), hostpath.File, -1},
		{"new file in a root", filepath.Join(l.root, "web", "compose.yaml"), hostpath.File, -1},
		{"the root itself as a directory", l.root, hostpath.Dir, -1},
		{"database", filepath.Join(l.data, "berth.db"), hostpath.File, fault.Forbidden},
		{"database WAL not there yet", filepath.Join(l.data, "berth.db-wal"), hostpath.File, fault.Forbidden},
		{"key", filepath.Join(l.data, ".encryption_key"), hostpath.File, fault.Forbidden},
		{"git mirrors", filepath.Join(l.data, "git", "repo-1", "compose.yaml"), hostpath.File, fault.Forbidden},
		{"another environment's stacks", filepath.Join(l.data, "stacks", "2", "x", "compose.yaml"), hostpath.File, fault.Forbidden},
		{"outside", filepath.Join(l.outside, "compose.yaml"), hostpath.File, fault.Forbidden},
		{"/etc", "/etc/cron.d/berth", hostpath.File, fault.Forbidden},
		{"link in a root to the key", link(t, filepath.Join(l.data, ".encryption_key"), filepath.Join(l.root, "key.yaml")), hostpath.File, fault.Forbidden},
		{"dangling link in a root into the data directory", link(t, filepath.Join(l.data, "new.yaml"), filepath.Join(l.root, "dangling.yaml")), hostpath.File, fault.Forbidden},
		{"directory link in a root to the data directory", filepath.Join(link(t, l.data, filepath.Join(l.root, "data")), "berth.db"), hostpath.File, fault.Forbidden},
		{"relative link climbing out of a root", link(t, "../outside/x.yaml", filepath.Join(l.root, "climb.yaml")), hostpath.File, fault.Forbidden},
		{"link inside a root to the root", link(t, filepath.Join(l.root, "web"), filepath.Join(l.root, "alias")), hostpath.Dir, -1},
		{"a directory where a file is expected", filepath.Join(l.root, "adir"), hostpath.File, fault.Invalid},
		{"relative", "compose.yaml", hostpath.File, fault.Invalid},
		{"traversal", l.root + "/../data/berth.db", hostpath.File, fault.Invalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := l.pol.Confine("compose path", tt.path, tt.kind)
			switch {
			case tt.want == -1 && err != nil:
				t.Errorf("Confine(%s) = %v, want allowed", tt.path, err)
			case tt.want != -1 && fault.KindOf(err) != tt.want:
				t.Errorf("Confine(%s) = %v (kind %v), want kind %v", tt.path, err, fault.KindOf(err), tt.want)
			}
		})
	}
}

func TestConfineRefusesOutsideBeforeLookingAtTheTarget(t *testing.T) {
	l := newLayout(t)
	// A directory outside: the answer is the 403 of the rule, never the 400
	// that would say a directory is there.
	_, err := l.pol.Confine("compose path", l.outside, hostpath.File)
	if fault.KindOf(err) != fault.Forbidden {
		t.Errorf("Confine(outside directory) = %v, want forbidden", err)
	}
	f, _ := fault.As(err)
	if f == nil || f.Message != `Invalid compose path "`+l.outside+`": outside the roots` {
		t.Errorf("message = %v", err)
	}
}

func TestResolveFollowsLinksWhoseTargetIsMissing(t *testing.T) {
	l := newLayout(t)
	p := link(t, filepath.Join(l.outside, "a", "b"), filepath.Join(l.root, "l"))
	got, err := hostpath.Resolve(filepath.Join(p, "c.yaml"))
	if err != nil || got != filepath.Join(l.outside, "a", "b", "c.yaml") {
		t.Errorf("Resolve = %q, %v", got, err)
	}
	loop := link(t, filepath.Join(l.root, "loop"), filepath.Join(l.root, "loop"))
	if _, err := hostpath.Resolve(loop); err == nil {
		t.Error("Resolve of a link loop succeeded")
	}
}
