package backup

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// The locks restic leaves behind: the helpers of a Berth that stopped are
// swept, and the locks of a run known to be dead are removed before the
// next run of its repository (removeDeadLocks).

// lockInfo is what restic writes in a lock.
type lockInfo struct {
	Hostname string `json:"hostname"`
	PID      int    `json:"pid"`
}

// removeDeadLocks removes r's locks when every one of them was taken by a
// helper of dead (host names), and reports whether none is left. A lock of
// any other host (another Berth replica's run, restic run by hand) may be
// alive: then only the locks restic itself deems stale are removed,
// restic's own "locked" error tells the run why, and the dead locks are
// looked at again before the next run.
// restic cannot remove one lock: unlock --remove-all removes them all, so
// a lock taken between the listing and the removal would go too; the
// window is one helper's start, after an interrupted run only.
func (x *Restic) removeDeadLocks(ctx context.Context, w Where, r Repo, dead map[string]bool) (bool, error) {
	key := repoKey(w, r)
	var ids []string
	if err := x.exec(ctx, w, r, invocation{args: []string{"list", "locks", "--no-lock"}, stdout: func(l string) {
		if l = strings.TrimSpace(l); l != "" {
			ids = append(ids, l)
		}
	}}); err != nil {
		return false, err
	}
	for _, id := range ids {
		if checkSnapshotID(id) != nil {
			return false, fault.New(fault.Internal, fmt.Sprintf("backup: restic listed a lock named %q", id))
		}
		var raw strings.Builder
		err := x.exec(ctx, w, r, invocation{args: []string{"cat", "lock", id, "--no-lock"}, stdout: func(l string) {
			raw.WriteString(l)
		}})
		if err != nil {
			// Released meanwhile (a live run's), or unreadable: not
			// known to be dead.
			x.log.Warn("backup: the locks of an interrupted run kept: a lock could not be read",
				"env", w.EnvID, "repository", key, "lock", id, "err", err)
			return false, nil
		}
		var li lockInfo
		if err := json.Unmarshal([]byte(raw.String()), &li); err != nil {
			return false, fault.Wrap(fault.Internal, "backup: a lock restic printed is not JSON", err)
		}
		if !dead[li.Hostname] {
			x.log.Warn("backup: the locks of an interrupted run kept: the repository holds a lock of another host",
				"env", w.EnvID, "repository", key, "host", li.Hostname, "pid", li.PID)
			// restic's own rule removes the locks it knows are stale (not
			// refreshed for 30 minutes): those of runs that died elsewhere.
			return false, x.exec(ctx, w, r, invocation{args: []string{"unlock"}})
		}
	}
	if len(ids) > 0 {
		x.log.Info("backup: removing the locks of an interrupted run", "env", w.EnvID, "repository", key, "locks", len(ids))
		if err := x.exec(ctx, w, r, invocation{args: []string{"unlock", "--remove-all"}}); err != nil {
			return false, err
		}
	}
	return true, nil
}

// sweep removes w's owner's backup helpers that no run of this process
// has (left by a Berth that stopped in the middle of a run) and marks
// their repositories' locks stale.
func (x *Restic) sweep(ctx context.Context, w Where) {
	ids, err := w.Client.ContainersLabelled(ctx, map[string]string{engine.HelperLabel: HelperKind, OwnerLabel: owner(w)})
	if err != nil {
		x.log.Warn("backup: listing leftover helpers", "env", w.EnvID, "err", err)
		return
	}
	for _, id := range ids {
		x.mu.Lock()
		live := x.live[id]
		x.mu.Unlock()
		if live {
			continue
		}
		key, host := "", ""
		if raw, _, err := w.Client.InspectContainer(ctx, id); err == nil {
			key, host = labelOf(raw, RepoLabel), labelOf(raw, HostLabel)
			if host == "" {
				// A helper of a Berth before the host name label: the
				// engine's own name for it.
				host = hostnameOf(raw)
			}
		}
		if err := w.Client.RemoveContainer(ctx, id, true); err != nil && !errors.Is(err, engine.ErrNotFound) {
			x.log.Warn("backup: removing a leftover helper", "env", w.EnvID, "container", id, "err", err)
			continue
		}
		x.log.Info("backup: removed a leftover helper", "env", w.EnvID, "container", id, "repository", key)
		if key != "" && host != "" {
			x.markDead(key, host)
		}
	}
}

// markDead records that the helper host of repository key ended before
// restic did, leaving its locks.
func (x *Restic) markDead(key, host string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	l := x.repos[key]
	if l == nil {
		l = &repoLock{sem: make(chan struct{}, 1)}
		x.repos[key] = l
	}
	if l.dead == nil {
		l.dead = map[string]bool{}
	}
	l.dead[host] = true
}

// helperHostname is a new helper's host name: unique, so that the locks
// restic takes in it are told apart from those of every other run.
func helperHostname() string {
	return "berth-backup-" + strings.ToLower(rand.Text()[:16])
}

// hostnameOf returns the host name of a container inspection.
func hostnameOf(raw []byte) string {
	var c struct {
		Config struct {
			Hostname string
		}
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return ""
	}
	return c.Config.Hostname
}
