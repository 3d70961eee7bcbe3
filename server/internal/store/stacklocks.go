package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// stackLockRow is a stack's lock across replicas (docs/scale.md): the
// operation holding it (holder, unique per acquisition) and its replica. It
// is live while the replica's row is.
type stackLockRow struct {
	EnvironmentID int64  `gorm:"primaryKey"`
	Name          string `gorm:"primaryKey"`
	ReplicaID     string
	Holder        string
	AcquiredAt    dbTime
}

func (stackLockRow) TableName() string { return "stack_locks" }

// ClaimStackLock takes the lock of stack name in environment envID for the
// operation holder of replica replicaID, in one transaction, when no
// operation holds it or its holder's replica is not live at now. It
// reports whether the lock is now holder's; otherwise it names the replica
// holding it. A missing environment is ErrNotFound.
func (s *Store) ClaimStackLock(ctx context.Context, envID int64, name, replicaID, holder string, now time.Time) (claimed bool, heldBy string, err error) {
	row := stackLockRow{EnvironmentID: envID, Name: name, ReplicaID: replicaID, Holder: holder, AcquiredAt: timeValue(now.UTC())}
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&row)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 1 {
			claimed = true
			return nil
		}
		var cur stackLockRow
		q := tx.Where("environment_id = ? AND name = ?", envID, name)
		if s.dialect == dialectPostgres {
			q = q.Clauses(clause.Locking{Strength: "UPDATE"})
		}
		if err := q.Take(&cur).Error; err != nil {
			return err
		}
		var rep replicaRow
		switch err := tx.Where("id = ?", cur.ReplicaID).Take(&rep).Error; {
		case err == nil:
			if rep.replica().Live(now) {
				heldBy = cur.ReplicaID
				return nil
			}
		case !errors.Is(err, gorm.ErrRecordNotFound):
			return err
		}
		// Its replica is gone: the lock is free.
		claimed = true
		return tx.Model(&stackLockRow{}).Where("environment_id = ? AND name = ?", envID, name).Updates(map[string]any{
			"replica_id": replicaID, "holder": holder, "acquired_at": row.AcquiredAt,
		}).Error
	})
	if err != nil {
		if isForeignKeyViolation(err) {
			return false, "", fmt.Errorf("store: claim lock of stack %s: %w", name, ErrNotFound)
		}
		return false, "", fmt.Errorf("store: claim lock of stack %s: %w", name, translate(err))
	}
	return claimed, heldBy, nil
}

// ReleaseStackLock removes the lock of stack name in environment envID if
// the operation holder still holds it.
func (s *Store) ReleaseStackLock(ctx context.Context, envID int64, name, holder string) error {
	err := s.db.WithContext(ctx).Where("environment_id = ? AND name = ? AND holder = ?", envID, name, holder).
		Delete(&stackLockRow{}).Error
	if err != nil {
		return fmt.Errorf("store: release lock of stack %s: %w", name, err)
	}
	return nil
}
