package store

import (
	"context"
	"errors"
	"fmt"

	"gorm.io/gorm/clause"
)

// remoteStacksDirKey is the settings key of environment envID's remote
// stacks directory.
func remoteStacksDirKey(envID int64) string {
	return fmt.Sprintf("environment.%d.remote_stacks_dir", envID)
}

// RemoteStacksDir returns the stacks directory recorded for environment
// envID on its own host ("" when none is).
func (s *Store) RemoteStacksDir(ctx context.Context, envID int64) (string, error) {
	v, err := s.GetSetting(ctx, remoteStacksDirKey(envID))
	if errors.Is(err, ErrNotFound) {
		return "", nil
	}
	return v, err
}

// SetRemoteStacksDir records dir as environment envID's remote stacks
// directory; "" clears it.
func (s *Store) SetRemoteStacksDir(ctx context.Context, envID int64, dir string) error {
	if dir != "" {
		return s.SetSetting(ctx, remoteStacksDirKey(envID), dir)
	}
	err := s.db.WithContext(ctx).Where(clause.Eq{Column: clause.Column{Name: "key"}, Value: remoteStacksDirKey(envID)}).
		Delete(&settingRow{}).Error
	if err != nil {
		return fmt.Errorf("store: clear remote stacks directory of environment %d: %w", envID, translate(err))
	}
	return nil
}
