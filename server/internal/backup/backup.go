// Package backup runs restic next to the data it backs up: in a short-lived
// helper container on the environment's own engine (socket, direct or
// through a Berth agent), from Berth's backup image (restic, ssh and the
// libraries they need, packed from this host's files and loaded through
// the engine's image load API like helperimage's image). Volumes and host
// paths are mounted read-only for a backup, read-write only for a restore;
// nothing of the data passes through Berth.
//
// The layout inside a snapshot is fixed, so that a snapshot can be
// restored onto another volume or stack name:
//
//	/backup/volumes/<volume name>/...   a named volume's content
//	/backup/paths/<host path>/...       a bind-mounted host path (a stack's directory, a container's binds)
//
// Secrets (the repository password, cloud credentials, an SSH key) are
// never put in the helper's environment or command line, where a container
// inspection shows them: they are copied into the created container as
// files before it starts.
//
// The helper runs in the host's network (a repository on the host's
// loopback is reachable), labelled engine.HelperLabel=backup with its
// owner and repository. restic's locks name the host and PID 1 of a
// helper, so restic never finds them stale: Restic runs one command of a
// repository at a time in the process, and removes every lock of the
// repository before its next run when it knows the run that left them is
// dead (killed, cancelled, or a helper of its owner that a stopped Berth
// left behind, which it removes).
package backup

import (
	"context"
	"io"
	"time"

	"github.com/berth-dev/berth/shared/engine"
)

// Where the helper mounts what it reads or writes.
const (
	VolumesDir = "/backup/volumes"
	PathsDir   = "/backup/paths"
	// RepoDir is where a local repository's host path is mounted.
	RepoDir = "/repo"
)

// Repository types (Repo.Type), from the repository string's prefix.
const (
	TypeLocal = "local" // a path on the environment's host ("/srv/restic", hostPath)
	TypeSFTP  = "sftp"  // sftp:user@host:/path (or sftp://user@host:port//path)
	TypeREST  = "rest"  // rest:http(s)://[user:pass@]host:port/path
	TypeS3    = "s3"    // s3:http(s)://host:port/bucket/path or s3:host/bucket/path
)

// Repo is a restic repository and what opens it. Everything in it but Type
// and Repository is secret.
type Repo struct {
	Type       string
	Repository string // the restic repository string; for TypeLocal, the host path
	Password   string
	// Env is extra restic environment (AWS_ACCESS_KEY_ID,
	// AWS_SECRET_ACCESS_KEY, AWS_DEFAULT_REGION, RESTIC_REST_USERNAME…);
	// only the names of AllowedEnv are accepted.
	Env map[string]string
	// SSHKey is the private key of an sftp repository (OpenSSH or PEM), and
	// SSHKnownHosts the known_hosts lines that pin its host key (without
	// them the host key is accepted on first use and printed in the run's
	// log).
	SSHKey        string
	SSHKnownHosts string
	// Flags are extra restic options ("--limit-upload 1000", "-o
	// s3.storage-class=…"), checked by CheckFlags.
	Flags []string
}

// Where restic runs: the engine of an environment.
type Where struct {
	EnvID  int64
	Client *engine.Client
	// Owner labels the helper container (the Berth node that made it), so
	// that leftovers of a crashed run can be swept.
	Owner string
}

// Source is what a backup reads.
type Source struct {
	Volumes []string // named volumes, at VolumesDir/<name>
	Paths   []string // absolute host paths, at PathsDir/<path>
	// Copied are directories of Berth's own host that the helper's engine
	// cannot mount (it runs on another host): copied into the helper at
	// PathsDir/<path> before restic starts (see writeHostDir).
	Copied  []string
	Exclude []string // restic --exclude patterns
	Tags    []string // restic tags: berth:config=<id>, berth:instance=<id>, …
	Host    string   // restic --host: the instance id
}

// Target is where a restore writes: each snapshot volume or path restored
// onto the named volume or host path (the same name for in place, another
// for a restore to a new location).
type Target struct {
	Volumes map[string]string // snapshot volume name → volume to write
	Paths   map[string]string // snapshot host path → host path to write
}

// Progress is one of restic's --json status lines.
type Progress struct {
	Percent     float64 `json:"percentDone"`
	FilesDone   int64   `json:"filesDone"`
	TotalFiles  int64   `json:"totalFiles"`
	BytesDone   int64   `json:"bytesDone"`
	TotalBytes  int64   `json:"totalBytes"`
	CurrentFile string  `json:"currentFile,omitempty"`
	Message     string  `json:"message,omitempty"` // a plain line of output (check, prune…)
}

// Summary is the end of a backup.
type Summary struct {
	SnapshotID     string        `json:"snapshotId"`
	FilesNew       int64         `json:"filesNew"`
	FilesChanged   int64         `json:"filesChanged"`
	FilesUnmodfied int64         `json:"filesUnmodified"`
	DataAdded      int64         `json:"dataAdded"`
	TotalFiles     int64         `json:"totalFilesProcessed"`
	TotalBytes     int64         `json:"totalBytesProcessed"`
	Duration       time.Duration `json:"-"`
}

