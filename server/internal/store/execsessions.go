package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// ExecSession is a terminal session created through Berth: an exec of an
// environment's engine that its creator (or an admin) attaches once. The
// row is what every server sharing the database reads, so that a session
// created through one replica is attached through any other, and once only.
type ExecSession struct {
	ExecID        string
	EnvironmentID int64
	OwnerID       int64 // the user who created it (0: no signed-in user)
	TTY           bool
	CreatedAt     time.Time
	AttachedAt    *time.Time // nil: not attached yet
	// What starting the session needs on a replica that did not create it
	// (a Hawser edge agent's exec is opened at attach time): the
	// container, the command (space-separated), the user and the terminal
	// size asked for before the attach (0: none yet).
	ContainerID string
	Cmd         string
	User        string
	Rows, Cols  int
}

// execSessionRow is a row of the exec_sessions table.
type execSessionRow struct {
	ExecID        string `gorm:"primaryKey"`
	EnvironmentID int64
	OwnerID       int64
	TTY           bool `gorm:"column:tty"`
	CreatedAt     dbTime
	AttachedAt    dbTime
	ContainerID   string
	Cmd           string
	ExecUser      string
	TTYRows       int `gorm:"column:tty_rows"`
	TTYCols       int `gorm:"column:tty_cols"`
}

func (execSessionRow) TableName() string { return "exec_sessions" }

func (r execSessionRow) session() ExecSession {
	return ExecSession{ExecID: r.ExecID, EnvironmentID: r.EnvironmentID, OwnerID: r.OwnerID, TTY: r.TTY,
		CreatedAt: r.CreatedAt.Time, AttachedAt: r.AttachedAt.ptr(), ContainerID: r.ContainerID, Cmd: r.Cmd,
		User: r.ExecUser, Rows: r.TTYRows, Cols: r.TTYCols}
}

// CreateExecSession inserts sess (a zero CreatedAt is set to now) and, in
// the same transaction, deletes the sessions that can no longer be used:
// those created before unattachedBefore and never attached (their attach
// window is over), and those attached before attachedBefore (a session
// whose server stopped without ending it). An ExecID already in use is
// ErrConflict; an EnvironmentID naming no environment is ErrNotFound.
func (s *Store) CreateExecSession(ctx context.Context, sess *ExecSession, unattachedBefore, attachedBefore time.Time) error {
	created := sess.CreatedAt
	if created.IsZero() {
		created = now()
	}
	row := execSessionRow{ExecID: sess.ExecID, EnvironmentID: sess.EnvironmentID, OwnerID: sess.OwnerID, TTY: sess.TTY,
		CreatedAt: timeValue(created), AttachedAt: nullTimeValue(sess.AttachedAt), ContainerID: sess.ContainerID,
		Cmd: sess.Cmd, ExecUser: sess.User, TTYRows: sess.Rows, TTYCols: sess.Cols}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Where("attached_at IS NULL AND created_at < ?", timeValue(unattachedBefore)).
			Or("attached_at IS NOT NULL AND attached_at < ?", timeValue(attachedBefore)).
			Delete(&execSessionRow{}).Error; err != nil {
			return err
		}
		return tx.Create(&row).Error
	})
	if isForeignKeyViolation(err) {
		return fmt.Errorf("store: create exec session in environment %d: environment: %w", sess.EnvironmentID, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("store: create exec session in environment %d: %w", sess.EnvironmentID, translate(err))
	}
	sess.CreatedAt = created
	return nil
}

// GetExecSession returns the session of execID, or ErrNotFound.
func (s *Store) GetExecSession(ctx context.Context, execID string) (ExecSession, error) {
	var r execSessionRow
	if err := s.db.WithContext(ctx).Where("exec_id = ?", execID).Take(&r).Error; err != nil {
		return ExecSession{}, fmt.Errorf("store: get exec session: %w", translate(err))
	}
	return r.session(), nil
}

// ErrExecAttached is returned, wrapped, by AttachExecSession when the
// session was attached already (or its attach window closed meanwhile).
var ErrExecAttached = errors.New("exec session already attached")

// AttachExecSession marks the session of execID in environment envID
// attached at at, provided it is not attached yet and was created after
// createdAfter (its attach window is still open). One statement decides,
// so that of two servers attaching one session at the same time exactly
// one succeeds; the other gets ErrExecAttached.
func (s *Store) AttachExecSession(ctx context.Context, execID string, envID int64, at, createdAfter time.Time) error {
	res := s.db.WithContext(ctx).Model(&execSessionRow{}).
		Where("exec_id = ? AND environment_id = ? AND attached_at IS NULL AND created_at > ?", execID, envID, timeValue(createdAfter)).
		Update("attached_at", timeValue(at))
	if res.Error != nil {
		return fmt.Errorf("store: attach exec session: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return fmt.Errorf("store: attach exec session: %w", ErrExecAttached)
	}
	return nil
}

// SizeExecSession records the terminal size asked for the session of
// execID before it is attached (whichever replica attaches it opens it at
// that size); an attached or unknown session is left as it is.
func (s *Store) SizeExecSession(ctx context.Context, execID string, rows, cols int) error {
	err := s.db.WithContext(ctx).Model(&execSessionRow{}).Where("exec_id = ? AND attached_at IS NULL", execID).
		Updates(map[string]any{"tty_rows": rows, "tty_cols": cols}).Error
	if err != nil {
		return fmt.Errorf("store: size exec session: %w", err)
	}
	return nil
}

// DeleteExecSession forgets the session of execID, if there is one.
func (s *Store) DeleteExecSession(ctx context.Context, execID string) error {
	if err := s.db.WithContext(ctx).Where("exec_id = ?", execID).Delete(&execSessionRow{}).Error; err != nil {
		return fmt.Errorf("store: delete exec session: %w", err)
	}
	return nil
}
