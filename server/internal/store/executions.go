package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// Execution statuses.
const (
	ExecutionRunning = "running"
	ExecutionSuccess = "success"
	ExecutionFailed  = "failed"
	ExecutionSkipped = "skipped"
)

// Execution is one run of a schedule: what triggered it, when, its outcome,
// and while it runs, the server (Node) that holds it until LeaseUntil.
type Execution struct {
	ID            int64
	ScheduleType  string
	ScheduleID    int64
	EnvironmentID *int64
	EntityName    string
	TriggeredBy   string     // cron | manual | webhook
	ScheduledFor  *time.Time // the cron tick the run claimed; nil for other triggers
	TriggeredAt   time.Time
	StartedAt     *time.Time
	CompletedAt   *time.Time
	DurationMS    *int64
	Status        string // running | success | failed | skipped
	ErrorMessage  *string
	Details       string // a JSON object, or ""
	Logs          string
	Node          string
	LeaseUntil    *time.Time
}

// executionRow is a row of the schedule_executions table.
type executionRow struct {
	ID            int64
	ScheduleType  string
	ScheduleID    int64
	EnvironmentID *int64
	EntityName    string
	TriggeredBy   string
	ScheduledFor  dbTime
	TriggeredAt   dbTime
	StartedAt     dbTime
	CompletedAt   dbTime
	DurationMS    *int64 `gorm:"column:duration_ms"`
	Status        string
	ErrorMessage  *string
	Details       *string
	Logs          string
	Node          string
	LeaseUntil    dbTime
}

func (executionRow) TableName() string { return "schedule_executions" }

func (r executionRow) execution() Execution {
	e := Execution{ID: r.ID, ScheduleType: r.ScheduleType, ScheduleID: r.ScheduleID, EnvironmentID: r.EnvironmentID,
		EntityName: r.EntityName, TriggeredBy: r.TriggeredBy, ScheduledFor: r.ScheduledFor.ptr(),
		TriggeredAt: r.TriggeredAt.Time, StartedAt: r.StartedAt.ptr(), CompletedAt: r.CompletedAt.ptr(),
		DurationMS: r.DurationMS, Status: r.Status, ErrorMessage: r.ErrorMessage, Logs: r.Logs, Node: r.Node,
		LeaseUntil: r.LeaseUntil.ptr()}
	if r.Details != nil {
		e.Details = *r.Details
	}
	return e
}

func executionRowOf(e *Execution) executionRow {
	r := executionRow{ScheduleType: e.ScheduleType, ScheduleID: e.ScheduleID, EnvironmentID: e.EnvironmentID,
		EntityName: e.EntityName, TriggeredBy: e.TriggeredBy, ScheduledFor: nullTimeValue(e.ScheduledFor),
		TriggeredAt: timeValue(e.TriggeredAt), StartedAt: nullTimeValue(e.StartedAt),
		CompletedAt: nullTimeValue(e.CompletedAt), DurationMS: e.DurationMS, Status: e.Status,
		ErrorMessage: e.ErrorMessage, Logs: e.Logs, Node: e.Node, LeaseUntil: nullTimeValue(e.LeaseUntil)}
	if e.Details != "" {
		d := e.Details
		r.Details = &d
	}
	return r
}

// AddExecution inserts e and sets its ID. It is how a server claims a run:
// a second running execution of one schedule, or a second execution of one
// cron tick (ScheduledFor), is ErrConflict, whichever server inserts it.
func (s *Store) AddExecution(ctx context.Context, e *Execution) error {
	r := executionRowOf(e)
	if err := s.db.WithContext(ctx).Create(&r).Error; err != nil {
		return fmt.Errorf("store: add %s %d execution: %w", e.ScheduleType, e.ScheduleID, translate(err))
	}
	e.ID = r.ID
	return nil
}

// RenewExecution extends the lease of a running execution held by node and
// saves its logs so far; ErrNotFound when it is no longer running there
// (another server marked it failed).
func (s *Store) RenewExecution(ctx context.Context, id int64, node string, until time.Time, logs string) error {
	res := s.db.WithContext(ctx).Model(&executionRow{}).
		Where("id = ? AND status = ? AND node = ?", id, ExecutionRunning, node).
		Updates(map[string]any{"lease_until": timeValue(until), "logs": logs})
	if err := oneRow(res); err != nil {
		return fmt.Errorf("store: renew execution %d: %w", id, err)
	}
	return nil
}

// FinishExecution records the outcome of a running execution: e's Status,
// CompletedAt, DurationMS, ErrorMessage, Details and Logs. It releases the
// lease. ErrNotFound when the execution is no longer running.
func (s *Store) FinishExecution(ctx context.Context, e *Execution) error {
	r := executionRowOf(e)
	res := s.db.WithContext(ctx).Model(&executionRow{}).Where("id = ? AND status = ?", e.ID, ExecutionRunning).
		Updates(map[string]any{"status": r.Status, "completed_at": r.CompletedAt, "duration_ms": r.DurationMS,
			"error_message": r.ErrorMessage, "details": r.Details, "logs": r.Logs, "lease_until": dbTime{}})
	if err := oneRow(res); err != nil {
		return fmt.Errorf("store: finish execution %d: %w", e.ID, err)
	}
	return nil
}

