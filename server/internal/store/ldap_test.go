package store_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
)

// fullLDAPConfig returns an LDAP configuration with every field set to a
// non-zero value.
func fullLDAPConfig(name string) store.LDAPConfig {
	return store.LDAPConfig{
		Name:                 name,
		Enabled:              true,
		ServerURL:            "ldaps://ldap.example.com:636",
		BindDN:               "cn=reader,dc=example,dc=com",
		BindPassword:         "s3cret-bind-password",
		BaseDN:               "ou=people,dc=example,dc=com",
		UserFilter:           "(&(objectClass=person)(uid={{username}}))",
		UsernameAttribute:    "uid",
		EmailAttribute:       "mail",
		DisplayNameAttribute: "displayName",
		GroupBaseDN:          "ou=groups,dc=example,dc=com",
		GroupFilter:          "(&(cn={{group}})(memberUid={{username}}))",
		AdminGroup:           "cn=admins,ou=groups,dc=example,dc=com",
		RoleMappings: []store.LDAPRoleMapping{
			{GroupDN: "cn=devs,ou=groups,dc=example,dc=com", RoleID: 2},
			{GroupDN: "cn=ünïcode \"q\",ou=groups,dc=example,dc=com", RoleID: 3},
		},
		TLSEnabled: true,
		TLSCA:      "-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----",
	}
}

func createLDAPConfig(t *testing.T, s *store.Store, c store.LDAPConfig) store.LDAPConfig {
	t.Helper()
	if err := s.CreateLDAPConfig(t.Context(), &c); err != nil {
		t.Fatalf("CreateLDAPConfig(%q): %v", c.Name, err)
	}
	return c
}

func TestLDAPConfigRoundTripsEveryField(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		full := createLDAPConfig(t, s, fullLDAPConfig("corp"))
		sparse := createLDAPConfig(t, s, store.LDAPConfig{Name: "sparse", ServerURL: "ldap://h:389", BaseDN: "dc=x"})
		if full.ID == 0 || sparse.ID <= full.ID || full.CreatedAt.IsZero() || !full.UpdatedAt.Equal(full.CreatedAt) {
			t.Fatalf("assigned fields: full %d %v %v, sparse %d", full.ID, full.CreatedAt, full.UpdatedAt, sparse.ID)
		}
		got, err := s.GetLDAPConfig(ctx, full.ID)
		if err != nil {
			t.Fatalf("GetLDAPConfig: %v", err)
		}
		if diff := cmp.Diff(full, got, approxTime); diff != "" {
			t.Errorf("GetLDAPConfig (-want +got):\n%s", diff)
		}
		// Nil mappings read back as an empty list.
		sparse.RoleMappings = []store.LDAPRoleMapping{}
		list, err := s.ListLDAPConfigs(ctx)
		if err != nil {
			t.Fatalf("ListLDAPConfigs: %v", err)
		}
		if diff := cmp.Diff([]store.LDAPConfig{full, sparse}, list, approxTime); diff != "" {
			t.Errorf("ListLDAPConfigs (-want +got):\n%s", diff)
		}

		full.Name, full.Enabled, full.BindPassword, full.RoleMappings = "corp2", false, "", nil
		full.TLSEnabled, full.AdminGroup = false, "admins"
		if err := s.UpdateLDAPConfig(ctx, &full); err != nil {
			t.Fatalf("UpdateLDAPConfig: %v", err)
		}
		full.RoleMappings = []store.LDAPRoleMapping{}
		got, err = s.GetLDAPConfig(ctx, full.ID)
		if err != nil {
			t.Fatalf("GetLDAPConfig after update: %v", err)
		}
		if diff := cmp.Diff(full, got, approxTime); diff != "" {
			t.Errorf("after update (-want +got):\n%s", diff)
		}
	})
}

func TestLDAPConfigNotFoundAndConflict(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a := createLDAPConfig(t, s, fullLDAPConfig("a"))
		createLDAPConfig(t, s, fullLDAPConfig("b"))
		if _, err := s.GetLDAPConfig(ctx, a.ID+100); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetLDAPConfig(missing) = %v, want ErrNotFound", err)
		}
		dup := fullLDAPConfig("a")
		if err := s.CreateLDAPConfig(ctx, &dup); !errors.Is(err, store.ErrConflict) {
			t.Errorf("CreateLDAPConfig(duplicate name) = %v, want ErrConflict", err)
		}
		a.Name = "b"
		if err := s.UpdateLDAPConfig(ctx, &a); !errors.Is(err, store.ErrConflict) {
			t.Errorf("UpdateLDAPConfig(taken name) = %v, want ErrConflict", err)
		}
		missing := fullLDAPConfig("c")
		missing.ID = a.ID + 100
		if err := s.UpdateLDAPConfig(ctx, &missing); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("UpdateLDAPConfig(missing) = %v, want ErrNotFound", err)
		}
		if err := s.DeleteLDAPConfig(ctx, a.ID+100); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("DeleteLDAPConfig(missing) = %v, want ErrNotFound", err)
		}
	})
}

