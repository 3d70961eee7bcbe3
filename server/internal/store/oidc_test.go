package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
)

func TestOIDCProviderRoundTripWithSecretEncryptedAtRest(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		p := store.OIDCProvider{Name: "dex", Enabled: true, IssuerURL: "https://idp.example", ClientID: "berth",
			ClientSecret: "very-secret-client-value", RedirectURI: "https://b.example/api/auth/oidc/callback",
			Scopes: "openid email", UsernameClaim: "preferred_username", EmailClaim: "email", DisplayNameClaim: "name",
			AdminClaim: "groups", AdminValue: "admins", RoleMappingsClaim: "groups",
			RoleMappings: []store.OIDCRoleMapping{{ClaimValue: "ops", RoleID: 2}}}
		if err := s.CreateOIDCProvider(ctx, &p); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetOIDCProvider(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(p, got); diff != "" {
			t.Errorf("round trip (-want +got):\n%s", diff)
		}
		var raw string
		q := `SELECT client_secret FROM oidc_providers WHERE id = $1`
		if s.Dialect() == "sqlite" {
			q = strings.Replace(q, "$1", "?", 1)
		}
		if err := s.DB().QueryRow(q, p.ID).Scan(&raw); err != nil {
			t.Fatal(err)
		}
		if raw == "" || strings.Contains(raw, "very-secret") {
			t.Errorf("client secret at rest = %q", raw)
		}
		dup := p
		dup.ID = 0
		if err := s.CreateOIDCProvider(ctx, &dup); !errors.Is(err, store.ErrConflict) {
			t.Errorf("duplicate name = %v, want ErrConflict", err)
		}
		got.Enabled, got.RoleMappings = false, nil
		if err := s.UpdateOIDCProvider(ctx, &got); err != nil {
			t.Fatal(err)
		}
		list, err := s.ListOIDCProviders(ctx)
		if err != nil || len(list) != 1 || list[0].Enabled || len(list[0].RoleMappings) != 0 {
			t.Errorf("after update: %+v %v", list, err)
		}
		if err := s.DeleteOIDCProvider(ctx, p.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.GetOIDCProvider(ctx, p.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("after delete: %v", err)
		}
		if err := s.DeleteOIDCProvider(ctx, p.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("second delete: %v", err)
		}
	})
}
