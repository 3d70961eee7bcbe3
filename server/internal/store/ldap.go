package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"gorm.io/gorm"
)

// LDAPConfig is a directory users sign in through (an enterprise feature).
// BindPassword is plaintext here and encrypted at rest.
type LDAPConfig struct {
	ID                   int64
	Name                 string
	Enabled              bool
	ServerURL            string // ldap://host:port or ldaps://host:port
	BindDN               string // "" binds anonymously
	BindPassword         string
	BaseDN               string
	UserFilter           string // {{username}} stands for the escaped login name
	UsernameAttribute    string
	EmailAttribute       string
	DisplayNameAttribute string
	GroupBaseDN          string
	GroupFilter          string            // placeholders {{username}}, {{user_dn}}, {{group}}
	AdminGroup           string            // a group DN or a bare group name
	RoleMappings         []LDAPRoleMapping // never nil when read
	TLSEnabled           bool
	TLSCA                string    // PEM; "" uses the system's roots
	CreatedAt            time.Time // UTC
	UpdatedAt            time.Time // UTC
}

// LDAPRoleMapping grants RoleID to the members of the group GroupDN.
type LDAPRoleMapping struct {
	GroupDN string `json:"groupDn"`
	RoleID  int64  `json:"roleId"`
}

// LDAPSource is the Source of role assignments made by the mappings of the
// LDAP configuration with the given id.
func LDAPSource(configID int64) string { return "ldap:" + strconv.FormatInt(configID, 10) }

// ldapConfigRow is a row of the ldap_configs table: the bind password
// sealed, the role mappings JSON [{groupDn, roleId}].
type ldapConfigRow struct {
	ID                   int64
	Name                 string
	Enabled              bool
	ServerURL            string `gorm:"column:server_url"`
	BindDN               string `gorm:"column:bind_dn"`
	BindPassword         string
	BaseDN               string `gorm:"column:base_dn"`
	UserFilter           string
	UsernameAttribute    string
	EmailAttribute       string
	DisplayNameAttribute string
	GroupBaseDN          string `gorm:"column:group_base_dn"`
	GroupFilter          string
	AdminGroup           string
	RoleMappings         string
	TLSEnabled           bool   `gorm:"column:tls_enabled"`
	TLSCA                string `gorm:"column:tls_ca"`
	CreatedAt            dbTime
	UpdatedAt            dbTime
}

func (ldapConfigRow) TableName() string { return "ldap_configs" }

// ListLDAPConfigs returns every LDAP configuration ordered by id.
func (s *Store) ListLDAPConfigs(ctx context.Context) ([]LDAPConfig, error) {
	var rows []ldapConfigRow
	if err := s.db.WithContext(ctx).Order("id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: list ldap configs: %w", err)
	}
	list := make([]LDAPConfig, 0, len(rows))
	for _, r := range rows {
		c, err := s.ldapConfig(r)
		if err != nil {
			return nil, fmt.Errorf("store: list ldap configs: %w", err)
		}
		list = append(list, c)
	}
	return list, nil
}

// GetLDAPConfig returns the LDAP configuration with the given id, or ErrNotFound.
func (s *Store) GetLDAPConfig(ctx context.Context, id int64) (LDAPConfig, error) {
	var r ldapConfigRow
	if err := s.db.WithContext(ctx).Where("id = ?", id).Take(&r).Error; err != nil {
		return LDAPConfig{}, fmt.Errorf("store: get ldap config %d: %w", id, translate(err))
	}
	c, err := s.ldapConfig(r)
	if err != nil {
		return LDAPConfig{}, fmt.Errorf("store: get ldap config %d: %w", id, err)
	}
	return c, nil
}

// CreateLDAPConfig inserts c and sets its ID, CreatedAt and UpdatedAt.
// A duplicate name is ErrConflict.
func (s *Store) CreateLDAPConfig(ctx context.Context, c *LDAPConfig) error {
	r, err := s.ldapConfigRow(c)
	if err != nil {
		return fmt.Errorf("store: create ldap config %q: %w", c.Name, err)
	}
	t := now()
	r.ID, r.CreatedAt, r.UpdatedAt = 0, timeValue(t), timeValue(t)
	if err := s.db.WithContext(ctx).Create(&r).Error; err != nil {
		return fmt.Errorf("store: create ldap config %q: %w", c.Name, translate(err))
	}
	c.ID, c.CreatedAt, c.UpdatedAt = r.ID, t, t
	return nil
}

