package backupjobs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/berth-dev/berth/server/internal/backup"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// Event is a step of a run or restore, as its progress stream shows it.
type Event struct {
	Phase    string           `json:"phase"` // resolve, pre-hook, stop, backup, restore, start, retention, post-hook
	Message  string           `json:"message,omitempty"`
	Progress *backup.Progress `json:"progress,omitempty"`
}

// Actor is who started a run (zero: the scheduler).
type Actor struct {
	UserID   *int64
	Username string
	IP       string
}

// Result is the outcome of a run.
type Result struct {
	RunID      int64  `json:"runId"`
	Status     string `json:"status"` // success | failed | stopped
	Message    string `json:"message"`
	SnapshotID string `json:"snapshotId,omitempty"`
	Files      int64  `json:"files"`
	Bytes      int64  `json:"bytes"`
	DataAdded  int64  `json:"dataAdded"`
	Forgotten  int    `json:"forgotten"`
	DurationMS int64  `json:"durationMs"`
}

// Triggers of runs.
const (
	TriggerManual = "manual"
	TriggerCron   = "cron"
)

var errAlreadyRunning = fault.New(fault.Conflict, "A backup of this configuration is already running")

// hookTimeout bounds a pre or post hook; restartTimeout the restart of the
// containers a run stopped.
const (
	hookTimeout    = 10 * time.Minute
	restartTimeout = 2 * time.Minute
)

// Run backs up configuration id now: the pre hook, the stop of its
// containers when asked (started again whatever happens), the backup, the
// retention, the post hook; it records the run, the configuration's last
// status, an audit entry and a notification. Cancelling ctx (or Stop)
// stops it: its status is then "stopped". The error is the run's failure
// (nil when it succeeded or was stopped), as the Result says.
func (s *Service) Run(ctx context.Context, id int64, trigger string, actor Actor, progress func(Event)) (Result, error) {
	if progress == nil {
		progress = func(Event) {}
	}
	if s.o.Runner == nil || s.o.Repo == nil {
		return Result{}, errUnavailable
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.mu.Lock()
	if _, busy := s.running[id]; busy {
		s.mu.Unlock()
		return Result{}, errAlreadyRunning
	}
	s.running[id] = cancel
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.running, id)
		s.mu.Unlock()
	}()

	cfg, err := s.o.Store.GetBackupConfig(ctx, id)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return Result{}, fault.New(fault.NotFound, "Backup configuration not found")
		}
		return Result{}, err
	}
	started := time.Now()
	envID, destID := cfg.EnvironmentID, cfg.DestinationID
	run := store.BackupRun{ConfigID: &cfg.ID, DestinationID: &destID, EnvironmentID: &envID, Kind: store.BackupKindBackup,
		Status: store.BackupRunning, StartedAt: started, Node: s.o.Node}
	if err := s.o.Store.AddBackupRun(context.WithoutCancel(ctx), &run); err != nil {
		return Result{}, err
	}
	res, runErr := s.backup(ctx, cfg, run.ID, progress)
	res.RunID = run.ID
	res.DurationMS = time.Since(started).Milliseconds()
	switch {
	case runErr != nil && ctx.Err() != nil:
		res.Status, res.Message, runErr = store.BackupStopped, "Backup stopped", nil
	case runErr != nil:
		res.Status, res.Message = store.BackupFailed, message(runErr)
	default:
		res.Status = store.BackupSuccess
	}
	s.finish(context.WithoutCancel(ctx), cfg, &run, res, trigger, actor)
	return res, runErr
}

// message is what a run records of a failure: a fault's message (and
// details), else the error.
func message(err error) string {
	if f, ok := fault.As(err); ok {
		if f.Details != "" {
			return f.Message + ": " + f.Details
		}
		if f.Cause != nil && f.Kind == fault.Internal {
			return f.Message + ": " + f.Cause.Error()
		}
		return f.Message
	}
	return err.Error()
}

// open opens cfg's destination (secrets opened) and its environment, where
// restic runs, once the destination may be used from there.
func (s *Service) open(ctx context.Context, cfg store.BackupConfig) (backup.Repo, backup.Where, store.Environment, error) {
	repo, _, err := s.o.Repo(ctx, cfg.DestinationID)
	if err != nil {
		return backup.Repo{}, backup.Where{}, store.Environment{}, err
	}
	if err := s.CheckDestination(ctx, cfg.DestinationID, cfg.EnvironmentID); err != nil {
		return backup.Repo{}, backup.Where{}, store.Environment{}, err
	}
	where, env, err := s.where(ctx, cfg.EnvironmentID)
	if err != nil {
		return backup.Repo{}, backup.Where{}, store.Environment{}, err
	}
	return repo, where, env, nil
}

