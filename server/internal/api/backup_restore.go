package api

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"sync"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/auth"
	"github.com/berth-dev/berth/server/internal/backupjobs"
	"github.com/berth-dev/berth/shared/fault"
)

// snapshotIDPattern is a restic snapshot id, short or full.
var snapshotIDPattern = regexp.MustCompile(`^[0-9a-f]{8,64}$`)

// restorePreviewRequest is the body of POST /api/backup/restore/preview.
type restorePreviewRequest struct {
	DestinationID  int64  `json:"destinationId"`
	SnapshotID     string `json:"snapshotId"`
	IncludeTargets bool   `json:"includeTargets"`
	TargetEnvID    int64  `json:"targetEnvId"`
}

// checkSnapshotRef checks a destination id and snapshot id pair.
func checkSnapshotRef(destID int64, snapshot string) error {
	var issues []string
	if destID <= 0 {
		issues = append(issues, "destinationId is required")
	}
	if snapshot == "" {
		issues = append(issues, "snapshotId is required")
	} else if !snapshotIDPattern.MatchString(snapshot) {
		issues = append(issues, "snapshotId is not a snapshot id")
	}
	if len(issues) > 0 {
		return fault.Invalidf("%s", strings.Join(issues, "; "))
	}
	return nil
}

func (s *Server) previewRestore(c *gin.Context) error {
	var req restorePreviewRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	if err := checkSnapshotRef(req.DestinationID, req.SnapshotID); err != nil {
		return err
	}
	if req.TargetEnvID != 0 {
		if err := mayReach(c, "backups:view", &req.TargetEnvID); err != nil {
			return err
		}
	}
	if s.backups == nil {
		return errBackupsUnavailable
	}
	if sn, _, err := s.snapshotInReach(c, "backups:view", req.DestinationID, req.SnapshotID); err != nil {
		return err
	} else if sn != "" {
		req.SnapshotID = sn
	}
	p, err := s.backups.Preview(c.Request.Context(), req.DestinationID, req.SnapshotID, req.IncludeTargets, req.TargetEnvID)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, p)
}

// volumeDestinationJSON names where one snapshot volume is restored.
type volumeDestinationJSON struct {
	Source string `json:"source"`
	Target string `json:"target"`
}

// restoreRequest is the body of POST /api/backup/restore.
type restoreRequest struct {
	DestinationID      int64                   `json:"destinationId"`
	SnapshotID         string                  `json:"snapshotId"`
	Mode               string                  `json:"mode"` // in-place | new-location
	TargetType         string                  `json:"targetType"`
	Volumes            []string                `json:"volumes"`
	EnvironmentID      int64                   `json:"environmentId"`
	ConfirmOverwrite   bool                    `json:"confirmOverwrite"`
	TargetPath         string                  `json:"targetPath"`
	TargetName         string                  `json:"targetName"`
	PostRestore        string                  `json:"postRestore"`
	VolumeDestinations []volumeDestinationJSON `json:"volumeDestinations"`
}

func (req restoreRequest) spec() (backupjobs.RestoreSpec, error) {
	if err := checkSnapshotRef(req.DestinationID, req.SnapshotID); err != nil {
		return backupjobs.RestoreSpec{}, err
	}
	mode := req.Mode
	if mode == "" {
		mode = backupjobs.InPlace
	}
	var issues []string
	switch mode {
	case backupjobs.InPlace:
		if !req.ConfirmOverwrite {
			issues = append(issues, "an in-place restore overwrites the current data: confirmOverwrite must be true")
		}
	case backupjobs.NewLocation:
		if req.TargetName == "" {
			issues = append(issues, "targetName is required for a restore to a new location")
		}
	default:
		issues = append(issues, "mode is in-place or new-location")
	}
	if req.PostRestore != "" && req.PostRestore != "none" && req.PostRestore != "start" {
		issues = append(issues, "postRestore is not supported (the target's containers are started again after an in-place restore)")
	}
	spec := backupjobs.RestoreSpec{DestinationID: req.DestinationID, SnapshotID: req.SnapshotID, Mode: mode,
		EnvironmentID: req.EnvironmentID, TargetType: req.TargetType, TargetName: req.TargetName, TargetPath: req.TargetPath,
		Volumes: req.Volumes}
	if len(req.VolumeDestinations) > 0 {
		spec.VolumeTargets = map[string]string{}
		for _, v := range req.VolumeDestinations {
			if v.Source == "" || v.Target == "" {
				issues = append(issues, "each volumeDestinations item has a source and a target")
				break
			}
			spec.VolumeTargets[v.Source] = v.Target
		}
	}
	if len(issues) > 0 {
		return backupjobs.RestoreSpec{}, fault.Invalidf("Invalid restore request: %s", strings.Join(issues, "; "))
	}
	return spec, nil
}

