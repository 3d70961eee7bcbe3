package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/auth"
	"github.com/berth-dev/berth/server/internal/backupjobs"
	"github.com/berth-dev/berth/server/internal/schedule"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// backupRetentionJSON is a configuration's keep policy.
type backupRetentionJSON struct {
	KeepLast    int `json:"keepLast"`
	KeepDaily   int `json:"keepDaily"`
	KeepWeekly  int `json:"keepWeekly"`
	KeepMonthly int `json:"keepMonthly"`
	KeepYearly  int `json:"keepYearly"`
}

// backupConfigJSON is a backup configuration as the API answers it.
type backupConfigJSON struct {
	ID               int64               `json:"id"`
	Name             string              `json:"name"`
	Type             string              `json:"type"`
	TargetName       string              `json:"targetName"`
	EnvironmentID    int64               `json:"environmentId"`
	DestinationID    int64               `json:"destinationId"`
	Enabled          bool                `json:"enabled"`
	AllVolumes       bool                `json:"allVolumes"`
	SelectedVolumes  []string            `json:"selectedVolumes"`
	Paths            []string            `json:"paths"`
	IncludeStackDir  bool                `json:"includeStackDir"`
	Excludes         []string            `json:"excludes"`
	Tags             []string            `json:"tags"`
	StopBeforeBackup bool                `json:"stopBeforeBackup"`
	Schedule         string              `json:"schedule"`
	Retention        backupRetentionJSON `json:"retention"`
	PreHook          string              `json:"preHook"`
	PostHook         string              `json:"postHook"`
	HookService      string              `json:"hookService"`
	Options          json.RawMessage     `json:"options"`
	LastRunStatus    *string             `json:"lastRunStatus"`
	LastRunMessage   *string             `json:"lastRunMessage"`
	LastRunAt        *time.Time          `json:"lastRunAt"`
	Running          bool                `json:"running"`
	CreatedAt        time.Time           `json:"createdAt"`
	UpdatedAt        time.Time           `json:"updatedAt"`
}

func (s *Server) toBackupConfigJSON(b store.BackupConfig) backupConfigJSON {
	r := b.Retention
	out := backupConfigJSON{ID: b.ID, Name: b.Name, Type: b.Type, TargetName: b.TargetName, EnvironmentID: b.EnvironmentID,
		DestinationID: b.DestinationID, Enabled: b.Enabled, AllVolumes: b.AllVolumes, SelectedVolumes: b.Volumes,
		Paths: b.Paths, IncludeStackDir: b.IncludeStackDir, Excludes: b.Excludes, Tags: b.Tags,
		StopBeforeBackup: b.StopDuringBackup, Schedule: b.Schedule, PreHook: b.PreHook, PostHook: b.PostHook,
		HookService: b.HookContainer, Options: json.RawMessage(b.Options), LastRunAt: b.LastRunAt,
		CreatedAt: b.CreatedAt, UpdatedAt: b.UpdatedAt,
		Retention: backupRetentionJSON{KeepLast: r.KeepLast, KeepDaily: r.KeepDaily, KeepWeekly: r.KeepWeekly,
			KeepMonthly: r.KeepMonthly, KeepYearly: r.KeepYearly}}
	if !json.Valid(out.Options) {
		out.Options = json.RawMessage("{}")
	}
	if b.LastRunStatus != "" {
		st, msg := b.LastRunStatus, b.LastRunMessage
		out.LastRunStatus, out.LastRunMessage = &st, &msg
	}
	if s.backups != nil {
		out.Running = s.backups.Running(b.ID)
	}
	return out
}

// backupConfigOf returns the configuration of the {id} path parameter once
// the caller may act with perm in its environment.
func (s *Server) backupConfigOf(c *gin.Context, perm string) (store.BackupConfig, error) {
	id, err := pathID(c, "backup configuration")
	if err != nil {
		return store.BackupConfig{}, err
	}
	b, err := s.store.GetBackupConfig(c.Request.Context(), id)
	if err != nil {
		return store.BackupConfig{}, notFoundAs(err, errBackupConfigNotFound)
	}
	if err := mayReach(c, perm, &b.EnvironmentID); err != nil {
		return store.BackupConfig{}, err
	}
	if b.Type == store.BackupBerth && perm != "backups:view" && !callerIsAdmin(c) {
		return store.BackupConfig{}, errSelfBackupAdmin
	}
	return b, nil
}

// backupEnvQuery reads the environment filter: env (the reference's) or
// environmentId.
func backupEnvQuery(c *gin.Context) (int64, error) {
	for _, name := range []string{"env", "environmentId"} {
		if v := c.Query(name); v != "" {
			id, err := strconv.ParseInt(v, 10, 64)
			if err != nil || id <= 0 {
				return 0, fault.Invalidf("Invalid %s", name)
			}
			return id, nil
		}
	}
	return 0, nil
}