// backup is the work of a run.
func (s *Service) backup(ctx context.Context, cfg store.BackupConfig, runID int64, progress func(Event)) (res Result, err error) {
	if cfg.Type == store.BackupBerth {
		return s.backupBerth(ctx, cfg, progress)
	}
	progress(Event{Phase: "resolve", Message: "Resolving what to back up"})
	repo, where, env, err := s.open(ctx, cfg)
	if err != nil {
		return res, err
	}
	c := where.Client
	t, err := s.Resolve(ctx, c, env, cfg)
	if err != nil {
		return res, err
	}
	if t.StackDirNote != "" {
		progress(Event{Phase: "resolve", Message: "Stack directory not included: " + t.StackDirNote})
	}
	var copied []string
	if t.StackDirCopied {
		copied = []string{t.StackDir}
	}
	if len(t.Volumes) == 0 && len(t.Paths) == 0 && len(copied) == 0 {
		return res, fault.Invalidf("Nothing to back up: %s '%s' has no volumes or paths selected", cfg.Type, cfg.TargetName)
	}
	msg := fmt.Sprintf("Volumes: %s; paths: %s", list(t.Volumes), list(t.Paths))
	if len(copied) > 0 {
		msg += fmt.Sprintf("; stack directory (copied from the Berth host): %s", t.StackDir)
	}
	progress(Event{Phase: "resolve", Message: msg})
	instance, err := s.o.Instance(ctx)
	if err != nil {
		return res, err
	}

	hookCt := s.hookContainer(t, cfg)
	if cfg.PreHook != "" {
		progress(Event{Phase: "pre-hook", Message: "Running the pre hook in " + hookCt.Name})
		if err := s.hook(ctx, c, hookCt, cfg.PreHook); err != nil {
			return res, fmt.Errorf("pre hook: %w", err)
		}
	}
	if cfg.PostHook != "" {
		defer func() {
			progress(Event{Phase: "post-hook", Message: "Running the post hook in " + hookCt.Name})
			hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), hookTimeout)
			defer cancel()
			if herr := s.hook(hctx, c, hookCt, cfg.PostHook); herr != nil && err == nil {
				err = fmt.Errorf("post hook: %w", herr)
			}
		}()
	}

	restart := func() error { return nil }
	if cfg.StopDuringBackup {
		ids := t.running()
		progress(Event{Phase: "stop", Message: fmt.Sprintf("Stopping %d container(s)", len(ids))})
		restart = s.stopAll(ctx, c, ids, progress, func(stopped []string) {
			// Kept with the run until they are started again: a Berth
			// killed meanwhile starts them at its next start.
			if err := s.o.Store.SetBackupRunStopped(context.WithoutCancel(ctx), runID, stopped); err != nil {
				s.o.Log.Error("backup: the stopped containers not recorded", "run", runID, "err", err)
			}
		})
	}
	// Started again also when the backup fails or is stopped, with a
	// context of its own.
	restarted := false
	defer func() {
		if !restarted {
			if rerr := restart(); rerr != nil && err == nil {
				err = rerr
			}
		}
	}()

	src := backup.Source{Volumes: t.Volumes, Paths: t.Paths, Copied: copied, Exclude: cfg.Excludes, Host: instance,
		Tags: snapshotTags(cfg, instance, t.StackDir)}
	progress(Event{Phase: "backup", Message: "Backing up"})
	sum, err := s.o.Runner.Backup(ctx, where, repo, src, func(p backup.Progress) {
		q := p
		progress(Event{Phase: "backup", Progress: &q})
	})
	restarted = true
	if rerr := restart(); rerr != nil && err == nil {
		err = rerr
	}
	if err != nil {
		return res, err
	}
	err = s.summarise(ctx, where, repo, cfg, instance, sum, &res, progress)
	return res, err
}

// snapshotTags are the tags of cfg's snapshots; stackDir is the stack's
// directory on Berth's host when the snapshot holds it.
func snapshotTags(cfg store.BackupConfig, instance, stackDir string) []string {
	tags := []string{TagInstance + instance, ConfigTag(cfg.ID), TagType + cfg.Type, TagTarget + cfg.TargetName,
		fmt.Sprintf("%s%d", TagEnv, cfg.EnvironmentID)}
	if stackDir != "" {
		tags = append(tags, TagStackDir+stackDir)
	}
	return append(tags, cfg.Tags...)
}

