package auth

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-ldap/ldap/v3"

	"github.com/berth-dev/berth/server/internal/outbound"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// ldapTimeout bounds dialing a directory (TLS handshake included) and each
// operation on it.
const ldapTimeout = 10 * time.Second

// DirectoryError is a failure to use a directory server: to connect, to bind
// as the service account, or to search. It never carries a password.
type DirectoryError struct {
	Op  string // what failed, e.g. "connect to ldaps://ldap.example.com:636"
	Err error
}

func (e *DirectoryError) Error() string { return e.Op + ": " + e.Err.Error() }

func (e *DirectoryError) Unwrap() error { return e.Err }

// ldapUnavailable is the client's answer to a DirectoryError. Sign-in is
// public, so the details (addresses, TLS errors) are logged, not shown.
func ldapUnavailable(err error) error {
	return fault.Wrap(fault.Internal, "LDAP server unavailable", err)
}

// errNoSuchLDAPUser means a directory has no entry for a login name; the
// next configuration may have one.
var errNoSuchLDAPUser = errors.New("auth: no such directory user")

// ldapIdentity is what a directory says about a user who proved their password.
type ldapIdentity struct {
	DN, Username, Email, DisplayName string
	IsAdmin                          bool
	RoleIDs                          []int64
}

// loginLDAP signs in through a directory. provider "ldap" tries the enabled
// configurations in id order, and the first whose directory has the user
// decides; "ldap:<id>" uses that configuration. An unknown user and a wrong
// password are the same ErrInvalidCredentials.
func (s *Service) loginLDAP(ctx context.Context, provider, username, password string) (store.User, error) {
	if err := s.RequireEnterprise(); err != nil {
		return store.User{}, err
	}
	if password == "" {
		// A simple bind with a name and no password is an "unauthenticated
		// bind" (RFC 4513 5.1.2) that servers may answer with success.
		return store.User{}, ErrInvalidCredentials
	}
	configs, err := s.ldapConfigsFor(ctx, provider)
	if err != nil {
		return store.User{}, err
	}
	var unavailable error
	for _, cfg := range configs {
		id, err := s.authenticateLDAP(ctx, cfg, username, password)
		var derr *DirectoryError
		switch {
		case errors.Is(err, errNoSuchLDAPUser):
			continue
		case errors.As(err, &derr):
			// Another directory may still know the user.
			s.log.Warn("LDAP server unavailable", "ldap_config", cfg.ID, "err", err)
			if unavailable == nil {
				unavailable = err
			}
			continue
		case err != nil:
			return store.User{}, err
		}
		return s.upsertLDAPUser(ctx, cfg, id)
	}
	if unavailable != nil {
		return store.User{}, ldapUnavailable(unavailable)
	}
	return store.User{}, ErrInvalidCredentials
}

// ldapConfigsFor returns the configurations a sign-in with provider tries.
func (s *Service) ldapConfigsFor(ctx context.Context, provider string) ([]store.LDAPConfig, error) {
	if provider == "ldap" {
		all, err := s.store.ListLDAPConfigs(ctx)
		if err != nil {
			return nil, err
		}
		enabled := slices.DeleteFunc(all, func(c store.LDAPConfig) bool { return !c.Enabled })
		if len(enabled) == 0 {
			return nil, fault.New(fault.Invalid, "LDAP sign-in is not configured")
		}
		return enabled, nil
	}
	unknown := fault.Invalidf("Unknown sign-in provider %q", provider)
	id, err := strconv.ParseInt(strings.TrimPrefix(provider, "ldap:"), 10, 64)
	if err != nil || id <= 0 {
		return nil, unknown
	}
	cfg, err := s.store.GetLDAPConfig(ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !cfg.Enabled) {
		return nil, unknown
	}
	if err != nil {
		return nil, err
	}
	return []store.LDAPConfig{cfg}, nil
}

