package backupjobs

import (
	"archive/tar"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/berth-dev/berth/server/internal/backup"
	"github.com/berth-dev/berth/shared/fault"
)

// cutDump is a Runner whose Dump writes the first files of a stack
// directory's tar, then fails: a repository or engine that goes away
// mid-dump, which the real ones cannot be made to do on demand.
type cutDump struct {
	backup.Runner
	files int // written before the failure (all, with a whole tar, when < 0)
}

var errCut = errors.New("the engine went away")

func (d cutDump) Dump(_ context.Context, _ backup.Where, _ backup.Repo, _, p string, out io.Writer) error {
	tw := tar.NewWriter(out)
	for i, name := range []string{"compose.yaml", ".env", "notes.txt"} {
		if d.files >= 0 && i == d.files {
			return errCut
		}
		body := "new " + name + "\n"
		if err := tw.WriteHeader(&tar.Header{Name: strings.TrimPrefix(p, "/") + "/" + name, Typeflag: tar.TypeReg, Mode: 0o644,
			Size: int64(len(body))}); err != nil {
			return err
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			return err
		}
	}
	return tw.Close()
}

// A stack directory's restore on Berth's host that fails half way through
// the dump leaves the target as it was and nothing beside it; one that
// reads it all replaces the target's whole content.
func TestStageDirLeavesNothingHalfWritten(t *testing.T) {
	parent := t.TempDir()
	dst := filepath.Join(parent, "web")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dst, "compose.yaml"), []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dst, "only-old.txt"), []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sn := backup.Snapshot{ID: "0123456789abcdef"}
	for _, n := range []int{0, 1, 2} {
		s := New(Options{Runner: cutDump{files: n}})
		if _, err := s.stageDir(t.Context(), backup.Where{}, backup.Repo{}, sn, dst, dst); !errors.Is(err, errCut) ||
			fault.KindOf(err) == fault.Invalid {
			t.Errorf("cut after %d files: err = %v, want the dump's (not a 400)", n, err)
		}
		if entries, _ := os.ReadDir(parent); len(entries) != 1 || entries[0].Name() != "web" {
			t.Errorf("cut after %d files: beside the target: %v", n, entries)
		}
		if b, _ := os.ReadFile(filepath.Join(dst, "compose.yaml")); string(b) != "old\n" {
			t.Errorf("cut after %d files: compose.yaml = %q", n, b)
		}
	}

	s := New(Options{Runner: cutDump{files: -1}})
	staging, err := s.stageDir(t.Context(), backup.Where{}, backup.Repo{}, sn, dst, dst)
	if err != nil {
		t.Fatal(err)
	}
	if err := swapIn(staging, dst); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(parent)
	if len(entries) != 1 || entries[0].Name() != "web" {
		t.Errorf("beside the restored target: %v", entries)
	}
	var got []string
	files, _ := os.ReadDir(dst)
	for _, f := range files {
		b, _ := os.ReadFile(filepath.Join(dst, f.Name()))
		got = append(got, f.Name()+": "+string(b))
	}
	if want := ".env: new .env\n,compose.yaml: new compose.yaml\n,notes.txt: new notes.txt\n"; strings.Join(got, ",") != want {
		t.Errorf("restored = %q, want %q", strings.Join(got, ","), want)
	}
	if fi, err := os.Stat(dst); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("the restored directory's mode = %v, %v; want the one it replaced (0755)", fi.Mode(), err)
	}
}
