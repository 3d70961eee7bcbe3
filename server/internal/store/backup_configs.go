package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Backup configuration types.
const (
	BackupContainer = "container"
	BackupStack     = "stack"
	// BackupBerth is Berth itself: the archive of `berth admin backup`
	// (database, encryption key, stack files), its target always "berth".
	BackupBerth = "berth"
)

// Backup run kinds and statuses.
const (
	BackupKindBackup  = "backup"
	BackupKindRestore = "restore"

	BackupRunning = "running"
	BackupSuccess = "success"
	BackupFailed  = "failed"
	BackupStopped = "stopped"
)

// BackupRetention is the keep policy applied after each successful backup
// of a configuration (restic forget --keep-*); all zero keeps everything.
type BackupRetention struct {
	KeepLast    int `json:"keepLast"`
	KeepDaily   int `json:"keepDaily"`
	KeepWeekly  int `json:"keepWeekly"`
	KeepMonthly int `json:"keepMonthly"`
	KeepYearly  int `json:"keepYearly"`
}

// Empty reports whether r keeps every snapshot (no rule).
func (r BackupRetention) Empty() bool {
	return r.KeepLast == 0 && r.KeepDaily == 0 && r.KeepWeekly == 0 && r.KeepMonthly == 0 && r.KeepYearly == 0
}

