package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm/clause"
)

// Picture is an uploaded image: an environment's icon or a user's avatar.
type Picture struct {
	ContentType string
	Data        []byte
	UpdatedAt   time.Time
}

// environmentIconRow is a row of the environment_icons table.
type environmentIconRow struct {
	EnvironmentID int64 `gorm:"primaryKey;autoIncrement:false"`
	ContentType   string
	Data          []byte
	UpdatedAt     dbTime
}

func (environmentIconRow) TableName() string { return "environment_icons" }

// userAvatarRow is a row of the user_avatars table.
type userAvatarRow struct {
	UserID      int64 `gorm:"primaryKey;autoIncrement:false"`
	ContentType string
	Data        []byte
	UpdatedAt   dbTime
}

func (userAvatarRow) TableName() string { return "user_avatars" }

// GetEnvironmentIcon returns an environment's icon, or ErrNotFound.
func (s *Store) GetEnvironmentIcon(ctx context.Context, envID int64) (Picture, error) {
	var r environmentIconRow
	if err := s.db.WithContext(ctx).Where("environment_id = ?", envID).Take(&r).Error; err != nil {
		return Picture{}, fmt.Errorf("store: get icon of environment %d: %w", envID, translate(err))
	}
	return Picture{ContentType: r.ContentType, Data: r.Data, UpdatedAt: r.UpdatedAt.Time}, nil
}

// SetEnvironmentIcon replaces an environment's icon; ErrNotFound when there
// is no such environment.
func (s *Store) SetEnvironmentIcon(ctx context.Context, envID int64, p Picture) error {
	err := s.db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "environment_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"content_type", "data", "updated_at"}),
	}).Create(&environmentIconRow{EnvironmentID: envID, ContentType: p.ContentType, Data: p.Data, UpdatedAt: timeValue(now())}).Error
	if isForeignKeyViolation(err) {
		return fmt.Errorf("store: set icon of environment %d: %w", envID, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("store: set icon of environment %d: %w", envID, translate(err))
	}
	return nil
}

// DeleteEnvironmentIcon removes an environment's icon; deleted is false
// when it had none.
func (s *Store) DeleteEnvironmentIcon(ctx context.Context, envID int64) (bool, error) {
	res := s.db.WithContext(ctx).Where("environment_id = ?", envID).Delete(&environmentIconRow{})
	if res.Error != nil {
		return false, fmt.Errorf("store: delete icon of environment %d: %w", envID, translate(res.Error))
	}
	return res.RowsAffected > 0, nil
}

// GetUserAvatar returns a user's avatar, or ErrNotFound.
func (s *Store) GetUserAvatar(ctx context.Context, userID int64) (Picture, error) {
	var r userAvatarRow
	if err := s.db.WithContext(ctx).Where("user_id = ?", userID).Take(&r).Error; err != nil {
		return Picture{}, fmt.Errorf("store: get avatar of user %d: %w", userID, translate(err))
	}
	return Picture{ContentType: r.ContentType, Data: r.Data, UpdatedAt: r.UpdatedAt.Time}, nil
}

// SetUserAvatar replaces a user's avatar; ErrNotFound when there is no such
// user.
func (s *Store) SetUserAvatar(ctx context.Context, userID int64, p Picture) error {
	err := s.db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "user_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"content_type", "data", "updated_at"}),
	}).Create(&userAvatarRow{UserID: userID, ContentType: p.ContentType, Data: p.Data, UpdatedAt: timeValue(now())}).Error
	if isForeignKeyViolation(err) {
		return fmt.Errorf("store: set avatar of user %d: %w", userID, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("store: set avatar of user %d: %w", userID, translate(err))
	}
	return nil
}

// DeleteUserAvatar removes a user's avatar; deleted is false when they had
// none.
func (s *Store) DeleteUserAvatar(ctx context.Context, userID int64) (bool, error) {
	res := s.db.WithContext(ctx).Where("user_id = ?", userID).Delete(&userAvatarRow{})
	if res.Error != nil {
		return false, fmt.Errorf("store: delete avatar of user %d: %w", userID, translate(res.Error))
	}
	return res.RowsAffected > 0, nil
}
