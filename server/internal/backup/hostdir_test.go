package backup

import (
	"archive/tar"
	"bytes"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/shared/fault"
	"github.com/google/go-cmp/cmp"
)

// entry is a tar entry of a crafted dump.
type entry struct {
	name, body, link string
	typ              byte
	mode             int64
}

func tarOf(t testing.TB, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		mode := e.mode
		if mode == 0 {
			mode = 0o644
		}
		h := &tar.Header{Name: e.name, Typeflag: e.typ, Mode: mode, Size: int64(len(e.body)), Linkname: e.link,
			ModTime: time.Unix(1700000000, 0)}
		if e.typ != tar.TypeReg {
			h.Size = 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if e.typ == tar.TypeReg {
			if _, err := tw.Write([]byte(e.body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// tree lists what dir holds: "rel type mode [content]" lines.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		line := rel + " " + fi.Mode().String()
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			line += " " + string(b)
		}
		out = append(out, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

const stackSnapDir = PathsDir + "/data/stacks/2/web"

// A stack's directory dumped from a snapshot (restic dump's tar: entries
// by their full path, without the leading /) is written with its files'
// bytes and permissions, and nothing else.
func TestUnpackDirWritesTheDirectorysFilesAndDirectories(t *testing.T) {
	p := strings.TrimPrefix(stackSnapDir, "/")
	in := tarOf(t,
		entry{name: p + "/compose.yaml", typ: tar.TypeReg, body: "services: {}\n"},
		entry{name: p + "/.env", typ: tar.TypeReg, body: "MODE=plain\n", mode: 0o600},
		entry{name: p + "/conf/", typ: tar.TypeDir, mode: 0o750},
		entry{name: p + "/conf/app.ini", typ: tar.TypeReg, body: "x=1\n", mode: 0o4755},
		entry{name: p + "/empty/", typ: tar.TypeDir, mode: 0o755},
	)
	into := t.TempDir()
	n, err := UnpackDir(bytes.NewReader(in), stackSnapDir, into)
	if err != nil || n != 3 {
		t.Fatalf("UnpackDir = %d, %v; want 3 files", n, err)
	}
	want := []string{
		".env -rw------- MODE=plain\n",
		"compose.yaml -rw-r--r-- services: {}\n",
		"conf drwxr-x---",
		"conf/app.ini -rwxr-xr-x x=1\n", // no set-uid bit
		"empty drwxr-xr-x",
	}
	if diff := cmp.Diff(want, tree(t, into)); diff != "" {
		t.Errorf("written (-want +got):\n%s", diff)
	}
}

// Whatever a crafted snapshot's directory holds besides directories and
// regular files inside it — a symbolic link (escaping or not), a hard
// link, a device, a pipe, an entry with "..", one outside the directory, a
// file given twice — is refused with a 400, and nothing outside the
// staging directory is written.
func TestUnpackDirRefusesWhatEscapesOrIsNotAFile(t *testing.T) {
	p := strings.TrimPrefix(stackSnapDir, "/")
	good := entry{name: p + "/compose.yaml", typ: tar.TypeReg, body: "services: {}\n"}
	for name, bad := range map[string]entry{
		"symlink escaping":       {name: p + "/secrets", typ: tar.TypeSymlink, link: "/etc"},
		"symlink inside":         {name: p + "/c.yaml", typ: tar.TypeSymlink, link: "compose.yaml"},
		"hard link":              {name: p + "/h", typ: tar.TypeLink, link: p + "/compose.yaml"},
		"char device":            {name: p + "/null", typ: tar.TypeChar},
		"block device":           {name: p + "/sda", typ: tar.TypeBlock},
		"fifo":                   {name: p + "/pipe", typ: tar.TypeFifo},
		"dot-dot":                {name: p + "/../../../../../../tmp/escaped", typ: tar.TypeReg, body: "x"},
		"dot-dot inside":         {name: p + "/conf/../../web2/x", typ: tar.TypeReg, body: "x"},
		"outside the directory":  {name: "backup/paths/data/stacks/2/other/x", typ: tar.TypeReg, body: "x"},
		"sibling with the name":  {name: p + "x/compose.yaml", typ: tar.TypeReg, body: "x"},
		"absolute":               {name: "/etc/cron.d/x", typ: tar.TypeReg, body: "x"},
		"twice":                  good,
		"the directory a file":   {name: p, typ: tar.TypeReg, body: "x"},
		"a file then a dir path": {name: p + "/compose.yaml/x", typ: tar.TypeReg, body: "x"},
	} {
		t.Run(name, func(t *testing.T) {
			parent := t.TempDir()
			into := filepath.Join(parent, "staging")
			if err := os.Mkdir(into, 0o700); err != nil {
				t.Fatal(err)
			}
			_, err := UnpackDir(bytes.NewReader(tarOf(t, good, bad)), stackSnapDir, into)
			if err == nil {
				t.Fatalf("UnpackDir of %+v succeeded", bad)
			}
			if name != "a file then a dir path" && fault.KindOf(err) != fault.Invalid {
				t.Errorf("err = %v (%v), want a 400", err, fault.KindOf(err))
			}
			got, _ := os.ReadDir(parent)
			if len(got) != 1 || got[0].Name() != "staging" {
				t.Errorf("beside the staging directory: %v", got)
			}
			for _, l := range tree(t, into) {
				if !strings.HasPrefix(l, "compose.yaml ") {
					t.Errorf("written in the staging directory: %q", l)
				}
			}
		})
	}
}

// A directory of Berth's host copied into a helper: its directories and
// regular files at the path a bind mount would have, a symbolic link
// neither followed nor copied (said), an escaping one neither.
func TestWriteHostDirCopiesFilesAndSkipsLinks(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "web")
	for p, body := range map[string]string{"compose.yaml": "services: {}\n", "sub/a.txt": "a\n"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(body), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "passwd")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc", filepath.Join(dir, "etc")); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	var skipped []string
	if err := writeHostDir(&buf, dir, func(rel, why string) { skipped = append(skipped, rel+": "+why) }); err != nil {
		t.Fatal(err)
	}
	copied := bytes.Clone(buf.Bytes())
	var got []string
	tr := tar.NewReader(&buf)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		got = append(got, string(h.Typeflag)+" "+h.Name+" "+fs.FileMode(h.Mode).String()+" "+string(b))
	}
	prefix := strings.TrimPrefix(sourcePath(dir), "/")
	want := []string{
		"5 " + prefix + "/ -rwxr-xr-x ",
		"0 " + prefix + "/compose.yaml -rw-r----- services: {}\n",
		"5 " + prefix + "/sub/ -rwxr-xr-x ",
		"0 " + prefix + "/sub/a.txt -rw-r----- a\n",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the copy (-want +got):\n%s", diff)
	}
	sort.Strings(skipped)
	if diff := cmp.Diff([]string{"etc: a symbolic link is not followed", "passwd: a symbolic link is not followed"}, skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	// What it writes is what a restore unpacks.
	into := t.TempDir()
	if n, err := UnpackDir(bytes.NewReader(copied), sourcePath(dir), into); err != nil || n != 2 {
		t.Fatalf("UnpackDir = %d, %v; want 2 files", n, err)
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"compose.yaml -rw-r----- services: {}\n", "sub drwxr-xr-x", "sub/a.txt -rw-r----- a\n"},
		tree(t, into)); diff != "" {
		t.Errorf("unpacked (-want +got):\n%s", diff)
	}
}

// FuzzUnpackDir: whatever tar a snapshot gives, UnpackDir writes only
// directories and regular files, and only inside its staging directory.
func FuzzUnpackDir(f *testing.F) {
	p := strings.TrimPrefix(stackSnapDir, "/")
	f.Add(tarOf(f, entry{name: p + "/compose.yaml", typ: tar.TypeReg, body: "services: {}\n"},
		entry{name: p + "/conf/", typ: tar.TypeDir}))
	f.Add(tarOf(f, entry{name: p + "/../x", typ: tar.TypeReg, body: "x"}))
	f.Add(tarOf(f, entry{name: p + "/l", typ: tar.TypeSymlink, link: "/etc"}, entry{name: p + "/l/x", typ: tar.TypeReg, body: "x"}))
	f.Fuzz(func(t *testing.T, in []byte) {
		parent := t.TempDir()
		into := filepath.Join(parent, "staging")
		if err := os.Mkdir(into, 0o700); err != nil {
			t.Fatal(err)
		}
		_, _ = UnpackDir(bytes.NewReader(in), stackSnapDir, into)
		if got, _ := os.ReadDir(parent); len(got) != 1 {
			t.Fatalf("written beside the staging directory: %v", got)
		}
		err := filepath.WalkDir(into, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && !d.Type().IsRegular() {
				t.Errorf("%s is a %v", p, d.Type())
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		// Read-only directories are made writable again for the cleanup.
		_ = filepath.WalkDir(into, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				_ = os.Chmod(p, 0o700)
			}
			return nil
		})
	})
}
