package helperbin

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestCopyKeepsWhatCpAKeeps: content, modes (set-id bits too), owners,
// times, links as links, hard links as links, pipes; a read-only directory
// is filled before it is closed.
func TestCopyKeepsWhatCpAKeeps(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("changing owners needs root (the helper runs as root)")
	}
	from, to := t.TempDir(), t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(from, "ro/inner"), 0o755))
	must(os.WriteFile(filepath.Join(from, "ro/inner/f"), []byte("deep"), 0o600))
	must(os.WriteFile(filepath.Join(from, "suid"), []byte("x"), 0o755))
	must(os.Chown(filepath.Join(from, "suid"), 1234, 5678))
	must(syscall.Chmod(filepath.Join(from, "suid"), 0o4755))
	must(os.WriteFile(filepath.Join(from, "a"), []byte("hard"), 0o640))
	must(os.Link(filepath.Join(from, "a"), filepath.Join(from, "b")))
	must(os.Symlink("/etc/passwd", filepath.Join(from, "abs")))
	must(os.Lchown(filepath.Join(from, "abs"), 42, 43))
	must(syscall.Mkfifo(filepath.Join(from, "fifo"), 0o600))
	must(os.Chmod(filepath.Join(from, "fifo"), 0o620))
	old := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	must(os.Chtimes(filepath.Join(from, "a"), old, old))
	must(os.Chmod(filepath.Join(from, "ro"), 0o555))
	must(os.Chtimes(filepath.Join(from, "ro"), old, old))
	must(os.Chmod(from, 0o750))
	t.Cleanup(func() { _ = os.Chmod(filepath.Join(from, "ro"), 0o755); _ = os.Chmod(filepath.Join(to, "ro"), 0o755) })

	if err := Copy(from, to); err != nil {
		t.Fatal(err)
	}
	st := func(p string) *syscall.Stat_t {
		t.Helper()
		var s syscall.Stat_t
		must(syscall.Lstat(filepath.Join(to, p), &s))
		return &s
	}
	if b, err := os.ReadFile(filepath.Join(to, "ro/inner/f")); err != nil || string(b) != "deep" {
		t.Errorf("ro/inner/f = %q, %v", b, err)
	}
	if s := st("suid"); s.Mode&0o7777 != 0o4755 || s.Uid != 1234 || s.Gid != 5678 {
		t.Errorf("suid: mode %o owner %d:%d, want 4755 1234:5678", s.Mode&0o7777, s.Uid, s.Gid)
	}
	if a, b := st("a"), st("b"); a.Ino != b.Ino || a.Mode&0o777 != 0o640 || !time.Unix(a.Mtim.Unix()).Equal(old) {
		t.Errorf("a, b: inodes %d %d (want one), mode %o, mtime %v", a.Ino, b.Ino, a.Mode&0o777, time.Unix(a.Mtim.Unix()))
	}
	if target, err := os.Readlink(filepath.Join(to, "abs")); err != nil || target != "/etc/passwd" {
		t.Errorf("abs -> %q, %v", target, err)
	}
	if s := st("abs"); s.Uid != 42 || s.Gid != 43 {
		t.Errorf("abs owner %d:%d, want 42:43", s.Uid, s.Gid)
	}
	if s := st("fifo"); s.Mode&syscall.S_IFMT != syscall.S_IFIFO || s.Mode&0o777 != 0o620 {
		t.Errorf("fifo mode %o", s.Mode)
	}
	if s := st("ro"); s.Mode&0o777 != 0o555 || !time.Unix(s.Mtim.Unix()).Equal(old) {
		t.Errorf("ro: mode %o mtime %v", s.Mode&0o777, time.Unix(s.Mtim.Unix()))
	}
	if s := st("."); s.Mode&0o777 != 0o750 {
		t.Errorf("the top directory: mode %o, want 750 (from's)", s.Mode&0o777)
	}
}
