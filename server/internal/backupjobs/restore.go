package backupjobs

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/berth-dev/berth/server/internal/backup"
	"github.com/berth-dev/berth/server/internal/hostpath"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// Restore modes.
const (
	InPlace     = "in-place"
	NewLocation = "new-location"
)

// RestoreSpec is what a restore writes where.
type RestoreSpec struct {
	DestinationID int64
	SnapshotID    string
	Mode          string // in-place | new-location
	// EnvironmentID is where to restore (0: the snapshot's own).
	EnvironmentID int64
	// TargetType and TargetName: the container or stack restored (in
	// place: the snapshot's own when ""; to a new location: the new name).
	TargetType string
	TargetName string
	// TargetPath is where host paths go for a new location (each under it
	// at its original path; a stack's directory at TargetPath itself).
	TargetPath string
	// Volumes limits the restore to these snapshot volumes (nil: all).
	Volumes []string
	// VolumeTargets names the volume each snapshot volume is written to
	// (new location; default: renamed after the new target).
	VolumeTargets map[string]string
}

// ErrStopped is the error of a restore stopped by StopRestore.
var ErrStopped = errors.New("restore stopped")

// snapshotOf returns the snapshot id (full or short) of destination destID.
func (s *Service) snapshotOf(ctx context.Context, w backup.Where, r backup.Repo, id string) (backup.Snapshot, error) {
	list, err := s.o.Runner.Snapshots(ctx, w, r, nil)
	if err != nil {
		return backup.Snapshot{}, err
	}
	for _, sn := range list {
		if sn.ID == id || sn.ShortID == id || (len(id) >= 8 && strings.HasPrefix(sn.ID, id)) {
			return sn, nil
		}
	}
	return backup.Snapshot{}, fault.New(fault.NotFound, "Snapshot not found")
}

// contents splits a snapshot's paths into its volumes and host paths.
func contents(sn backup.Snapshot) (volumes, paths []string) {
	for _, p := range sn.Paths {
		switch {
		case strings.HasPrefix(p, backup.VolumesDir+"/"):
			volumes = append(volumes, strings.TrimPrefix(p, backup.VolumesDir+"/"))
		case strings.HasPrefix(p, backup.PathsDir+"/"):
			paths = append(paths, strings.TrimPrefix(p, backup.PathsDir))
		}
	}
	sort.Strings(volumes)
	sort.Strings(paths)
	return volumes, paths
}

// repoAt opens destination destID to be used from environment envID (a
// local repository only from its own).
func (s *Service) repoAt(ctx context.Context, destID, envID int64) (backup.Repo, backup.Where, store.Environment, error) {
	if s.o.Runner == nil || s.o.Repo == nil {
		return backup.Repo{}, backup.Where{}, store.Environment{}, errUnavailable
	}
	r, destEnv, err := s.o.Repo(ctx, destID)
	if err != nil {
		return backup.Repo{}, backup.Where{}, store.Environment{}, err
	}
	if envID == 0 {
		envID = destEnv
	}
	if r.Type == backup.TypeLocal && destEnv != envID {
		return backup.Repo{}, backup.Where{}, store.Environment{}, fault.Invalidf(
			"A local repository is on the host of environment %d: it can be restored only there", destEnv)
	}
	w, env, err := s.where(ctx, envID)
	if err != nil {
		return backup.Repo{}, backup.Where{}, store.Environment{}, err
	}
	return r, w, env, nil
}

// snapshotEnv is the environment a snapshot was made on (0: not known).
func snapshotEnv(sn backup.Snapshot) int64 {
	id, _ := strconv.ParseInt(tagValue(sn.Tags, TagEnv), 10, 64)
	return id
}

// plan is a restore worked out: what goes where and which containers stop.
type plan struct {
	sn      backup.Snapshot
	target  backup.Target
	stop    []engine.Container // the target's running containers (in place)
	volumes []string           // volumes written
	create  map[string]string  // new volumes to create → the compose project that owns them ("" none)
	// stackDir is where a restore of a stack to a new name writes the
	// stack's directory, when that is the new stack's own: it is recorded
	// as a Berth stack then.
	stackDir string
	// onBerth are the snapshot paths Berth writes on its own host itself
	// (a stack's directory, the engine being elsewhere) → where; they are
	// not in target.Paths.
	onBerth map[string]string
}

