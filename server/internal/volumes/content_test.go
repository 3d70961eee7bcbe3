package volumes

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCleanPath(t *testing.T) {
	for in, want := range map[string]string{
		"": "/", "/": "/", "a": "/a", "/a/": "/a", "a//b/./c": "/a/b/c", "./x": "/x", "..a/b..": "/..a/b..",
	} {
		got, err := CleanPath(in)
		if err != nil || got != want {
			t.Errorf("CleanPath(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"..", "../etc", "a/../../b", "/a/..", "a\x00b"} {
		if got, err := CleanPath(in); err == nil {
			t.Errorf("CleanPath(%q) = %q, want refused", in, got)
		}
	}
}

func TestParseListing(t *testing.T) {
	out := "3\x00a file\x00dir\x00ln\x00" +
		"12 81a4 1700000000\n4096 41ed 1700000001\n7 a1ff 1700000002\n" +
		"\x00\x00a file\x00"
	got, err := parseListing([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{
		{Name: "a file", Type: "file", Size: 12, Mode: "-rw-r--r--", Modified: "2023-11-14T22:13:20Z"},
		{Name: "dir", Type: "directory", Size: 0, Mode: "drwxr-xr-x", Modified: "2023-11-14T22:13:21Z"},
		{Name: "ln", Type: "symlink", Size: 7, Mode: "Lrwxrwxrwx", Modified: "2023-11-14T22:13:22Z", LinkTarget: "a file"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	empty, err := parseListing([]byte("0\x00"))
	if err != nil || len(empty) != 0 {
		t.Errorf("empty listing = %v, %v", empty, err)
	}
	for _, bad := range []string{"", "x\x00", "2\x00a\x00", "1\x00a\x0012 zz 1\n\x00", "1\x00a\x0012 81a4 1\n"} {
		if _, err := parseListing([]byte(bad)); err == nil {
			t.Errorf("parseListing(%q) accepted", bad)
		}
	}
}

// FuzzParseListing: the output of a helper is untrusted (a volume's names
// are anyone's); the parser never panics and never invents entries.
func FuzzParseListing(f *testing.F) {
	f.Add([]byte("1\x00a\x0012 81a4 1700000000\n\x00"))
	f.Add([]byte("0\x00"))
	f.Add([]byte("99999999999\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		entries, err := parseListing(b)
		if err == nil && len(entries) > strings.Count(string(b), "\x00") {
			t.Errorf("%d entries from %d NULs", len(entries), strings.Count(string(b), "\x00"))
		}
	})
}

func TestIsBinary(t *testing.T) {
	for s, want := range map[string]bool{"": false, "plain\ntext": false, "héllo": false, "a\x00b": true, "\xff\xfe": true} {
		if IsBinary([]byte(s)) != want {
			t.Errorf("IsBinary(%q) = %v", s, !want)
		}
	}
}