// BackupConfig is what to back up (a container's volumes and binds, or a
// stack's volumes and directory), where to (a destination), when (a cron,
// run by the scheduler when enabled) and how many snapshots to keep.
type BackupConfig struct {
	ID            int64
	Name          string
	Type          string // container | stack | berth
	TargetName    string // container or stack name
	EnvironmentID int64
	DestinationID int64
	AllVolumes    bool
	Volumes       []string // the volumes chosen when not AllVolumes
	Paths         []string // extra host paths
	// IncludeStackDir backs up a stack's directory too.
	IncludeStackDir  bool
	Excludes         []string
	Tags             []string
	Schedule         string // cron, "" for manual runs only
	Enabled          bool
	Retention        BackupRetention
	StopDuringBackup bool
	PreHook          string // command run in the container (sh -c) before the backup
	PostHook         string // … after it, whatever its outcome
	HookContainer    string // a stack's service (or container name) the hooks run in
	// Options is the reference's free-form options object (JSON), kept as sent.
	Options        string
	LastRunStatus  string
	LastRunMessage string
	LastRunAt      *time.Time
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

type backupConfigRow struct {
	ID               int64
	Name             string
	Type             string
	TargetName       string
	EnvironmentID    int64
	DestinationID    int64
	AllVolumes       bool
	Volumes          string
	Paths            string
	IncludeStackDir  bool
	Excludes         string
	Tags             string
	Schedule         string
	Enabled          bool
	Retention        string
	StopDuringBackup bool
	PreHook          string
	PostHook         string
	HookService      string
	Options          string
	LastRunStatus    string
	LastRunMessage   string
	LastRunAt        dbTime
	CreatedAt        dbTime
	UpdatedAt        dbTime
}

func (backupConfigRow) TableName() string { return "backup_configs" }

func backupConfigRowOf(c *BackupConfig) (backupConfigRow, error) {
	r := backupConfigRow{ID: c.ID, Name: c.Name, Type: c.Type, TargetName: c.TargetName, EnvironmentID: c.EnvironmentID,
		DestinationID: c.DestinationID, AllVolumes: c.AllVolumes, IncludeStackDir: c.IncludeStackDir,
		Schedule: c.Schedule, Enabled: c.Enabled, StopDuringBackup: c.StopDuringBackup, PreHook: c.PreHook,
		PostHook: c.PostHook, HookService: c.HookContainer, Options: orObject(c.Options), LastRunStatus: c.LastRunStatus,
		LastRunMessage: c.LastRunMessage, LastRunAt: nullTimeValue(c.LastRunAt)}
	for _, f := range []struct {
		dst *string
		v   any
	}{{&r.Volumes, orEmpty(c.Volumes)}, {&r.Paths, orEmpty(c.Paths)}, {&r.Excludes, orEmpty(c.Excludes)},
		{&r.Tags, orEmpty(c.Tags)}, {&r.Retention, c.Retention}} {
		b, err := json.Marshal(f.v)
		if err != nil {
			return backupConfigRow{}, err
		}
		*f.dst = string(b)
	}
	return r, nil
}

func orObject(s string) string {
	if s == "" {
		return "{}"
	}
	return s
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func (r backupConfigRow) config() (BackupConfig, error) {
	c := BackupConfig{ID: r.ID, Name: r.Name, Type: r.Type, TargetName: r.TargetName, EnvironmentID: r.EnvironmentID,
		DestinationID: r.DestinationID, AllVolumes: r.AllVolumes, IncludeStackDir: r.IncludeStackDir,
		Schedule: r.Schedule, Enabled: r.Enabled, StopDuringBackup: r.StopDuringBackup, PreHook: r.PreHook,
		PostHook: r.PostHook, HookContainer: r.HookService, Options: r.Options, LastRunStatus: r.LastRunStatus,
		LastRunMessage: r.LastRunMessage, LastRunAt: r.LastRunAt.ptr(), CreatedAt: r.CreatedAt.Time,
		UpdatedAt: r.UpdatedAt.Time}
	for _, f := range []struct {
		src string
		dst any
	}{{r.Volumes, &c.Volumes}, {r.Paths, &c.Paths}, {r.Excludes, &c.Excludes}, {r.Tags, &c.Tags},
		{r.Retention, &c.Retention}} {
		if f.src == "" {
			continue
		}
		if err := json.Unmarshal([]byte(f.src), f.dst); err != nil {
			return BackupConfig{}, fmt.Errorf("backup config %d: %w", r.ID, err)
		}
	}
	c.Volumes, c.Paths, c.Excludes, c.Tags = orEmpty(c.Volumes), orEmpty(c.Paths), orEmpty(c.Excludes), orEmpty(c.Tags)
	return c, nil
}

// BackupConfigFilter selects backup configurations; zero fields select all.
type BackupConfigFilter struct {
	Type          string
	TargetName    string
	EnvironmentID int64
	DestinationID int64
}

// ListBackupConfigs returns the configurations f selects, by name then id.
func (s *Store) ListBackupConfigs(ctx context.Context, f BackupConfigFilter) ([]BackupConfig, error) {
	q := s.db.WithContext(ctx).Order("name, id")
	if f.Type != "" {
		q = q.Where("type = ?", f.Type)
	}
	if f.TargetName != "" {
		q = q.Where("target_name = ?", f.TargetName)
	}
	if f.EnvironmentID != 0 {
		q = q.Where("environment_id = ?", f.EnvironmentID)
	}
	if f.DestinationID != 0 {
		q = q.Where("destination_id = ?", f.DestinationID)
	}
	var rows []backupConfigRow
	if err := q.Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: list backup configs: %w", err)
	}
	out := make([]BackupConfig, 0, len(rows))
	for _, r := range rows {
		c, err := r.config()
		if err != nil {
			return nil, fmt.Errorf("store: list backup configs: %w", err)
		}
		out = append(out, c)
	}
	return out, nil
}

// GetBackupConfig returns a configuration, or ErrNotFound.
func (s *Store) GetBackupConfig(ctx context.Context, id int64) (BackupConfig, error) {
	var r backupConfigRow
	if err := s.db.WithContext(ctx).Where("id = ?", id).Take(&r).Error; err != nil {
		return BackupConfig{}, fmt.Errorf("store: get backup config %d: %w", id, translate(err))
	}
	return r.config()
}

// CreateBackupConfig inserts c and sets its ID and timestamps.
func (s *Store) CreateBackupConfig(ctx context.Context, c *BackupConfig) error {
	row, err := backupConfigRowOf(c)
	if err != nil {
		return fmt.Errorf("store: create backup config: %w", err)
	}
	t := now()
	row.ID, row.CreatedAt, row.UpdatedAt = 0, timeValue(t), timeValue(t)
	if err := s.db.WithContext(ctx).Create(&row).Error; err != nil {
		return fmt.Errorf("store: create backup config %q: %w", c.Name, translate(err))
	}
	c.ID, c.CreatedAt, c.UpdatedAt = row.ID, t, t
	return nil
}

// UpdateBackupConfig writes the settings of c by ID (not its last run, not
// its environment), or answers ErrNotFound.
func (s *Store) UpdateBackupConfig(ctx context.Context, c *BackupConfig) error {
	row, err := backupConfigRowOf(c)
	if err != nil {
		return fmt.Errorf("store: update backup config: %w", err)
	}
	t := now()
	err = oneRow(s.db.WithContext(ctx).Model(&backupConfigRow{}).Where("id = ?", c.ID).Updates(map[string]any{
		"name": row.Name, "destination_id": row.DestinationID, "all_volumes": row.AllVolumes, "volumes": row.Volumes,
		"paths": row.Paths, "include_stack_dir": row.IncludeStackDir, "excludes": row.Excludes, "tags": row.Tags,
		"schedule": row.Schedule, "enabled": row.Enabled, "retention": row.Retention,
		"stop_during_backup": row.StopDuringBackup, "pre_hook": row.PreHook, "post_hook": row.PostHook,
		"hook_service": row.HookService, "options": row.Options, "updated_at": timeValue(t),
	}))
	if err != nil {
		return fmt.Errorf("store: update backup config %d: %w", c.ID, translate(err))
	}
	c.UpdatedAt = t
	return nil
}

// SetBackupConfigEnabled switches a configuration's schedule on or off.
func (s *Store) SetBackupConfigEnabled(ctx context.Context, id int64, on bool) error {
	err := oneRow(s.db.WithContext(ctx).Model(&backupConfigRow{}).Where("id = ?", id).Updates(map[string]any{
		"enabled": on, "updated_at": timeValue(now())}))
	if err != nil {
		return fmt.Errorf("store: enable backup config %d: %w", id, err)
	}
	return nil
}

// ClearBackupConfigSchedule removes a configuration's cron (it stays, for
// manual runs).
func (s *Store) ClearBackupConfigSchedule(ctx context.Context, id int64) error {
	err := oneRow(s.db.WithContext(ctx).Model(&backupConfigRow{}).Where("id = ?", id).Updates(map[string]any{
		"schedule": "", "updated_at": timeValue(now())}))
	if err != nil {
		return fmt.Errorf("store: clear backup config %d schedule: %w", id, err)
	}
	return nil
}

// SetBackupConfigLastRun records the outcome of a configuration's last run.
func (s *Store) SetBackupConfigLastRun(ctx context.Context, id int64, status, message string, at time.Time) error {
	err := s.db.WithContext(ctx).Model(&backupConfigRow{}).Where("id = ?", id).Updates(map[string]any{
		"last_run_status": status, "last_run_message": message, "last_run_at": timeValue(at)}).Error
	if err != nil {
		return fmt.Errorf("store: backup config %d last run: %w", id, err)
	}
	return nil
}

// DeleteBackupConfig deletes a configuration (its runs stay, without it),
// or answers ErrNotFound.
func (s *Store) DeleteBackupConfig(ctx context.Context, id int64) error {
	if err := oneRow(s.db.WithContext(ctx).Where("id = ?", id).Delete(&backupConfigRow{})); err != nil {
		return fmt.Errorf("store: delete backup config %d: %w", id, err)
	}
	return nil
}

// BackupRun is one backup or restore: its outcome and what it wrote.
type BackupRun struct {
	ID            int64
	ConfigID      *int64
	DestinationID *int64
	EnvironmentID *int64
	Kind          string // backup | restore
	Status        string // running | success | failed | stopped
	SnapshotID    string
	Files         int64
	Bytes         int64
	Message       string
	StartedAt     time.Time
	FinishedAt    *time.Time
	JobID         string
	Node          string
}

type backupRunRow struct {
	ID            int64
	ConfigID      *int64
	DestinationID *int64
	EnvironmentID *int64
	Kind          string
	Status        string
	SnapshotID    string
	Files         int64
	Bytes         int64
	Message       string
	StartedAt     dbTime
	FinishedAt    dbTime
	JobID         string
	Node          string
	// StoppedContainers: SetBackupRunStopped.
	StoppedContainers string
}

func (backupRunRow) TableName() string { return "backup_runs" }

func (r backupRunRow) run() BackupRun {
	return BackupRun{ID: r.ID, ConfigID: r.ConfigID, DestinationID: r.DestinationID, EnvironmentID: r.EnvironmentID,
		Kind: r.Kind, Status: r.Status, SnapshotID: r.SnapshotID, Files: r.Files, Bytes: r.Bytes,
		Message: r.Message, StartedAt: r.StartedAt.Time, FinishedAt: r.FinishedAt.ptr(), JobID: r.JobID, Node: r.Node}
}

// AddBackupRun records a run that started and sets its ID.
func (s *Store) AddBackupRun(ctx context.Context, run *BackupRun) error {
	if run.StartedAt.IsZero() {
		run.StartedAt = now()
	}
	row := backupRunRow{ConfigID: run.ConfigID, DestinationID: run.DestinationID, EnvironmentID: run.EnvironmentID,
		Kind: run.Kind, Status: run.Status, SnapshotID: run.SnapshotID, Files: run.Files,
		Bytes: run.Bytes, Message: run.Message, StartedAt: timeValue(run.StartedAt),
		FinishedAt: nullTimeValue(run.FinishedAt), JobID: run.JobID, Node: run.Node}
	if err := s.db.WithContext(ctx).Create(&row).Error; err != nil {
		return fmt.Errorf("store: add backup run: %w", translate(err))
	}
	run.ID = row.ID
	return nil
}

// FinishBackupRun records the outcome of run.
func (s *Store) FinishBackupRun(ctx context.Context, run *BackupRun) error {
	if run.FinishedAt == nil {
		t := now()
		run.FinishedAt = &t
	}
	err := oneRow(s.db.WithContext(ctx).Model(&backupRunRow{}).Where("id = ?", run.ID).Updates(map[string]any{
		"status": run.Status, "snapshot_id": run.SnapshotID, "files": run.Files, "bytes": run.Bytes,
		"message": run.Message, "finished_at": nullTimeValue(run.FinishedAt)}))
	if err != nil {
		return fmt.Errorf("store: finish backup run %d: %w", run.ID, err)
	}
	return nil
}

// ListBackupRuns returns the newest runs of a configuration (0: of any),
// at most limit (0: 50).
func (s *Store) ListBackupRuns(ctx context.Context, configID int64, limit int) ([]BackupRun, error) {
	if limit <= 0 {
		limit = 50
	}
	q := s.db.WithContext(ctx).Order("started_at DESC, id DESC").Limit(limit)
	if configID != 0 {
		q = q.Where("config_id = ?", configID)
	}
	var rows []backupRunRow
	if err := q.Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: list backup runs: %w", err)
	}
	out := make([]BackupRun, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.run())
	}
	return out, nil
}

