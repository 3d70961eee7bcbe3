package files

import (
	"archive/tar"
	"testing"
)

func TestCleanPathNeverClimbsAboveTheRoot(t *testing.T) {
	for in, want := range map[string]string{"": "/", "..": "/", "../../etc/passwd": "/etc/passwd", "/a/../../b": "/b",
		"a/./b/": "/a/b", "/tmp/..": "/"} {
		got, err := CleanPath(in)
		if err != nil || got != want {
			t.Errorf("CleanPath(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := CleanPath("/etc/\x00x"); err == nil {
		t.Error("a NUL byte was accepted")
	}
}

func TestEscapingLinkTargets(t *testing.T) {
	for _, c := range []struct {
		dir, target string
		want        bool
	}{
		{"/", "/", true}, {"/tmp", "/etc", true}, {"/tmp", "..", false}, {"/tmp", "../..", true},
		{"/a/b", "../../x", false}, {"/a/b", "../../../x", true}, {"/tmp", "sub/../..", false}, {"/tmp", "./sub", false},
	} {
		if got := escapes(c.dir, c.target); got != c.want {
			t.Errorf("escapes(%q, %q) = %v, want %v", c.dir, c.target, got, c.want)
		}
	}
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]int64{"644": 0o644, "0755": 0o755, "0o700": 0o700, "4755": 0o4755} {
		if got, err := ParseMode(in); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %o, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "9", "rwx", "77777", "-1"} {
		if _, err := ParseMode(in); err == nil {
			t.Errorf("ParseMode(%q) accepted", in)
		}
	}
}

func TestPermissionsString(t *testing.T) {
	for _, c := range []struct {
		hdr  tar.Header
		want string
	}{
		{tar.Header{Typeflag: tar.TypeReg, Mode: 0o644}, "-rw-r--r--"},
		{tar.Header{Typeflag: tar.TypeDir, Mode: 0o1777}, "drwxrwxrwt"},
		{tar.Header{Typeflag: tar.TypeReg, Mode: 0o4755}, "-rwsr-xr-x"},
		{tar.Header{Typeflag: tar.TypeSymlink, Mode: 0o777}, "lrwxrwxrwx"},
	} {
		if got := permissions(&c.hdr); got != c.want {
			t.Errorf("permissions(%o) = %q, want %q", c.hdr.Mode, got, c.want)
		}
	}
}