// summarise records the backup sum in res and applies cfg's retention.
func (s *Service) summarise(ctx context.Context, where backup.Where, repo backup.Repo, cfg store.BackupConfig, instance string,
	sum backup.Summary, res *Result, progress func(Event)) error {
	res.SnapshotID, res.Files, res.Bytes, res.DataAdded = sum.SnapshotID, sum.TotalFiles, sum.TotalBytes, sum.DataAdded
	res.Message = fmt.Sprintf("Snapshot %s: %d files, %d bytes (%d bytes added)", short(sum.SnapshotID), sum.TotalFiles,
		sum.TotalBytes, sum.DataAdded)
	progress(Event{Phase: "backup", Message: res.Message})

	if r := cfg.Retention; !r.Empty() {
		progress(Event{Phase: "retention", Message: "Applying the retention policy"})
		gone, err := s.o.Runner.Forget(ctx, where, repo, []string{TagInstance + instance, ConfigTag(cfg.ID)},
			backup.Retention{KeepLast: r.KeepLast, KeepDaily: r.KeepDaily, KeepWeekly: r.KeepWeekly, KeepMonthly: r.KeepMonthly,
				KeepYearly: r.KeepYearly})
		if err != nil {
			return fmt.Errorf("retention: %w", err)
		}
		res.Forgotten = len(gone)
		progress(Event{Phase: "retention", Message: fmt.Sprintf("%d snapshot(s) forgotten", len(gone))})
	}
	return nil
}

// described names what cfg backs up: "stack 'web'", "Berth itself".
func described(cfg store.BackupConfig) string {
	if cfg.Type == store.BackupBerth {
		return "Berth itself"
	}
	return fmt.Sprintf("%s '%s'", cfg.Type, cfg.TargetName)
}

func list(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

func short(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// hookContainer is the container cfg's hooks run in: a stack's service
// (or container) named by HookContainer, else the target's first.
func (s *Service) hookContainer(t Target, cfg store.BackupConfig) engine.Container {
	if cfg.HookContainer != "" {
		for _, c := range t.Containers {
			if c.Labels[engine.ComposeServiceLabel] == cfg.HookContainer || c.Name == cfg.HookContainer {
				return c
			}
		}
		return engine.Container{Name: cfg.HookContainer}
	}
	if len(t.Containers) > 0 {
		return t.Containers[0]
	}
	return engine.Container{}
}

// hook runs command with sh -c in container ct; a non-zero exit is an error
// carrying its output.
func (s *Service) hook(ctx context.Context, c *engine.Client, ct engine.Container, command string) error {
	if ct.ID == "" {
		return fault.Invalidf("Hook container '%s' not found", ct.Name)
	}
	ctx, cancel := context.WithTimeout(ctx, hookTimeout)
	defer cancel()
	out, err := c.RunCommand(ctx, ct.ID, []string{"sh", "-c", command})
	if err != nil {
		return err
	}
	if out.ExitCode != 0 {
		return fault.Invalidf("exit code %d: %s", out.ExitCode, strings.TrimSpace(out.Output))
	}
	return nil
}

// stopAll stops the containers ids and returns what starts them again
// (with a context of its own: a stopped run still restarts them); record
// keeps the list of those stopped and not started again with the run.
func (s *Service) stopAll(ctx context.Context, c *engine.Client, ids []string, progress func(Event),
	record func(stopped []string)) (restart func() error) {
	// Recorded before they stop: a Berth killed while stopping them still
	// starts them (starting a running container is no harm).
	record(ids)
	var stopped []string
	for _, id := range ids {
		if err := c.StopContainer(ctx, id); err != nil {
			s.o.Log.Warn("backup: container not stopped", "container", id, "err", err)
			continue
		}
		stopped = append(stopped, id)
	}
	record(stopped)
	return func() error {
		if len(stopped) == 0 {
			return nil
		}
		progress(Event{Phase: "start", Message: fmt.Sprintf("Starting %d container(s) again", len(stopped))})
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), restartTimeout)
		defer cancel()
		var errs []error
		for _, id := range stopped {
			if err := c.StartContainer(rctx, id); err != nil {
				errs = append(errs, fmt.Errorf("start %s: %w", short(id), err))
			}
		}
		stopped = nil
		if len(errs) == 0 {
			record(nil)
		}
		return errors.Join(errs...)
	}
}