// BackupRunOfSnapshot returns the backup run that made snapshot (its full
// id), or ErrNotFound.
func (s *Store) BackupRunOfSnapshot(ctx context.Context, snapshot string) (BackupRun, error) {
	var r backupRunRow
	err := s.db.WithContext(ctx).Where("kind = ? AND snapshot_id = ?", BackupKindBackup, snapshot).Order("id DESC").Take(&r).Error
	if err != nil {
		return BackupRun{}, fmt.Errorf("store: backup run of snapshot %s: %w", snapshot, translate(err))
	}
	return r.run(), nil
}

// SetBackupRunStopped records the containers run id stopped and has not
// started again (none: every one was started again), so that a Berth
// starting after the run was interrupted starts them
// (InterruptedBackupRuns).
func (s *Store) SetBackupRunStopped(ctx context.Context, id int64, containers []string) error {
	v := ""
	if len(containers) > 0 {
		b, err := json.Marshal(containers)
		if err != nil {
			return err
		}
		v = string(b)
	}
	if err := oneRow(s.db.WithContext(ctx).Model(&backupRunRow{}).Where("id = ?", id).
		Update("stopped_containers", v)); err != nil {
		return fmt.Errorf("store: backup run %d stopped containers: %w", id, err)
	}
	return nil
}

// InterruptedBackupRun is a run of node left running by a Berth that
// stopped during it, and the containers it had stopped.
type InterruptedBackupRun struct {
	BackupRun
	Stopped []string
}

// InterruptedBackupRuns returns node's runs ("": any node's) that are
// still "running" and started before since (by an earlier process).
func (s *Store) InterruptedBackupRuns(ctx context.Context, node string, since time.Time) ([]InterruptedBackupRun, error) {
	var rows []backupRunRow
	q := s.db.WithContext(ctx).Where("status = ? AND started_at < ?", BackupRunning, timeValue(since))
	if node != "" {
		q = q.Where("node = ?", node)
	}
	err := q.Order("id").Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("store: interrupted backup runs: %w", err)
	}
	out := make([]InterruptedBackupRun, 0, len(rows))
	for _, r := range rows {
		run := InterruptedBackupRun{BackupRun: r.run()}
		if r.StoppedContainers != "" {
			if err := json.Unmarshal([]byte(r.StoppedContainers), &run.Stopped); err != nil {
				return nil, fmt.Errorf("store: backup run %d stopped containers: %w", r.ID, err)
			}
		}
		out = append(out, run)
	}
	return out, nil
}