// Snapshot is one snapshot of a repository.
type Snapshot struct {
	ID       string    `json:"id"`
	ShortID  string    `json:"shortId"`
	Time     time.Time `json:"time"`
	Host     string    `json:"hostname"`
	Paths    []string  `json:"paths"`
	Tags     []string  `json:"tags"`
	Parent   string    `json:"parent,omitempty"`
	Tree     string    `json:"tree,omitempty"`
	Username string    `json:"username,omitempty"`
}

// Node is an entry of a snapshot's tree.
type Node struct {
	Name  string    `json:"name"`
	Type  string    `json:"type"` // file, dir, symlink…
	Path  string    `json:"path"`
	Size  int64     `json:"size"`
	Mode  uint32    `json:"mode"`
	Mtime time.Time `json:"mtime"`
}

// Retention is restic forget's keep policy; zero fields keep nothing by
// that rule. A Retention with every field zero is refused (it would forget
// every snapshot).
type Retention struct {
	KeepLast    int `json:"keepLast"`
	KeepDaily   int `json:"keepDaily"`
	KeepWeekly  int `json:"keepWeekly"`
	KeepMonthly int `json:"keepMonthly"`
	KeepYearly  int `json:"keepYearly"`
}

// Diff is what changed between two snapshots.
type Diff struct {
	Added    []string `json:"added"`
	Removed  []string `json:"removed"`
	Modified []string `json:"modified"`
}

// Stats is restic stats of a repository.
type Stats struct {
	TotalSize      int64 `json:"totalSize"`
	TotalFileCount int64 `json:"totalFileCount"`
	SnapshotsCount int64 `json:"snapshotsCount"`
}

// Task is a maintenance task of Restic.Task.
type Task string

// The maintenance tasks.
const (
	TaskUnlock          Task = "unlock"
	TaskCheck           Task = "check"
	TaskPrune           Task = "prune"
	TaskStats           Task = "stats"
	TaskRepairIndex     Task = "repair-index"
	TaskRepairSnapshots Task = "repair-snapshots"
)

// Runner is what the API and the scheduler use of restic. Every method runs
// restic in a helper container at w and removes the container when it
// returns, whatever happened to ctx (a cancelled ctx kills restic: that is
// how a run is stopped). Errors are faults (shared/fault) whose messages
// say what went wrong in the user's terms: "Wrong repository password",
// "Repository unreachable: …", "No space left on the repository's
// device", "Repository not initialized", "Repository is locked by another
// run".
type Runner interface {
	// Init creates the repository; an existing one is not an error
	// (existed reports it) when password opens it.
	Init(ctx context.Context, w Where, r Repo) (existed bool, err error)
	// Test opens the repository (restic cat config).
	Test(ctx context.Context, w Where, r Repo) error
	Backup(ctx context.Context, w Where, r Repo, s Source, progress func(Progress)) (Summary, error)
	// BackupStdin backs up what in gives as the file /filename of a
	// snapshot, with s's tags and host, streamed to restic (never written
	// to the engine's host).
	BackupStdin(ctx context.Context, w Where, r Repo, s Source, filename string, in io.Reader, progress func(Progress)) (Summary, error)
	// Snapshots lists the snapshots with all of tags (none: every one).
	Snapshots(ctx context.Context, w Where, r Repo, tags []string) ([]Snapshot, error)
	// Forget forgets the snapshots with all of tags that p does not keep,
	// pruning after; it returns the ids removed.
	Forget(ctx context.Context, w Where, r Repo, tags []string, p Retention) ([]string, error)
	// ForgetIDs forgets the snapshots given and prunes.
	ForgetIDs(ctx context.Context, w Where, r Repo, ids []string) error
	Ls(ctx context.Context, w Where, r Repo, snapshot, dir string) ([]Node, error)
	// Dump writes one file of a snapshot (a directory: a tar of it) to out.
	Dump(ctx context.Context, w Where, r Repo, snapshot, path string, out io.Writer) error
	Diff(ctx context.Context, w Where, r Repo, a, b string) (Diff, error)
	// Restore writes the snapshot's content onto t, replacing what is there
	// (each target is emptied first, then restored).
	Restore(ctx context.Context, w Where, r Repo, snapshot string, t Target, progress func(Progress)) error
	// Task runs a maintenance task; readData is check's --read-data-subset
	// ("" for none, "10%", "1/5").
	Task(ctx context.Context, w Where, r Repo, t Task, readData string, progress func(Progress)) (Stats, error)
	// ChangePassword adds newPassword as a key and removes the old one.
	ChangePassword(ctx context.Context, w Where, r Repo, newPassword string) error
}
