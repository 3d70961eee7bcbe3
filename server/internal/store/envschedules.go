package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Kinds of environment schedules.
const (
	EnvUpdateCheck = "env_update_check"
	EnvImagePrune  = "image_prune"
)

// EnvSchedule is an environment's update-check or image-prune schedule. Its
// switch is the environment's own flag (UpdateCheckEnabled or
// ImagePruneEnabled; AutoUpdate is UpdateCheckAutoUpdate); this record holds
// the rest. Configured is false for one never saved (the defaults).
type EnvSchedule struct {
	EnvironmentID         int64
	Kind                  string // env_update_check | image_prune
	Enabled               bool
	AutoUpdate            bool   // update check: update the containers found
	CronExpression        string // 5 fields
	VulnerabilityCriteria string // update check with auto-update
	PruneMode             string // image prune: dangling | all
	Configured            bool
	CreatedAt, UpdatedAt  time.Time
}

// envScheduleRow is a row of the environment_schedules table.
type envScheduleRow struct {
	EnvironmentID         int64  `gorm:"primaryKey"`
	Kind                  string `gorm:"primaryKey"`
	CronExpression        string
	VulnerabilityCriteria string
	PruneMode             string
	CreatedAt             dbTime
	UpdatedAt             dbTime
}

func (envScheduleRow) TableName() string { return "environment_schedules" }

// Defaults of an environment schedule never saved.
const (
	DefaultUpdateCheckCron = "0 4 * * *"
	DefaultImagePruneCron  = "0 3 * * 0"
)

// envSchedule combines a row (nil: none saved) with the environment's flags.
func envSchedule(e Environment, kind string, r *envScheduleRow) EnvSchedule {
	es := EnvSchedule{EnvironmentID: e.ID, Kind: kind, VulnerabilityCriteria: "never", PruneMode: "dangling"}
	switch kind {
	case EnvUpdateCheck:
		es.Enabled, es.AutoUpdate, es.CronExpression = e.UpdateCheckEnabled, e.UpdateCheckAutoUpdate, DefaultUpdateCheckCron
	case EnvImagePrune:
		es.Enabled, es.CronExpression = e.ImagePruneEnabled, DefaultImagePruneCron
	}
	if r != nil {
		es.Configured = true
		es.CronExpression, es.VulnerabilityCriteria, es.PruneMode = r.CronExpression, r.VulnerabilityCriteria, r.PruneMode
		es.CreatedAt, es.UpdatedAt = r.CreatedAt.Time, r.UpdatedAt.Time
	}
	return es
}

// GetEnvSchedule returns an environment's schedule of kind (the defaults when
// never saved), or ErrNotFound for an unknown environment.
func (s *Store) GetEnvSchedule(ctx context.Context, envID int64, kind string) (EnvSchedule, error) {
	e, err := s.GetEnvironment(ctx, envID)
	if err != nil {
		return EnvSchedule{}, err
	}
	var r envScheduleRow
	err = s.db.WithContext(ctx).Where("environment_id = ? AND kind = ?", envID, kind).Take(&r).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		return envSchedule(e, kind, nil), nil
	case err != nil:
		return EnvSchedule{}, fmt.Errorf("store: get %s of environment %d: %w", kind, envID, err)
	}
	return envSchedule(e, kind, &r), nil
}

// ListEnvSchedules returns the schedules of every environment that has one
// saved or switched on, ordered by environment and kind.
func (s *Store) ListEnvSchedules(ctx context.Context) ([]EnvSchedule, error) {
	envs, err := s.ListEnvironments(ctx)
	if err != nil {
		return nil, err
	}
	var rows []envScheduleRow
	if err := s.db.WithContext(ctx).Order("environment_id, kind").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: list environment schedules: %w", err)
	}
	saved := map[[2]any]*envScheduleRow{}
	for i := range rows {
		saved[[2]any{rows[i].EnvironmentID, rows[i].Kind}] = &rows[i]
	}
	var out []EnvSchedule
	for _, e := range envs {
		for _, kind := range []string{EnvUpdateCheck, EnvImagePrune} {
			es := envSchedule(e, kind, saved[[2]any{e.ID, kind}])
			if es.Configured || es.Enabled {
				out = append(out, es)
			}
		}
	}
	return out, nil
}

// SaveEnvSchedule stores es: its switch (and the update check's auto-update)
// on the environment, the rest in its record, in one transaction.
// ErrNotFound for an unknown environment.
func (s *Store) SaveEnvSchedule(ctx context.Context, es *EnvSchedule) error {
	t := now()
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		flags := map[string]any{"updated_at": timeValue(t)}
		switch es.Kind {
		case EnvUpdateCheck:
			flags["update_check_enabled"], flags["update_check_auto_update"] = es.Enabled, es.AutoUpdate
		case EnvImagePrune:
			flags["image_prune_enabled"] = es.Enabled
		default:
			return fmt.Errorf("unknown environment schedule kind %q", es.Kind)
		}
		if err := oneRow(tx.Model(&environmentRow{}).Where("id = ?", es.EnvironmentID).Updates(flags)); err != nil {
			return err
		}
		r := envScheduleRow{EnvironmentID: es.EnvironmentID, Kind: es.Kind, CronExpression: es.CronExpression,
			VulnerabilityCriteria: es.VulnerabilityCriteria, PruneMode: es.PruneMode, CreatedAt: timeValue(t), UpdatedAt: timeValue(t)}
		return tx.Clauses(clause.OnConflict{
			Columns:   []clause.Column{{Name: "environment_id"}, {Name: "kind"}},
			DoUpdates: clause.AssignmentColumns([]string{"cron_expression", "vulnerability_criteria", "prune_mode", "updated_at"}),
		}).Create(&r).Error
	})
	if err != nil {
		return fmt.Errorf("store: save %s of environment %d: %w", es.Kind, es.EnvironmentID, translate(err))
	}
	saved, err := s.GetEnvSchedule(ctx, es.EnvironmentID, es.Kind)
	if err != nil {
		return err
	}
	*es = saved
	return nil
}

// DeleteEnvSchedule removes an environment's schedule of kind: its record,
// and its switch is turned off. ErrNotFound for an unknown environment.
func (s *Store) DeleteEnvSchedule(ctx context.Context, envID int64, kind string) error {
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		flags := map[string]any{"updated_at": timeValue(now())}
		switch kind {
		case EnvUpdateCheck:
			flags["update_check_enabled"], flags["update_check_auto_update"] = false, false
		case EnvImagePrune:
			flags["image_prune_enabled"] = false
		default:
			return fmt.Errorf("unknown environment schedule kind %q", kind)
		}
		if err := oneRow(tx.Model(&environmentRow{}).Where("id = ?", envID).Updates(flags)); err != nil {
			return err
		}
		return tx.Where("environment_id = ? AND kind = ?", envID, kind).Delete(&envScheduleRow{}).Error
	})
	if err != nil {
		return fmt.Errorf("store: delete %s of environment %d: %w", kind, envID, err)
	}
	return nil
}

// SetEnvironmentTimezone sets (nil: clears) the time zone of an environment's
// schedules. ErrNotFound for an unknown environment.
func (s *Store) SetEnvironmentTimezone(ctx context.Context, envID int64, tz *string) error {
	res := s.db.WithContext(ctx).Model(&environmentRow{}).Where("id = ?", envID).
		Updates(map[string]any{"timezone": tz, "updated_at": timeValue(now())})
	if err := oneRow(res); err != nil {
		return fmt.Errorf("store: set time zone of environment %d: %w", envID, err)
	}
	return nil
}
