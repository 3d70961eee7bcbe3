package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// AutoUpdate is the auto-update configuration of one container, in one
// environment or (EnvironmentID nil) in none.
type AutoUpdate struct {
	ID                    int64
	ContainerName         string
	EnvironmentID         *int64
	Enabled               bool
	ScheduleType          string // daily | weekly | custom
	CronExpression        string
	VulnerabilityCriteria string // never | any | critical_high | critical | more_than_current
	CreatedAt             time.Time
	UpdatedAt             time.Time
}

// autoUpdateRow is a row of the auto_update_configs table.
type autoUpdateRow struct {
	ID                    int64
	ContainerName         string
	EnvironmentID         *int64
	Enabled               bool
	ScheduleType          string
	CronExpression        string
	VulnerabilityCriteria string
	CreatedAt             dbTime
	UpdatedAt             dbTime
}

func (autoUpdateRow) TableName() string { return "auto_update_configs" }

func (r autoUpdateRow) autoUpdate() AutoUpdate {
	return AutoUpdate{
		ID: r.ID, ContainerName: r.ContainerName, EnvironmentID: r.EnvironmentID, Enabled: r.Enabled,
		ScheduleType: r.ScheduleType, CronExpression: r.CronExpression, VulnerabilityCriteria: r.VulnerabilityCriteria,
		CreatedAt: r.CreatedAt.Time, UpdatedAt: r.UpdatedAt.Time,
	}
}

// UpsertAutoUpdate creates or replaces the configuration for
// (a.EnvironmentID, a.ContainerName) and sets a.ID and its timestamps.
// An EnvironmentID naming no environment is ErrNotFound.
func (s *Store) UpsertAutoUpdate(ctx context.Context, a *AutoUpdate) error {
	var (
		saved AutoUpdate
		err   error
	)
	// Two concurrent first upserts of one key both insert; the loser sees
	// ErrConflict, and its retry finds the winner's row and updates it.
	for range 2 {
		err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			var err error
			saved, err = upsertAutoUpdate(ctx, tx, *a)
			return err
		})
		if !errors.Is(err, ErrConflict) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("store: upsert auto-update %s: %w", autoUpdateName(a.EnvironmentID, a.ContainerName), err)
	}
	*a = saved
	return nil
}

func upsertAutoUpdate(ctx context.Context, tx *gorm.DB, a AutoUpdate) (AutoUpdate, error) {
	tx = tx.WithContext(ctx)
	var cur autoUpdateRow
	err := autoUpdateKey(tx, a.EnvironmentID, a.ContainerName).Select("id", "created_at").Take(&cur).Error
	t := now()
	switch {
	case err == nil:
		err := tx.Model(&autoUpdateRow{}).Where("id = ?", cur.ID).Updates(map[string]any{
			"enabled": a.Enabled, "schedule_type": a.ScheduleType, "cron_expression": a.CronExpression,
			"vulnerability_criteria": a.VulnerabilityCriteria, "updated_at": timeValue(t),
		}).Error
		if err != nil {
			return AutoUpdate{}, translate(err)
		}
		a.ID, a.CreatedAt, a.UpdatedAt = cur.ID, cur.CreatedAt.Time, t
		return a, nil
	case errors.Is(err, gorm.ErrRecordNotFound):
		r := autoUpdateRow{ContainerName: a.ContainerName, EnvironmentID: a.EnvironmentID, Enabled: a.Enabled,
			ScheduleType: a.ScheduleType, CronExpression: a.CronExpression,
			VulnerabilityCriteria: a.VulnerabilityCriteria, CreatedAt: timeValue(t), UpdatedAt: timeValue(t)}
		err := tx.Create(&r).Error
		if isForeignKeyViolation(err) {
			return AutoUpdate{}, fmt.Errorf("environment %d: %w", *a.EnvironmentID, ErrNotFound)
		}
		if err != nil {
			return AutoUpdate{}, translate(err)
		}
		a.ID, a.CreatedAt, a.UpdatedAt = r.ID, t, t
		return a, nil
	default:
		return AutoUpdate{}, err
	}
}

