package backup_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/backup"
	"github.com/berth-dev/berth/server/internal/helperimage/helperimagetest"
	"github.com/berth-dev/berth/shared/enginetest"
	"github.com/berth-dev/berth/shared/fault"
	"github.com/google/go-cmp/cmp"
)

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// wantFault fails unless err is a fault of kind whose message starts with
// prefix.
func wantFault(t *testing.T, err error, kind fault.Kind, prefix string) {
	t.Helper()
	f, ok := fault.As(err)
	if !ok || f.Kind != kind || !strings.HasPrefix(f.Message, prefix) {
		t.Fatalf("error = %v (%#v), want a fault of kind %d %q…", err, f, kind, prefix)
	}
}

const volumeContent = `mkdir -p dir/sub empty
echo hello > a.txt
busybox dd if=/dev/urandom of=dir/b.bin bs=1024 count=300 2>/dev/null
printf 'x%.0s' $(busybox seq 1 100) > dir/sub/c.txt
chmod 0640 a.txt
chown 1234:5678 dir/sub/c.txt
ln -s a.txt link`

const volumeChange = `echo changed > a.txt; rm dir/b.bin; echo new > new.txt; rm -r empty; rm link`

// TestRoundTripRestoresEveryByte backs a volume and a host path up to each
// kind of repository, changes and deletes files, restores in place and
// compares every entry (type, mode, owner, sha256).
func TestRoundTripRestoresEveryByte(t *testing.T) {
	e := newEnv(t)
	for typ, repo := range e.repos() {
		t.Run(typ, func(t *testing.T) {
			e := *e
			e.t = t
			vol := e.volume(typ, volumeContent)
			dir := filepath.Join(t.TempDir(), "stack")
			if err := os.MkdirAll(filepath.Join(dir, "conf"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "compose.yaml"), []byte("services: {}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "conf", "app.env"), []byte("A=1\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			wantVol, wantDir := e.volumeSums(vol), hostSums(t, dir)

			existed, err := e.runner.Init(ctx(t), e.where, repo)
			if err != nil || existed {
				t.Fatalf("Init = %v, %v; want a new repository", existed, err)
			}
			if existed, err := e.runner.Init(ctx(t), e.where, repo); err != nil || !existed {
				t.Fatalf("second Init = %v, %v; want existed", existed, err)
			}
			tag := "berth:test=" + e.label
			sum, err := e.runner.Backup(ctx(t), e.where, repo, backup.Source{Volumes: []string{vol}, Paths: []string{dir},
				Tags: []string{tag}, Host: "test-" + e.label}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if sum.SnapshotID == "" || sum.FilesNew != 5 {
				t.Errorf("summary = %+v, want a snapshot of 5 new files", sum)
			}
			snaps, err := e.runner.Snapshots(ctx(t), e.where, repo, []string{tag})
			if err != nil {
				t.Fatal(err)
			}
			if len(snaps) != 1 || snaps[0].ID != sum.SnapshotID || snaps[0].Host != "test-"+e.label ||
				!slices.Equal(snaps[0].Paths, []string{backup.PathsDir + dir, backup.VolumesDir + "/" + vol}) {
				t.Fatalf("snapshots = %+v, want the one of %s", snaps, sum.SnapshotID)
			}

			e.inVolume(vol, volumeChange)
			if err := os.WriteFile(filepath.Join(dir, "compose.yaml"), []byte("services: {x: {}}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(filepath.Join(dir, "conf", "app.env")); err != nil {
				t.Fatal(err)
			}
			if e.volumeSums(vol) == wantVol {
				t.Fatal("the change did not change the volume")
			}

			var messages []string
			err = e.runner.Restore(ctx(t), e.where, repo, sum.SnapshotID,
				backup.Target{Volumes: map[string]string{vol: vol}, Paths: map[string]string{dir: dir}},
				func(p backup.Progress) { messages = append(messages, p.Message) })
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wantVol, e.volumeSums(vol)); diff != "" {
				t.Errorf("restored volume (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantDir, hostSums(t, dir)); diff != "" {
				t.Errorf("restored host path (-want +got):\n%s", diff)
			}
			if len(messages) == 0 {
				t.Error("no progress reported")
			}
			e.noHelpersLeft()
		})
	}
}

// TestRestoreToANewVolumeAndPathLeavesTheOriginals restores a snapshot of a
// volume and a host path onto another volume and a host path not there
// yet: the copies hold the snapshot, the originals keep their changes.
func TestRestoreToANewVolumeAndPathLeavesTheOriginals(t *testing.T) {
	e := newEnv(t)
	repo := e.localRepo()
	vol := e.volume("orig", volumeContent)
	want := e.volumeSums(vol)
	dir := filepath.Join(t.TempDir(), "stack")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "compose.yaml"), []byte("services: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wantDir := hostSums(t, dir)
	sum, err := e.runner.Backup(ctx(t), e.where, repo, backup.Source{Volumes: []string{vol}, Paths: []string{dir}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	e.inVolume(vol, volumeChange)
	if err := os.WriteFile(filepath.Join(dir, "compose.yaml"), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	changed, changedDir := e.volumeSums(vol), hostSums(t, dir)
	copyVol := e.volume("copy", "echo stale > stale.txt")
	copyDir := filepath.Join(t.TempDir(), "new-stack") // not there yet
	err = e.runner.Restore(ctx(t), e.where, repo, sum.SnapshotID,
		backup.Target{Volumes: map[string]string{vol: copyVol}, Paths: map[string]string{dir: copyDir}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantDir, hostSums(t, copyDir)); diff != "" {
		t.Errorf("the new host path (-want +got):\n%s", diff)
	}
	if got := hostSums(t, dir); got != changedDir {
		t.Errorf("the original host path changed:\n%s\nwant\n%s", got, changedDir)
	}
	if diff := cmp.Diff(want, e.volumeSums(copyVol)); diff != "" {
		t.Errorf("the new volume (-want +got):\n%s", diff)
	}
	if got := e.volumeSums(vol); got != changed {
		t.Errorf("the original changed:\n%s\nwant\n%s", got, changed)
	}
}

// TestWrongPasswordIsItsFault: a wrong password is refused with its own
// message, and a restore with it empties nothing.
func TestWrongPasswordIsItsFault(t *testing.T) {
	e := newEnv(t)
	repo := e.localRepo()
	vol := e.volume("pw", "echo keep > keep.txt")
	sum, err := e.runner.Backup(ctx(t), e.where, repo, backup.Source{Volumes: []string{vol}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	e.inVolume(vol, "echo changed > keep.txt")
	wrong := repo
	wrong.Password = "not-the-password"
	wantFault(t, e.runner.Test(ctx(t), e.where, wrong), fault.Invalid, "Wrong repository password")
	err = e.runner.Restore(ctx(t), e.where, wrong, sum.SnapshotID, backup.Target{Volumes: map[string]string{vol: vol}}, nil)
	wantFault(t, err, fault.Invalid, "Wrong repository password")
	if got := e.inVolume(vol, "cat keep.txt"); got != "changed" {
		t.Errorf("after a refused restore the volume holds %q, want it untouched", got)
	}
	e.noHelpersLeft()
}

// TestUnreachableRepositoryIsItsFault: a REST server that does not answer
// is "Repository unreachable", without the URL's password; a repository
// never initialised is "Repository not initialized".
func TestUnreachableRepositoryIsItsFault(t *testing.T) {
	e := newEnv(t)
	r := backup.Repo{Repository: "rest:http://someone:s3cret-pass@127.0.0.1:1/none/", Password: "pw"}
	err := e.runner.Test(ctx(t), e.where, r)
	wantFault(t, err, fault.Unavailable, "Repository unreachable: ")
	if strings.Contains(err.Error(), "s3cret-pass") {
		t.Errorf("the error shows the URL's password: %v", err)
	}
	repos := e.repos()
	sftp := repos[backup.TypeSFTP]
	closed := sftp
	closed.Repository = "sftp://" + os.Getenv("BERTH_TEST_SFTP_USER") + "@127.0.0.1:1//none"
	wantFault(t, e.runner.Test(ctx(t), e.where, closed), fault.Unavailable, "Repository unreachable: ")
	testKey, testKeyPub := newSSHKey(t)
	otherKey := sftp
	otherKey.SSHKey = testKey
	wantFault(t, e.runner.Test(ctx(t), e.where, otherKey), fault.Invalid, "The SFTP server refused the SSH key")
	otherHost := sftp
	otherHost.SSHKnownHosts = strings.Fields(sftp.SSHKnownHosts)[0] + " " + strings.Join(strings.Fields(testKeyPub)[:2], " ")
	wantFault(t, e.runner.Test(ctx(t), e.where, otherHost), fault.Invalid, "The SFTP server's host key does not match")
	wantFault(t, e.runner.Test(ctx(t), e.where, sftp), fault.NotFound, "Repository not initialized")
	wantFault(t, e.runner.Test(ctx(t), e.where, repos[backup.TypeREST]), fault.NotFound, "Repository not initialized")
	wantFault(t, e.runner.Test(ctx(t), e.where, repos[backup.TypeS3]), fault.NotFound, "Repository not initialized")
	if _, err := e.runner.Init(ctx(t), e.where, repos[backup.TypeS3]); err != nil {
		t.Fatal(err)
	}
	badKey := repos[backup.TypeS3]
	badKey.Env = map[string]string{"AWS_ACCESS_KEY_ID": os.Getenv("BERTH_TEST_S3_ACCESS_KEY"), "AWS_SECRET_ACCESS_KEY": "wrong-s3-secret"}
	err = e.runner.Test(ctx(t), e.where, badKey)
	wantFault(t, err, fault.Invalid, "The repository refused the credentials")
	if strings.Contains(err.Error(), "wrong-s3-secret") {
		t.Errorf("the error shows the S3 secret: %v", err)
	}
	badREST := repos[backup.TypeREST]
	badREST.Repository = strings.Replace(badREST.Repository, "@", "-wrong@", 1)
	wantFault(t, e.runner.Test(ctx(t), e.where, badREST), fault.Invalid, "The repository refused the credentials")
	local := repos[backup.TypeLocal]
	wantFault(t, e.runner.Test(ctx(t), e.where, local), fault.NotFound, "Repository not initialized")
	e.noHelpersLeft()
}

// TestForgetKeepsThePolicysSnapshots makes four snapshots of a tag and one
// of another: keep-last 2 forgets the two oldest of the tag only.
func TestForgetKeepsThePolicysSnapshots(t *testing.T) {
	e := newEnv(t)
	repo := e.localRepo()
	vol := e.volume("forget", "echo 0 > n")
	var ids []string
	for i := range 4 {
		e.inVolume(vol, "echo "+string(rune('a'+i))+" > n")
		sum, err := e.runner.Backup(ctx(t), e.where, repo, backup.Source{Volumes: []string{vol}, Tags: []string{"berth:config=1"}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, sum.SnapshotID)
	}
	other, err := e.runner.Backup(ctx(t), e.where, repo, backup.Source{Volumes: []string{vol}, Tags: []string{"berth:config=2"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.runner.Forget(ctx(t), e.where, repo, []string{"berth:config=1"}, backup.Retention{}); err == nil {
		t.Error("Forget with an empty policy was accepted")
	}
	removed, err := e.runner.Forget(ctx(t), e.where, repo, []string{"berth:config=1"}, backup.Retention{KeepLast: 2})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(removed)
	want := slices.Sorted(slices.Values(ids[:2]))
	if !slices.Equal(removed, want) {
		t.Errorf("removed %v, want %v", removed, want)
	}
	snaps, err := e.runner.Snapshots(ctx(t), e.where, repo, nil)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, s := range snaps {
		left = append(left, s.ID)
	}
	slices.Sort(left)
	want = slices.Sorted(slices.Values([]string{ids[2], ids[3], other.SnapshotID}))
	if !slices.Equal(left, want) {
		t.Errorf("left %v, want %v", left, want)
	}
	if err := e.runner.ForgetIDs(ctx(t), e.where, repo, []string{other.SnapshotID}); err != nil {
		t.Fatal(err)
	}
	if snaps, err := e.runner.Snapshots(ctx(t), e.where, repo, []string{"berth:config=2"}); err != nil || len(snaps) != 0 {
		t.Errorf("after ForgetIDs: %v, %v", snaps, err)
	}
}

// TestLsDumpDiffOfKnownFiles lists, dumps and diffs snapshots of known
// content.
func TestLsDumpDiffOfKnownFiles(t *testing.T) {
	e := newEnv(t)
	repo := e.localRepo()
	vol := e.volume("ls", volumeContent)
	binSum := strings.Fields(e.inVolume(vol, "busybox sha256sum dir/b.bin"))[0]
	first, err := e.runner.Backup(ctx(t), e.where, repo, backup.Source{Volumes: []string{vol}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	e.inVolume(vol, volumeChange)
	second, err := e.runner.Backup(ctx(t), e.where, repo, backup.Source{Volumes: []string{vol}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	root := backup.VolumesDir + "/" + vol
	nodes, err := e.runner.Ls(ctx(t), e.where, repo, first.SnapshotID, root)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range nodes {
		names = append(names, n.Name+":"+n.Type)
	}
	if diff := cmp.Diff([]string{"a.txt:file", "dir:dir", "empty:dir", "link:symlink"}, names); diff != "" {
		t.Errorf("Ls (-want +got):\n%s", diff)
	}
	var buf bytes.Buffer
	if err := e.runner.Dump(ctx(t), e.where, repo, first.SnapshotID, root+"/a.txt", &buf); err != nil {
		t.Fatal(err)
	}
	if buf.String() != "hello\n" {
		t.Errorf("Dump of a.txt = %q", buf.String())
	}
	buf.Reset()
	if err := e.runner.Dump(ctx(t), e.where, repo, first.SnapshotID, root+"/dir/b.bin", &buf); err != nil {
		t.Fatal(err)
	}
	if got := sha(buf.Bytes()); got != binSum {
		t.Errorf("Dump of b.bin: %d bytes of sha256 %s, want %s", buf.Len(), got, binSum)
	}
	d, err := e.runner.Diff(ctx(t), e.where, repo, first.SnapshotID, second.SnapshotID)
	if err != nil {
		t.Fatal(err)
	}
	want := backup.Diff{
		Added:    []string{root + "/new.txt"},
		Removed:  []string{root + "/dir/b.bin", root + "/empty/", root + "/link"},
		Modified: []string{root + "/a.txt"},
	}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("Diff (-want +got):\n%s", diff)
	}
}

// TestTasksAndChangePassword runs every maintenance task, then changes the
// password: the old one no longer opens the repository, the new one does.
func TestTasksAndChangePassword(t *testing.T) {
	e := newEnv(t)
	repo := e.localRepo()
	vol := e.volume("tasks", volumeContent)
	if _, err := e.runner.Backup(ctx(t), e.where, repo, backup.Source{Volumes: []string{vol}}, nil); err != nil {
		t.Fatal(err)
	}
	for _, task := range []backup.Task{backup.TaskUnlock, backup.TaskCheck, backup.TaskPrune, backup.TaskRepairIndex} {
		var lines int
		if _, err := e.runner.Task(ctx(t), e.where, repo, task, "", func(backup.Progress) { lines++ }); err != nil {
			t.Fatalf("%s: %v", task, err)
		}
		if task != backup.TaskUnlock && lines == 0 {
			t.Errorf("%s reported no progress", task)
		}
	}
	if _, err := e.runner.Task(ctx(t), e.where, repo, backup.TaskCheck, "50%", nil); err != nil {
		t.Fatalf("check --read-data-subset: %v", err)
	}
	if _, err := e.runner.Task(ctx(t), e.where, repo, backup.TaskCheck, "--x", nil); fault.KindOf(err) != fault.Invalid {
		t.Errorf("check with a bad subset = %v, want refused", err)
	}
	// restic 0.14 (Debian 12's) has no repair snapshots; a later one does.
	if _, err := e.runner.Task(ctx(t), e.where, repo, backup.TaskRepairSnapshots, "", nil); err != nil {
		wantFault(t, err, fault.Unavailable, "This restic cannot repair snapshots (restic 0.16 or later can)")
	}
	st, err := e.runner.Task(ctx(t), e.where, repo, backup.TaskStats, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.SnapshotsCount != 1 || st.TotalSize == 0 {
		t.Errorf("stats = %+v, want 1 snapshot and a size", st)
	}
	if err := e.runner.ChangePassword(ctx(t), e.where, repo, "the-new-password"); err != nil {
		t.Fatal(err)
	}
	wantFault(t, e.runner.Test(ctx(t), e.where, repo), fault.Invalid, "Wrong repository password")
	repo.Password = "the-new-password"
	if err := e.runner.Test(ctx(t), e.where, repo); err != nil {
		t.Errorf("the new password: %v", err)
	}
	e.noHelpersLeft()
}

// slowBackup starts a backup of a volume limited to 64 KiB/s and returns
// once restic reported progress (it holds its lock then), with the
// backup's outcome to come on the channel.
func (e *env) slowBackup(repo backup.Repo, vol string) <-chan error {
	e.t.Helper()
	slow := repo
	slow.Flags = []string{"--limit-upload 64"}
	started := make(chan struct{})
	var once sync.Once
	done := make(chan error, 1)
	go func() {
		_, err := e.runner.Backup(ctx(e.t), e.where, slow, backup.Source{Volumes: []string{vol}}, func(p backup.Progress) {
			if p.BytesDone > 0 || p.FilesDone > 0 || p.TotalBytes > 0 {
				once.Do(func() { close(started) })
			}
		})
		done <- err
	}()
	select {
	case <-started:
	case err := <-done:
		e.t.Fatalf("the slow backup ended before it reported progress: %v", err)
	}
	return done
}

// killedBackup backs up a new volume of 8 MiB (named after name) to repo
// slowly and kills its helper in the middle; it returns the volume.
func (e *env) killedBackup(repo backup.Repo, name string) string {
	e.t.Helper()
	vol := e.volume(name, "busybox dd if=/dev/urandom of=big bs=1M count=8 2>/dev/null")
	done := e.slowBackup(repo, vol)
	ids := e.helpers()
	if len(ids) != 1 {
		e.t.Fatalf("helpers = %v, want the backup's", ids)
	}
	e.docker("kill", ids[0])
	if err := <-done; err == nil {
		e.t.Fatal("the killed backup succeeded")
	}
	return vol
}

// TestKilledBackupLeavesTheRepositoryUsable kills the helper in the middle
// of a backup: its lock is left in the repository, yet the next backup and
// restic check pass (Berth removes the locks of a run it knows is dead).
func TestKilledBackupLeavesTheRepositoryUsable(t *testing.T) {
	e := newEnv(t)
	repo := e.localRepo()
	vol := e.killedBackup(repo, "killed")
	locks, _ := os.ReadDir(filepath.Join(repo.Repository, "locks"))
	if len(locks) == 0 {
		t.Fatal("the killed backup left no lock: the test proves nothing")
	}
	if _, err := e.runner.Backup(ctx(t), e.where, repo, backup.Source{Volumes: []string{vol}}, nil); err != nil {
		t.Fatalf("the next backup: %v", err)
	}
	if _, err := e.runner.Task(ctx(t), e.where, repo, backup.TaskCheck, "", nil); err != nil {
		t.Fatalf("check after the killed backup: %v", err)
	}
	e.noHelpersLeft()
}

// TestDeadRunsLocksGoOnlyWhenNoOtherRunHoldsOne: a killed backup leaves
// its lock; while restic run by hand (another host name, alive) holds a lock
// of the same repository, Berth removes neither (restic cannot remove one
// lock alone), and an exclusive task says the repository is locked; once
// the other run ended, the dead run's lock is removed and the task runs.
func TestDeadRunsLocksGoOnlyWhenNoOtherRunHoldsOne(t *testing.T) {
	e := newEnv(t)
	repo := e.localRepo()
	e.killedBackup(repo, "deadlock")
	locks := func() int {
		l, err := os.ReadDir(filepath.Join(repo.Repository, "locks"))
		if err != nil {
			t.Fatal(err)
		}
		return len(l)
	}
	if locks() != 1 {
		t.Fatalf("the killed backup left %d locks, want 1", locks())
	}
	held := exec.Command(os.Getenv("BERTH_TEST_RESTIC"), "-r", repo.Repository, "backup", "--stdin", "--stdin-filename", "held")
	held.Env = append(os.Environ(), "RESTIC_PASSWORD="+repo.Password)
	in, err := held.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := held.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = held.Process.Kill(); _ = held.Wait() })
	for i := 0; locks() < 2; i++ {
		if i == 600 {
			t.Fatal("restic run by hand took no lock")
		}
		time.Sleep(50 * time.Millisecond)
	}
	_, err = e.runner.Task(ctx(t), e.where, repo, backup.TaskCheck, "", nil)
	wantFault(t, err, fault.Conflict, "Repository is locked by another run")
	if n := locks(); n != 2 {
		t.Fatalf("%d locks left, want both the dead run's and the live one's", n)
	}
	if _, err := in.Write([]byte("held data\n")); err != nil {
		t.Fatal(err)
	}
	in.Close()
	if err := held.Wait(); err != nil {
		t.Fatalf("restic run by hand: %v", err)
	}
	if _, err := e.runner.Task(ctx(t), e.where, repo, backup.TaskCheck, "", nil); err != nil {
		t.Fatalf("check once the other run ended: %v", err)
	}
	if n := locks(); n != 0 {
		t.Fatalf("%d locks left after the check", n)
	}
	e.noHelpersLeft()
}

// TestRestartedBerthSweepsItsRunningHelper: a Berth that stopped in the
// middle of a backup left its helper running; the next Berth with the
// same owner removes it, with its lock, and backs up.
func TestRestartedBerthSweepsItsRunningHelper(t *testing.T) {
	e := newEnv(t)
	repo := e.localRepo()
	vol := e.volume("sweep", "busybox dd if=/dev/urandom of=big bs=1M count=8 2>/dev/null")
	done := e.slowBackup(repo, vol)
	// Another process of the same node: what a restarted Berth is.
	next := newEnvOn(t, e.socket)
	next.where.Owner = e.where.Owner
	if _, err := next.runner.Backup(ctx(t), next.where, repo, backup.Source{Volumes: []string{vol}}, nil); err != nil {
		t.Fatalf("backup after the restart: %v", err)
	}
	if err := <-done; err == nil {
		t.Error("the swept backup succeeded")
	}
	if _, err := next.runner.Task(ctx(t), next.where, repo, backup.TaskCheck, "", nil); err != nil {
		t.Fatalf("check: %v", err)
	}
	e.noHelpersLeft()
}

// TestCancelRemovesTheHelper: a cancelled backup's helper is gone when
// Backup returns.
func TestCancelRemovesTheHelper(t *testing.T) {
	e := newEnv(t)
	repo := e.localRepo()
	vol := e.volume("cancel", "busybox dd if=/dev/urandom of=big bs=1M count=8 2>/dev/null")
	c, cancel := context.WithCancel(t.Context())
	defer cancel()
	slow := repo
	slow.Flags = []string{"--limit-upload=64"}
	_, err := e.runner.Backup(c, e.where, slow, backup.Source{Volumes: []string{vol}}, func(p backup.Progress) {
		if p.TotalBytes > 0 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled backup = %v", err)
	}
	e.noHelpersLeft()
	if _, err := e.runner.Task(ctx(t), e.where, repo, backup.TaskCheck, "", nil); err != nil {
		t.Fatalf("check after the cancelled backup: %v", err)
	}
}

// TestPasswordNeverInTheHelpersInspection inspects a running helper of a
// REST repository: neither the repository password nor the URL's
// credentials are in its configuration.
func TestPasswordNeverInTheHelpersInspection(t *testing.T) {
	e := newEnv(t)
	repo := e.repos()[backup.TypeREST]
	if _, err := e.runner.Init(ctx(t), e.where, repo); err != nil {
		t.Fatal(err)
	}
	vol := e.volume("inspect", "busybox dd if=/dev/urandom of=big bs=1M count=4 2>/dev/null")
	done := e.slowBackup(repo, vol)
	ids := e.helpers()
	if len(ids) != 1 {
		t.Fatalf("helpers = %v", ids)
	}
	inspect := e.docker("inspect", ids[0])
	restPass := "berth-rest-pw"
	if u := os.Getenv("BERTH_TEST_REST_URL"); strings.Contains(u, "@") {
		restPass = u[strings.LastIndex(u[:strings.Index(u, "@")], ":")+1 : strings.Index(u, "@")]
	}
	for _, secret := range []string{repo.Password, restPass} {
		if strings.Contains(inspect, secret) {
			t.Errorf("docker inspect of the helper shows the secret %q", secret)
		}
	}
	if !strings.Contains(inspect, `"running"`) {
		t.Errorf("the helper was not running when inspected")
	}
	e.docker("kill", ids[0])
	<-done
}

// newSSHKey makes a key pair (private key, public key line) no server
// knows.
func newSSHKey(t *testing.T) (string, string) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "key")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "berth-test-other", "-f", f).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v %s", err, out)
	}
	key, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := os.ReadFile(f + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	return string(key), string(pub)
}

// TestFullRepositoryDiskIsItsFault backs 8 MiB up to a local repository
// on a 4 MiB filesystem: "No space left on the repository's device", and
// the repository still opens.
func TestFullRepositoryDiskIsItsFault(t *testing.T) {
	e := newEnv(t)
	enginetest.RequireEnv(t, "a small filesystem", "BERTH_TEST_BACKUP_FULL_DIR")
	dir := filepath.Join(os.Getenv("BERTH_TEST_BACKUP_FULL_DIR"), e.label)
	t.Cleanup(func() { os.RemoveAll(dir) })
	repo := backup.Repo{Repository: dir, Password: "pw-" + e.label}
	if _, err := e.runner.Init(ctx(t), e.where, repo); err != nil {
		t.Fatal(err)
	}
	vol := e.volume("full", "busybox dd if=/dev/urandom of=big bs=1M count=8 2>/dev/null")
	_, err := e.runner.Backup(ctx(t), e.where, repo, backup.Source{Volumes: []string{vol}}, nil)
	wantFault(t, err, fault.Unavailable, "No space left on the repository's device")
	if err := e.runner.Test(ctx(t), e.where, repo); err != nil {
		t.Errorf("the full repository no longer opens: %v", err)
	}
	e.noHelpersLeft()
}

// TestWithoutResticOnTheHostEveryCallSaysSo: a Berth host without restic
// answers a 503 naming the package to install.
func TestWithoutResticOnTheHostEveryCallSaysSo(t *testing.T) {
	e := newEnv(t)
	set, err := helperimagetest.Set()
	if err != nil {
		t.Fatal(err)
	}
	none := backup.New(backup.Config{Restic: filepath.Join(t.TempDir(), "restic"), Helper: set})
	if none.Installed() {
		t.Fatal("a missing restic is reported installed")
	}
	err = none.Test(ctx(t), e.where, backup.Repo{Repository: "/srv/none", Password: "pw"})
	wantFault(t, err, fault.Unavailable, "restic is not installed on the Berth host (install Debian's restic package)")
}

// TestLockedRepositoryIsItsFault: while another Berth (another owner)
// backs up, an exclusive task is "Repository is locked by another run",
// and that run's helper is left alone.
func TestLockedRepositoryIsItsFault(t *testing.T) {
	e := newEnv(t)
	repo := e.localRepo()
	vol := e.volume("locked", "busybox dd if=/dev/urandom of=big bs=1M count=8 2>/dev/null")
	done := e.slowBackup(repo, vol)
	other := newEnvOn(t, e.socket)
	_, err := other.runner.Task(ctx(t), other.where, repo, backup.TaskCheck, "", nil)
	wantFault(t, err, fault.Conflict, "Repository is locked by another run")
	ids := e.helpers()
	if len(ids) != 1 {
		t.Fatalf("the other Berth's helper is gone: %v", ids)
	}
	e.docker("kill", ids[0])
	<-done
	if _, err := e.runner.Task(ctx(t), e.where, repo, backup.TaskCheck, "", nil); err != nil {
		t.Fatalf("check once the backup ended: %v", err)
	}
}