// finish records the outcome of run.
func (s *Service) finish(ctx context.Context, cfg store.BackupConfig, run *store.BackupRun, res Result, trigger string, actor Actor) {
	run.Status, run.SnapshotID, run.Files, run.Bytes, run.Message = res.Status, res.SnapshotID, res.Files, res.Bytes, res.Message
	if err := s.o.Store.FinishBackupRun(ctx, run); err != nil {
		s.o.Log.Error("backup run not recorded", "config", cfg.ID, "err", err)
	}
	if err := s.o.Store.SetBackupConfigLastRun(ctx, cfg.ID, res.Status, res.Message, time.Now()); err != nil {
		s.o.Log.Error("backup config last run not recorded", "config", cfg.ID, "err", err)
	}
	envID := cfg.EnvironmentID
	username := actor.Username
	if username == "" {
		username = "scheduler"
	}
	e := store.AuditEntry{UserID: actor.UserID, Username: username, EnvironmentID: &envID, Action: "backup_config.run",
		EntityType: "backup_config", EntityID: fmt.Sprint(cfg.ID), EntityName: cfg.Name, IP: actor.IP,
		Description: fmt.Sprintf("Backup of %s (%s): %s", described(cfg), trigger, res.Status),
		Details:     fmt.Sprintf(`{"runId":%d,"status":%q,"snapshotId":%q,"trigger":%q}`, run.ID, res.Status, res.SnapshotID, trigger)}
	if err := s.o.Store.AddAudit(ctx, &e); err != nil {
		s.o.Log.Error("backup audit entry not written", "config", cfg.ID, "err", err)
	}
	if s.o.Notify != nil {
		what := described(cfg)
		switch res.Status {
		case store.BackupSuccess:
			s.o.Notify.Emit(cfg.EnvironmentID, "backup_success", "Backup of "+what+" succeeded", res.Message)
		case store.BackupFailed:
			s.o.Notify.Emit(cfg.EnvironmentID, "backup_failed", "Backup of "+what+" failed", res.Message)
		}
	}
	s.o.Log.Info("backup run", "config", cfg.ID, "status", res.Status, "snapshot", res.SnapshotID, "trigger", trigger)
}

// RecoverInterrupted finishes the runs of this node (of any, for a single
// Berth) that a Berth stopped (killed, crashed) during them left "running": the containers such a run
// had stopped are started again, and the run is marked failed with why.
// The caller runs it once at start, with the time Berth started.
func (s *Service) RecoverInterrupted(ctx context.Context, since time.Time) {
	node := s.o.Node
	if s.o.Single {
		node = ""
	}
	runs, err := s.o.Store.InterruptedBackupRuns(ctx, node, since)
	if err != nil {
		s.o.Log.Error("backup runs left by an interrupted Berth not looked for", "err", err)
		return
	}
	for _, r := range runs {
		msg := "Interrupted: Berth stopped during the run"
		if len(r.Stopped) > 0 && r.EnvironmentID != nil {
			if err := s.startAgain(ctx, *r.EnvironmentID, r.Stopped); err != nil {
				msg += fmt.Sprintf("; the %d container(s) it had stopped could not all be started again: %v", len(r.Stopped), err)
				s.o.Log.Error("backup: containers of an interrupted run not started again", "run", r.ID, "err", err)
			} else {
				msg += fmt.Sprintf("; the %d container(s) it had stopped were started again", len(r.Stopped))
			}
		}
		run := r.BackupRun
		run.Status, run.Message, run.FinishedAt = store.BackupFailed, msg, nil
		if err := s.o.Store.FinishBackupRun(ctx, &run); err != nil {
			s.o.Log.Error("backup: an interrupted run not recorded", "run", r.ID, "err", err)
			continue
		}
		if err := s.o.Store.SetBackupRunStopped(ctx, r.ID, nil); err != nil {
			s.o.Log.Error("backup: an interrupted run not recorded", "run", r.ID, "err", err)
		}
		if r.ConfigID != nil && r.Kind == store.BackupKindBackup {
			if err := s.o.Store.SetBackupConfigLastRun(ctx, *r.ConfigID, store.BackupFailed, msg, time.Now()); err != nil &&
				!errors.Is(err, store.ErrNotFound) {
				s.o.Log.Error("backup: an interrupted run not recorded", "run", r.ID, "err", err)
			}
		}
		s.o.Log.Warn("backup run interrupted by Berth's stop", "run", r.ID, "message", msg)
	}
}

// startAgain starts the containers ids of environment envID (one removed
// meanwhile is no error).
func (s *Service) startAgain(ctx context.Context, envID int64, ids []string) error {
	env, err := s.o.Store.GetEnvironment(ctx, envID)
	if err != nil {
		return err
	}
	c, err := s.o.Engines.Client(ctx, env.Endpoint())
	if err != nil {
		return err
	}
	rctx, cancel := context.WithTimeout(ctx, restartTimeout)
	defer cancel()
	var errs []error
	for _, id := range ids {
		if err := c.StartContainer(rctx, id); err != nil && !errors.Is(err, engine.ErrNotFound) {
			errs = append(errs, fmt.Errorf("start %s: %w", short(id), err))
		}
	}
	return errors.Join(errs...)
}
