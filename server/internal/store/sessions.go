package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// Session is a signed-in browser. Its ID is the hex SHA-256 of the cookie
// token; the token itself is never stored.
type Session struct {
	ID         string
	UserID     int64
	Provider   string // "local", "oidc", "ldap"
	CreatedAt  time.Time
	ExpiresAt  time.Time
	LastSeenAt time.Time
	IP         string
	UserAgent  string
}

// sessionRow is a row of the sessions table.
type sessionRow struct {
	ID         string `gorm:"primaryKey"`
	UserID     int64
	Provider   string
	CreatedAt  dbTime
	ExpiresAt  dbTime
	LastSeenAt dbTime
	IP         string `gorm:"column:ip"`
	UserAgent  string
}

func (sessionRow) TableName() string { return "sessions" }

func (r sessionRow) session() Session {
	return Session{
		ID: r.ID, UserID: r.UserID, Provider: r.Provider, CreatedAt: r.CreatedAt.Time, ExpiresAt: r.ExpiresAt.Time,
		LastSeenAt: r.LastSeenAt.Time, IP: r.IP, UserAgent: r.UserAgent,
	}
}

// CreateSession inserts sess. A zero CreatedAt is set to now and a zero
// LastSeenAt to CreatedAt; ExpiresAt is the caller's. An ID already in use is
// ErrConflict; a UserID naming no user is ErrNotFound.
func (s *Store) CreateSession(ctx context.Context, sess *Session) error {
	created, lastSeen := sess.CreatedAt, sess.LastSeenAt
	if created.IsZero() {
		created = now()
	}
	if lastSeen.IsZero() {
		lastSeen = created
	}
	err := s.db.WithContext(ctx).Create(&sessionRow{
		ID: sess.ID, UserID: sess.UserID, Provider: sess.Provider, CreatedAt: timeValue(created), ExpiresAt: timeValue(sess.ExpiresAt),
		LastSeenAt: timeValue(lastSeen), IP: sess.IP, UserAgent: sess.UserAgent,
	}).Error
	if isForeignKeyViolation(err) {
		return fmt.Errorf("store: create session for user %d: user: %w", sess.UserID, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("store: create session for user %d: %w", sess.UserID, translate(err))
	}
	sess.CreatedAt, sess.LastSeenAt = created, lastSeen
	return nil
}

// GetSession returns the session with the given id, or ErrNotFound. An
// expired session is returned too: the caller compares ExpiresAt with its clock.
func (s *Store) GetSession(ctx context.Context, id string) (Session, error) {
	var r sessionRow
	if err := s.db.WithContext(ctx).Where("id = ?", id).Take(&r).Error; err != nil {
		// The id is a token hash: keep it out of error messages.
		return Session{}, fmt.Errorf("store: get session: %w", translate(err))
	}
	return r.session(), nil
}

// TouchSession sets the session's LastSeenAt to at. A missing session is
// ErrNotFound.
func (s *Store) TouchSession(ctx context.Context, id string, at time.Time) error {
	res := s.db.WithContext(ctx).Model(&sessionRow{}).Where("id = ?", id).Update("last_seen_at", timeValue(at))
	if err := oneRow(res); err != nil {
		return fmt.Errorf("store: touch session: %w", err)
	}
	return nil
}

// DeleteSession deletes the session with the given id, if there is one.
func (s *Store) DeleteSession(ctx context.Context, id string) error {
	if err := s.db.WithContext(ctx).Where("id = ?", id).Delete(&sessionRow{}).Error; err != nil {
		return fmt.Errorf("store: delete session: %w", err)
	}
	return nil
}

// DeleteUserSessions deletes every session of the user.
func (s *Store) DeleteUserSessions(ctx context.Context, userID int64) error {
	if err := s.db.WithContext(ctx).Where("user_id = ?", userID).Delete(&sessionRow{}).Error; err != nil {
		return fmt.Errorf("store: delete sessions of user %d: %w", userID, err)
	}
	return nil
}

// RevokeUserCredentials deletes the user's sessions, except keep (a session
// id; "" keeps none), and every API token of the user, in one transaction:
// what a password change, an administrator's reset and a change of the
// account's active state do, so that no credential outlives its reason.
func (s *Store) RevokeUserCredentials(ctx context.Context, userID int64, keep string) error {
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Where("user_id = ? AND id <> ?", userID, keep).Delete(&sessionRow{}).Error; err != nil {
			return err
		}
		return tx.Where("user_id = ?", userID).Delete(&apiTokenRow{}).Error
	})
	if err != nil {
		return fmt.Errorf("store: revoke credentials of user %d: %w", userID, err)
	}
	return nil
}

// DeleteExpiredSessions deletes the sessions whose ExpiresAt is not after
// at (the caller's now), and returns how many it deleted.
func (s *Store) DeleteExpiredSessions(ctx context.Context, at time.Time) (int64, error) {
	res := s.db.WithContext(ctx).Where("expires_at <= ?", timeValue(at)).Delete(&sessionRow{})
	if res.Error != nil {
		return 0, fmt.Errorf("store: delete expired sessions: %w", res.Error)
	}
	return res.RowsAffected, nil
}
