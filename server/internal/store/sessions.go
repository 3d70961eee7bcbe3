package store

import (
	"context"
	"fmt"
	"time"
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

// sessionColumns is the column list scanSession reads, in its order.
const sessionColumns = `id, user_id, provider, created_at, expires_at, last_seen_at, ip, user_agent`

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
	_, err := s.db.ExecContext(ctx, s.rebind(`
		INSERT INTO sessions (id, user_id, provider, created_at, expires_at, last_seen_at, ip, user_agent)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`),
		sess.ID, sess.UserID, sess.Provider, s.timeArg(created), s.timeArg(sess.ExpiresAt), s.timeArg(lastSeen),
		sess.IP, sess.UserAgent)
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
	row := s.db.QueryRowContext(ctx, s.rebind(`SELECT `+sessionColumns+` FROM sessions WHERE id = ?`), id)
	sess, err := scanSession(row)
	if err != nil {
		// The id is a token hash: keep it out of error messages.
		return Session{}, fmt.Errorf("store: get session: %w", translate(err))
	}
	return sess, nil
}

// TouchSession sets the session's LastSeenAt to at. A missing session is
// ErrNotFound.
func (s *Store) TouchSession(ctx context.Context, id string, at time.Time) error {
	if err := s.execOne(ctx, `UPDATE sessions SET last_seen_at = ? WHERE id = ?`, s.timeArg(at), id); err != nil {
		return fmt.Errorf("store: touch session: %w", err)
	}
	return nil
}

// DeleteSession deletes the session with the given id, if there is one.
func (s *Store) DeleteSession(ctx context.Context, id string) error {
	if _, err := s.db.ExecContext(ctx, s.rebind(`DELETE FROM sessions WHERE id = ?`), id); err != nil {
		return fmt.Errorf("store: delete session: %w", err)
	}
	return nil
}

// DeleteUserSessions deletes every session of the user.
func (s *Store) DeleteUserSessions(ctx context.Context, userID int64) error {
	if _, err := s.db.ExecContext(ctx, s.rebind(`DELETE FROM sessions WHERE user_id = ?`), userID); err != nil {
		return fmt.Errorf("store: delete sessions of user %d: %w", userID, err)
	}
	return nil
}

// DeleteExpiredSessions deletes the sessions whose ExpiresAt is not after
// at (the caller's now), and returns how many it deleted.
func (s *Store) DeleteExpiredSessions(ctx context.Context, at time.Time) (int64, error) {
	res, err := s.db.ExecContext(ctx, s.rebind(`DELETE FROM sessions WHERE expires_at <= ?`), s.timeArg(at))
	if err != nil {
		return 0, fmt.Errorf("store: delete expired sessions: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("store: delete expired sessions: %w", err)
	}
	return n, nil
}

func scanSession(row rowScanner) (Session, error) {
	var (
		sess                       Session
		created, expires, lastSeen dbTime
	)
	err := row.Scan(&sess.ID, &sess.UserID, &sess.Provider, &created, &expires, &lastSeen, &sess.IP, &sess.UserAgent)
	if err != nil {
		return Session{}, err
	}
	sess.CreatedAt, sess.ExpiresAt, sess.LastSeenAt = created.Time, expires.Time, lastSeen.Time
	return sess, nil
}
