package backup_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"slices"
	"testing"

	"github.com/berth-dev/berth/server/internal/backup"
	"github.com/berth-dev/berth/shared/fault"
)

// TestBackupStdinDumpsTheSameBytes streams bytes to restic backup --stdin
// and dumps the snapshot's file: the same bytes, tags and host.
func TestBackupStdinDumpsTheSameBytes(t *testing.T) {
	e := newEnv(t)
	repo := e.localRepo()
	data := make([]byte, 3<<20+17)
	rand.Read(data)
	src := backup.Source{Host: "berth-test-host", Tags: []string{"berth:config=7", "berth:type=berth"},
		Volumes: []string{"ignored"}}
	sum, err := e.runner.BackupStdin(ctx(t), e.where, repo, src, "berth-backup.tar.gz", bytes.NewReader(data), nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.TotalBytes != int64(len(data)) {
		t.Errorf("summary's total bytes = %d, want %d", sum.TotalBytes, len(data))
	}
	var out bytes.Buffer
	if err := e.runner.Dump(ctx(t), e.where, repo, sum.SnapshotID, "/berth-backup.tar.gz", &out); err != nil {
		t.Fatal(err)
	}
	if got, want := sha(out.Bytes()), sha(data); got != want {
		t.Fatalf("dumped %d bytes with sha256 %s, want %d bytes with %s", out.Len(), got, len(data), want)
	}
	snaps, err := e.runner.Snapshots(ctx(t), e.where, repo, []string{"berth:config=7"})
	if err != nil {
		t.Fatal(err)
	}
	if len(snaps) != 1 || snaps[0].ID != sum.SnapshotID || snaps[0].Host != "berth-test-host" ||
		!slices.Contains(snaps[0].Tags, "berth:type=berth") {
		t.Errorf("snapshots = %+v, want the one made, with its host and tags", snaps)
	}
	e.noHelpersLeft()
}

// TestBackupStdinWrongPasswordIsItsFault: the usual fault, no helper left.
func TestBackupStdinWrongPasswordIsItsFault(t *testing.T) {
	e := newEnv(t)
	repo := e.localRepo()
	repo.Password = "not-the-password"
	_, err := e.runner.BackupStdin(ctx(t), e.where, repo, backup.Source{}, "x.bin", bytes.NewReader([]byte("data")), nil)
	wantFault(t, err, fault.Invalid, "Wrong repository password")
	e.noHelpersLeft()
}

// blockingReader gives n bytes, then calls at once (if set) and blocks
// until released, then fails with err (or ends).
type blockingReader struct {
	n       int
	at      func()
	release chan struct{}
	err     error
}

func (b *blockingReader) Read(p []byte) (int, error) {
	if b.n > 0 {
		k := min(len(p), b.n)
		rand.Read(p[:k])
		b.n -= k
		return k, nil
	}
	if b.at != nil {
		b.at()
		b.at = nil
	}
	<-b.release
	if b.err != nil {
		return 0, b.err
	}
	return 0, io.EOF
}

// TestBackupStdinCancelledLeavesNoSnapshotNorHelper cancels a backup whose
// input has not ended: restic is killed (no snapshot of a part), its
// helper removed, and the repository checks.
func TestBackupStdinCancelledLeavesNoSnapshotNorHelper(t *testing.T) {
	e := newEnv(t)
	repo := e.localRepo()
	c, cancel := context.WithCancel(t.Context())
	defer cancel()
	in := &blockingReader{n: 1 << 20, at: cancel, release: make(chan struct{})}
	defer close(in.release)
	_, err := e.runner.BackupStdin(c, e.where, repo, backup.Source{Tags: []string{"berth:config=8"}}, "x.bin", in, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled backup = %v", err)
	}
	e.noHelpersLeft()
	e.noSnapshots(repo)
}

// TestBackupStdinFailedInputMakesNoSnapshot: an input that fails in the
// middle (the archive could not be written) is that error, and restic,
// killed before it saw an end, made no snapshot.
func TestBackupStdinFailedInputMakesNoSnapshot(t *testing.T) {
	e := newEnv(t)
	repo := e.localRepo()
	broken := errors.New("the archive broke")
	in := &blockingReader{n: 1 << 20, release: make(chan struct{}), err: broken}
	close(in.release)
	_, err := e.runner.BackupStdin(ctx(t), e.where, repo, backup.Source{}, "x.bin", in, nil)
	if !errors.Is(err, broken) {
		t.Fatalf("backup of a failing input = %v, want its error", err)
	}
	e.noHelpersLeft()
	e.noSnapshots(repo)
}

// noSnapshots fails unless repo has no snapshot and checks.
func (e *env) noSnapshots(repo backup.Repo) {
	e.t.Helper()
	snaps, err := e.runner.Snapshots(ctx(e.t), e.where, repo, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	if len(snaps) != 0 {
		e.t.Errorf("snapshots = %+v, want none", snaps)
	}
	if _, err := e.runner.Task(ctx(e.t), e.where, repo, backup.TaskCheck, "", nil); err != nil {
		e.t.Fatalf("check: %v", err)
	}
}
