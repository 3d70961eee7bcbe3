package store

import (
	"context"
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

// oidcProviderRow is a row of the oidc_providers table: the client secret
// sealed, the role mappings JSON [{claimValue, roleId}].
type oidcProviderRow struct {
	ID                int64
	Name              string
	Enabled           bool
	IssuerURL         string `gorm:"column:issuer_url"`
	ClientID          string `gorm:"column:client_id"`
	ClientSecret      string
	RedirectURI       string `gorm:"column:redirect_uri"`
	Scopes            string
	UsernameClaim     string
	EmailClaim        string
	DisplayNameClaim  string
	AdminClaim        string
	AdminValue        string
	RoleMappingsClaim string
	RoleMappings      string
	CreatedAt         dbTime
	UpdatedAt         dbTime
}

func (oidcProviderRow) TableName() string { return "oidc_providers" }

// ListOIDCProviders returns every provider ordered by id.
func (s *Store) ListOIDCProviders(ctx context.Context) ([]OIDCProvider, error) {
	var rows []oidcProviderRow
	if err := s.db.WithContext(ctx).Order("id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: list oidc providers: %w", err)
	}
	out := make([]OIDCProvider, 0, len(rows))
	for _, r := range rows {
		p, err := s.oidcProvider(r)
		if err != nil {
			return nil, fmt.Errorf("store: list oidc providers: %w", err)
		}
		out = append(out, p)
	}
	return out, nil
}

// GetOIDCProvider returns a provider, or ErrNotFound.
func (s *Store) GetOIDCProvider(ctx context.Context, id int64) (OIDCProvider, error) {
	var r oidcProviderRow
	if err := s.db.WithContext(ctx).Where("id = ?", id).Take(&r).Error; err != nil {
		return OIDCProvider{}, fmt.Errorf("store: get oidc provider %d: %w", id, translate(err))
	}
	p, err := s.oidcProvider(r)
	if err != nil {
		return OIDCProvider{}, fmt.Errorf("store: get oidc provider %d: %w", id, err)
	}
	return p, nil
}

// CreateOIDCProvider inserts p and sets its ID and timestamps; a duplicate
// name is ErrConflict.
func (s *Store) CreateOIDCProvider(ctx context.Context, p *OIDCProvider) error {
	r, err := s.oidcProviderRow(p)
	if err != nil {
		return fmt.Errorf("store: create oidc provider %q: %w", p.Name, err)
	}
	t := now()
	r.ID, r.CreatedAt, r.UpdatedAt = 0, timeValue(t), timeValue(t)
	if err := s.db.WithContext(ctx).Create(&r).Error; err != nil {
		return fmt.Errorf("store: create oidc provider %q: %w", p.Name, translate(err))
	}
	p.ID, p.CreatedAt, p.UpdatedAt = r.ID, t, t
	return nil
}

// UpdateOIDCProvider writes every field of p by ID and bumps UpdatedAt.
func (s *Store) UpdateOIDCProvider(ctx context.Context, p *OIDCProvider) error {
	r, err := s.oidcProviderRow(p)
	if err != nil {
		return fmt.Errorf("store: update oidc provider %d: %w", p.ID, err)
	}
	t := now()
	res := s.db.WithContext(ctx).Model(&oidcProviderRow{}).Where("id = ?", p.ID).Updates(map[string]any{
		"name": r.Name, "enabled": r.Enabled, "issuer_url": r.IssuerURL, "client_id": r.ClientID,
		"client_secret": r.ClientSecret, "redirect_uri": r.RedirectURI, "scopes": r.Scopes,
		"username_claim": r.UsernameClaim, "email_claim": r.EmailClaim, "display_name_claim": r.DisplayNameClaim,
		"admin_claim": r.AdminClaim, "admin_value": r.AdminValue, "role_mappings_claim": r.RoleMappingsClaim,
		"role_mappings": r.RoleMappings, "updated_at": timeValue(t),
	})
	if err := oneRow(res); err != nil {
		return fmt.Errorf("store: update oidc provider %d: %w", p.ID, err)
	}
	p.UpdatedAt = t
	return nil
}

// DeleteOIDCProvider deletes a provider, or answers ErrNotFound.
func (s *Store) DeleteOIDCProvider(ctx context.Context, id int64) error {
	if err := oneRow(s.db.WithContext(ctx).Where("id = ?", id).Delete(&oidcProviderRow{})); err != nil {
		return fmt.Errorf("store: delete oidc provider %d: %w", id, err)
	}
	return nil
}

// oidcProviderRow returns p as a row, the client secret sealed; the
// timestamps are the caller's to set.
func (s *Store) oidcProviderRow(p *OIDCProvider) (oidcProviderRow, error) {
	secret, err := s.box.Encrypt(p.ClientSecret)
	if err != nil {
		return oidcProviderRow{}, fmt.Errorf("encrypt client secret: %w", err)
	}
	mappings := p.RoleMappings
	if mappings == nil {
		mappings = []OIDCRoleMapping{}
	}
	mj, err := json.Marshal(mappings)
	if err != nil {
		return oidcProviderRow{}, err
	}
	return oidcProviderRow{
		ID: p.ID, Name: p.Name, Enabled: p.Enabled, IssuerURL: p.IssuerURL, ClientID: p.ClientID, ClientSecret: secret,
		RedirectURI: p.RedirectURI, Scopes: p.Scopes, UsernameClaim: p.UsernameClaim, EmailClaim: p.EmailClaim,
		DisplayNameClaim: p.DisplayNameClaim, AdminClaim: p.AdminClaim, AdminValue: p.AdminValue,
		RoleMappingsClaim: p.RoleMappingsClaim, RoleMappings: string(mj),
	}, nil
}

// oidcProvider returns the row as an OIDCProvider, the client secret opened.
func (s *Store) oidcProvider(r oidcProviderRow) (OIDCProvider, error) {
	p := OIDCProvider{
		ID: r.ID, Name: r.Name, Enabled: r.Enabled, IssuerURL: r.IssuerURL, ClientID: r.ClientID,
		RedirectURI: r.RedirectURI, Scopes: r.Scopes, UsernameClaim: r.UsernameClaim, EmailClaim: r.EmailClaim,
		DisplayNameClaim: r.DisplayNameClaim, AdminClaim: r.AdminClaim, AdminValue: r.AdminValue,
		RoleMappingsClaim: r.RoleMappingsClaim, CreatedAt: r.CreatedAt.Time, UpdatedAt: r.UpdatedAt.Time,
	}
	var err error
	if p.ClientSecret, err = s.box.Decrypt(r.ClientSecret); err != nil {
		return OIDCProvider{}, fmt.Errorf("oidc provider %d: client secret: %w", r.ID, err)
	}
	if err := json.Unmarshal([]byte(r.RoleMappings), &p.RoleMappings); err != nil {
		return OIDCProvider{}, fmt.Errorf("oidc provider %d: role mappings: %w", r.ID, err)
	}
	return p, nil
}