// Restore writes snapshot spec.SnapshotID back: in place (the target's
// running containers stopped, restored onto the same volumes and paths,
// started again whatever happens) or to a new location (new volumes and
// paths, the originals untouched). Volumes that a running container other
// than the target's uses are refused (a conflict naming them).
func (s *Service) Restore(ctx context.Context, spec RestoreSpec, actor Actor, progress func(Event)) (err error) {
	if progress == nil {
		progress = func(Event) {}
	}
	r, w, env, err := s.repoAt(ctx, spec.DestinationID, spec.EnvironmentID)
	if err != nil {
		return err
	}
	progress(Event{Phase: "resolve", Message: "Reading the snapshot"})
	sn, err := s.snapshotOf(ctx, w, r, spec.SnapshotID)
	if err != nil {
		return err
	}
	if tagValue(sn.Tags, TagType) == store.BackupBerth {
		return errSelfRestore
	}
	if spec.EnvironmentID == 0 && snapshotEnv(sn) != 0 && r.Type != backup.TypeLocal {
		// A remote repository restores onto the snapshot's own environment.
		if w, env, err = s.where(ctx, snapshotEnv(sn)); err != nil {
			return err
		}
	}
	p, err := s.plan(ctx, w.Client, env, sn, spec)
	if err != nil {
		return err
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.mu.Lock()
	if _, busy := s.restores[sn.ID]; busy {
		s.mu.Unlock()
		return fault.New(fault.Conflict, "A restore of this snapshot is already running")
	}
	s.restores[sn.ID] = restoring{cancel: cancel, envID: env.ID}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.restores, sn.ID)
		s.mu.Unlock()
	}()

	envID, destID := env.ID, spec.DestinationID
	run := store.BackupRun{DestinationID: &destID, EnvironmentID: &envID, Kind: store.BackupKindRestore,
		Status: store.BackupRunning, SnapshotID: sn.ID, Node: s.o.Node}
	if err := s.o.Store.AddBackupRun(context.WithoutCancel(ctx), &run); err != nil {
		return err
	}
	defer func() {
		run.Status, run.Message = store.BackupSuccess, "Restored"
		switch {
		case err != nil && ctx.Err() != nil:
			run.Status, run.Message, err = store.BackupStopped, "Restore stopped", ErrStopped
		case err != nil:
			run.Status, run.Message = store.BackupFailed, message(err)
		}
		fctx := context.WithoutCancel(ctx)
		if ferr := s.o.Store.FinishBackupRun(fctx, &run); ferr != nil {
			s.o.Log.Error("restore run not recorded", "err", ferr)
		}
		e := store.AuditEntry{UserID: actor.UserID, Username: actor.Username, EnvironmentID: &envID, IP: actor.IP,
			Action: "backup.restore", EntityType: "backup", EntityID: sn.ShortID, EntityName: spec.TargetName,
			Description: fmt.Sprintf("Restore of snapshot %s (%s): %s", short(sn.ID), spec.Mode, run.Status)}
		if aerr := s.o.Store.AddAudit(fctx, &e); aerr != nil {
			s.o.Log.Error("restore audit entry not written", "err", aerr)
		}
	}()

	// A stack's directory Berth writes on its host is read from the
	// snapshot first: refused content stops the restore before anything
	// is written or stopped.
	staged := map[string]string{} // target → staging directory
	defer func() {
		for _, dir := range staged {
			if rerr := os.RemoveAll(dir); rerr != nil {
				s.o.Log.Warn("restore: a staging directory not removed", "dir", dir, "err", rerr)
			}
		}
	}()
	for _, src := range slices.Sorted(maps.Keys(p.onBerth)) {
		// Where the target leads (plan confined it there): a stack
		// directory that is a symbolic link is replaced where it points.
		to, err := hostpath.Resolve(p.onBerth[src])
		if err != nil {
			return fmt.Errorf("restore: %w", err)
		}
		// Still "resolve": a refusal here is the answer to the request
		// (4xx), not a restore that failed.
		progress(Event{Phase: "resolve", Message: fmt.Sprintf("Reading the stack directory %s from the snapshot", src)})
		dir, err := s.stageDir(ctx, w, r, sn, src, to)
		if err != nil {
			return err
		}
		staged[to] = dir
	}

	c := w.Client
	for name, project := range p.create {
		vs := engine.VolumeSpec{Name: name}
		if project != "" {
			vs.Labels = map[string]string{engine.ComposeProjectLabel: project,
				"com.docker.compose.volume": strings.TrimPrefix(name, project+"_")}
		}
		if _, err := c.CreateVolume(ctx, vs); err != nil {
			return fmt.Errorf("create volume %s: %w", name, err)
		}
	}
	if len(p.create) > 0 {
		// A restore to a new location that fails leaves no half-written
		// volumes behind.
		defer func() {
			if err == nil {
				return
			}
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), restartTimeout)
			defer cancel()
			for name := range p.create {
				if rerr := c.RemoveVolume(rctx, name, true); rerr != nil {
					s.o.Log.Warn("restore: volume not removed after a failure", "volume", name, "err", rerr)
				}
			}
		}()
	}
	var ids []string
	for _, ct := range p.stop {
		ids = append(ids, ct.ID)
	}
	restart := func() error { return nil }
	if len(ids) > 0 {
		progress(Event{Phase: "stop", Message: fmt.Sprintf("Stopping %d container(s)", len(ids))})
		restart = s.stopAll(ctx, c, ids, progress, func(stopped []string) {
			if err := s.o.Store.SetBackupRunStopped(context.WithoutCancel(ctx), run.ID, stopped); err != nil {
				s.o.Log.Error("restore: the stopped containers not recorded", "run", run.ID, "err", err)
			}
		})
	}
	defer func() {
		if rerr := restart(); rerr != nil && err == nil {
			err = rerr
		}
	}()
	progress(Event{Phase: "restore", Message: fmt.Sprintf("Restoring %s", list(append(append(append([]string{}, p.volumes...),
		mapKeys(p.target.Paths)...), mapKeys(p.onBerth)...)))})
	if len(p.target.Volumes)+len(p.target.Paths) > 0 {
		if err := s.o.Runner.Restore(ctx, w, r, sn.ID, p.target, func(pr backup.Progress) {
			q := pr
			progress(Event{Phase: "restore", Progress: &q})
		}); err != nil {
			return err
		}
	}
	for _, to := range slices.Sorted(maps.Keys(staged)) {
		if err := swapIn(staged[to], to); err != nil {
			return fmt.Errorf("restore: the stack directory %s: %w", to, err)
		}
		delete(staged, to)
		progress(Event{Phase: "restore", Message: fmt.Sprintf("Stack directory %s written on the Berth host", to)})
	}
	if p.stackDir != "" && s.o.RecordStack != nil {
		// The data is back either way: a stack not recorded is said, not
		// a failed restore.
		orig := tagValue(sn.Tags, TagTarget)
		if rerr := s.o.RecordStack(ctx, env, spec.TargetName, p.stackDir, snapshotEnv(sn), orig); rerr != nil {
			progress(Event{Phase: "stack", Message: fmt.Sprintf("Not recorded as a Berth stack: %s", message(rerr))})
		} else {
			progress(Event{Phase: "stack", Message: fmt.Sprintf("Recorded as stack '%s' (not started)", spec.TargetName)})
		}
	}
	return nil
}

func mapKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+" → "+v)
	}
	sort.Strings(out)
	return out
}

// plan works out spec on env's engine c.
func (s *Service) plan(ctx context.Context, c *engine.Client, env store.Environment, sn backup.Snapshot, spec RestoreSpec) (plan, error) {
	p := plan{sn: sn, target: backup.Target{Volumes: map[string]string{}, Paths: map[string]string{}}, create: map[string]string{},
		onBerth: map[string]string{}}
	volumes, paths := contents(sn)
	if spec.Volumes != nil {
		var keep []string
		for _, v := range volumes {
			for _, want := range spec.Volumes {
				if v == want {
					keep = append(keep, v)
				}
			}
		}
		for _, want := range spec.Volumes {
			found := false
			for _, v := range volumes {
				found = found || v == want
			}
			if !found {
				return plan{}, fault.Invalidf("The snapshot holds no volume '%s'", want)
			}
		}
		volumes = keep
	}
	origType, origName := tagValue(sn.Tags, TagType), tagValue(sn.Tags, TagTarget)
	ttype := spec.TargetType
	if ttype == "" {
		ttype = origType
	}
	if ttype != "" && ttype != store.BackupContainer && ttype != store.BackupStack {
		return plan{}, fault.Invalidf("Invalid targetType %q (container or stack)", ttype)
	}
	list, err := c.ListContainers(ctx, true)
	if err != nil {
		return plan{}, err
	}
	switch spec.Mode {
	case InPlace:
		name := spec.TargetName
		if name == "" {
			name = origName
		}
		for _, v := range volumes {
			p.target.Volumes[v] = v
		}
		for _, hp := range paths {
			if !onBerthHost(env, sn, hp) {
				p.target.Paths[hp] = hp
				continue
			}
			// Written by Berth on its host, where the snapshot says: only
			// where stack files of env may be.
			if err := s.confineStackDir(ctx, env, hp); err != nil {
				return plan{}, err
			}
			p.onBerth[hp] = hp
		}
		switch ttype {
		case store.BackupContainer:
			if ct, ok := containerNamed(list, name); ok && ct.State == "running" {
				p.stop = append(p.stop, ct)
			}
		case store.BackupStack:
			for _, ct := range projectContainers(list, name) {
				if ct.State == "running" {
					p.stop = append(p.stop, ct)
				}
			}
		}
	case NewLocation:
		if spec.TargetName == "" {
			return plan{}, fault.Invalidf("targetName is required to restore to a new location")
		}
		if !engine.ValidName(spec.TargetName) {
			return plan{}, fault.Invalidf("Invalid targetName %q", spec.TargetName)
		}
		if spec.TargetName == origName {
			return plan{}, fault.Invalidf("A new location needs a name other than '%s'", origName)
		}
		for _, v := range volumes {
			to := spec.VolumeTargets[v]
			project := ""
			if to == "" {
				to = renamed(v, origType, origName, spec.TargetName)
				if ttype == store.BackupStack {
					project = spec.TargetName
				}
			}
			if !engine.ValidName(to) {
				return plan{}, fault.Invalidf("Invalid volume name %q", to)
			}
			if _, err := c.InspectVolume(ctx, to); err == nil {
				return plan{}, fault.New(fault.Conflict, fmt.Sprintf("Volume '%s' exists: a restore to a new location does not overwrite", to))
			}
			p.target.Volumes[v] = to
			p.create[to] = project
		}
		for _, hp := range paths {
			to := ""
			switch {
			case spec.TargetPath != "" && origType == store.BackupStack && len(paths) == 1:
				to = spec.TargetPath
			case spec.TargetPath != "":
				to = filepath.Join(spec.TargetPath, hp)
			case origType == store.BackupStack && path.Base(hp) == origName:
				to = filepath.Join(filepath.Dir(hp), spec.TargetName)
				if ttype == store.BackupStack {
					p.stackDir = to
				}
			default:
				return plan{}, fault.Invalidf("targetPath is required to restore the host path %s to a new location", hp)
			}
			if !filepath.IsAbs(to) {
				return plan{}, fault.Invalidf("targetPath must be absolute")
			}
			// The helper (or Berth) writes there as root: a new location is
			// a place Berth may write stack files in (its stacks directory,
			// the stack roots an admin allowed), on Berth's own host only,
			// where the path can be resolved.
			onBerth := onBerthHost(env, sn, hp)
			if (!Local(env) && !onBerth) || s.o.PathPolicy == nil {
				return plan{}, fault.Invalidf("A host path can be restored to a new location only on Berth's own host; restore it in place, or restore the volumes")
			}
			pol, err := s.o.PathPolicy(ctx, env.ID)
			if err != nil {
				return plan{}, err
			}
			if _, err := pol.Confine("targetPath", to, hostpath.Dir); err != nil {
				return plan{}, err
			}
			if e := s.exists(ctx, c, env, "path", to, onBerth); e != nil && *e {
				return plan{}, fault.New(fault.Conflict, fmt.Sprintf("Path '%s' exists: a restore to a new location does not overwrite", to))
			}
			if onBerth {
				p.onBerth[hp] = to
				continue
			}
			p.target.Paths[hp] = to
		}
	default:
		return plan{}, fault.Invalidf("Invalid mode %q (in-place or new-location)", spec.Mode)
	}
	if len(p.target.Volumes) == 0 && len(p.target.Paths) == 0 && len(p.onBerth) == 0 {
		return plan{}, fault.Invalidf("Nothing to restore")
	}
	for _, to := range p.target.Volumes {
		p.volumes = append(p.volumes, to)
	}
	sort.Strings(p.volumes)
	// Volumes in use by a running container the restore does not stop.
	stopping := map[string]bool{}
	for _, ct := range p.stop {
		stopping[ct.ID] = true
	}
	var users []string
	for _, ct := range list {
		if ct.State != "running" || stopping[ct.ID] {
			continue
		}
		for _, m := range ct.Mounts {
			if m.Type != "volume" {
				continue
			}
			for _, to := range p.volumes {
				if m.Name == to {
					users = append(users, fmt.Sprintf("%s (uses %s)", ct.Name, to))
				}
			}
		}
	}
	if len(users) > 0 {
		return plan{}, fault.New(fault.Conflict, "Volumes in use by running containers outside the restore target: "+strings.Join(users, ", "))
	}
	return p, nil
}

// renamed is volume v of target origName renamed after target name: a
// compose volume's project prefix replaced, else name_ prefixed.
func renamed(v, origType, origName, name string) string {
	if origType == store.BackupStack {
		if rest, ok := strings.CutPrefix(v, origName+"_"); ok {
			return name + "_" + rest
		}
	}
	return name + "_" + v
}
