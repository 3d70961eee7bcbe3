package backup

import (
	"archive/tar"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// output collects a helper's standard output: restic's --json answers,
// whose lines the engine's log stream may split (it cuts long lines), are
// joined back and read as a stream of JSON values.
type output struct{ b strings.Builder }

func (o *output) line(l string) { o.b.WriteString(l) }

// decode calls fn with a decoder over the output.
func (o *output) decode(fn func(*json.Decoder) error) error {
	dec := json.NewDecoder(strings.NewReader(o.b.String()))
	if err := fn(dec); err != nil {
		return fault.Wrap(fault.Internal, "Cannot read restic's answer", err)
	}
	return nil
}

// Init creates the repository; an existing one that password opens is
// not an error (existed).
func (x *Restic) Init(ctx context.Context, w Where, r Repo) (bool, error) {
	existed := false
	err := x.withRepo(ctx, w, &r, func() error {
		err := x.exec(ctx, w, r, invocation{args: []string{"init"}, createRepo: true})
		if err == nil {
			return nil
		}
		var f *fault.Error
		if !errors.As(err, &f) || f.Cause == nil || !alreadyThere(f.Cause.Error()) {
			return err
		}
		if err := x.exec(ctx, w, r, invocation{args: []string{"cat", "config"}}); err != nil {
			return err
		}
		existed = true
		return nil
	})
	return existed, err
}

// alreadyThere tells whether restic init failed because a repository is
// there ("config file already exists"; on S3 "repository master key and
// config already initialized").
func alreadyThere(msg string) bool {
	msg = strings.ToLower(msg)
	return strings.Contains(msg, "already exists") || strings.Contains(msg, "already initialized")
}

// Test opens the repository (restic cat config).
func (x *Restic) Test(ctx context.Context, w Where, r Repo) error {
	return x.withRepo(ctx, w, &r, func() error {
		return x.exec(ctx, w, r, invocation{args: []string{"cat", "config"}})
	})
}

// resticStatus is a line of restic backup --json.
type resticStatus struct {
	MessageType  string   `json:"message_type"`
	PercentDone  float64  `json:"percent_done"`
	TotalFiles   int64    `json:"total_files"`
	FilesDone    int64    `json:"files_done"`
	TotalBytes   int64    `json:"total_bytes"`
	BytesDone    int64    `json:"bytes_done"`
	CurrentFiles []string `json:"current_files"`
	// summary
	FilesNew            int64   `json:"files_new"`
	FilesChanged        int64   `json:"files_changed"`
	FilesUnmodified     int64   `json:"files_unmodified"`
	DataAdded           int64   `json:"data_added"`
	TotalFilesProcessed int64   `json:"total_files_processed"`
	TotalBytesProcessed int64   `json:"total_bytes_processed"`
	TotalDuration       float64 `json:"total_duration"`
	SnapshotID          string  `json:"snapshot_id"`
	// error
	Error struct {
		Message string `json:"message"`
	} `json:"error"`
	During string `json:"during"`
	Item   string `json:"item"`
}

// Backup backs s up: its volumes (read-only at VolumesDir/<name>) and host
// paths (read-only at PathsDir/<path>). A backup that could not read some
// files (restic's exit status 3) still made its snapshot: it succeeds,
// each unread file reported through progress.
func (x *Restic) Backup(ctx context.Context, w Where, r Repo, s Source, progress func(Progress)) (Summary, error) {
	if len(s.Volumes)+len(s.Paths)+len(s.Copied) == 0 {
		return Summary{}, fault.Invalidf("A backup needs at least one volume or path")
	}
	args, err := backupArgs(s)
	if err != nil {
		return Summary{}, err
	}
	for _, e := range s.Exclude {
		if e == "" || strings.ContainsAny(e, "\n\x00") {
			return Summary{}, fault.Invalidf("%q is not a valid exclude pattern", e)
		}
		args = append(args, "--exclude="+e)
	}
	var inv invocation
	for _, v := range s.Volumes {
		if err := checkVolumeName(v); err != nil {
			return Summary{}, err
		}
		inv.volumes = append(inv.volumes, engine.VolumeMount{Volume: v, Target: VolumesDir + "/" + v, ReadOnly: true})
		args = append(args, VolumesDir+"/"+v)
	}
	for _, p := range s.Paths {
		if err := checkHostPath(p); err != nil {
			return Summary{}, err
		}
		inv.binds = append(inv.binds, engine.BindMount{Source: p, Target: sourcePath(p), ReadOnly: true})
		args = append(args, sourcePath(p))
	}
	for _, p := range s.Copied {
		if err := checkHostPath(p); err != nil {
			return Summary{}, err
		}
		if slices.Contains(s.Paths, p) {
			return Summary{}, fault.Invalidf("%s is both mounted and copied", p)
		}
		inv.copies = append(inv.copies, func(out io.Writer) error {
			return writeHostDir(out, p, func(rel, why string) {
				if progress != nil {
					progress(Progress{Message: fmt.Sprintf("%s not copied: %s", path.Join(p, rel), why)})
				}
			})
		})
		args = append(args, sourcePath(p))
	}
	inv.args = args
	inv.okCodes = []int64{3}
	return x.backup(ctx, w, r, inv, progress)
}

// BackupStdin backs up what in gives as the one file /filename of a
// snapshot (restic backup --stdin), with s's tags and host (its volumes,
// paths and excludes are not used). in is streamed to restic through the
// engine's attached exec: it is never written to the engine's host. When
// reading in fails, restic is killed and no snapshot made; the error is
// in's. After a failure, a Read of in in progress may outlast the call
// until in returns: the caller closes it (an io.PipeReader).
func (x *Restic) BackupStdin(ctx context.Context, w Where, r Repo, s Source, filename string, in io.Reader,
	progress func(Progress)) (Summary, error) {
	if filename == "" || strings.ContainsAny(filename, "/\n\x00") || strings.HasPrefix(filename, "-") || filename == "." || filename == ".." {
		return Summary{}, fault.Invalidf("%q is not a valid file name for a backup of an input", filename)
	}
	if in == nil {
		return Summary{}, fault.New(fault.Internal, "backup: no input")
	}
	args, err := backupArgs(s)
	if err != nil {
		return Summary{}, err
	}
	inv := invocation{args: append(args, "--stdin", "--stdin-filename", filename), stdin: in}
	return x.backup(ctx, w, r, inv, progress)
}

// backupArgs are restic backup's arguments for s's host and tags.
func backupArgs(s Source) ([]string, error) {
	args := []string{"backup", "--json"}
	if s.Host != "" {
		if strings.ContainsAny(s.Host, " \t\n\x00") || strings.HasPrefix(s.Host, "-") {
			return nil, fault.Invalidf("%q is not a valid snapshot host", s.Host)
		}
		args = append(args, "--host", s.Host)
	}
	for _, t := range s.Tags {
		if err := checkTag(t); err != nil {
			return nil, err
		}
		args = append(args, "--tag", t)
	}
	return args, nil
}

// backup runs the restic backup of inv, its progress lines given to
// progress, and returns its summary once the snapshot is found.
func (x *Restic) backup(ctx context.Context, w Where, r Repo, inv invocation, progress func(Progress)) (Summary, error) {
	if progress == nil {
		progress = func(Progress) {}
	}
	var sum Summary
	start := time.Now()
	inv.stdout = func(line string) {
		var st resticStatus
		if json.Unmarshal([]byte(line), &st) != nil {
			return
		}
		switch st.MessageType {
		case "status":
			p := Progress{Percent: st.PercentDone, FilesDone: st.FilesDone, TotalFiles: st.TotalFiles,
				BytesDone: st.BytesDone, TotalBytes: st.TotalBytes}
			if len(st.CurrentFiles) > 0 {
				p.CurrentFile = st.CurrentFiles[0]
			}
			progress(p)
		case "error":
			progress(Progress{Message: fmt.Sprintf("%s: %s", st.Item, st.Error.Message)})
		case "summary":
			sum = Summary{SnapshotID: st.SnapshotID, FilesNew: st.FilesNew, FilesChanged: st.FilesChanged,
				FilesUnmodfied: st.FilesUnmodified, DataAdded: st.DataAdded, TotalFiles: st.TotalFilesProcessed,
				TotalBytes: st.TotalBytesProcessed, Duration: time.Duration(st.TotalDuration * float64(time.Second))}
		}
	}
	err := x.withRepo(ctx, w, &r, func() error {
		if err := x.exec(ctx, w, r, inv); err != nil {
			return err
		}
		if checkSnapshotID(sum.SnapshotID) != nil || sum.SnapshotID == "latest" {
			return fault.New(fault.Internal, "restic ended without a snapshot")
		}
		// restic 0.14's summary has the short id.
		snaps, err := x.snapshots(ctx, w, r, []string{"snapshots", "--json", "--", sum.SnapshotID})
		if err != nil {
			return err
		}
		if len(snaps) != 1 {
			return fault.New(fault.Internal, "restic's new snapshot is not in the repository")
		}
		sum.SnapshotID = snaps[0].ID
		return nil
	})
	if err != nil {
		return Summary{}, err
	}
	if sum.Duration == 0 {
		sum.Duration = time.Since(start)
	}
	return sum, nil
}

// resticSnapshot is a snapshot as restic --json prints it.
type resticSnapshot struct {
	ID       string    `json:"id"`
	ShortID  string    `json:"short_id"`
	Time     time.Time `json:"time"`
	Hostname string    `json:"hostname"`
	Paths    []string  `json:"paths"`
	Tags     []string  `json:"tags"`
	Parent   string    `json:"parent"`
	Tree     string    `json:"tree"`
	Username string    `json:"username"`
}

func (s resticSnapshot) snapshot() Snapshot {
	return Snapshot{ID: s.ID, ShortID: s.ShortID, Time: s.Time, Host: s.Hostname, Paths: s.Paths, Tags: s.Tags,
		Parent: s.Parent, Tree: s.Tree, Username: s.Username}
}

// tagFilter is restic's filter for snapshots with all of tags.
func tagFilter(tags []string) ([]string, error) {
	if len(tags) == 0 {
		return nil, nil
	}
	for _, t := range tags {
		if err := checkTag(t); err != nil {
			return nil, err
		}
	}
	return []string{"--tag", strings.Join(tags, ",")}, nil
}

// Snapshots lists the snapshots with all of tags (none: every one),
// oldest first.
func (x *Restic) Snapshots(ctx context.Context, w Where, r Repo, tags []string) ([]Snapshot, error) {
	filter, err := tagFilter(tags)
	if err != nil {
		return nil, err
	}
	var out []Snapshot
	err = x.withRepo(ctx, w, &r, func() error {
		out, err = x.snapshots(ctx, w, r, append([]string{"snapshots", "--json"}, filter...))
		return err
	})
	return out, err
}

func (x *Restic) snapshots(ctx context.Context, w Where, r Repo, args []string) ([]Snapshot, error) {
	var o output
	if err := x.exec(ctx, w, r, invocation{args: args, stdout: o.line}); err != nil {
		return nil, err
	}
	var list []resticSnapshot
	if err := o.decode(func(d *json.Decoder) error { return d.Decode(&list) }); err != nil {
		return nil, err
	}
	out := make([]Snapshot, 0, len(list))
	for _, s := range list {
		out = append(out, s.snapshot())
	}
	return out, nil
}

// Forget forgets the snapshots with all of tags that p does not keep (all
// of them as one group), then prunes; it returns the ids removed.
func (x *Restic) Forget(ctx context.Context, w Where, r Repo, tags []string, p Retention) ([]string, error) {
	if p.KeepLast < 0 || p.KeepDaily < 0 || p.KeepWeekly < 0 || p.KeepMonthly < 0 || p.KeepYearly < 0 {
		return nil, fault.Invalidf("A retention count cannot be negative")
	}
	if p == (Retention{}) {
		return nil, fault.Invalidf("A retention policy must keep something (every count is 0)")
	}
	filter, err := tagFilter(tags)
	if err != nil {
		return nil, err
	}
	args := append([]string{"forget", "--json", "--group-by", ""}, filter...)
	for flag, n := range map[string]int{"--keep-last": p.KeepLast, "--keep-daily": p.KeepDaily,
		"--keep-weekly": p.KeepWeekly, "--keep-monthly": p.KeepMonthly, "--keep-yearly": p.KeepYearly} {
		if n > 0 {
			args = append(args, fmt.Sprintf("%s=%d", flag, n))
		}
	}
	var removed []string
	err = x.withRepo(ctx, w, &r, func() error {
		var o output
		if err := x.exec(ctx, w, r, invocation{args: args, stdout: o.line}); err != nil {
			return err
		}
		var groups []struct {
			Remove []resticSnapshot `json:"remove"`
		}
		if err := o.decode(func(d *json.Decoder) error { return d.Decode(&groups) }); err != nil {
			return err
		}
		for _, g := range groups {
			for _, s := range g.Remove {
				removed = append(removed, s.ID)
			}
		}
		if len(removed) == 0 {
			return nil
		}
		return x.exec(ctx, w, r, invocation{args: []string{"prune"}})
	})
	if err != nil {
		return nil, err
	}
	return removed, nil
}

// ForgetIDs forgets the snapshots given and prunes.
func (x *Restic) ForgetIDs(ctx context.Context, w Where, r Repo, ids []string) error {
	if len(ids) == 0 {
		return fault.Invalidf("No snapshot to forget")
	}
	for _, id := range ids {
		if err := checkSnapshotID(id); err != nil || id == "latest" {
			return fault.Invalidf("%q is not a snapshot id", id)
		}
	}
	return x.withRepo(ctx, w, &r, func() error {
		if err := x.exec(ctx, w, r, invocation{args: append([]string{"forget", "--"}, ids...)}); err != nil {
			return err
		}
		return x.exec(ctx, w, r, invocation{args: []string{"prune"}})
	})
}

// Ls lists the directory dir of the snapshot ("" or "/": its top).
func (x *Restic) Ls(ctx context.Context, w Where, r Repo, snapshot, dir string) ([]Node, error) {
	if dir == "" {
		dir = "/"
	}
	if err := checkSnapshotID(snapshot); err != nil {
		return nil, err
	}
	if err := checkSnapshotPath(dir); err != nil {
		return nil, err
	}
	var nodes []Node
	err := x.withRepo(ctx, w, &r, func() error {
		var o output
		if err := x.exec(ctx, w, r, invocation{args: []string{"ls", "--json", "--", snapshot, dir}, stdout: o.line}); err != nil {
			return err
		}
		return o.decode(func(d *json.Decoder) error {
			for {
				var n struct {
					Node
					StructType string `json:"struct_type"`
				}
				if err := d.Decode(&n); errors.Is(err, io.EOF) {
					return nil
				} else if err != nil {
					return err
				}
				if n.StructType == "node" && n.Path != dir && path.Dir(n.Path) == dir {
					nodes = append(nodes, n.Node)
				}
			}
		})
	})
	return nodes, err
}

// Dump writes the file path of the snapshot (a directory: a tar of it) to
// out. restic writes it to a file of the helper, read back once restic
// ended (the engine's log stream is not binary-safe).
func (x *Restic) Dump(ctx context.Context, w Where, r Repo, snapshot, p string, out io.Writer) error {
	if err := checkSnapshotID(snapshot); err != nil {
		return err
	}
	if err := checkSnapshotPath(p); err != nil || p == "/" {
		return fault.Invalidf("%q is not a file or directory of a snapshot", p)
	}
	return x.withRepo(ctx, w, &r, func() error {
		return x.exec(ctx, w, r, invocation{args: []string{"dump", "--", snapshot, p}, toFile: true,
			after: func(ctx context.Context, id string) error {
				rc, _, err := w.Client.CopyFrom(ctx, id, outFile)
				if err != nil {
					return err
				}
				defer rc.Close()
				tr := tar.NewReader(rc)
				if _, err := tr.Next(); err != nil {
					return fmt.Errorf("backup: reading the dump: %w", err)
				}
				if _, err := io.Copy(out, tr); err != nil {
					return fmt.Errorf("backup: reading the dump: %w", err)
				}
				return nil
			}})
	})
}

// Diff tells what changed from snapshot a to snapshot b (directories end
// with /).
func (x *Restic) Diff(ctx context.Context, w Where, r Repo, a, b string) (Diff, error) {
	for _, id := range []string{a, b} {
		if err := checkSnapshotID(id); err != nil {
			return Diff{}, err
		}
	}
	d := Diff{Added: []string{}, Removed: []string{}, Modified: []string{}}
	err := x.withRepo(ctx, w, &r, func() error {
		var o output
		if err := x.exec(ctx, w, r, invocation{args: []string{"diff", "--json", "--", a, b}, stdout: o.line}); err != nil {
			return err
		}
		return o.decode(func(dec *json.Decoder) error {
			for {
				var c struct {
					MessageType string `json:"message_type"`
					Path        string `json:"path"`
					Modifier    string `json:"modifier"`
				}
				if err := dec.Decode(&c); errors.Is(err, io.EOF) {
					return nil
				} else if err != nil {
					return err
				}
				if c.MessageType != "change" {
					continue
				}
				switch c.Modifier {
				case "+":
					d.Added = append(d.Added, c.Path)
				case "-":
					d.Removed = append(d.Removed, c.Path)
				default:
					d.Modified = append(d.Modified, c.Path)
				}
			}
		})
	})
	return d, err
}

// Restore writes the snapshot's content onto t: each target emptied, then
// restored. The snapshot is read first (the password and the snapshot are
// right, and it holds every source), so that a restore that cannot happen
// empties nothing.
func (x *Restic) Restore(ctx context.Context, w Where, r Repo, snapshot string, t Target, progress func(Progress)) error {
	if progress == nil {
		progress = func(Progress) {}
	}
	if err := checkSnapshotID(snapshot); err != nil {
		return err
	}
	if len(t.Volumes)+len(t.Paths) == 0 {
		return fault.Invalidf("A restore needs at least one volume or path")
	}
	var inv invocation
	var sources, targets []string
	for _, src := range sortedKeys(t.Volumes) {
		dst := t.Volumes[src]
		if err := checkVolumeName(src); err != nil {
			return err
		}
		if err := checkVolumeName(dst); err != nil {
			return err
		}
		at := VolumesDir + "/" + src
		inv.volumes = append(inv.volumes, engine.VolumeMount{Volume: dst, Target: at})
		sources, targets = append(sources, at), append(targets, at)
	}
	for _, src := range sortedKeys(t.Paths) {
		dst := t.Paths[src]
		for _, p := range []string{src, dst} {
			if err := checkHostPath(p); err != nil {
				return err
			}
			if strings.ContainsAny(p, "*?[\\") {
				return fault.Invalidf("A restored path cannot hold * ? [ or \\: %q", p)
			}
		}
		at := sourcePath(src)
		inv.binds = append(inv.binds, engine.BindMount{Source: dst, Target: at, Create: true})
		sources, targets = append(sources, at), append(targets, at)
	}
	return x.withRepo(ctx, w, &r, func() error {
		snaps, err := x.snapshots(ctx, w, r, []string{"snapshots", "--json", "--", snapshot})
		if err != nil {
			return err
		}
		if len(snaps) != 1 {
			return fault.New(fault.NotFound, "Snapshot not found")
		}
		for _, s := range sources {
			if !holds(snaps[0].Paths, s) {
				return fault.Invalidf("The snapshot does not hold %s", strings.TrimPrefix(strings.TrimPrefix(s, VolumesDir+"/"), PathsDir))
			}
		}
		progress(Progress{Message: "emptying the targets"})
		empty := inv
		empty.helper, empty.args = true, append([]string{"empty"}, targets...)
		if err := x.exec(ctx, w, r, empty); err != nil {
			return err
		}
		restore := inv
		restore.args = []string{"restore", "--target", "/"}
		for _, s := range sources {
			restore.args = append(restore.args, "--include", s)
		}
		restore.args = append(restore.args, "--", snaps[0].ID)
		restore.stdout = func(line string) { progress(Progress{Message: line}) }
		if err := x.exec(ctx, w, r, restore); err != nil {
			return err
		}
		progress(Progress{Percent: 1, Message: "restored"})
		return nil
	})
}

// holds reports whether a snapshot of paths holds p.
func holds(paths []string, p string) bool {
	for _, s := range paths {
		if s == p || strings.HasPrefix(p, s+"/") {
			return true
		}
	}
	return false
}
