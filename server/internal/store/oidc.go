package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"
)

// OIDCProvider is an OpenID Connect identity provider. ClientSecret is
// plaintext in memory and encrypted at rest.
type OIDCProvider struct {
	ID                int64
	Name              string
	Enabled           bool
	IssuerURL         string
	ClientID          string
	ClientSecret      string
	RedirectURI       string
	Scopes            string
	UsernameClaim     string
	EmailClaim        string
	DisplayNameClaim  string
	AdminClaim        string
	AdminValue        string
	RoleMappingsClaim string
	RoleMappings      []OIDCRoleMapping
	CreatedAt         time.Time
	UpdatedAt         time.Time
}

// OIDCRoleMapping grants RoleID to users whose mapping claim holds ClaimValue.
type OIDCRoleMapping struct {
	ClaimValue string `json:"claimValue"`
	RoleID     int64  `json:"roleId"`
}

const oidcColumns = `id, name, enabled, issuer_url, client_id, client_secret, redirect_uri, scopes,
	username_claim, email_claim, display_name_claim, admin_claim, admin_value,
	role_mappings_claim, role_mappings, created_at, updated_at`

// ListOIDCProviders returns every provider ordered by id.
func (s *Store) ListOIDCProviders(ctx context.Context) ([]OIDCProvider, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+oidcColumns+` FROM oidc_providers ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("store: list oidc providers: %w", err)
	}
	defer rows.Close()
	out := []OIDCProvider{}
	for rows.Next() {
		p, err := s.scanOIDC(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list oidc providers: %w", err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// GetOIDCProvider returns a provider, or ErrNotFound.
func (s *Store) GetOIDCProvider(ctx context.Context, id int64) (OIDCProvider, error) {
	p, err := s.scanOIDC(s.db.QueryRowContext(ctx, s.rebind(`SELECT `+oidcColumns+` FROM oidc_providers WHERE id = ?`), id))
	if err != nil {
		return OIDCProvider{}, fmt.Errorf("store: get oidc provider %d: %w", id, translate(err))
	}
	return p, nil
}

// CreateOIDCProvider inserts p and sets its ID and timestamps; a duplicate
// name is ErrConflict.
func (s *Store) CreateOIDCProvider(ctx context.Context, p *OIDCProvider) error {
	args, err := s.oidcArgs(p)
	if err != nil {
		return fmt.Errorf("store: create oidc provider %q: %w", p.Name, err)
	}
	t := now()
	var id int64
	err = s.db.QueryRowContext(ctx, s.rebind(`
		INSERT INTO oidc_providers (name, enabled, issuer_url, client_id, client_secret, redirect_uri, scopes,
			username_claim, email_claim, display_name_claim, admin_claim, admin_value,
			role_mappings_claim, role_mappings, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		RETURNING id`), append(args, s.timeArg(t), s.timeArg(t))...).Scan(&id)
	if err != nil {
		return fmt.Errorf("store: create oidc provider %q: %w", p.Name, translate(err))
	}
	p.ID, p.CreatedAt, p.UpdatedAt = id, t, t
	return nil
}

// UpdateOIDCProvider writes every field of p by ID and bumps UpdatedAt.
func (s *Store) UpdateOIDCProvider(ctx context.Context, p *OIDCProvider) error {
	args, err := s.oidcArgs(p)
	if err != nil {
		return fmt.Errorf("store: update oidc provider %d: %w", p.ID, err)
	}
	t := now()
	res, err := s.db.ExecContext(ctx, s.rebind(`
		UPDATE oidc_providers SET name = ?, enabled = ?, issuer_url = ?, client_id = ?, client_secret = ?,
			redirect_uri = ?, scopes = ?, username_claim = ?, email_claim = ?, display_name_claim = ?,
			admin_claim = ?, admin_value = ?, role_mappings_claim = ?, role_mappings = ?, updated_at = ?
		WHERE id = ?`), append(args, s.timeArg(t), p.ID)...)
	if err != nil {
		return fmt.Errorf("store: update oidc provider %d: %w", p.ID, translate(err))
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("store: update oidc provider %d: %w", p.ID, ErrNotFound)
	}
	p.UpdatedAt = t
	return nil
}

// DeleteOIDCProvider deletes a provider, or answers ErrNotFound.
func (s *Store) DeleteOIDCProvider(ctx context.Context, id int64) error {
	res, err := s.db.ExecContext(ctx, s.rebind(`DELETE FROM oidc_providers WHERE id = ?`), id)
	if err != nil {
		return fmt.Errorf("store: delete oidc provider %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("store: delete oidc provider %d: %w", id, ErrNotFound)
	}
	return nil
}

// oidcArgs returns p's columns name … role_mappings, the secret sealed.
func (s *Store) oidcArgs(p *OIDCProvider) ([]any, error) {
	secret, err := s.box.Encrypt(p.ClientSecret)
	if err != nil {
		return nil, fmt.Errorf("encrypt client secret: %w", err)
	}
	mappings := p.RoleMappings
	if mappings == nil {
		mappings = []OIDCRoleMapping{}
	}
	mj, err := json.Marshal(mappings)
	if err != nil {
		return nil, err
	}
	return []any{p.Name, p.Enabled, p.IssuerURL, p.ClientID, secret, p.RedirectURI, p.Scopes,
		p.UsernameClaim, p.EmailClaim, p.DisplayNameClaim, p.AdminClaim, p.AdminValue,
		p.RoleMappingsClaim, string(mj)}, nil
}

func (s *Store) scanOIDC(row rowScanner) (OIDCProvider, error) {
	var (
		p                OIDCProvider
		secret, mappings string
		created, updated dbTime
		enabled          sql.NullBool
	)
	if err := row.Scan(&p.ID, &p.Name, &enabled, &p.IssuerURL, &p.ClientID, &secret, &p.RedirectURI, &p.Scopes,
		&p.UsernameClaim, &p.EmailClaim, &p.DisplayNameClaim, &p.AdminClaim, &p.AdminValue,
		&p.RoleMappingsClaim, &mappings, &created, &updated); err != nil {
		return OIDCProvider{}, err
	}
	var err error
	if p.ClientSecret, err = s.box.Decrypt(secret); err != nil {
		return OIDCProvider{}, err
	}
	if err := json.Unmarshal([]byte(mappings), &p.RoleMappings); err != nil {
		return OIDCProvider{}, fmt.Errorf("role mappings: %w", err)
	}
	p.Enabled, p.CreatedAt, p.UpdatedAt = enabled.Bool, created.Time, updated.Time
	return p, nil
}
