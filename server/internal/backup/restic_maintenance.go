package backup

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"

	"github.com/berth-dev/berth/shared/fault"
)

// readDataSubset is check --read-data-subset's value: n% or n/t.
var readDataSubset = regexp.MustCompile(`^(\d{1,3}(\.\d{1,3})?%|\d{1,4}/\d{1,4})$`)

// Task runs a maintenance task. TaskUnlock removes every lock (run it only
// when no other restic uses the repository); TaskRepairIndex is restic
// 0.14's rebuild-index; TaskStats answers the repository's statistics.
func (x *Restic) Task(ctx context.Context, w Where, r Repo, t Task, readData string, progress func(Progress)) (Stats, error) {
	if progress == nil {
		progress = func(Progress) {}
	}
	if readData != "" && (t != TaskCheck || !readDataSubset.MatchString(readData)) {
		return Stats{}, fault.Invalidf("--read-data-subset is for check only, as n%% or n/t: %q", readData)
	}
	lines := func(line string) { progress(Progress{Message: line}) }
	var args []string
	switch t {
	case TaskUnlock:
		args = []string{"unlock", "--remove-all"}
	case TaskCheck:
		args = []string{"check"}
		if readData != "" {
			args = append(args, "--read-data-subset="+readData)
		}
	case TaskPrune:
		args = []string{"prune"}
	case TaskRepairIndex:
		args = []string{"rebuild-index"}
	case TaskRepairSnapshots:
		args = []string{"repair", "snapshots", "--forget"}
	case TaskStats:
		var st Stats
		err := x.withRepo(ctx, w, &r, func() error {
			var o output
			if err := x.exec(ctx, w, r, invocation{args: []string{"stats", "--json", "--mode", "raw-data"}, stdout: o.line}); err != nil {
				return err
			}
			var s struct {
				TotalSize      int64 `json:"total_size"`
				TotalFileCount int64 `json:"total_file_count"`
				SnapshotsCount int64 `json:"snapshots_count"`
			}
			if err := o.decode(func(d *json.Decoder) error { return d.Decode(&s) }); err != nil {
				return err
			}
			st = Stats{TotalSize: s.TotalSize, TotalFileCount: s.TotalFileCount, SnapshotsCount: s.SnapshotsCount}
			if st.SnapshotsCount == 0 {
				// restic 0.14's stats does not count them.
				snaps, err := x.snapshots(ctx, w, r, []string{"snapshots", "--json"})
				if err != nil {
					return err
				}
				st.SnapshotsCount = int64(len(snaps))
			}
			return nil
		})
		return st, err
	default:
		return Stats{}, fault.Invalidf("Unknown maintenance task %q", t)
	}
	err := x.withRepo(ctx, w, &r, func() error {
		return x.exec(ctx, w, r, invocation{args: args, stdout: lines})
	})
	var f *fault.Error
	if t == TaskRepairSnapshots && errors.As(err, &f) && f.Cause != nil && strings.Contains(f.Cause.Error(), "unknown command") {
		return Stats{}, fault.Wrap(fault.Unavailable, "This restic cannot repair snapshots (restic 0.16 or later can)", err)
	}
	return Stats{}, err
}

// ChangePassword adds newPassword as a key of the repository, then removes
// the key r.Password opened it with.
func (x *Restic) ChangePassword(ctx context.Context, w Where, r Repo, newPassword string) error {
	if newPassword == "" {
		return fault.Invalidf("The new password is empty")
	}
	if newPassword == r.Password {
		return fault.Invalidf("The new password is the current one")
	}
	return x.withRepo(ctx, w, &r, func() error {
		var o output
		if err := x.exec(ctx, w, r, invocation{args: []string{"key", "list", "--json"}, stdout: o.line}); err != nil {
			return err
		}
		var keys []struct {
			Current bool   `json:"current"`
			ID      string `json:"id"`
		}
		if err := o.decode(func(d *json.Decoder) error { return d.Decode(&keys) }); err != nil {
			return err
		}
		current := ""
		for _, k := range keys {
			if k.Current {
				current = k.ID
			}
		}
		if current == "" || checkSnapshotID(current) != nil {
			return fault.New(fault.Internal, "restic did not tell the key the password opens")
		}
		if err := x.exec(ctx, w, r, invocation{args: []string{"key", "add", "--new-password-file", secretsDir + "/new-password"},
			secrets: map[string]string{secretsDir + "/new-password": newPassword}}); err != nil {
			return err
		}
		next := r
		next.Password = newPassword
		return x.exec(ctx, w, next, invocation{args: []string{"key", "remove", "--", current}})
	})
}