func (s *Server) listBackupConfigs(c *gin.Context) error {
	envID, err := backupEnvQuery(c)
	if err != nil {
		return err
	}
	if envID != 0 {
		if err := mayReach(c, "backups:view", &envID); err != nil {
			return err
		}
	}
	f := store.BackupConfigFilter{Type: c.Query("type"), TargetName: c.Query("target"), EnvironmentID: envID}
	list, err := s.store.ListBackupConfigs(c.Request.Context(), f)
	if err != nil {
		return err
	}
	ident := identityOf(c)
	out := []backupConfigJSON{}
	for _, b := range list {
		if ident == nil || ident.Access.Check("backups:view", &b.EnvironmentID) == auth.Allowed {
			out = append(out, s.toBackupConfigJSON(b))
		}
	}
	return writeJSON(c, http.StatusOK, out)
}

func (s *Server) getBackupConfig(c *gin.Context) error {
	b, err := s.backupConfigOf(c, "backups:view")
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, s.toBackupConfigJSON(b))
}

func (s *Server) createBackupConfig(c *gin.Context) error {
	ctx := c.Request.Context()
	var req backupConfigRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	b := store.BackupConfig{Type: store.BackupContainer, Enabled: true, AllVolumes: true, IncludeStackDir: true, Options: "{}"}
	if req.TargetName != nil {
		b.TargetName = strings.TrimSpace(*req.TargetName)
	}
	if req.Type != nil {
		b.Type = *req.Type
	}
	if b.Type == store.BackupBerth {
		if !callerIsAdmin(c) {
			return errSelfBackupAdmin
		}
		// Nothing of a container's or stack's: what is given is refused.
		b.AllVolumes, b.IncludeStackDir = false, false
	}
	b.EnvironmentID = 1
	if req.EnvironmentID != nil {
		b.EnvironmentID = *req.EnvironmentID
	}
	if err := req.apply(&b); err != nil {
		return err
	}
	if err := mayReach(c, "backups:manage", &b.EnvironmentID); err != nil {
		return err
	}
	env, err := s.store.GetEnvironment(ctx, b.EnvironmentID)
	if err != nil {
		return notFoundAs(err, fault.Invalidf("Environment %d not found", b.EnvironmentID))
	}
	if b.Type == store.BackupBerth {
		if err := backupjobs.CheckSelfEnvironment(env); err != nil {
			return err
		}
	}
	if err := s.checkBackupDestination(ctx, b); err != nil {
		return err
	}
	if err := s.store.CreateBackupConfig(ctx, &b); err != nil {
		return err
	}
	s.schedules.Changed(ctx)
	noteAudit(c, fmt.Sprint(b.ID), b.Name)
	return writeJSON(c, http.StatusCreated, s.toBackupConfigJSON(b))
}

// checkBackupDestination refuses a destination b cannot use (unknown, or
// a local repository of another environment).
func (s *Server) checkBackupDestination(ctx context.Context, b store.BackupConfig) error {
	if s.backups == nil {
		return errBackupsUnavailable
	}
	err := s.backups.CheckDestination(ctx, b.DestinationID, b.EnvironmentID)
	if errors.Is(err, store.ErrNotFound) {
		return fault.Invalidf("Destination %d not found", b.DestinationID)
	}
	return err
}

func (s *Server) updateBackupConfig(c *gin.Context) error {
	ctx := c.Request.Context()
	b, err := s.backupConfigOf(c, "backups:manage")
	if err != nil {
		return err
	}
	var req backupConfigRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	if req.EnvironmentID != nil && *req.EnvironmentID != b.EnvironmentID {
		return fault.Invalidf("The environment of a backup configuration cannot be changed")
	}
	if req.Type != nil && *req.Type != b.Type || req.TargetName != nil && *req.TargetName != b.TargetName {
		return fault.Invalidf("The type and target of a backup configuration cannot be changed")
	}
	dest := b.DestinationID
	if err := req.apply(&b); err != nil {
		return err
	}
	if b.DestinationID != dest {
		if s.backups != nil && s.backups.Running(b.ID) {
			return fault.New(fault.Conflict, "Cannot change the destination while a backup is running for this config")
		}
	}
	if err := s.checkBackupDestination(ctx, b); err != nil {
		return err
	}
	if err := s.store.UpdateBackupConfig(ctx, &b); err != nil {
		return notFoundAs(err, errBackupConfigNotFound)
	}
	s.schedules.Changed(ctx)
	noteAudit(c, fmt.Sprint(b.ID), b.Name)
	return writeJSON(c, http.StatusOK, s.toBackupConfigJSON(b))
}

func (s *Server) deleteBackupConfig(c *gin.Context) error {
	ctx := c.Request.Context()
	b, err := s.backupConfigOf(c, "backups:manage")
	if err != nil {
		return err
	}
	if s.backups != nil && s.backups.Running(b.ID) {
		return fault.New(fault.Conflict, "A backup is currently running for this config: stop it before deleting")
	}
	if err := s.store.DeleteBackupConfig(ctx, b.ID); err != nil {
		return notFoundAs(err, errBackupConfigNotFound)
	}
	s.schedules.Changed(ctx)
	noteAudit(c, fmt.Sprint(b.ID), b.Name)
	return writeJSON(c, http.StatusOK, success)
}