// GetAutoUpdate returns the configuration of containerName in the environment
// envID (nil: no environment), or ErrNotFound.
func (s *Store) GetAutoUpdate(ctx context.Context, envID *int64, containerName string) (AutoUpdate, error) {
	var r autoUpdateRow
	if err := autoUpdateKey(s.db.WithContext(ctx), envID, containerName).Take(&r).Error; err != nil {
		return AutoUpdate{}, fmt.Errorf("store: get auto-update %s: %w", autoUpdateName(envID, containerName), translate(err))
	}
	return r.autoUpdate(), nil
}

// ListAutoUpdates returns every auto-update configuration ordered by id.
func (s *Store) ListAutoUpdates(ctx context.Context) ([]AutoUpdate, error) {
	var rows []autoUpdateRow
	if err := s.db.WithContext(ctx).Order("id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: list auto-updates: %w", err)
	}
	list := make([]AutoUpdate, 0, len(rows))
	for _, r := range rows {
		list = append(list, r.autoUpdate())
	}
	return list, nil
}

// DeleteAutoUpdate deletes the configuration of containerName in the
// environment envID (nil: no environment); deleted is false when there was none.
func (s *Store) DeleteAutoUpdate(ctx context.Context, envID *int64, containerName string) (deleted bool, err error) {
	res := autoUpdateKey(s.db.WithContext(ctx), envID, containerName).Delete(&autoUpdateRow{})
	if res.Error != nil {
		return false, fmt.Errorf("store: delete auto-update %s: %w", autoUpdateName(envID, containerName), res.Error)
	}
	return res.RowsAffected > 0, nil
}

// autoUpdateKey narrows q to one configuration. NULL never equals NULL in
// SQL, hence the two forms.
func autoUpdateKey(q *gorm.DB, envID *int64, containerName string) *gorm.DB {
	if envID == nil {
		return q.Where("environment_id IS NULL AND container_name = ?", containerName)
	}
	return q.Where("environment_id = ? AND container_name = ?", *envID, containerName)
}

// autoUpdateName names a configuration in error messages.
func autoUpdateName(envID *int64, containerName string) string {
	if envID == nil {
		return fmt.Sprintf("%q", containerName)
	}
	return fmt.Sprintf("%q in environment %d", containerName, *envID)
}

// GetAutoUpdateByID returns a configuration by id, or ErrNotFound.
func (s *Store) GetAutoUpdateByID(ctx context.Context, id int64) (AutoUpdate, error) {
	var r autoUpdateRow
	if err := s.db.WithContext(ctx).Where("id = ?", id).Take(&r).Error; err != nil {
		return AutoUpdate{}, fmt.Errorf("store: get auto-update %d: %w", id, translate(err))
	}
	return r.autoUpdate(), nil
}

// SetAutoUpdateEnabled switches a configuration on or off, or ErrNotFound.
func (s *Store) SetAutoUpdateEnabled(ctx context.Context, id int64, enabled bool) error {
	res := s.db.WithContext(ctx).Model(&autoUpdateRow{}).Where("id = ?", id).
		Updates(map[string]any{"enabled": enabled, "updated_at": timeValue(now())})
	if err := oneRow(res); err != nil {
		return fmt.Errorf("store: switch auto-update %d: %w", id, err)
	}
	return nil
}

// DeleteAutoUpdateByID deletes a configuration, or ErrNotFound.
func (s *Store) DeleteAutoUpdateByID(ctx context.Context, id int64) error {
	if err := oneRow(s.db.WithContext(ctx).Where("id = ?", id).Delete(&autoUpdateRow{})); err != nil {
		return fmt.Errorf("store: delete auto-update %d: %w", id, err)
	}
	return nil
}