// UpdateLDAPConfig writes every field of c to the configuration with c.ID
// and sets c.UpdatedAt (and c.CreatedAt from the row). A rename carries the
// users who sign in through it along: their AuthProvider "ldap:<old name>"
// becomes "ldap:<new name>" in the same transaction. A missing configuration
// is ErrNotFound; a name taken by another one is ErrConflict.
func (s *Store) UpdateLDAPConfig(ctx context.Context, c *LDAPConfig) error {
	r, err := s.ldapConfigRow(c)
	if err != nil {
		return fmt.Errorf("store: update ldap config %d: %w", c.ID, err)
	}
	t := now()
	var old ldapConfigRow
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Select("name", "created_at").Where("id = ?", c.ID).Take(&old).Error; err != nil {
			return translate(err)
		}
		err := tx.Model(&ldapConfigRow{}).Where("id = ?", c.ID).Updates(map[string]any{
			"name": r.Name, "enabled": r.Enabled, "server_url": r.ServerURL, "bind_dn": r.BindDN,
			"bind_password": r.BindPassword, "base_dn": r.BaseDN, "user_filter": r.UserFilter,
			"username_attribute": r.UsernameAttribute, "email_attribute": r.EmailAttribute,
			"display_name_attribute": r.DisplayNameAttribute, "group_base_dn": r.GroupBaseDN,
			"group_filter": r.GroupFilter, "admin_group": r.AdminGroup, "role_mappings": r.RoleMappings,
			"tls_enabled": r.TLSEnabled, "tls_ca": r.TLSCA, "updated_at": timeValue(t),
		}).Error
		if err != nil {
			return translate(err)
		}
		if old.Name == c.Name {
			return nil
		}
		return tx.Model(&userRow{}).Where("auth_provider = ?", "ldap:"+old.Name).Update("auth_provider", "ldap:"+c.Name).Error
	})
	if err != nil {
		return fmt.Errorf("store: update ldap config %d: %w", c.ID, err)
	}
	c.CreatedAt, c.UpdatedAt = old.CreatedAt.Time, t
	return nil
}

// DeleteLDAPConfig deletes the LDAP configuration with the given id and the
// role assignments its mappings made. Its users stay. A missing
// configuration is ErrNotFound.
func (s *Store) DeleteLDAPConfig(ctx context.Context, id int64) error {
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := oneRow(tx.Where("id = ?", id).Delete(&ldapConfigRow{})); err != nil {
			return err
		}
		return tx.Where("source = ?", LDAPSource(id)).Delete(&userRoleRow{}).Error
	})
	if err != nil {
		return fmt.Errorf("store: delete ldap config %d: %w", id, err)
	}
	return nil
}

// ldapConfigRow returns c as a row, the bind password sealed; the
// timestamps are the caller's to set.
func (s *Store) ldapConfigRow(c *LDAPConfig) (ldapConfigRow, error) {
	pw, err := s.box.Encrypt(c.BindPassword)
	if err != nil {
		return ldapConfigRow{}, fmt.Errorf("encrypt bind password: %w", err)
	}
	m := c.RoleMappings
	if m == nil {
		m = []LDAPRoleMapping{}
	}
	mappings, err := json.Marshal(m)
	if err != nil {
		return ldapConfigRow{}, fmt.Errorf("role mappings: %w", err)
	}
	return ldapConfigRow{
		ID: c.ID, Name: c.Name, Enabled: c.Enabled, ServerURL: c.ServerURL, BindDN: c.BindDN, BindPassword: pw,
		BaseDN: c.BaseDN, UserFilter: c.UserFilter, UsernameAttribute: c.UsernameAttribute,
		EmailAttribute: c.EmailAttribute, DisplayNameAttribute: c.DisplayNameAttribute, GroupBaseDN: c.GroupBaseDN,
		GroupFilter: c.GroupFilter, AdminGroup: c.AdminGroup, RoleMappings: string(mappings),
		TLSEnabled: c.TLSEnabled, TLSCA: c.TLSCA,
	}, nil
}

// ldapConfig returns the row as an LDAPConfig, the bind password opened.
func (s *Store) ldapConfig(r ldapConfigRow) (LDAPConfig, error) {
	c := LDAPConfig{
		ID: r.ID, Name: r.Name, Enabled: r.Enabled, ServerURL: r.ServerURL, BindDN: r.BindDN, BaseDN: r.BaseDN,
		UserFilter: r.UserFilter, UsernameAttribute: r.UsernameAttribute, EmailAttribute: r.EmailAttribute,
		DisplayNameAttribute: r.DisplayNameAttribute, GroupBaseDN: r.GroupBaseDN, GroupFilter: r.GroupFilter,
		AdminGroup: r.AdminGroup, TLSEnabled: r.TLSEnabled, TLSCA: r.TLSCA,
		CreatedAt: r.CreatedAt.Time, UpdatedAt: r.UpdatedAt.Time,
	}
	var err error
	if c.BindPassword, err = s.box.Decrypt(r.BindPassword); err != nil {
		return LDAPConfig{}, fmt.Errorf("ldap config %d: bind password: %w", r.ID, err)
	}
	if r.RoleMappings != "" {
		if err := json.Unmarshal([]byte(r.RoleMappings), &c.RoleMappings); err != nil {
			return LDAPConfig{}, fmt.Errorf("ldap config %d: role mappings: %w", r.ID, err)
		}
	}
	if c.RoleMappings == nil { // empty text or "null"
		c.RoleMappings = []LDAPRoleMapping{}
	}
	return c, nil
}
