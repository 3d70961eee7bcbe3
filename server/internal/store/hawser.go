package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// HawserToken is the token of a Hawser edge agent (the reference's agent).
// The token itself is never stored: Hash is its Argon2id hash, Prefix its
// first 8 characters.
type HawserToken struct {
	ID            int64
	EnvironmentID int64
	Name          string
	Prefix        string
	Hash          string
	Active        bool
	LastUsed      *time.Time
	ExpiresAt     *time.Time
	CreatedAt     time.Time
}

type hawserTokenRow struct {
	ID            int64
	EnvironmentID int64
	Name          string
	TokenPrefix   string
	TokenHash     string
	IsActive      bool
	LastUsed      dbTime
	ExpiresAt     dbTime
	CreatedAt     dbTime
}

func (hawserTokenRow) TableName() string { return "hawser_tokens" }

func (r hawserTokenRow) token() HawserToken {
	return HawserToken{ID: r.ID, EnvironmentID: r.EnvironmentID, Name: r.Name, Prefix: r.TokenPrefix, Hash: r.TokenHash,
		Active: r.IsActive, LastUsed: r.LastUsed.ptr(), ExpiresAt: r.ExpiresAt.ptr(), CreatedAt: r.CreatedAt.Time}
}

// CreateHawserToken records t as its environment's only active token: the
// older ones are revoked in the same transaction. It sets t.ID and
// t.CreatedAt.
func (s *Store) CreateHawserToken(ctx context.Context, t *HawserToken) error {
	now := time.Now().UTC().Truncate(time.Microsecond)
	row := hawserTokenRow{EnvironmentID: t.EnvironmentID, Name: t.Name, TokenPrefix: t.Prefix, TokenHash: t.Hash,
		IsActive: true, ExpiresAt: nullTimeValue(t.ExpiresAt), CreatedAt: timeValue(now)}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Model(&hawserTokenRow{}).Where("environment_id = ? AND is_active", t.EnvironmentID).
			Update("is_active", false).Error; err != nil {
			return err
		}
		return tx.Create(&row).Error
	})
	if err != nil {
		return fmt.Errorf("store: create hawser token: %w", translate(err))
	}
	t.ID, t.CreatedAt, t.Active = row.ID, now, true
	return nil
}

// ListHawserTokens returns every Hawser token, newest first.
func (s *Store) ListHawserTokens(ctx context.Context) ([]HawserToken, error) {
	var rows []hawserTokenRow
	if err := s.db.WithContext(ctx).Order("id DESC").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: list hawser tokens: %w", err)
	}
	out := make([]HawserToken, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.token())
	}
	return out, nil
}

// ActiveHawserTokensByPrefix returns the active tokens whose prefix is prefix.
func (s *Store) ActiveHawserTokensByPrefix(ctx context.Context, prefix string) ([]HawserToken, error) {
	var rows []hawserTokenRow
	if err := s.db.WithContext(ctx).Where("token_prefix = ? AND is_active", prefix).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: hawser tokens by prefix: %w", err)
	}
	out := make([]HawserToken, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.token())
	}
	return out, nil
}

// HawserToken returns one token, or ErrNotFound.
func (s *Store) HawserToken(ctx context.Context, id int64) (HawserToken, error) {
	var row hawserTokenRow
	if err := s.db.WithContext(ctx).Where("id = ?", id).Take(&row).Error; err != nil {
		return HawserToken{}, fmt.Errorf("store: hawser token %d: %w", id, translate(err))
	}
	return row.token(), nil
}

// RevokeHawserToken marks a token inactive; a missing token is ErrNotFound.
func (s *Store) RevokeHawserToken(ctx context.Context, id int64) error {
	err := oneRow(s.db.WithContext(ctx).Model(&hawserTokenRow{}).Where("id = ?", id).Update("is_active", false))
	if err != nil {
		return fmt.Errorf("store: revoke hawser token %d: %w", id, err)
	}
	return nil
}

// TouchHawserToken records that a token was just used.
func (s *Store) TouchHawserToken(ctx context.Context, id int64, at time.Time) error {
	at = at.UTC().Truncate(time.Microsecond)
	err := s.db.WithContext(ctx).Model(&hawserTokenRow{}).Where("id = ?", id).
		Update("last_used", timeValue(at)).Error
	if err != nil {
		return fmt.Errorf("store: touch hawser token %d: %w", id, err)
	}
	return nil
}
