package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Registry is an image registry with optional credentials. Password is
// plaintext in memory and encrypted at rest.
type Registry struct {
	ID        int64
	Name      string
	URL       string // host[:port][/path] or a full URL
	Username  string
	Password  string
	IsDefault bool
	CreatedAt time.Time
	UpdatedAt time.Time
}

const registryColumns = `id, name, url, username, password, is_default, created_at, updated_at`

// ListRegistries returns every registry ordered by id.
func (s *Store) ListRegistries(ctx context.Context) ([]Registry, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+registryColumns+` FROM registries ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("store: list registries: %w", err)
	}
	defer rows.Close()
	out := []Registry{}
	for rows.Next() {
		r, err := s.scanRegistry(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list registries: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// GetRegistry returns a registry, or ErrNotFound.
func (s *Store) GetRegistry(ctx context.Context, id int64) (Registry, error) {
	r, err := s.scanRegistry(s.db.QueryRowContext(ctx, s.rebind(`SELECT `+registryColumns+` FROM registries WHERE id = ?`), id))
	if err != nil {
		return Registry{}, fmt.Errorf("store: get registry %d: %w", id, translate(err))
	}
	return r, nil
}

// CreateRegistry inserts r (ErrConflict on a taken name). When r is the
// default, the previous default stops being it, in the same transaction.
func (s *Store) CreateRegistry(ctx context.Context, r *Registry) error {
	password, err := s.box.Encrypt(r.Password)
	if err != nil {
		return fmt.Errorf("store: create registry: %w", err)
	}
	t := now()
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		if r.IsDefault {
			if err := s.clearDefaultRegistry(ctx, tx); err != nil {
				return err
			}
		}
		return tx.QueryRowContext(ctx, s.rebind(`
			INSERT INTO registries (name, url, username, password, is_default, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`),
			r.Name, r.URL, r.Username, password, r.IsDefault, s.timeArg(t), s.timeArg(t)).Scan(&r.ID)
	})
	if err != nil {
		return fmt.Errorf("store: create registry %q: %w", r.Name, translate(err))
	}
	r.CreatedAt, r.UpdatedAt = t, t
	return nil
}

// UpdateRegistry writes every field of r by ID (the default moves to r when
// r is the default).
func (s *Store) UpdateRegistry(ctx context.Context, r *Registry) error {
	password, err := s.box.Encrypt(r.Password)
	if err != nil {
		return fmt.Errorf("store: update registry: %w", err)
	}
	t := now()
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		if r.IsDefault {
			if err := s.clearDefaultRegistry(ctx, tx); err != nil {
				return err
			}
		}
		res, err := tx.ExecContext(ctx, s.rebind(`
			UPDATE registries SET name = ?, url = ?, username = ?, password = ?, is_default = ?, updated_at = ?
			WHERE id = ?`), r.Name, r.URL, r.Username, password, r.IsDefault, s.timeArg(t), r.ID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: update registry %d: %w", r.ID, translate(err))
	}
	r.UpdatedAt = t
	return nil
}

func (s *Store) clearDefaultRegistry(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, s.rebind(`UPDATE registries SET is_default = ? WHERE is_default = ?`), false, true)
	return err
}

// DeleteRegistry deletes a registry, or answers ErrNotFound.
func (s *Store) DeleteRegistry(ctx context.Context, id int64) error {
	res, err := s.db.ExecContext(ctx, s.rebind(`DELETE FROM registries WHERE id = ?`), id)
	if err != nil {
		return fmt.Errorf("store: delete registry %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("store: delete registry %d: %w", id, ErrNotFound)
	}
	return nil
}

func (s *Store) scanRegistry(row rowScanner) (Registry, error) {
	var (
		r                Registry
		password         string
		isDefault        sql.NullBool
		created, updated dbTime
	)
	if err := row.Scan(&r.ID, &r.Name, &r.URL, &r.Username, &password, &isDefault, &created, &updated); err != nil {
		return Registry{}, err
	}
	var err error
	if r.Password, err = s.box.Decrypt(password); err != nil {
		return Registry{}, err
	}
	r.IsDefault, r.CreatedAt, r.UpdatedAt = isDefault.Bool, created.Time, updated.Time
	return r, nil
}