// CheckpointExecution saves the logs and details (a JSON object, or "") of
// a running execution held by node, now rather than when it ends: what a
// server must find again if it stops in the middle. ErrNotFound when it is
// no longer running there.
func (s *Store) CheckpointExecution(ctx context.Context, id int64, node, logs, details string) error {
	var d *string
	if details != "" {
		d = &details
	}
	res := s.db.WithContext(ctx).Model(&executionRow{}).
		Where("id = ? AND status = ? AND node = ?", id, ExecutionRunning, node).
		Updates(map[string]any{"logs": logs, "details": d})
	if err := oneRow(res); err != nil {
		return fmt.Errorf("store: checkpoint execution %d: %w", id, err)
	}
	return nil
}

// FailInterruptedExecutions marks failed, with message, every running
// execution that node held before it (re)started, or whose lease ran out
// before at (its server stopped renewing it), and returns them as they are
// now. Each is marked by one caller only, however many servers sweep at
// once: it is returned to the one that marked it. The executions of keep
// are never marked (node's own runs, started since it restarted).
func (s *Store) FailInterruptedExecutions(ctx context.Context, node string, at time.Time, message string, keep ...int64) ([]Execution, error) {
	stale := func(q *gorm.DB) *gorm.DB {
		q = q.Where("status = ?", ExecutionRunning)
		if len(keep) > 0 {
			q = q.Where("id NOT IN ?", keep)
		}
		if node != "" {
			return q.Where("node = ? OR lease_until IS NULL OR lease_until < ?", node, timeValue(at))
		}
		return q.Where("lease_until IS NULL OR lease_until < ?", timeValue(at))
	}
	var ids []int64
	if err := stale(s.db.WithContext(ctx).Model(&executionRow{})).Order("id").Pluck("id", &ids).Error; err != nil {
		return nil, fmt.Errorf("store: find interrupted executions: %w", err)
	}
	var failed []Execution
	for _, id := range ids {
		res := stale(s.db.WithContext(ctx).Model(&executionRow{}).Where("id = ?", id)).
			Updates(map[string]any{"status": ExecutionFailed, "completed_at": timeValue(at),
				"error_message": message, "lease_until": dbTime{}})
		if res.Error != nil {
			return failed, fmt.Errorf("store: fail interrupted execution %d: %w", id, res.Error)
		}
		if res.RowsAffected == 0 {
			continue // another server marked it meanwhile
		}
		e, err := s.GetExecution(ctx, id)
		if err != nil {
			return failed, err
		}
		failed = append(failed, e)
	}
	return failed, nil
}

// AnnotateExecution records what was done about a finished execution after
// the fact: its error message becomes message and line is added to its logs.
func (s *Store) AnnotateExecution(ctx context.Context, id int64, message, line string) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var r executionRow
		if err := tx.Where("id = ?", id).Take(&r).Error; err != nil {
			return fmt.Errorf("store: annotate execution %d: %w", id, translate(err))
		}
		res := tx.Model(&executionRow{}).Where("id = ?", id).
			Updates(map[string]any{"error_message": message, "logs": r.Logs + line + "\n"})
		if err := oneRow(res); err != nil {
			return fmt.Errorf("store: annotate execution %d: %w", id, err)
		}
		return nil
	})
}

// GetExecution returns an execution, or ErrNotFound.
func (s *Store) GetExecution(ctx context.Context, id int64) (Execution, error) {
	var r executionRow
	if err := s.db.WithContext(ctx).Where("id = ?", id).Take(&r).Error; err != nil {
		return Execution{}, fmt.Errorf("store: get execution %d: %w", id, translate(err))
	}
	return r.execution(), nil
}

// DeleteExecution deletes an execution that is not running.
func (s *Store) DeleteExecution(ctx context.Context, id int64) error {
	res := s.db.WithContext(ctx).Where("id = ? AND status <> ?", id, ExecutionRunning).Delete(&executionRow{})
	if err := oneRow(res); err != nil {
		return fmt.Errorf("store: delete execution %d: %w", id, err)
	}
	return nil
}

// DeleteExecutionsBefore deletes the finished executions triggered before t
// and returns how many.
func (s *Store) DeleteExecutionsBefore(ctx context.Context, t time.Time) (int64, error) {
	res := s.db.WithContext(ctx).Where("status <> ? AND triggered_at < ?", ExecutionRunning, timeValue(t)).
		Delete(&executionRow{})
	if res.Error != nil {
		return 0, fmt.Errorf("store: delete old executions: %w", res.Error)
	}
	return res.RowsAffected, nil
}