// authenticateLDAP checks username and password against cfg's directory.
// It returns errNoSuchLDAPUser when no entry matches, ErrInvalidCredentials
// when the password is wrong or the name ambiguous, and a *DirectoryError
// when the directory cannot be used.
func (s *Service) authenticateLDAP(ctx context.Context, cfg store.LDAPConfig, username, password string) (ldapIdentity, error) {
	ctx, err := s.outbound.Context(ctx)
	if err != nil {
		return ldapIdentity{}, err
	}
	d, err := openDirectory(ctx, cfg)
	if err != nil {
		return ldapIdentity{}, err
	}
	defer d.Close()
	attrs := []string{cfg.UsernameAttribute, cfg.EmailAttribute, cfg.DisplayNameAttribute}
	filter := strings.ReplaceAll(cfg.UserFilter, "{{username}}", escapeFilter(username))
	res, err := d.search(cfg.BaseDN, ldap.ScopeWholeSubtree, filter, 2, attrs)
	switch {
	case ldap.IsErrorWithCode(err, ldap.LDAPResultSizeLimitExceeded) || (err == nil && len(res.Entries) > 1):
		s.log.Warn("LDAP user search matched several entries; refusing the sign-in", "ldap_config", cfg.ID,
			"username", username)
		return ldapIdentity{}, ErrInvalidCredentials
	case err != nil:
		return ldapIdentity{}, err
	case len(res.Entries) == 0:
		// Spend a bind like a wrong password does, so both take alike.
		_ = d.conn.Bind("cn=berth-no-such-user-"+randomToken(9)+","+cfg.BaseDN, password)
		return ldapIdentity{}, errNoSuchLDAPUser
	}
	entry := res.Entries[0]
	if err := d.conn.Bind(entry.DN, password); err != nil {
		var lerr *ldap.Error
		if errors.As(err, &lerr) && lerr.ResultCode < 80 {
			// The server refused (invalid credentials, account locked,
			// password expired, …): codes from 80 on are the client's own.
			return ldapIdentity{}, ErrInvalidCredentials
		}
		return ldapIdentity{}, &DirectoryError{Op: "bind as the user", Err: err}
	}
	id := ldapIdentity{DN: entry.DN,
		Username:    strings.TrimSpace(entry.GetEqualFoldAttributeValue(cfg.UsernameAttribute)),
		Email:       strings.TrimSpace(entry.GetEqualFoldAttributeValue(cfg.EmailAttribute)),
		DisplayName: strings.TrimSpace(entry.GetEqualFoldAttributeValue(cfg.DisplayNameAttribute))}
	if id.Username == "" {
		return ldapIdentity{}, fault.Invalidf("Username attribute %q not found in the directory entry", cfg.UsernameAttribute)
	}
	if cfg.AdminGroup == "" && len(cfg.RoleMappings) == 0 {
		return id, nil
	}
	// Groups are read as the service account (or anonymously), not as the user.
	if err := d.bindService(); err != nil {
		return ldapIdentity{}, err
	}
	if cfg.AdminGroup != "" {
		if id.IsAdmin, err = d.isMember(cfg.AdminGroup, entry.DN, id.Username); err != nil {
			return ldapIdentity{}, err
		}
	}
	for _, m := range cfg.RoleMappings {
		member, err := d.isMember(m.GroupDN, entry.DN, id.Username)
		if err != nil {
			return ldapIdentity{}, err
		}
		if member && !slices.Contains(id.RoleIDs, m.RoleID) {
			id.RoleIDs = append(id.RoleIDs, m.RoleID)
		}
	}
	return id, nil
}

// upsertLDAPUser creates or updates the local user of a directory identity
// and makes its mapped roles those of id.
func (s *Service) upsertLDAPUser(ctx context.Context, cfg store.LDAPConfig, id ldapIdentity) (store.User, error) {
	if err := validateUsername(id.Username); err != nil {
		return store.User{}, fault.Wrap(fault.Invalid, "The username in the directory cannot be used", err).
			WithDetails(err.Error())
	}
	u, err := s.ldapAccount(ctx, cfg, id)
	if errors.Is(err, store.ErrConflict) {
		u, err = s.ldapAccount(ctx, cfg, id) // a concurrent first sign-in created it: update it
	}
	if err != nil {
		return store.User{}, err
	}
	roles := make([]int64, 0, len(id.RoleIDs))
	for _, roleID := range id.RoleIDs {
		switch _, err := s.store.GetRole(ctx, roleID); {
		case errors.Is(err, store.ErrNotFound):
			s.log.Warn("LDAP role mapping names a deleted role", "ldap_config", cfg.ID, "role_id", roleID)
		case err != nil:
			return store.User{}, err
		default:
			roles = append(roles, roleID)
		}
	}
	if err := s.store.SyncMappedRoles(ctx, u.ID, store.LDAPSource(cfg.ID), roles); err != nil {
		return store.User{}, err
	}
	return u, nil
}

