package auth

import (
	"bytes"
	"encoding/hex"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/go-ldap/ldap/v3"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
	"github.com/berth-dev/berth/shared/enginetest"
	"github.com/berth-dev/berth/shared/fault"
)

func TestEscapeFilter(t *testing.T) {
	tests := []struct{ in, want string }{
		{`\`, `\5c`},
		{`*`, `\2a`},
		{`(`, `\28`},
		{`)`, `\29`},
		{"\x00", `\00`},
		{`alice`, `alice`},
		{``, ``},
		{`*)(uid=*`, `\2a\29\28uid=\2a`},
		{`ev*)(il`, `ev\2a\29\28il`},
		{`a\2a`, `a\5c2a`}, // an escape sequence typed by the user is itself escaped
		{"x\x00*\\()y", `x\00\2a\5c\28\29y`},
		{`=~<>:&|!`, `=~<>:&|!`},
		{`jürgen.müller@例え.jp`, `jürgen.müller@例え.jp`}, // UTF-8 untouched
		{`(Zoë)`, `\28Zoë\29`},
		// Not UTF-8, and U+FFFD, which go-ldap's compiler refuses literally.
		{"a\xffb", `a\ffb`},
		{"\xe4\xb8", `\e4\b8`},
		{"\uFFFD", `\ef\bf\bd`},
	}
	for _, tt := range tests {
		if got := escapeFilter(tt.in); got != tt.want {
			t.Errorf("escapeFilter(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// unescapeFilterValue reverses escapeFilter, failing on a special character
// that is not escaped.
func unescapeFilterValue(t *testing.T, s string) []byte {
	t.Helper()
	var out []byte
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			if i+2 >= len(s) {
				t.Fatalf("%q: truncated escape at %d", s, i)
			}
			b, err := hex.DecodeString(s[i+1 : i+3])
			if err != nil {
				t.Fatalf("%q: bad escape at %d: %v", s, i, err)
			}
			out = append(out, b...)
			i += 2
		case '*', '(', ')', 0:
			t.Fatalf("%q: unescaped %q at %d", s, c, i)
		default:
			out = append(out, c)
		}
	}
	return out
}

func FuzzEscapeFilter(f *testing.F) {
	for _, seed := range []string{"alice", "*", "ev*)(il", "*)(uid=*", "\\", "\x00", "(Zoë)", "a\xffb", "\uFFFD", "x\\2a"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got := escapeFilter(in)
		if back := unescapeFilterValue(t, got); !bytes.Equal(back, []byte(in)) {
			t.Fatalf("escapeFilter(%q) = %q, which means %q", in, got, back)
		}
		if in == "" {
			return // no login name is empty (Login refuses it)
		}
		if _, err := ldap.CompileFilter("(uid=" + got + ")"); err != nil {
			t.Fatalf("CompileFilter of escapeFilter(%q) = %q: %v", in, got, err)
		}
	})
}

// ldapDirectory is the test directory of scripts/test-env.sh.
type ldapDirectory struct {
	URL, LDAPSURL, CAFile, Base, BindDN, BindPassword string
}

// requireLDAP returns the test directory, skipping the test when there is
// none, or failing it under CI=true: a skipped suite is not a passing one.
func requireLDAP(t *testing.T) ldapDirectory {
	t.Helper()
	d := ldapDirectory{URL: os.Getenv("BERTH_TEST_LDAP_URL"), LDAPSURL: os.Getenv("BERTH_TEST_LDAPS_URL"),
		CAFile: os.Getenv("BERTH_TEST_LDAP_CA"), Base: os.Getenv("BERTH_TEST_LDAP_BASE"),
		BindDN: os.Getenv("BERTH_TEST_LDAP_BIND_DN"), BindPassword: os.Getenv("BERTH_TEST_LDAP_BIND_PASSWORD")}
	enginetest.RequireEnv(t, "LDAP directory", "BERTH_TEST_LDAP_URL", "BERTH_TEST_LDAP_BASE")
	return d
}

func ptrTo[T any](v T) *T { return &v }

// ldapConfig creates an LDAP configuration through the service.
func (f *fixture) ldapConfig(t *testing.T, p LDAPConfigPatch) store.LDAPConfig {
	t.Helper()
	c, err := f.svc.CreateLDAPConfig(t.Context(), p)
	if err != nil {
		t.Fatalf("CreateLDAPConfig(%s): %v", *p.Name, err)
	}
	return c
}

// unreachable is a directory address that refuses connections.
const unreachable = "ldap://127.0.0.1:1"

func TestLDAPSignInRefusesAnEmptyPasswordBeforeBinding(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		f.edition.enterprise = true
		// Reaching the server would answer "LDAP server unavailable".
		c := f.ldapConfig(t, LDAPConfigPatch{Name: ptrTo("dead"), ServerURL: ptrTo(unreachable),
			BaseDN: ptrTo("dc=berth,dc=test"), Enabled: ptrTo(true)})
		for _, provider := range []string{"ldap", store.LDAPSource(c.ID)} {
			if _, err := f.svc.loginLDAP(t.Context(), provider, "alice", ""); !errors.Is(err, ErrInvalidCredentials) {
				t.Errorf("loginLDAP(%s, empty password) = %v, want ErrInvalidCredentials", provider, err)
			}
			if _, err := f.svc.loginLDAP(t.Context(), provider, "alice", "x"); fault.KindOf(err) != fault.Internal {
				t.Errorf("loginLDAP(%s) with a password = %v, want the server to be tried", provider, err)
			}
		}
	})
}

func TestLDAPSignInNeedsAnEnterpriseLicenseAndAKnownProvider(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		ctx := t.Context()
		_, err := f.svc.loginLDAP(ctx, "ldap", "alice", "pw")
		wantFault(t, err, fault.Forbidden, "Enterprise license required")
		_, err = f.svc.CreateLDAPConfig(ctx, LDAPConfigPatch{Name: ptrTo("x")})
		wantFault(t, err, fault.Forbidden, "Enterprise license required")

		f.edition.enterprise = true
		_, err = f.svc.loginLDAP(ctx, "ldap", "alice", "pw")
		wantFault(t, err, fault.Invalid, "LDAP sign-in is not configured")
		off := f.ldapConfig(t, LDAPConfigPatch{Name: ptrTo("off"), ServerURL: ptrTo(unreachable), BaseDN: ptrTo("dc=x")})
		for _, p := range []string{"ldap:", "ldap:abc", "ldap:-1", "ldap:999", store.LDAPSource(off.ID)} {
			_, err = f.svc.loginLDAP(ctx, p, "alice", "pw")
			wantFault(t, err, fault.Invalid, `Unknown sign-in provider "`+p+`"`)
		}
		if list, err := f.svc.LDAPProviders(ctx); err != nil || len(list) != 0 {
			t.Errorf("LDAPProviders with only a disabled configuration = %v, %v", list, err)
		}
	})
}

func TestLDAPConfigValidation(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		f.edition.enterprise = true
		valid := func() LDAPConfigPatch {
			return LDAPConfigPatch{Name: ptrTo("corp"), ServerURL: ptrTo("ldaps://ldap.example.com:636"),
				BaseDN: ptrTo("dc=example,dc=com")}
		}
		c := f.ldapConfig(t, valid())
		if c.UserFilter != "(uid={{username}})" || c.UsernameAttribute != "uid" || c.EmailAttribute != "mail" ||
			c.DisplayNameAttribute != "cn" || c.Enabled || c.TLSEnabled {
			t.Errorf("defaults = %+v", c)
		}
		tests := []struct {
			name   string
			change func(p *LDAPConfigPatch)
			msg    string
		}{
			{"no name", func(p *LDAPConfigPatch) { p.Name = ptrTo(" ") }, "name is required"},
			{"no server", func(p *LDAPConfigPatch) { p.ServerURL = nil }, "serverUrl is required"},
			{"no base", func(p *LDAPConfigPatch) { p.BaseDN = nil }, "baseDn is required"},
			{"http", func(p *LDAPConfigPatch) { p.ServerURL = ptrTo("http://ldap:389") }, "serverUrl must be ldap://host:port or ldaps://host:port"},
			{"no host", func(p *LDAPConfigPatch) { p.ServerURL = ptrTo("ldap://") }, "serverUrl must be ldap://host:port or ldaps://host:port"},
			{"bad base", func(p *LDAPConfigPatch) { p.BaseDN = ptrTo("not a dn") }, "baseDn is not a valid DN"},
			{"filter without placeholder", func(p *LDAPConfigPatch) { p.UserFilter = ptrTo("(uid=admin)") }, "userFilter must contain {{username}}"},
			{"broken filter", func(p *LDAPConfigPatch) { p.UserFilter = ptrTo("(uid={{username}}") }, "userFilter is not a valid LDAP filter"},
			{"broken group filter", func(p *LDAPConfigPatch) { p.GroupFilter = ptrTo("member={{user_dn}}") }, "groupFilter is not a valid LDAP filter"},
			{"bad CA", func(p *LDAPConfigPatch) { p.TLSCA = ptrTo("not pem") }, "tlsCa must hold PEM certificates"},
			{"admin group name without base", func(p *LDAPConfigPatch) { p.AdminGroup = ptrTo("admins") }, "groupBaseDn is required when adminGroup is a group name"},
			{"mappings without base", func(p *LDAPConfigPatch) {
				p.RoleMappings = &[]store.LDAPRoleMapping{{GroupDN: "cn=devs,dc=example,dc=com", RoleID: f.roleID(t, RoleViewer)}}
			}, "groupBaseDn is required for role mappings"},
			{"unknown role", func(p *LDAPConfigPatch) {
				p.GroupBaseDN = ptrTo("ou=groups,dc=example,dc=com")
				p.RoleMappings = &[]store.LDAPRoleMapping{{GroupDN: "cn=devs,dc=example,dc=com", RoleID: 999}}
			}, "roleMappings: role 999 does not exist"},
			{"mapping without group", func(p *LDAPConfigPatch) {
				p.GroupBaseDN = ptrTo("ou=groups,dc=example,dc=com")
				p.RoleMappings = &[]store.LDAPRoleMapping{{GroupDN: " ", RoleID: f.roleID(t, RoleViewer)}}
			}, "roleMappings: groupDn is required"},
		}
		for _, tt := range tests {
			p := valid()
			*p.Name = "other"
			tt.change(&p)
			_, err := f.svc.CreateLDAPConfig(t.Context(), p)
			if f, ok := fault.As(err); !ok || f.Kind != fault.Invalid || f.Message != tt.msg {
				t.Errorf("%s: err = %v, want 400 %q", tt.name, err, tt.msg)
			}
		}
		_, err := f.svc.CreateLDAPConfig(t.Context(), valid())
		wantFault(t, err, fault.Conflict, "An LDAP configuration with this name already exists")
		_, err = f.svc.UpdateLDAPConfig(t.Context(), c.ID+100, LDAPConfigPatch{})
		wantFault(t, err, fault.NotFound, "LDAP configuration not found")
		// Emptied optional fields fall back to their defaults.
		got, err := f.svc.UpdateLDAPConfig(t.Context(), c.ID, LDAPConfigPatch{UserFilter: ptrTo(""), EmailAttribute: ptrTo(" ")})
		if err != nil || got.UserFilter != DefaultLDAPUserFilter || got.EmailAttribute != DefaultLDAPEmailAttribute {
			t.Errorf("UpdateLDAPConfig with emptied fields = %+v, %v", got, err)
		}
	})
}

func TestLDAPSignInTriesEnabledConfigurationsInOrder(t *testing.T) {
	dir := requireLDAP(t)
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		f.edition.enterprise = true
		ctx := t.Context()
		working := func(name, base string, enabled bool) store.LDAPConfig {
			return f.ldapConfig(t, LDAPConfigPatch{Name: ptrTo(name), ServerURL: ptrTo(dir.URL), BaseDN: ptrTo(base),
				BindDN: ptrTo(dir.BindDN), BindPassword: ptrTo(dir.BindPassword), Enabled: ptrTo(enabled)})
		}
		dead := f.ldapConfig(t, LDAPConfigPatch{Name: ptrTo("dead"), ServerURL: ptrTo(unreachable),
			BaseDN: ptrTo(dir.Base), Enabled: ptrTo(true)})
		working("groups-only", "ou=groups,"+dir.Base, true) // has no alice: the next one is asked
		working("disabled", dir.Base, false)
		people := working("people", "ou=people,"+dir.Base, true)

		u, err := f.svc.loginLDAP(ctx, "ldap", "alice", "alice-ldap-1")
		if err != nil {
			t.Fatalf("loginLDAP(ldap, alice): %v", err)
		}
		if u.Username != "alice" || u.AuthProvider != "ldap:people" || u.Email != "alice@berth.test" ||
			u.DisplayName != "Alice Admin" || u.PasswordHash != "" || !u.IsActive || u.IsAdmin {
			t.Errorf("alice = %+v", u)
		}
		// A wrong password in the directory that has the user decides.
		_, err = f.svc.loginLDAP(ctx, "ldap", "alice", "wrong")
		if !errors.Is(err, ErrInvalidCredentials) {
			t.Errorf("wrong password = %v, want ErrInvalidCredentials", err)
		}
		// Only an unreachable directory: the server is unavailable, not the password wrong.
		_, err = f.svc.loginLDAP(ctx, store.LDAPSource(dead.ID), "alice", "alice-ldap-1")
		wantFault(t, err, fault.Internal, "LDAP server unavailable")
		var derr *DirectoryError
		if !errors.As(err, &derr) || strings.Contains(err.Error(), "alice-ldap-1") {
			t.Errorf("unavailable error = %v, want a DirectoryError without the password", err)
		}
		// Nobody has the user, one directory is down: unavailable.
		_, err = f.svc.loginLDAP(ctx, "ldap", "nobody", "pw")
		wantFault(t, err, fault.Internal, "LDAP server unavailable")
		_, err = f.svc.loginLDAP(ctx, store.LDAPSource(people.ID), "nobody", "pw")
		if !errors.Is(err, ErrInvalidCredentials) {
			t.Errorf("unknown user = %v, want ErrInvalidCredentials", err)
		}
		n, err := f.svc.TestLDAP(ctx, people.ID)
		if err != nil || n != 3 {
			t.Errorf("TestLDAP = %d, %v; want 3 users", n, err)
		}
	})
}
