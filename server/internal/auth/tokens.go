package auth

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// TokenPrefix starts every API token, so that leaked tokens are recognisable.
const TokenPrefix = "bth_"

// tokenTouchEvery limits writes of a token's last-used time.
const tokenTouchEvery = time.Minute

// NewToken is a created API token; Token is shown once and never stored.
type NewToken struct {
	store.APIToken
	Token string
}

// CreateToken creates an API token for user, who confirms with their
// password (users without a local password, signed in by SSO, cannot).
func (s *Service) CreateToken(ctx context.Context, user store.User, name, password string, expiresAt *time.Time) (NewToken, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return NewToken{}, fault.New(fault.Invalid, "Token name is required")
	}
	if len(name) > 100 {
		return NewToken{}, fault.New(fault.Invalid, "Token name must be at most 100 characters")
	}
	if expiresAt != nil && !expiresAt.After(s.now()) {
		return NewToken{}, fault.New(fault.Invalid, "expiresAt must be in the future")
	}
	if user.PasswordHash != "" {
		// A local user confirms with their password; LDAP and OIDC users
		// (no local password) are confirmed by their session alone. A wrong
		// password is 403, not 401: a 401 tells cookie clients their session
		// ended.
		if password == "" {
			return NewToken{}, fault.New(fault.Invalid, "Password is required")
		}
		ok, err := VerifyPassword(ctx, password, user.PasswordHash)
		if err != nil && ctx.Err() != nil {
			return NewToken{}, err
		}
		if err != nil || !ok {
			return NewToken{}, fault.New(fault.Forbidden, "Invalid password")
		}
	}
	tok := TokenPrefix + randomToken(32)
	t := store.APIToken{UserID: user.ID, Name: name, TokenHash: hashToken(tok), TokenPrefix: tok[:len(TokenPrefix)+6],
		ExpiresAt: expiresAt, CreatedAt: s.now().UTC()}
	if err := s.store.CreateAPIToken(ctx, &t); err != nil {
		return NewToken{}, err
	}
	return NewToken{APIToken: t, Token: tok}, nil
}

// TokenIdentity resolves a bearer token. Repeated bad tokens from one IP are
// answered with 429 for a while, whatever the token.
func (s *Service) TokenIdentity(ctx context.Context, token, ip string) (Identity, error) {
	if wait, locked := s.badTokens.Locked(ip); locked {
		return Identity{}, tooManyTokens(wait)
	}
	ident, err := s.tokenIdentity(ctx, token)
	if errors.Is(err, ErrNoCredentials) {
		if wait, locked := s.badTokens.Fail(ip); locked {
			return Identity{}, tooManyTokens(wait)
		}
	}
	return ident, err
}

func tooManyTokens(wait time.Duration) error {
	f, _ := fault.As(tooMany(wait))
	c := *f
	c.Message = "Too many invalid API tokens. Try again later."
	return &c
}

func (s *Service) tokenIdentity(ctx context.Context, token string) (Identity, error) {
	if !strings.HasPrefix(token, TokenPrefix) {
		return Identity{}, ErrNoCredentials
	}
	t, err := s.store.GetAPITokenByHash(ctx, hashToken(token))
	if errors.Is(err, store.ErrNotFound) {
		return Identity{}, ErrNoCredentials
	}
	if err != nil {
		return Identity{}, err
	}
	now := s.now()
	if t.ExpiresAt != nil && !now.Before(*t.ExpiresAt) {
		return Identity{}, ErrNoCredentials
	}
	user, err := s.store.GetUser(ctx, t.UserID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !user.IsActive) {
		return Identity{}, ErrNoCredentials
	}
	if err != nil {
		return Identity{}, err
	}
	if t.LastUsedAt == nil || now.Sub(*t.LastUsedAt) > tokenTouchEvery {
		_ = s.store.TouchAPIToken(ctx, t.ID, now.UTC())
	}
	ident, err := s.identity(ctx, user, "token")
	ident.TokenID = t.ID
	return ident, err
}

// ListTokens lists the tokens of user (every user's for admins asking for all).
func (s *Service) ListTokens(ctx context.Context, user store.User, all bool) ([]store.APIToken, error) {
	if all && user.IsAdmin {
		return s.store.ListAPITokens(ctx, 0)
	}
	return s.store.ListAPITokens(ctx, user.ID)
}

// RevokeToken deletes a token of user (any token for admins).
func (s *Service) RevokeToken(ctx context.Context, user store.User, id int64) error {
	t, err := s.store.GetAPIToken(ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && t.UserID != user.ID && !user.IsAdmin) {
		return fault.New(fault.NotFound, "Token not found")
	}
	if err != nil {
		return err
	}
	return s.store.DeleteAPIToken(ctx, id)
}
