package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
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

// autoUpdateColumns is the column list scanAutoUpdate reads, in its order.
const autoUpdateColumns = `id, container_name, environment_id, enabled, schedule_type,
	cron_expression, vulnerability_criteria, created_at, updated_at`

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
		err = s.inTx(ctx, func(tx *sql.Tx) error {
			var err error
			saved, err = s.upsertAutoUpdate(ctx, tx, *a)
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

func (s *Store) upsertAutoUpdate(ctx context.Context, tx *sql.Tx, a AutoUpdate) (AutoUpdate, error) {
	where, args := autoUpdateKey(a.EnvironmentID, a.ContainerName)
	var created dbTime
	err := tx.QueryRowContext(ctx, s.rebind(`SELECT id, created_at FROM auto_update_configs WHERE `+where), args...).
		Scan(&a.ID, &created)
	t := now()
	switch {
	case err == nil:
		_, err = tx.ExecContext(ctx, s.rebind(`
			UPDATE auto_update_configs SET enabled = ?, schedule_type = ?, cron_expression = ?,
				vulnerability_criteria = ?, updated_at = ?
			WHERE id = ?`),
			a.Enabled, a.ScheduleType, a.CronExpression, a.VulnerabilityCriteria, s.timeArg(t), a.ID)
		if err != nil {
			return AutoUpdate{}, translate(err)
		}
		a.CreatedAt, a.UpdatedAt = created.Time, t
		return a, nil
	case errors.Is(err, sql.ErrNoRows):
		err = tx.QueryRowContext(ctx, s.rebind(`
			INSERT INTO auto_update_configs (container_name, environment_id, enabled, schedule_type,
				cron_expression, vulnerability_criteria, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)
			RETURNING id`),
			a.ContainerName, nullInt64(a.EnvironmentID), a.Enabled, a.ScheduleType,
			a.CronExpression, a.VulnerabilityCriteria, s.timeArg(t), s.timeArg(t)).Scan(&a.ID)
		if isForeignKeyViolation(err) {
			return AutoUpdate{}, fmt.Errorf("environment %d: %w", *a.EnvironmentID, ErrNotFound)
		}
		if err != nil {
			return AutoUpdate{}, translate(err)
		}
		a.CreatedAt, a.UpdatedAt = t, t
		return a, nil
	default:
		return AutoUpdate{}, err
	}
}

// GetAutoUpdate returns the configuration of containerName in the environment
// envID (nil: no environment), or ErrNotFound.
func (s *Store) GetAutoUpdate(ctx context.Context, envID *int64, containerName string) (AutoUpdate, error) {
	where, args := autoUpdateKey(envID, containerName)
	row := s.db.QueryRowContext(ctx, s.rebind(`SELECT `+autoUpdateColumns+` FROM auto_update_configs WHERE `+where), args...)
	a, err := scanAutoUpdate(row)
	if err != nil {
		return AutoUpdate{}, fmt.Errorf("store: get auto-update %s: %w", autoUpdateName(envID, containerName), translate(err))
	}
	return a, nil
}

// ListAutoUpdates returns every auto-update configuration ordered by id.
func (s *Store) ListAutoUpdates(ctx context.Context) ([]AutoUpdate, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+autoUpdateColumns+` FROM auto_update_configs ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("store: list auto-updates: %w", err)
	}
	defer rows.Close()
	list := []AutoUpdate{}
	for rows.Next() {
		a, err := scanAutoUpdate(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list auto-updates: %w", err)
		}
		list = append(list, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list auto-updates: %w", err)
	}
	return list, nil
}

// DeleteAutoUpdate deletes the configuration of containerName in the
// environment envID (nil: no environment); deleted is false when there was none.
func (s *Store) DeleteAutoUpdate(ctx context.Context, envID *int64, containerName string) (deleted bool, err error) {
	where, args := autoUpdateKey(envID, containerName)
	res, err := s.db.ExecContext(ctx, s.rebind(`DELETE FROM auto_update_configs WHERE `+where), args...)
	if err != nil {
		return false, fmt.Errorf("store: delete auto-update %s: %w", autoUpdateName(envID, containerName), err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("store: delete auto-update %s: %w", autoUpdateName(envID, containerName), err)
	}
	return n > 0, nil
}

// autoUpdateKey returns the WHERE condition selecting one configuration and
// its arguments. NULL never equals NULL in SQL, hence the two forms.
func autoUpdateKey(envID *int64, containerName string) (string, []any) {
	if envID == nil {
		return `environment_id IS NULL AND container_name = ?`, []any{containerName}
	}
	return `environment_id = ? AND container_name = ?`, []any{*envID, containerName}
}

// autoUpdateName names a configuration in error messages.
func autoUpdateName(envID *int64, containerName string) string {
	if envID == nil {
		return fmt.Sprintf("%q", containerName)
	}
	return fmt.Sprintf("%q in environment %d", containerName, *envID)
}

func scanAutoUpdate(row rowScanner) (AutoUpdate, error) {
	var (
		a                AutoUpdate
		envID            sql.NullInt64
		created, updated dbTime
	)
	err := row.Scan(&a.ID, &a.ContainerName, &envID, &a.Enabled, &a.ScheduleType,
		&a.CronExpression, &a.VulnerabilityCriteria, &created, &updated)
	if err != nil {
		return AutoUpdate{}, err
	}
	if envID.Valid {
		a.EnvironmentID = &envID.Int64
	}
	a.CreatedAt, a.UpdatedAt = created.Time, updated.Time
	return a, nil
}

// nullInt64 is a nullable integer column's query argument.
func nullInt64(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}
