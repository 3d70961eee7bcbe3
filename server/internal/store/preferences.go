package store

import (
	"context"
	"fmt"

	"gorm.io/gorm/clause"
)

// Preference scopes: which part of the console a preferences object is for.
const (
	PrefsProfile   = "profile"
	PrefsDashboard = "dashboard"
)

// preferenceRow is a row of the user_preferences table.
type preferenceRow struct {
	UserID    int64  `gorm:"primaryKey"`
	Scope     string `gorm:"primaryKey"`
	Value     string
	UpdatedAt dbTime
}

func (preferenceRow) TableName() string { return "user_preferences" }

// GetPreferences returns the JSON object a user stored under scope, or
// ErrNotFound. User 0 is the anonymous user (authentication disabled).
func (s *Store) GetPreferences(ctx context.Context, userID int64, scope string) (string, error) {
	var r preferenceRow
	err := s.db.WithContext(ctx).Where("user_id = ? AND scope = ?", userID, scope).Take(&r).Error
	if err != nil {
		return "", fmt.Errorf("store: get preferences %q of user %d: %w", scope, userID, translate(err))
	}
	return r.Value, nil
}

// SetPreferences replaces the JSON object a user stores under scope.
func (s *Store) SetPreferences(ctx context.Context, userID int64, scope, value string) error {
	err := s.db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "user_id"}, {Name: "scope"}},
		DoUpdates: clause.AssignmentColumns([]string{"value", "updated_at"}),
	}).Create(&preferenceRow{UserID: userID, Scope: scope, Value: value, UpdatedAt: timeValue(now())}).Error
	if err != nil {
		return fmt.Errorf("store: set preferences %q of user %d: %w", scope, userID, translate(err))
	}
	return nil
}