// ExecutionFilter narrows ListExecutions. Zero values do not filter;
// EnvironmentID keeps one environment's executions; EnvironmentIDs non-nil
// keeps executions of those environments and those of none (system
// schedules).
type ExecutionFilter struct {
	ScheduleType   string
	ScheduleID     int64
	EnvironmentID  int64
	EnvironmentIDs []int64
	Status         string
	Statuses       []string   // any of these statuses (with Status, both must hold)
	Since, Until   *time.Time // triggered in [Since, Until)
	TriggeredBy    string
	AfterID        int64   // only executions with a greater id
	IDs            []int64 // only these executions (nil: any)
	Limit, Offset  int
}

// ListExecutions returns the executions f selects, newest first, and how
// many there are in all.
func (s *Store) ListExecutions(ctx context.Context, f ExecutionFilter) ([]Execution, int64, error) {
	q := s.db.WithContext(ctx).Model(&executionRow{})
	if f.ScheduleType != "" {
		q = q.Where("schedule_type = ?", f.ScheduleType)
	}
	if f.ScheduleID != 0 {
		q = q.Where("schedule_id = ?", f.ScheduleID)
	}
	if f.EnvironmentID != 0 {
		q = q.Where("environment_id = ?", f.EnvironmentID)
	}
	if f.EnvironmentIDs != nil {
		if len(f.EnvironmentIDs) == 0 {
			q = q.Where("environment_id IS NULL")
		} else {
			q = q.Where("environment_id IS NULL OR environment_id IN ?", f.EnvironmentIDs)
		}
	}
	if f.Status != "" {
		q = q.Where("status = ?", f.Status)
	}
	if f.TriggeredBy != "" {
		q = q.Where("triggered_by = ?", f.TriggeredBy)
	}
	if len(f.Statuses) > 0 {
		q = q.Where("status IN ?", f.Statuses)
	}
	if f.Since != nil {
		q = q.Where("triggered_at >= ?", timeValue(*f.Since))
	}
	if f.Until != nil {
		q = q.Where("triggered_at < ?", timeValue(*f.Until))
	}
	if f.AfterID != 0 {
		q = q.Where("id > ?", f.AfterID)
	}
	if f.IDs != nil {
		if len(f.IDs) == 0 {
			return []Execution{}, 0, nil
		}
		q = q.Where("id IN ?", f.IDs)
	}
	var total int64
	if err := q.Count(&total).Error; err != nil {
		return nil, 0, fmt.Errorf("store: count executions: %w", err)
	}
	var rows []executionRow
	if err := q.Order("id DESC").Limit(f.Limit).Offset(f.Offset).Find(&rows).Error; err != nil {
		return nil, 0, fmt.Errorf("store: list executions: %w", err)
	}
	out := make([]Execution, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.execution())
	}
	return out, total, nil
}

// ScheduleKey names one schedule: its type and id.
type ScheduleKey struct {
	Type string
	ID   int64
}

// RecentExecutions returns the n newest executions of every schedule,
// newest first, without their logs.
func (s *Store) RecentExecutions(ctx context.Context, n int) (map[ScheduleKey][]Execution, error) {
	const cols = `id, schedule_type, schedule_id, environment_id, entity_name, triggered_by, scheduled_for,
		triggered_at, started_at, completed_at, duration_ms, status, error_message, details, node, lease_until`
	var rows []executionRow
	err := s.db.WithContext(ctx).Raw(`SELECT `+cols+` FROM (
			SELECT `+cols+`, ROW_NUMBER() OVER (PARTITION BY schedule_type, schedule_id ORDER BY id DESC) AS rn
			FROM schedule_executions) AS ranked
		WHERE rn <= ? ORDER BY schedule_type, schedule_id, id DESC`, n).Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("store: recent executions: %w", err)
	}
	out := map[ScheduleKey][]Execution{}
	for _, r := range rows {
		k := ScheduleKey{r.ScheduleType, r.ScheduleID}
		out[k] = append(out[k], r.execution())
	}
	return out, nil
}

// executionsOf narrows q to one schedule's executions.
func executionsOf(q *gorm.DB, scheduleType string, id int64) *gorm.DB {
	return q.Where("schedule_type = ? AND schedule_id = ?", scheduleType, id)
}

// LastExecution returns the newest execution of a schedule, or ErrNotFound.
func (s *Store) LastExecution(ctx context.Context, scheduleType string, id int64) (Execution, error) {
	var r executionRow
	if err := executionsOf(s.db.WithContext(ctx), scheduleType, id).Order("id DESC").Take(&r).Error; err != nil {
		return Execution{}, fmt.Errorf("store: last %s %d execution: %w", scheduleType, id, translate(err))
	}
	return r.execution(), nil
}
