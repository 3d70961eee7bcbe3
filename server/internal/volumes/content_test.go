package volumes

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/berth-dev/berth/shared/fault"
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

// statusOf is the status api/errors.go answers for the kinds seen here.
var statusOf = map[fault.Kind]int{fault.Internal: 500, fault.Invalid: 400, fault.NotFound: 404}

func TestDecodeListing(t *testing.T) {
	out := `{"status":"ok","entries":[` +
		`{"name":"a file","mode":420,"size":12,"mtime":1700000000},` +
		`{"name":"dir","mode":2147484141,"size":4096,"mtime":1700000001},` +
		`{"name":"ln","mode":134218239,"size":7,"mtime":1700000002,"link":"a file"}]}`
	got, err := decodeListing([]byte(out))
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
	empty, err := decodeListing([]byte(`{"status":"ok"}`))
	if err != nil || len(empty) != 0 {
		t.Errorf("empty listing = %v, %v", empty, err)
	}
	for in, want := range map[string]string{
		`{"status":"escapes"}`:        "400 Path escapes the volume",
		`{"status":"not-found"}`:      "404 Path not found",
		`{"status":"not-directory"}`:  "400 Path is not a directory",
		`{"status":"too-many-links"}`: "400 Path has too many symbolic links",
		`{"status":"what"}`:           "500 Failed to browse volume",
		``:                            "500 Failed to browse volume",
		`{"status":"ok","entries":3}`: "500 Failed to browse volume",
	} {
		_, err := decodeListing([]byte(in))
		f, ok := fault.As(err)
		if !ok || fmt.Sprintf("%d %s", statusOf[f.Kind], f.Message) != want {
			t.Errorf("decodeListing(%q) = %v, want %s", in, err, want)
		}
	}
}

func TestDecodeFile(t *testing.T) {
	hdr, data, err := decodeFile([]byte("{\"status\":\"ok\",\"size\":3,\"mtime\":1700000000}\na\nb"))
	if err != nil || string(data) != "a\nb" || hdr.MTime != 1700000000 {
		t.Errorf("decodeFile = %+v %q %v", hdr, data, err)
	}
	for in, want := range map[string]string{
		`{"status":"is-directory"}` + "\n":   "400 Path is a directory",
		`{"status":"not-regular"}` + "\n":    "400 Path is not a regular file",
		`{"status":"too-large"}` + "\n":      "400 File is larger than 1024 KiB: download the volume export instead",
		`{"status":"escapes"}` + "\n":        "400 Path escapes the volume",
		`{"status":"ok","size":5}` + "\nabc": "500 Failed to read file",
		`{"status":"ok","size":0}`:           "500 Failed to read file",
		"garbage\n":                          "500 Failed to read file",
	} {
		_, _, err := decodeFile([]byte(in))
		f, ok := fault.As(err)
		if !ok || fmt.Sprintf("%d %s", statusOf[f.Kind], f.Message) != want {
			t.Errorf("decodeFile(%q) = %v, want %s", in, err, want)
		}
	}
}

// FuzzDecodeListing: the output of a helper is untrusted (a volume's names
// are anyone's); the decoder never panics and an entry always has a type.
func FuzzDecodeListing(f *testing.F) {
	f.Add([]byte(`{"status":"ok","entries":[{"name":"a","mode":420,"size":12,"mtime":1700000000}]}`))
	f.Add([]byte(`{"status":"escapes"}`))
	f.Add([]byte(`{"status":"ok","entries":[{"name":"x","mode":4294967295,"mtime":-99999999999999}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		entries, err := decodeListing(b)
		for _, e := range entries {
			if err != nil || e.Type == "" || e.Mode == "" {
				t.Errorf("entry %+v (err %v)", e, err)
			}
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