// restoreBackup restores a snapshot, streaming "progress" events and a
// "result" event. Refusals found before anything is written (a bad
// request, volumes in use) answer their status instead of a stream.
func (s *Server) restoreBackup(c *gin.Context) error {
	var req restoreRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	if req.EnvironmentID != 0 {
		if err := mayReach(c, "backups:manage", &req.EnvironmentID); err != nil {
			return err
		}
	}
	spec, err := req.spec()
	if err != nil {
		return err
	}
	if s.backups == nil {
		return errBackupsUnavailable
	}
	// A caller out of some environment's reach restores only a snapshot
	// it may view, onto an environment it manages: the snapshot's own one
	// named, where the restore would otherwise find it from the tags.
	sn, env, err := s.snapshotInReach(c, "backups:manage", spec.DestinationID, spec.SnapshotID)
	if err != nil {
		return err
	}
	if sn != "" {
		spec.SnapshotID = sn
		if spec.EnvironmentID == 0 {
			spec.EnvironmentID = env
			if err := mayReach(c, "backups:manage", &env); err != nil {
				return err
			}
		}
	}
	actor := s.actorOf(c)
	events := make(chan backupjobs.Event, 256)
	started := make(chan struct{})
	var once sync.Once
	done := make(chan error, 1)
	go func() {
		// The restore belongs to the server: a client that leaves does
		// not stop it (POST /api/backup/restore/stop does).
		done <- s.backups.Restore(context.WithoutCancel(c.Request.Context()), spec, actor, func(ev backupjobs.Event) {
			if ev.Phase != "resolve" {
				once.Do(func() { close(started) })
			}
			select {
			case events <- ev:
			default:
			}
		})
	}()
	// Wait until the restore starts writing or is refused.
	select {
	case err := <-done:
		return err
	case <-started:
	}
	relayProgress(c, events, done, func(err error) any {
		switch {
		case err == nil:
			return map[string]any{"status": "success", "message": "Restored"}
		case errors.Is(err, backupjobs.ErrStopped):
			return map[string]any{"status": "stopped", "message": "Restore stopped"}
		}
		return map[string]any{"status": "error", "message": errorText(err), "error": errorText(err)}
	})
	return nil
}

// snapshotInReach finds, for a caller who does not hold perm on every
// environment, snapshot id of destination destID among those it may view:
// its full id and its environment (404 Snapshot not found otherwise, as
// for an unknown snapshot). For anyone else it checks nothing and answers
// "" (the restore finds the snapshot itself).
func (s *Server) snapshotInReach(c *gin.Context, perm string, destID int64, id string) (string, int64, error) {
	sc, err := s.snapshotScopeOf(c, perm)
	if err != nil || sc.all {
		return "", 0, err
	}
	ctx := c.Request.Context()
	d, err := s.backupDestinationByID(ctx, destID)
	if err != nil {
		return "", 0, err
	}
	w, err := s.backupWhere(ctx, d)
	if err != nil {
		return "", 0, err
	}
	found, err := s.reachableSnapshots(ctx, sc, w, d, "backups:view", id)
	if err != nil {
		return "", 0, err
	}
	env, _ := sc.environment(found[0])
	return found[0].ID, env, nil
}

// stopRestoreRequest is the body of POST /api/backup/restore/stop.
type stopRestoreRequest struct {
	SnapshotID    string `json:"snapshotId"`
	EnvironmentID int64  `json:"environmentId"`
}

func (s *Server) stopRestore(c *gin.Context) error {
	var req stopRestoreRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	if req.SnapshotID != "" && !snapshotIDPattern.MatchString(req.SnapshotID) {
		return fault.Invalidf("Invalid snapshotId")
	}
	if req.EnvironmentID != 0 {
		if err := mayReach(c, "backups:manage", &req.EnvironmentID); err != nil {
			return err
		}
	}
	// Without snapshotId every restore stops, every environment's: only
	// for a caller who manages backups on all of them.
	if ident := identityOf(c); req.SnapshotID == "" && req.EnvironmentID == 0 && ident != nil &&
		ident.Access.Check("backups:manage", nil) != auth.Allowed {
		return fault.Invalidf("snapshotId is required: stopping every restore needs backups:manage on every environment")
	}
	// Only the restores of environments the caller manages backups on: one
	// of another environment is not stopped, and not told apart from none.
	ident := identityOf(c)
	may := func(envID int64) bool {
		return ident == nil || ident.Access.Check("backups:manage", &envID) == auth.Allowed
	}
	stopped := false
	if s.backups != nil {
		stopped = s.backups.StopRestore(req.SnapshotID, req.EnvironmentID, may)
	}
	return writeJSON(c, http.StatusOK, map[string]any{"success": true, "stopped": stopped})
}
