package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteReplacesWholeFileAndLeavesNoTemporaries(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "file.txt")
	for _, content := range []string{"first version\n", "second\n"} {
		if err := Write(path, []byte(content), 0o640); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != content {
			t.Fatalf("read %q, %v; want %q", got, err, content)
		}
	}
	fi, _ := os.Stat(path)
	if fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640", fi.Mode().Perm())
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only the file", len(entries))
	}
}

func TestWriteIntoUnwritableDirectoryFailsAndKeepsOldContent(t *testing.T) {
	if os.Geteuid() == 0 {
		// root ignores directory permissions; use a path whose parent is a file instead.
		dir := t.TempDir()
		parent := filepath.Join(dir, "file")
		if err := os.WriteFile(parent, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := Write(filepath.Join(parent, "child"), []byte("y"), 0o600); err == nil {
			t.Fatal("write below a regular file succeeded")
		}
		if got, _ := os.ReadFile(parent); string(got) != "x" {
			t.Fatalf("parent changed: %q", got)
		}
		return
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := Write(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o700)
	if err := Write(path, []byte("new"), 0o600); err == nil {
		t.Fatal("write into a read-only directory succeeded")
	}
	if got, _ := os.ReadFile(path); string(got) != "old" {
		t.Fatalf("content = %q, want old", got)
	}
}

func TestCreateWritesOnlyWhenNothingIsThere(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "token")
	created, err := Create(path, []byte("first"), 0o600)
	if err != nil || !created {
		t.Fatalf("first Create = %v, %v", created, err)
	}
	created, err = Create(path, []byte("second"), 0o600)
	if err != nil || created {
		t.Fatalf("second Create = %v, %v", created, err)
	}
	if got, _ := os.ReadFile(path); string(got) != "first" {
		t.Fatalf("file holds %q", got)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode: %v, %v", fi, err)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Fatalf("temporaries left: %v", entries)
	}
}