// ldapAccount creates the local user of id, or brings the existing one's
// email, display name and (with an admin group) admin right up to date. A
// user of another provider, or of another LDAP configuration, with the same
// name is never taken over; neither is a disabled one signed in.
func (s *Service) ldapAccount(ctx context.Context, cfg store.LDAPConfig, id ldapIdentity) (store.User, error) {
	provider := "ldap:" + cfg.Name
	u, err := s.store.GetUserByUsername(ctx, id.Username)
	switch {
	case errors.Is(err, store.ErrNotFound):
		u = store.User{Username: id.Username, Email: id.Email, DisplayName: id.DisplayName, IsAdmin: id.IsAdmin,
			IsActive: true, AuthProvider: provider}
		if err := s.store.CreateUser(ctx, &u); err != nil {
			return store.User{}, err
		}
		return u, nil
	case err != nil:
		return store.User{}, err
	case u.AuthProvider != provider || !u.IsActive:
		s.log.Warn("LDAP sign-in refused: the local user belongs to another provider or is disabled",
			"user_id", u.ID, "auth_provider", u.AuthProvider, "ldap_config", cfg.ID)
		return store.User{}, ErrInvalidCredentials
	}
	changed := u.Email != id.Email || u.DisplayName != id.DisplayName
	u.Email, u.DisplayName = id.Email, id.DisplayName
	if cfg.AdminGroup != "" && u.IsAdmin != id.IsAdmin {
		u.IsAdmin, changed = id.IsAdmin, true
	}
	if changed {
		if err := s.store.UpdateUser(ctx, &u); err != nil {
			return store.User{}, err
		}
	}
	return u, nil
}

// TestLDAP binds as configuration id says and counts the entries of a user
// search with * as the login name.
func (s *Service) TestLDAP(ctx context.Context, id int64) (userCount int, err error) {
	cfg, err := s.LDAPConfig(ctx, id)
	if err != nil {
		return 0, err
	}
	if ctx, err = s.outbound.Context(ctx); err != nil {
		return 0, err
	}
	d, err := openDirectory(ctx, cfg)
	if f, ok := outbound.Refused(err); ok {
		return 0, f
	}
	if err != nil {
		return 0, ldapUnavailable(err)
	}
	defer d.Close()
	// The raw *, unescaped: here it is the wildcard.
	filter := strings.ReplaceAll(cfg.UserFilter, "{{username}}", "*")
	req := ldap.NewSearchRequest(cfg.BaseDN, ldap.ScopeWholeSubtree, ldap.NeverDerefAliases, 0,
		int(ldapTimeout/time.Second), false, filter, []string{"1.1"}, nil)
	res, err := d.conn.SearchWithPaging(req, 500)
	if err != nil {
		return 0, ldapUnavailable(&DirectoryError{Op: "search " + cfg.BaseDN, Err: err})
	}
	return len(res.Entries), nil
}

// LDAPProvider is an enabled LDAP configuration offered on the login page.
type LDAPProvider struct {
	ID   string // "ldap:<config id>"
	Name string
}

// LDAPProviders lists the enabled LDAP configurations, or none without an
// enterprise license.
func (s *Service) LDAPProviders(ctx context.Context) ([]LDAPProvider, error) {
	if !s.Enterprise() {
		return nil, nil
	}
	all, err := s.store.ListLDAPConfigs(ctx)
	if err != nil {
		return nil, err
	}
	var list []LDAPProvider
	for _, c := range all {
		if c.Enabled {
			list = append(list, LDAPProvider{ID: store.LDAPSource(c.ID), Name: c.Name})
		}
	}
	return list, nil
}

// directory is a connection to the server of one configuration, bound as
// its service account (or anonymous).
type directory struct {
	cfg  store.LDAPConfig
	conn *ldap.Conn
	stop func() bool // stops closing conn when the context ends
}

