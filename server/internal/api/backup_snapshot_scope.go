package api

import (
	"context"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/auth"
	"github.com/berth-dev/berth/server/internal/backup"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// Which snapshots a caller may reach. A destination holds the snapshots
// of every environment's configurations (and maybe another install's): a
// caller whose permission holds on every environment reaches all of them,
// as restic lists them; anyone else reaches a snapshot only when Berth can
// tell its environment and the permission holds there. A snapshot out of
// reach is answered as one that does not exist.

// tagEnv is the snapshot tag of the environment of the configuration that
// made it (backupjobs.TagEnv).
const tagEnv = "berth:env="

// snapshotScope is what a request's caller may reach among snapshots.
type snapshotScope struct {
	// all: the permission holds on every environment (an admin, a grant
	// for every environment, or authentication off): every snapshot,
	// another install's and untagged ones too.
	all      bool
	access   auth.Access
	instance string          // this install's backup instance id
	configs  map[int64]int64 // configuration id → its environment
}

// snapshotScopeOf is the scope of the request's caller for perm.
func (s *Server) snapshotScopeOf(c *gin.Context, perm string) (snapshotScope, error) {
	ctx := c.Request.Context()
	instance, err := s.store.BackupInstanceID(ctx)
	if err != nil {
		return snapshotScope{}, err
	}
	ident := identityOf(c)
	if ident == nil || ident.Access.Check(perm, nil) == auth.Allowed {
		return snapshotScope{all: true, instance: instance}, nil
	}
	list, err := s.store.ListBackupConfigs(ctx, store.BackupConfigFilter{})
	if err != nil {
		return snapshotScope{}, err
	}
	configs := make(map[int64]int64, len(list))
	for _, b := range list {
		configs[b.ID] = b.EnvironmentID
	}
	return snapshotScope{access: ident.Access, instance: instance, configs: configs}, nil
}

// environment is the environment snapshot sn belongs to (false: Berth
// cannot tell). Tags are data in the repository, which another install
// may write to: only this install's snapshots (berth:instance) are
// attributed, to the stored configuration of their berth:config tag, or
// when that configuration is gone to their berth:env tag. A tag given
// twice with different values attributes nothing.
func (sc snapshotScope) environment(sn backup.Snapshot) (int64, bool) {
	if inst, ok := onlyTag(sn.Tags, tagInstance); !ok || inst != sc.instance {
		return 0, false
	}
	if v, ok := onlyTag(sn.Tags, tagConfig); ok {
		if id, err := strconv.ParseInt(v, 10, 64); err == nil {
			if env, ok := sc.configs[id]; ok {
				return env, true
			}
		}
	}
	v, ok := onlyTag(sn.Tags, tagEnv)
	if !ok {
		return 0, false
	}
	env, err := strconv.ParseInt(v, 10, 64)
	if err != nil || env <= 0 {
		return 0, false
	}
	return env, true
}

// reaches reports whether the caller holds perm on snapshot sn's
// environment.
func (sc snapshotScope) reaches(sn backup.Snapshot, perm string) bool {
	if sc.all {
		return true
	}
	env, ok := sc.environment(sn)
	return ok && sc.access.Check(perm, &env) == auth.Allowed
}

// onlyTag is the value of the tags with prefix (false: none, or several
// values).
func onlyTag(tags []string, prefix string) (string, bool) {
	value, found := "", false
	for _, t := range tags {
		v, ok := strings.CutPrefix(t, prefix)
		if !ok {
			continue
		}
		if found && v != value {
			return "", false
		}
		value, found = v, true
	}
	return value, found
}

var errSnapshotNotFound = fault.New(fault.NotFound, "Snapshot not found")

// pick finds snapshot id (full, or a prefix of it) among list, among
// those the caller reaches with perm only: one out of reach is not found,
// exactly as one that does not exist.
func (sc snapshotScope) pick(list []backup.Snapshot, id, perm string) (backup.Snapshot, error) {
	var found []backup.Snapshot
	for _, sn := range list {
		if strings.HasPrefix(sn.ID, id) && sc.reaches(sn, perm) {
			found = append(found, sn)
		}
	}
	switch len(found) {
	case 0:
		return backup.Snapshot{}, errSnapshotNotFound
	case 1:
		return found[0], nil
	}
	return backup.Snapshot{}, fault.Invalidf("Snapshot id %s is ambiguous: give more of its digits", id)
}

// reachableSnapshots finds snapshots ids of d among those the caller
// reaches with perm, before restic is asked anything about them (404
// Snapshot not found otherwise). Only this install's snapshots can be in
// reach of a caller whose scope is not all, so only they are listed. A
// caller who reaches everything is not checked (nil: restic finds the ids
// itself, as it always did, with no listing first).
func (s *Server) reachableSnapshots(ctx context.Context, sc snapshotScope, w backup.Where, d store.BackupDestination,
	perm string, ids ...string) ([]backup.Snapshot, error) {
	if sc.all {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, repositoryTimeout)
	defer cancel()
	list, err := s.backup.Snapshots(ctx, w, d.Repo(), []string{tagInstance + sc.instance})
	if err != nil {
		return nil, err
	}
	out := make([]backup.Snapshot, 0, len(ids))
	for _, id := range ids {
		sn, err := sc.pick(list, id, perm)
		if err != nil {
			return nil, err
		}
		out = append(out, sn)
	}
	return out, nil
}

// reachableSnapshotID is snapshot id of d as restic is to be given it:
// for a caller who does not reach every environment, the full id of the
// snapshot found among those it may view (404 Snapshot not found
// otherwise); for anyone else, id as given.
func (s *Server) reachableSnapshotID(c *gin.Context, w backup.Where, d store.BackupDestination, id string) (string, error) {
	sc, err := s.snapshotScopeOf(c, "backups:view")
	if err != nil {
		return "", err
	}
	found, err := s.reachableSnapshots(c.Request.Context(), sc, w, d, "backups:view", id)
	if err != nil || found == nil {
		return id, err
	}
	return found[0].ID, nil
}
