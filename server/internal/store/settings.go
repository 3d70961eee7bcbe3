package store

import (
	"context"
	"fmt"

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