// openDirectory connects to cfg's server (TLS as configured) and binds as
// the service account, within the outbound policy ctx carries. Failures
// are *DirectoryError (a refusal of the policy among them: see
// outbound.Refused).
func openDirectory(ctx context.Context, cfg store.LDAPConfig) (*directory, error) {
	op := "connect to " + cfg.ServerURL
	u, err := url.Parse(cfg.ServerURL)
	if err != nil {
		return nil, &DirectoryError{Op: op, Err: errors.New("invalid server URL")}
	}
	tc := &tls.Config{ServerName: u.Hostname(), MinVersion: tls.VersionTLS12}
	if cfg.TLSCA != "" {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM([]byte(cfg.TLSCA)) {
			return nil, &DirectoryError{Op: op, Err: errors.New("tlsCa holds no PEM certificate")}
		}
		tc.RootCAs = pool
	}
	if err := outbound.CheckName(u.Hostname()); err != nil {
		return nil, &DirectoryError{Op: op, Err: err}
	}
	dialer := outbound.FromContext(ctx).Dialer(u.Hostname())
	dialer.Timeout = ldapTimeout
	if dl, ok := ctx.Deadline(); ok {
		dialer.Deadline = dl
	}
	conn, err := ldap.DialURL(cfg.ServerURL, ldap.DialWithDialer(dialer), ldap.DialWithTLSConfig(tc))
	if err != nil {
		return nil, &DirectoryError{Op: op, Err: err}
	}
	conn.SetTimeout(ldapTimeout)
	d := &directory{cfg: cfg, conn: conn, stop: context.AfterFunc(ctx, func() { conn.Close() })}
	if u.Scheme == "ldap" && cfg.TLSEnabled {
		// go-ldap's StartTLS waits for its answer and shakes hands with no
		// deadline of its own.
		stall := time.AfterFunc(ldapTimeout, func() { conn.Close() })
		err := conn.StartTLS(tc)
		stall.Stop()
		if err != nil {
			d.Close()
			return nil, &DirectoryError{Op: "StartTLS with " + cfg.ServerURL, Err: err}
		}
	}
	if err := d.bindService(); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// Close closes the connection.
func (d *directory) Close() {
	d.stop()
	d.conn.Close()
}

// bindService binds as the service account, or anonymously without one.
func (d *directory) bindService() error {
	if d.cfg.BindDN == "" {
		if err := d.conn.UnauthenticatedBind(""); err != nil {
			return &DirectoryError{Op: "bind anonymously", Err: err}
		}
		return nil
	}
	if err := d.conn.Bind(d.cfg.BindDN, d.cfg.BindPassword); err != nil {
		return &DirectoryError{Op: "bind as " + d.cfg.BindDN, Err: err}
	}
	return nil
}

// search runs a search returning at most limit entries (0: no limit).
func (d *directory) search(base string, scope int, filter string, limit int, attrs []string) (*ldap.SearchResult, error) {
	req := ldap.NewSearchRequest(base, scope, ldap.NeverDerefAliases, limit, int(ldapTimeout/time.Second),
		false, filter, attrs, nil)
	res, err := d.conn.Search(req)
	if err != nil && !ldap.IsErrorWithCode(err, ldap.LDAPResultSizeLimitExceeded) {
		return nil, &DirectoryError{Op: "search " + base, Err: err}
	}
	return res, err
}

// isMember reports whether the user with userDN and username belongs to
// group: a DN (it holds "=" and ","), checked by a base-scope search at it,
// or a group name, searched under the group base DN. The default filter
// compares member with the user's DN; a configured group filter replaces it,
// with {{group}} the group's name (a DN's first value), {{user_dn}} and
// {{username}}, each escaped.
func (d *directory) isMember(group, userDN, username string) (bool, error) {
	group = strings.TrimSpace(group)
	name, base, scope := group, d.cfg.GroupBaseDN, ldap.ScopeWholeSubtree
	isDN := isGroupDN(group)
	if isDN {
		base, scope = group, ldap.ScopeBaseObject
		if dn, err := ldap.ParseDN(group); err == nil && len(dn.RDNs) > 0 && len(dn.RDNs[0].Attributes) > 0 {
			name = dn.RDNs[0].Attributes[0].Value
		}
	} else if base == "" {
		return false, nil // refused by validation; nothing to search under
	}
	var filter string
	switch {
	case d.cfg.GroupFilter != "":
		filter = strings.NewReplacer("{{group}}", escapeFilter(name), "{{user_dn}}", escapeFilter(userDN),
			"{{username}}", escapeFilter(username)).Replace(d.cfg.GroupFilter)
		if !isDN && !strings.Contains(d.cfg.GroupFilter, "{{group}}") {
			filter = "(&(cn=" + escapeFilter(name) + ")" + filter + ")"
		}
	case isDN:
		filter = "(member=" + escapeFilter(userDN) + ")"
	default:
		filter = "(&(cn=" + escapeFilter(name) + ")(member=" + escapeFilter(userDN) + "))"
	}
	res, err := d.search(base, scope, filter, 1, []string{"1.1"})
	switch {
	case ldap.IsErrorWithCode(err, ldap.LDAPResultSizeLimitExceeded):
		return true, nil // more than one group matched
	case ldap.IsErrorWithCode(err, ldap.LDAPResultNoSuchObject):
		return false, nil // no such group
	case err != nil:
		return false, err
	}
	return len(res.Entries) > 0, nil
}

// escapeFilter escapes s for use as a value in an LDAP search filter
// (RFC 4515): each of \ * ( ) and NUL becomes a backslash and two hex digits
// (\5c \2a \28 \29 \00). Bytes that are not UTF-8, and U+FFFD, are escaped
// the same way, since go-ldap's filter compiler refuses them as they are (any
// byte may be escaped, so the value is unchanged); other UTF-8 passes as is.
func escapeFilter(s string) string {
	const hexDigits = "0123456789abcdef"
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError || r == '\\' || r == '*' || r == '(' || r == ')' || r == 0 {
			for _, c := range []byte(s[i : i+size]) {
				b.WriteByte('\\')
				b.WriteByte(hexDigits[c>>4])
				b.WriteByte(hexDigits[c&0xf])
			}
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}
