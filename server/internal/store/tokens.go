package store

import (
	"context"
	"fmt"
	"time"
)

// APIToken is a bearer token a user created for scripts. TokenHash is the hex
// SHA-256 of the token; the token itself is never stored.
type APIToken struct {
	ID          int64
	UserID      int64
	Name        string
	TokenHash   string
	TokenPrefix string // the token's first characters, shown to users
	ExpiresAt   *time.Time
	LastUsedAt  *time.Time
	CreatedAt   time.Time
}

// apiTokenColumns is the column list scanAPIToken reads, in its order.
const apiTokenColumns = `id, user_id, name, token_hash, token_prefix, expires_at, last_used_at, created_at`

// CreateAPIToken inserts t and sets its ID, and its CreatedAt when zero.
// A TokenHash already in use is ErrConflict; a UserID naming no user is
// ErrNotFound.
func (s *Store) CreateAPIToken(ctx context.Context, t *APIToken) error {
	created := t.CreatedAt
	if created.IsZero() {
		created = now()
	}
	var id int64
	err := s.db.QueryRowContext(ctx, s.rebind(`
		INSERT INTO api_tokens (user_id, name, token_hash, token_prefix, expires_at, last_used_at, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		RETURNING id`),
		t.UserID, t.Name, t.TokenHash, t.TokenPrefix, s.nullTimeArg(t.ExpiresAt), s.nullTimeArg(t.LastUsedAt),
		s.timeArg(created)).Scan(&id)
	if isForeignKeyViolation(err) {
		return fmt.Errorf("store: create API token %q for user %d: user: %w", t.Name, t.UserID, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("store: create API token %q for user %d: %w", t.Name, t.UserID, translate(err))
	}
	t.ID, t.CreatedAt = id, created
	return nil
}

// GetAPITokenByHash returns the token whose TokenHash is hash, or ErrNotFound.
// An expired token is returned too: the caller compares ExpiresAt with its clock.
func (s *Store) GetAPITokenByHash(ctx context.Context, hash string) (APIToken, error) {
	row := s.db.QueryRowContext(ctx, s.rebind(`SELECT `+apiTokenColumns+` FROM api_tokens WHERE token_hash = ?`), hash)
	t, err := scanAPIToken(row)
	if err != nil {
		return APIToken{}, fmt.Errorf("store: get API token by hash: %w", translate(err))
	}
	return t, nil
}

// GetAPIToken returns the token with the given id, or ErrNotFound.
func (s *Store) GetAPIToken(ctx context.Context, id int64) (APIToken, error) {
	row := s.db.QueryRowContext(ctx, s.rebind(`SELECT `+apiTokenColumns+` FROM api_tokens WHERE id = ?`), id)
	t, err := scanAPIToken(row)
	if err != nil {
		return APIToken{}, fmt.Errorf("store: get API token %d: %w", id, translate(err))
	}
	return t, nil
}

// ListAPITokens returns the tokens of the user with the given id, or of every
// user when userID is 0, ordered by id.
func (s *Store) ListAPITokens(ctx context.Context, userID int64) ([]APIToken, error) {
	query, args := `SELECT `+apiTokenColumns+` FROM api_tokens ORDER BY id`, []any(nil)
	if userID != 0 {
		query, args = `SELECT `+apiTokenColumns+` FROM api_tokens WHERE user_id = ? ORDER BY id`, []any{userID}
	}
	rows, err := s.db.QueryContext(ctx, s.rebind(query), args...)
	if err != nil {
		return nil, fmt.Errorf("store: list API tokens: %w", err)
	}
	defer rows.Close()
	tokens := []APIToken{}
	for rows.Next() {
		t, err := scanAPIToken(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list API tokens: %w", err)
		}
		tokens = append(tokens, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list API tokens: %w", err)
	}
	return tokens, nil
}

// DeleteAPIToken deletes the token with the given id. A missing token is
// ErrNotFound.
func (s *Store) DeleteAPIToken(ctx context.Context, id int64) error {
	if err := s.execOne(ctx, `DELETE FROM api_tokens WHERE id = ?`, id); err != nil {
		return fmt.Errorf("store: delete API token %d: %w", id, err)
	}
	return nil
}

// TouchAPIToken sets the token's LastUsedAt to at. A missing token is
// ErrNotFound.
func (s *Store) TouchAPIToken(ctx context.Context, id int64, at time.Time) error {
	if err := s.execOne(ctx, `UPDATE api_tokens SET last_used_at = ? WHERE id = ?`, s.timeArg(at), id); err != nil {
		return fmt.Errorf("store: touch API token %d: %w", id, err)
	}
	return nil
}

func scanAPIToken(row rowScanner) (APIToken, error) {
	var (
		t                          APIToken
		expires, lastUsed, created dbTime
	)
	err := row.Scan(&t.ID, &t.UserID, &t.Name, &t.TokenHash, &t.TokenPrefix, &expires, &lastUsed, &created)
	if err != nil {
		return APIToken{}, err
	}
	t.ExpiresAt, t.LastUsedAt, t.CreatedAt = expires.ptr(), lastUsed.ptr(), created.Time
	return t, nil
}
