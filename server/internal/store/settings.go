package store

import (
	"context"
	"database/sql"
	"fmt"
)

// GetSetting returns the value stored under key, or ErrNotFound.
func (s *Store) GetSetting(ctx context.Context, key string) (string, error) {
	var value string
	err := s.db.QueryRowContext(ctx, s.rebind(`SELECT value FROM settings WHERE key = ?`), key).Scan(&value)
	if err != nil {
		return "", fmt.Errorf("store: get setting %q: %w", key, translate(err))
	}
	return value, nil
}

// SetSetting stores value under key, replacing any previous value.
func (s *Store) SetSetting(ctx context.Context, key, value string) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error { return s.setSetting(ctx, tx, key, value) })
	if err != nil {
		return fmt.Errorf("store: set setting %q: %w", key, err)
	}
	return nil
}

// getSetting is GetSetting inside tx.
func (s *Store) getSetting(ctx context.Context, tx *sql.Tx, key string) (string, error) {
	var value string
	err := tx.QueryRowContext(ctx, s.rebind(`SELECT value FROM settings WHERE key = ?`), key).Scan(&value)
	return value, translate(err)
}

// setSetting is SetSetting inside tx.
func (s *Store) setSetting(ctx context.Context, tx *sql.Tx, key, value string) error {
	_, err := tx.ExecContext(ctx, s.rebind(`
		INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`),
		key, value, s.timeArg(now()))
	return translate(err)
}
