package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// jobOwnerRow is a row of the job_owners table: which replica runs a job
// (jobs live in the memory of the server that runs them; a follow-up
// request that reaches another replica is forwarded to this one).
type jobOwnerRow struct {
	JobID     string `gorm:"primaryKey"`
	ReplicaID string
	CreatedAt dbTime
}

func (jobOwnerRow) TableName() string { return "job_owners" }

// AddJobOwner records that replica replicaID runs job jobID, created at
// at, and, in the same transaction, deletes the rows of jobs created before
// sweepBefore (jobs that no server keeps any more: a job ends within its
// timeout and is forgotten its retention later).
func (s *Store) AddJobOwner(ctx context.Context, jobID, replicaID string, at, sweepBefore time.Time) error {
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Where("created_at < ?", timeValue(sweepBefore)).Delete(&jobOwnerRow{}).Error; err != nil {
			return err
		}
		return tx.Create(&jobOwnerRow{JobID: jobID, ReplicaID: replicaID, CreatedAt: timeValue(at)}).Error
	})
	if err != nil {
		return fmt.Errorf("store: add owner of job %s: %w", jobID, translate(err))
	}
	return nil
}

// JobOwner returns the replica that runs job jobID, or ErrNotFound.
func (s *Store) JobOwner(ctx context.Context, jobID string) (string, error) {
	var r jobOwnerRow
	if err := s.db.WithContext(ctx).Where("job_id = ?", jobID).Take(&r).Error; err != nil {
		return "", fmt.Errorf("store: owner of job %s: %w", jobID, translate(err))
	}
	return r.ReplicaID, nil
}

// DeleteJobOwner forgets the owner of job jobID, if it has one.
func (s *Store) DeleteJobOwner(ctx context.Context, jobID string) error {
	if err := s.db.WithContext(ctx).Where("job_id = ?", jobID).Delete(&jobOwnerRow{}).Error; err != nil {
		return fmt.Errorf("store: delete owner of job %s: %w", jobID, err)
	}
	return nil
}