// actorOf is the caller as the author of a backup run or restore.
func (s *Server) actorOf(c *gin.Context) backupjobs.Actor {
	a := backupjobs.Actor{IP: s.clientIP(c.Request)}
	if id := identityOf(c); id != nil {
		uid := id.User.ID
		a.UserID, a.Username = &uid, id.User.Username
	}
	return a
}

// backupResultJSON is the final event of a run's stream.
type backupResultJSON struct {
	backupjobs.Result
	Error string `json:"error,omitempty"`
}

// runBackupConfig runs a configuration now, as an execution of its
// schedule, and streams its steps as "progress" events, then a "result"
// event. The run belongs to the server: a client that leaves does not stop
// it (POST …/stop does).
func (s *Server) runBackupConfig(c *gin.Context) error {
	b, err := s.backupConfigOf(c, "backups:manage")
	if err != nil {
		return err
	}
	if s.backups == nil {
		return errBackupsUnavailable
	}
	if s.backups.Running(b.ID) {
		return fault.New(fault.Conflict, "A backup of this configuration is already running")
	}
	actor := s.actorOf(c)
	events := make(chan backupjobs.Event, 256)
	type outcome struct {
		e   store.Execution
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		e, err := s.schedules.Record(context.WithoutCancel(c.Request.Context()), schedule.Backup, b.ID, schedule.TriggerManual,
			func(ctx context.Context, _ schedule.Definition, run *schedule.Run) error {
				return s.backups.RunRecorded(ctx, b.ID, backupjobs.TriggerManual, actor, run, func(ev backupjobs.Event) {
					select {
					case events <- ev:
					default: // a slow client misses progress, never the result
					}
				})
			})
		done <- outcome{e, err}
	}()
	relayProgress(c, events, done, func(o outcome) any { return s.backupResult(c.Request.Context(), b.ID, o.e, o.err) })
	return nil
}

// relayProgress streams events as "progress" events until done gives the
// outcome, then the rest of events and result(outcome) as the "result"
// event; it returns early when the client leaves.
func relayProgress[E, R any](c *gin.Context, events <-chan E, done <-chan R, result func(R) any) {
	es := startEvents(c)
	defer es.Close()
	ctx := c.Request.Context()
	for {
		select {
		case ev := <-events:
			if es.Send("progress", ev) != nil {
				return
			}
		case o := <-done:
			for len(events) > 0 {
				_ = es.Send("progress", <-events)
			}
			_ = es.Send("result", result(o))
			return
		case <-ctx.Done():
			return
		}
	}
}

// backupResult is the result event of configuration id's run recorded as
// execution e (or refused with err).
func (s *Server) backupResult(ctx context.Context, id int64, e store.Execution, err error) backupResultJSON {
	if err != nil {
		return backupResultJSON{Result: backupjobs.Result{Status: "error", Message: errorText(err)}, Error: errorText(err)}
	}
	runs, lerr := s.store.ListBackupRuns(ctx, id, 1)
	if lerr != nil || len(runs) == 0 {
		st := "error"
		if e.Status == store.ExecutionSuccess {
			st = "success"
		}
		msg := ""
		if e.ErrorMessage != nil {
			msg = *e.ErrorMessage
		}
		return backupResultJSON{Result: backupjobs.Result{Status: st, Message: msg}, Error: msg}
	}
	r := runs[0]
	out := backupResultJSON{Result: backupjobs.Result{RunID: r.ID, Status: r.Status, Message: r.Message, SnapshotID: r.SnapshotID,
		Files: r.Files, Bytes: r.Bytes}}
	if r.FinishedAt != nil {
		out.DurationMS = r.FinishedAt.Sub(r.StartedAt).Milliseconds()
	}
	switch r.Status {
	case store.BackupFailed:
		out.Status, out.Error = "error", r.Message
	case store.BackupStopped:
		out.Status = "stopped"
	}
	return out
}

// errorText is the client's message of err.
func errorText(err error) string {
	if f, ok := fault.As(err); ok {
		if f.Details != "" {
			return f.Message + ": " + f.Details
		}
		return f.Message
	}
	return "Backup failed"
}

func (s *Server) stopBackupConfig(c *gin.Context) error {
	b, err := s.backupConfigOf(c, "backups:manage")
	if err != nil {
		return err
	}
	stopped := false
	if s.backups != nil {
		stopped = s.backups.Stop(b.ID)
	}
	noteAudit(c, fmt.Sprint(b.ID), b.Name)
	return writeJSON(c, http.StatusOK, map[string]any{"success": true, "stopped": stopped})
}
