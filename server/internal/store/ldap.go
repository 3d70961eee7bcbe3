package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
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

// ldapColumns is the column list scanLDAPConfig reads, in its order.
const ldapColumns = `id, name, enabled, server_url, bind_dn, bind_password, base_dn, user_filter,
	username_attribute, email_attribute, display_name_attribute, group_base_dn, group_filter,
	admin_group, role_mappings, tls_enabled, tls_ca, created_at, updated_at`

// ListLDAPConfigs returns every LDAP configuration ordered by id.
func (s *Store) ListLDAPConfigs(ctx context.Context) ([]LDAPConfig, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+ldapColumns+` FROM ldap_configs ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("store: list ldap configs: %w", err)
	}
	defer rows.Close()
	list := []LDAPConfig{}
	for rows.Next() {
		c, err := s.scanLDAPConfig(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list ldap configs: %w", err)
		}
		list = append(list, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list ldap configs: %w", err)
	}
	return list, nil
}

// GetLDAPConfig returns the LDAP configuration with the given id, or ErrNotFound.
func (s *Store) GetLDAPConfig(ctx context.Context, id int64) (LDAPConfig, error) {
	row := s.db.QueryRowContext(ctx, s.rebind(`SELECT `+ldapColumns+` FROM ldap_configs WHERE id = ?`), id)
	c, err := s.scanLDAPConfig(row)
	if err != nil {
		return LDAPConfig{}, fmt.Errorf("store: get ldap config %d: %w", id, translate(err))
	}
	return c, nil
}

// CreateLDAPConfig inserts c and sets its ID, CreatedAt and UpdatedAt.
// A duplicate name is ErrConflict.
func (s *Store) CreateLDAPConfig(ctx context.Context, c *LDAPConfig) error {
	args, err := s.ldapArgs(c)
	if err != nil {
		return fmt.Errorf("store: create ldap config %q: %w", c.Name, err)
	}
	t := now()
	args = append(args, s.timeArg(t), s.timeArg(t))
	var id int64
	err = s.db.QueryRowContext(ctx, s.rebind(`
		INSERT INTO ldap_configs (name, enabled, server_url, bind_dn, bind_password, base_dn, user_filter,
			username_attribute, email_attribute, display_name_attribute, group_base_dn, group_filter,
			admin_group, role_mappings, tls_enabled, tls_ca, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		RETURNING id`), args...).Scan(&id)
	if err != nil {
		return fmt.Errorf("store: create ldap config %q: %w", c.Name, translate(err))
	}
	c.ID, c.CreatedAt, c.UpdatedAt = id, t, t
	return nil
}

// UpdateLDAPConfig writes every field of c to the configuration with c.ID
// and sets c.UpdatedAt (and c.CreatedAt from the row). A rename carries the
// users who sign in through it along: their AuthProvider "ldap:<old name>"
// becomes "ldap:<new name>" in the same transaction. A missing configuration
// is ErrNotFound; a name taken by another one is ErrConflict.
func (s *Store) UpdateLDAPConfig(ctx context.Context, c *LDAPConfig) error {
	args, err := s.ldapArgs(c)
	if err != nil {
		return fmt.Errorf("store: update ldap config %d: %w", c.ID, err)
	}
	t := now()
	args = append(args, s.timeArg(t), c.ID)
	var created dbTime
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		var old string
		err := tx.QueryRowContext(ctx, s.rebind(`SELECT name FROM ldap_configs WHERE id = ?`), c.ID).Scan(&old)
		if err != nil {
			return translate(err)
		}
		err = tx.QueryRowContext(ctx, s.rebind(`
			UPDATE ldap_configs SET name = ?, enabled = ?, server_url = ?, bind_dn = ?, bind_password = ?,
				base_dn = ?, user_filter = ?, username_attribute = ?, email_attribute = ?,
				display_name_attribute = ?, group_base_dn = ?, group_filter = ?, admin_group = ?,
				role_mappings = ?, tls_enabled = ?, tls_ca = ?, updated_at = ?
			WHERE id = ?
			RETURNING created_at`), args...).Scan(&created)
		if err != nil {
			return translate(err)
		}
		if old == c.Name {
			return nil
		}
		_, err = tx.ExecContext(ctx, s.rebind(`UPDATE users SET auth_provider = ? WHERE auth_provider = ?`),
			"ldap:"+c.Name, "ldap:"+old)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: update ldap config %d: %w", c.ID, err)
	}
	c.CreatedAt, c.UpdatedAt = created.Time, t
	return nil
}

// DeleteLDAPConfig deletes the LDAP configuration with the given id and the
// role assignments its mappings made. Its users stay. A missing
// configuration is ErrNotFound.
func (s *Store) DeleteLDAPConfig(ctx context.Context, id int64) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, s.rebind(`DELETE FROM ldap_configs WHERE id = ?`), id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return ErrNotFound
		}
		_, err = tx.ExecContext(ctx, s.rebind(`DELETE FROM user_roles WHERE source = ?`), LDAPSource(id))
		return err
	})
	if err != nil {
		return fmt.Errorf("store: delete ldap config %d: %w", id, err)
	}
	return nil
}

// ldapArgs returns the values of c's writable columns, from name to tls_ca in
// table order, with the bind password encrypted.
func (s *Store) ldapArgs(c *LDAPConfig) ([]any, error) {
	pw, err := s.box.Encrypt(c.BindPassword)
	if err != nil {
		return nil, fmt.Errorf("encrypt bind password: %w", err)
	}
	m := c.RoleMappings
	if m == nil {
		m = []LDAPRoleMapping{}
	}
	mappings, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("role mappings: %w", err)
	}
	return []any{
		c.Name, c.Enabled, c.ServerURL, c.BindDN, pw, c.BaseDN, c.UserFilter,
		c.UsernameAttribute, c.EmailAttribute, c.DisplayNameAttribute, c.GroupBaseDN, c.GroupFilter,
		c.AdminGroup, string(mappings), c.TLSEnabled, c.TLSCA,
	}, nil
}

// scanLDAPConfig reads one row of ldapColumns.
func (s *Store) scanLDAPConfig(row rowScanner) (LDAPConfig, error) {
	var (
		c                LDAPConfig
		pw, mappings     string
		created, updated dbTime
	)
	err := row.Scan(&c.ID, &c.Name, &c.Enabled, &c.ServerURL, &c.BindDN, &pw, &c.BaseDN, &c.UserFilter,
		&c.UsernameAttribute, &c.EmailAttribute, &c.DisplayNameAttribute, &c.GroupBaseDN, &c.GroupFilter,
		&c.AdminGroup, &mappings, &c.TLSEnabled, &c.TLSCA, &created, &updated)
	if err != nil {
		return LDAPConfig{}, err
	}
	if c.BindPassword, err = s.box.Decrypt(pw); err != nil {
		return LDAPConfig{}, fmt.Errorf("ldap config %d: bind password: %w", c.ID, err)
	}
	if mappings != "" {
		if err := json.Unmarshal([]byte(mappings), &c.RoleMappings); err != nil {
			return LDAPConfig{}, fmt.Errorf("ldap config %d: role mappings: %w", c.ID, err)
		}
	}
	if c.RoleMappings == nil { // empty text or "null"
		c.RoleMappings = []LDAPRoleMapping{}
	}
	c.CreatedAt, c.UpdatedAt = created.Time, updated.Time
	return c, nil
}
