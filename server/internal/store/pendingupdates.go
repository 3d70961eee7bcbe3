package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// PendingUpdate is a container whose image has a newer version in its
// registry, as an update check found it.
type PendingUpdate struct {
	ID             int64
	EnvironmentID  int64
	ContainerName  string
	ContainerID    string
	Image          string // the container's image reference
	CurrentImageID string
	NewDigest      string // the registry's manifest digest
	CheckedAt      time.Time
}

// pendingUpdateRow is a row of the pending_updates table.
type pendingUpdateRow struct {
	ID             int64
	EnvironmentID  int64
	ContainerName  string
	ContainerID    string
	Image          string
	CurrentImageID string `gorm:"column:current_image_id"`
	NewDigest      string
	CheckedAt      dbTime
}

func (pendingUpdateRow) TableName() string { return "pending_updates" }

// ReplacePendingUpdates makes list the pending updates of an environment,
// in one transaction.
func (s *Store) ReplacePendingUpdates(ctx context.Context, envID int64, list []PendingUpdate) error {
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Where("environment_id = ?", envID).Delete(&pendingUpdateRow{}).Error; err != nil {
			return err
		}
		for _, p := range list {
			r := pendingUpdateRow{EnvironmentID: envID, ContainerName: p.ContainerName, ContainerID: p.ContainerID,
				Image: p.Image, CurrentImageID: p.CurrentImageID, NewDigest: p.NewDigest, CheckedAt: timeValue(p.CheckedAt)}
			if err := tx.Create(&r).Error; err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: replace pending updates of environment %d: %w", envID, translate(err))
	}
	return nil
}

// ListPendingUpdates returns the pending updates of an environment by
// container name.
func (s *Store) ListPendingUpdates(ctx context.Context, envID int64) ([]PendingUpdate, error) {
	var rows []pendingUpdateRow
	if err := s.db.WithContext(ctx).Where("environment_id = ?", envID).Order("container_name").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: list pending updates: %w", err)
	}
	out := make([]PendingUpdate, 0, len(rows))
	for _, r := range rows {
		out = append(out, PendingUpdate{ID: r.ID, EnvironmentID: r.EnvironmentID, ContainerName: r.ContainerName,
			ContainerID: r.ContainerID, Image: r.Image, CurrentImageID: r.CurrentImageID, NewDigest: r.NewDigest,
			CheckedAt: r.CheckedAt.Time})
	}
	return out, nil
}

// DeletePendingUpdate forgets the pending update of a container; deleted is
// false when there was none.
func (s *Store) DeletePendingUpdate(ctx context.Context, envID int64, containerName string) (deleted bool, err error) {
	res := s.db.WithContext(ctx).Where("environment_id = ? AND container_name = ?", envID, containerName).Delete(&pendingUpdateRow{})
	if res.Error != nil {
		return false, fmt.Errorf("store: delete pending update of %q: %w", containerName, res.Error)
	}
	return res.RowsAffected > 0, nil
}

// ClearPendingUpdates forgets every pending update of an environment and
// returns how many there were.
func (s *Store) ClearPendingUpdates(ctx context.Context, envID int64) (int64, error) {
	res := s.db.WithContext(ctx).Where("environment_id = ?", envID).Delete(&pendingUpdateRow{})
	if res.Error != nil {
		return 0, fmt.Errorf("store: clear pending updates of environment %d: %w", envID, res.Error)
	}
	return res.RowsAffected, nil
}