func TestLDAPBindPasswordIsEncryptedAtRest(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		c := createLDAPConfig(t, s, fullLDAPConfig("secretive"))
		check := func(t *testing.T, plain string) {
			t.Helper()
			var raw string
			err := s.DB().QueryRowContext(ctx, `SELECT bind_password FROM ldap_configs WHERE name = 'secretive'`).Scan(&raw)
			if err != nil {
				t.Fatalf("raw select: %v", err)
			}
			if raw == "" || strings.Contains(raw, plain) {
				t.Errorf("bind_password at rest = %q, want it encrypted", raw)
			}
			got, err := s.GetLDAPConfig(ctx, c.ID)
			if err != nil {
				t.Fatalf("GetLDAPConfig: %v", err)
			}
			if got.BindPassword != plain {
				t.Errorf("BindPassword = %q, want %q", got.BindPassword, plain)
			}
		}
		t.Run("create", func(t *testing.T) { check(t, c.BindPassword) })
		t.Run("update", func(t *testing.T) {
			c.BindPassword = "rotated-bind-password"
			if err := s.UpdateLDAPConfig(ctx, &c); err != nil {
				t.Fatalf("UpdateLDAPConfig: %v", err)
			}
			check(t, c.BindPassword)
		})
	})
}

func TestRenamingAnLDAPConfigCarriesItsUsersAlong(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		c := createLDAPConfig(t, s, fullLDAPConfig("corp"))
		mine := store.User{Username: "alice", AuthProvider: "ldap:corp", IsActive: true}
		other := store.User{Username: "bob", AuthProvider: "ldap:corporate", IsActive: true}
		for _, u := range []*store.User{&mine, &other} {
			if err := s.CreateUser(ctx, u); err != nil {
				t.Fatalf("CreateUser: %v", err)
			}
		}
		c.Name = "renamed"
		if err := s.UpdateLDAPConfig(ctx, &c); err != nil {
			t.Fatalf("UpdateLDAPConfig: %v", err)
		}
		for _, want := range []struct {
			id       int64
			provider string
		}{{mine.ID, "ldap:renamed"}, {other.ID, "ldap:corporate"}} {
			u, err := s.GetUser(ctx, want.id)
			if err != nil {
				t.Fatalf("GetUser: %v", err)
			}
			if u.AuthProvider != want.provider {
				t.Errorf("user %s AuthProvider = %q, want %q", u.Username, u.AuthProvider, want.provider)
			}
		}
	})
}

func TestDeletingAnLDAPConfigRemovesItsMappedRoles(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		c := createLDAPConfig(t, s, fullLDAPConfig("corp"))
		u := createUser(t, s, "ursula")
		mapped, manual := createRole(t, s, "mapped"), createRole(t, s, "manual")
		if err := s.SyncMappedRoles(ctx, u.ID, store.LDAPSource(c.ID), []int64{mapped.ID}); err != nil {
			t.Fatalf("SyncMappedRoles: %v", err)
		}
		assignRole(t, s, store.RoleAssignment{UserID: u.ID, RoleID: manual.ID, Source: "manual"})
		if err := s.DeleteLDAPConfig(ctx, c.ID); err != nil {
			t.Fatalf("DeleteLDAPConfig: %v", err)
		}
		if _, err := s.GetLDAPConfig(ctx, c.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetLDAPConfig after delete = %v, want ErrNotFound", err)
		}
		left, err := s.ListUserRoles(ctx, u.ID)
		if err != nil {
			t.Fatalf("ListUserRoles: %v", err)
		}
		if len(left) != 1 || left[0].RoleID != manual.ID {
			t.Errorf("roles after delete = %+v, want only the manual one", left)
		}
		if _, err := s.GetUser(ctx, u.ID); err != nil {
			t.Errorf("the user went with the configuration: %v", err)
		}
	})
}
