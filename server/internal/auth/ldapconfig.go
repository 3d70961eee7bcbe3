package auth

import (
	"context"
	"crypto/x509"
	"errors"
	"net/url"
	"strings"

	"github.com/go-ldap/ldap/v3"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

var (
	errLDAPNotFound = fault.New(fault.NotFound, "LDAP configuration not found")
	errLDAPTaken    = fault.New(fault.Conflict, "An LDAP configuration with this name already exists")
)

// Defaults of an LDAP configuration's optional fields.
const (
	DefaultLDAPUserFilter           = "(uid={{username}})"
	DefaultLDAPUsernameAttribute    = "uid"
	DefaultLDAPEmailAttribute       = "mail"
	DefaultLDAPDisplayNameAttribute = "cn"
)

// LDAPConfigPatch sets some fields of an LDAP configuration; nil leaves a
// field as it is (as its default, on creation). An empty BindPassword
// removes the password.
type LDAPConfigPatch struct {
	Name, ServerURL, BindDN, BindPassword, BaseDN                       *string
	UserFilter, UsernameAttribute, EmailAttribute, DisplayNameAttribute *string
	GroupBaseDN, GroupFilter, AdminGroup, TLSCA                         *string
	Enabled, TLSEnabled                                                 *bool
	RoleMappings                                                        *[]store.LDAPRoleMapping
}

func (p LDAPConfigPatch) apply(c *store.LDAPConfig) {
	for _, f := range []struct {
		from *string
		to   *string
	}{
		{p.Name, &c.Name}, {p.ServerURL, &c.ServerURL}, {p.BindDN, &c.BindDN}, {p.BindPassword, &c.BindPassword},
		{p.BaseDN, &c.BaseDN}, {p.UserFilter, &c.UserFilter}, {p.UsernameAttribute, &c.UsernameAttribute},
		{p.EmailAttribute, &c.EmailAttribute}, {p.DisplayNameAttribute, &c.DisplayNameAttribute},
		{p.GroupBaseDN, &c.GroupBaseDN}, {p.GroupFilter, &c.GroupFilter}, {p.AdminGroup, &c.AdminGroup},
		{p.TLSCA, &c.TLSCA},
	} {
		if f.from != nil {
			*f.to = *f.from
		}
	}
	if p.Enabled != nil {
		c.Enabled = *p.Enabled
	}
	if p.TLSEnabled != nil {
		c.TLSEnabled = *p.TLSEnabled
	}
	if p.RoleMappings != nil {
		c.RoleMappings = *p.RoleMappings
	}
}

// LDAPConfigs lists the LDAP configurations (an enterprise feature).
func (s *Service) LDAPConfigs(ctx context.Context) ([]store.LDAPConfig, error) {
	if err := s.RequireEnterprise(); err != nil {
		return nil, err
	}
	return s.store.ListLDAPConfigs(ctx)
}

// LDAPConfig returns an LDAP configuration (an enterprise feature).
func (s *Service) LDAPConfig(ctx context.Context, id int64) (store.LDAPConfig, error) {
	if err := s.RequireEnterprise(); err != nil {
		return store.LDAPConfig{}, err
	}
	c, err := s.store.GetLDAPConfig(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return store.LDAPConfig{}, errLDAPNotFound
	}
	return c, err
}

// CreateLDAPConfig creates an LDAP configuration from the defaults and p.
func (s *Service) CreateLDAPConfig(ctx context.Context, p LDAPConfigPatch) (store.LDAPConfig, error) {
	if err := s.RequireEnterprise(); err != nil {
		return store.LDAPConfig{}, err
	}
	c := store.LDAPConfig{UserFilter: DefaultLDAPUserFilter, UsernameAttribute: DefaultLDAPUsernameAttribute,
		EmailAttribute: DefaultLDAPEmailAttribute, DisplayNameAttribute: DefaultLDAPDisplayNameAttribute}
	p.apply(&c)
	if err := s.validateLDAPConfig(ctx, &c); err != nil {
		return store.LDAPConfig{}, err
	}
	if err := s.store.CreateLDAPConfig(ctx, &c); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return store.LDAPConfig{}, errLDAPTaken
		}
		return store.LDAPConfig{}, err
	}
	return c, nil
}

// UpdateLDAPConfig applies p to an LDAP configuration.
func (s *Service) UpdateLDAPConfig(ctx context.Context, id int64, p LDAPConfigPatch) (store.LDAPConfig, error) {
	c, err := s.LDAPConfig(ctx, id)
	if err != nil {
		return store.LDAPConfig{}, err
	}
	p.apply(&c)
	if err := s.validateLDAPConfig(ctx, &c); err != nil {
		return store.LDAPConfig{}, err
	}
	if err := s.store.UpdateLDAPConfig(ctx, &c); err != nil {
		switch {
		case errors.Is(err, store.ErrConflict):
			return store.LDAPConfig{}, errLDAPTaken
		case errors.Is(err, store.ErrNotFound):
			return store.LDAPConfig{}, errLDAPNotFound
		}
		return store.LDAPConfig{}, err
	}
	return c, nil
}

