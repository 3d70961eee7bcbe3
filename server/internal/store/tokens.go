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

// apiTokenRow is a row of the api_tokens table.
type apiTokenRow struct {
	ID          int64
	UserID      int64
	Name        string
	TokenHash   string
	TokenPrefix string
	ExpiresAt   dbTime
	LastUsedAt  dbTime
	CreatedAt   dbTime
}

func (apiTokenRow) TableName() string { return "api_tokens" }

func (r apiTokenRow) token() APIToken {
	return APIToken{
		ID: r.ID, UserID: r.UserID, Name: r.Name, TokenHash: r.TokenHash, TokenPrefix: r.TokenPrefix,
		ExpiresAt: r.ExpiresAt.ptr(), LastUsedAt: r.LastUsedAt.ptr(), CreatedAt: r.CreatedAt.Time,
	}
}

// CreateAPIToken inserts t and sets its ID, and its CreatedAt when zero.
// A TokenHash already in use is ErrConflict; a UserID naming no user is
// ErrNotFound.
func (s *Store) CreateAPIToken(ctx context.Context, t *APIToken) error {
	created := t.CreatedAt
	if created.IsZero() {
		created = now()
	}
	r := apiTokenRow{
		UserID: t.UserID, Name: t.Name, TokenHash: t.TokenHash, TokenPrefix: t.TokenPrefix,
		ExpiresAt: nullTimeValue(t.ExpiresAt), LastUsedAt: nullTimeValue(t.LastUsedAt), CreatedAt: timeValue(created),
	}
	err := s.db.WithContext(ctx).Create(&r).Error
	if isForeignKeyViolation(err) {
		return fmt.Errorf("store: create API token %q for user %d: user: %w", t.Name, t.UserID, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("store: create API token %q for user %d: %w", t.Name, t.UserID, translate(err))
	}
	t.ID, t.CreatedAt = r.ID, created
	return nil
}

// GetAPITokenByHash returns the token whose TokenHash is hash, or ErrNotFound.
// An expired token is returned too: the caller compares ExpiresAt with its clock.
func (s *Store) GetAPITokenByHash(ctx context.Context, hash string) (APIToken, error) {
	var r apiTokenRow
	if err := s.db.WithContext(ctx).Where("token_hash = ?", hash).Take(&r).Error; err != nil {
		return APIToken{}, fmt.Errorf("store: get API token by hash: %w", translate(err))
	}
	return r.token(), nil
}

// GetAPIToken returns the token with the given id, or ErrNotFound.
func (s *Store) GetAPIToken(ctx context.Context, id int64) (APIToken, error) {
	var r apiTokenRow
	if err := s.db.WithContext(ctx).Where("id = ?", id).Take(&r).Error; err != nil {
		return APIToken{}, fmt.Errorf("store: get API token %d: %w", id, translate(err))
	}
	return r.token(), nil
}

// ListAPITokens returns the tokens of the user with the given id, or of every
// user when userID is 0, ordered by id.
func (s *Store) ListAPITokens(ctx context.Context, userID int64) ([]APIToken, error) {
	q := s.db.WithContext(ctx)
	if userID != 0 {
		q = q.Where("user_id = ?", userID)
	}
	var rows []apiTokenRow
	if err := q.Order("id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: list API tokens: %w", err)
	}
	tokens := make([]APIToken, 0, len(rows))
	for _, r := range rows {
		tokens = append(tokens, r.token())
	}
	return tokens, nil
}

// DeleteAPIToken deletes the token with the given id. A missing token is
// ErrNotFound.
func (s *Store) DeleteAPIToken(ctx context.Context, id int64) error {
	if err := oneRow(s.db.WithContext(ctx).Where("id = ?", id).Delete(&apiTokenRow{})); err != nil {
		return fmt.Errorf("store: delete API token %d: %w", id, err)
	}
	return nil
}

// TouchAPIToken sets the token's LastUsedAt to at. A missing token is
// ErrNotFound.
func (s *Store) TouchAPIToken(ctx context.Context, id int64, at time.Time) error {
	res := s.db.WithContext(ctx).Model(&apiTokenRow{}).Where("id = ?", id).Update("last_used_at", timeValue(at))
	if err := oneRow(res); err != nil {
		return fmt.Errorf("store: touch API token %d: %w", id, err)
	}
	return nil
}
