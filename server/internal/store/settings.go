package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// settingRow is a row of the settings table.
type settingRow struct {
	Key       string `gorm:"primaryKey"`
	Value     string
	UpdatedAt dbTime
}

func (settingRow) TableName() string { return "settings" }

// GetSetting returns the value stored under key, or ErrNotFound.
func (s *Store) GetSetting(ctx context.Context, key string) (string, error) {
	value, err := getSetting(ctx, s.db, key)
	if err != nil {
		return "", fmt.Errorf("store: get setting %q: %w", key, err)
	}
	return value, nil
}

// IntSetting returns the whole number stored under key, or def when none
// is stored or the stored value is not a number.
func (s *Store) IntSetting(ctx context.Context, key string, def int) (int, error) {
	return parsedSetting(ctx, s, key, def, strconv.Atoi)
}

// BoolSetting returns the boolean stored under key, or def when none is
// stored or the stored value is not a boolean.
func (s *Store) BoolSetting(ctx context.Context, key string, def bool) (bool, error) {
	return parsedSetting(ctx, s, key, def, strconv.ParseBool)
}

// parsedSetting is the setting under key read by parse, or def.
func parsedSetting[T any](ctx context.Context, s *Store, key string, def T, parse func(string) (T, error)) (T, error) {
	v, err := s.GetSetting(ctx, key)
	if errors.Is(err, ErrNotFound) {
		return def, nil
	}
	if err != nil {
		var zero T
		return zero, err
	}
	t, err := parse(v)
	if err != nil {
		return def, nil
	}
	return t, nil
}

// SetSetting stores value under key, replacing any previous value.
func (s *Store) SetSetting(ctx context.Context, key, value string) error {
	if err := setSetting(ctx, s.db, key, value); err != nil {
		return fmt.Errorf("store: set setting %q: %w", key, err)
	}
	return nil
}

// getSetting is GetSetting inside tx.
func getSetting(ctx context.Context, tx *gorm.DB, key string) (string, error) {
	var r settingRow
	if err := tx.WithContext(ctx).Where(clause.Eq{Column: clause.Column{Name: "key"}, Value: key}).Take(&r).Error; err != nil {
		return "", translate(err)
	}
	return r.Value, nil
}

// setSetting is SetSetting inside tx: one upsert.
func setSetting(ctx context.Context, tx *gorm.DB, key, value string) error {
	err := tx.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "key"}},
		DoUpdates: clause.AssignmentColumns([]string{"value", "updated_at"}),
	}).Create(&settingRow{Key: key, Value: value, UpdatedAt: timeValue(now())}).Error
	return translate(err)
}