// DeleteLDAPConfig deletes an LDAP configuration and the roles its mappings
// gave; the users who signed in through it stay.
func (s *Service) DeleteLDAPConfig(ctx context.Context, id int64) error {
	if err := s.RequireEnterprise(); err != nil {
		return err
	}
	if err := s.store.DeleteLDAPConfig(ctx, id); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return errLDAPNotFound
		}
		return err
	}
	return nil
}

// validateLDAPConfig trims c, fills in defaults for emptied optional fields
// and checks it.
func (s *Service) validateLDAPConfig(ctx context.Context, c *store.LDAPConfig) error {
	for _, f := range []*string{&c.Name, &c.ServerURL, &c.BindDN, &c.BaseDN, &c.UserFilter, &c.UsernameAttribute,
		&c.EmailAttribute, &c.DisplayNameAttribute, &c.GroupBaseDN, &c.GroupFilter, &c.AdminGroup, &c.TLSCA} {
		*f = strings.TrimSpace(*f)
	}
	for _, f := range []struct {
		v   *string
		def string
	}{
		{&c.UserFilter, DefaultLDAPUserFilter}, {&c.UsernameAttribute, DefaultLDAPUsernameAttribute},
		{&c.EmailAttribute, DefaultLDAPEmailAttribute}, {&c.DisplayNameAttribute, DefaultLDAPDisplayNameAttribute},
	} {
		if *f.v == "" {
			*f.v = f.def
		}
	}
	switch {
	case c.Name == "":
		return fault.New(fault.Invalid, "name is required")
	case c.ServerURL == "":
		return fault.New(fault.Invalid, "serverUrl is required")
	case c.BaseDN == "":
		return fault.New(fault.Invalid, "baseDn is required")
	}
	if u, err := url.Parse(c.ServerURL); err != nil || (u.Scheme != "ldap" && u.Scheme != "ldaps") || u.Hostname() == "" ||
		(u.Path != "" && u.Path != "/") || u.User != nil {
		return fault.New(fault.Invalid, "serverUrl must be ldap://host:port or ldaps://host:port")
	}
	for _, f := range []struct{ field, value string }{{"baseDn", c.BaseDN}, {"bindDn", c.BindDN}, {"groupBaseDn", c.GroupBaseDN}} {
		if f.value == "" {
			continue
		}
		if _, err := ldap.ParseDN(f.value); err != nil {
			return fault.Invalidf("%s is not a valid DN", f.field)
		}
	}
	if !strings.Contains(c.UserFilter, "{{username}}") {
		return fault.New(fault.Invalid, "userFilter must contain {{username}}")
	}
	sample := strings.NewReplacer("{{username}}", "x", "{{user_dn}}", "uid=x,dc=x", "{{group}}", "x")
	if _, err := ldap.CompileFilter(sample.Replace(c.UserFilter)); err != nil {
		return fault.New(fault.Invalid, "userFilter is not a valid LDAP filter").WithDetails(err.Error())
	}
	if c.GroupFilter != "" {
		if _, err := ldap.CompileFilter(sample.Replace(c.GroupFilter)); err != nil {
			return fault.New(fault.Invalid, "groupFilter is not a valid LDAP filter").WithDetails(err.Error())
		}
	}
	if c.TLSCA != "" && !x509.NewCertPool().AppendCertsFromPEM([]byte(c.TLSCA)) {
		return fault.New(fault.Invalid, "tlsCa must hold PEM certificates")
	}
	if c.AdminGroup != "" && !isGroupDN(c.AdminGroup) && c.GroupBaseDN == "" {
		return fault.New(fault.Invalid, "groupBaseDn is required when adminGroup is a group name")
	}
	if len(c.RoleMappings) > 0 && c.GroupBaseDN == "" {
		return fault.New(fault.Invalid, "groupBaseDn is required for role mappings")
	}
	for i := range c.RoleMappings {
		m := &c.RoleMappings[i]
		m.GroupDN = strings.TrimSpace(m.GroupDN)
		if m.GroupDN == "" {
			return fault.New(fault.Invalid, "roleMappings: groupDn is required")
		}
		if _, err := s.store.GetRole(ctx, m.RoleID); errors.Is(err, store.ErrNotFound) {
			return fault.Invalidf("roleMappings: role %d does not exist", m.RoleID)
		} else if err != nil {
			return err
		}
	}
	return nil
}

// isGroupDN tells a group DN from a bare group name: a DN holds both "=" and ",".
func isGroupDN(group string) bool {
	return strings.Contains(group, "=") && strings.Contains(group, ",")
}
