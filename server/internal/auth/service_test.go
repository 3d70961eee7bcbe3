package auth

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
	"github.com/berth-dev/berth/shared/fault"
)

func TestNewEnsuresBuiltinRolesOnce(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		f.newService(t) // a restart
		f.newService(t)

		roles, err := f.svc.ListRoles(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		type role struct {
			Name        string
			IsSystem    bool
			Permissions map[string][]string
		}
		var want, got []role
		for _, r := range BuiltinRoles() {
			want = append(want, role{r.Name, true, r.Permissions})
		}
		for _, r := range roles {
			got = append(got, role{r.Name, r.IsSystem, r.Permissions})
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("roles after three starts (-want +got):\n%s", diff)
		}
	})
}

func TestSettingsDefaults(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		got, err := f.svc.Settings(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		want := Settings{AuthEnabled: true, DefaultProvider: "local", SessionTimeout: 86400}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Settings (-want +got):\n%s", diff)
		}
	})
}

func TestUpdateSettingsRejectsInvalidValues(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		tests := []struct {
			name  string
			patch SettingsPatch
			msg   string
		}{
			{"session timeout under a minute", SettingsPatch{SessionTimeout: ptr(59)},
				"sessionTimeout must be between 60 and 31536000 seconds"},
			{"session timeout over a year", SettingsPatch{SessionTimeout: ptr(365*86400 + 1)},
				"sessionTimeout must be between 60 and 31536000 seconds"},
			{"unknown provider", SettingsPatch{DefaultProvider: ptr("x")},
				"defaultProvider must be local, ldap, ldap:<id> or oidc:<id>"},
			{"oidc without id", SettingsPatch{DefaultProvider: ptr("oidc")},
				"defaultProvider must be local, ldap, ldap:<id> or oidc:<id>"},
			{"valid provider with invalid timeout", SettingsPatch{DefaultProvider: ptr("oidc:corp"), SessionTimeout: ptr(0), AuthEnabled: ptr(false)},
				"sessionTimeout must be between 60 and 31536000 seconds"},
		}
		for _, tt := range tests {
			_, err := f.svc.UpdateSettings(t.Context(), tt.patch)
			wantFault(t, err, fault.Invalid, tt.msg)
		}
		// Nothing of the refused patches was applied.
		got, err := f.svc.Settings(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(Settings{AuthEnabled: true, DefaultProvider: "local", SessionTimeout: 86400}, got); diff != "" {
			t.Errorf("Settings after refused patches (-want +got):\n%s", diff)
		}
	})
}

func TestUpdateSettingsAppliesValidValues(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		want := Settings{AuthEnabled: false, DefaultProvider: "oidc:corp", SessionTimeout: 60}
		got, err := f.svc.UpdateSettings(t.Context(),
			SettingsPatch{AuthEnabled: ptr(false), DefaultProvider: ptr("oidc:corp"), SessionTimeout: ptr(60)})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("UpdateSettings (-want +got):\n%s", diff)
		}
		// Another replica (no cache) reads the same.
		again, err := f.newService(t).Settings(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, again); diff != "" {
			t.Errorf("Settings of a new Service (-want +got):\n%s", diff)
		}
	})
}

func TestSetEnabledAppliesAtOnce(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		ctx := t.Context()
		if on, err := f.svc.Enabled(ctx); err != nil || !on { // now cached
			t.Fatalf("Enabled = %v, %v; want true", on, err)
		}
		if err := f.svc.SetEnabled(ctx, false); err != nil {
			t.Fatal(err)
		}
		got, err := f.svc.Settings(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got.AuthEnabled {
			t.Error("Settings().AuthEnabled = true right after SetEnabled(false)")
		}
		if err := f.svc.SetEnabled(ctx, true); err != nil {
			t.Fatal(err)
		}
		if on, err := f.svc.Enabled(ctx); err != nil || !on {
			t.Errorf("Enabled right after SetEnabled(true) = %v, %v; want true", on, err)
		}
	})
}

func TestSettingsChangedByAnotherReplicaApplyWithinTTL(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		ctx := t.Context()
		if on, err := f.svc.Enabled(ctx); err != nil || !on {
			t.Fatalf("Enabled = %v, %v; want true", on, err)
		}
		if err := f.newService(t).SetEnabled(ctx, false); err != nil {
			t.Fatal(err)
		}
		f.clock.Advance(settingsTTL)
		if on, err := f.svc.Enabled(ctx); err != nil || on {
			t.Errorf("Enabled %v after another replica disabled auth = %v, %v; want false", settingsTTL, on, err)
		}
	})
}

func TestPrepareSetupWritesAndReusesToken(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		ctx := t.Context()
		tok, err := f.svc.PrepareSetup(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(tok) < 32 {
			t.Fatalf("setup token %q is shorter than 32 characters", tok)
		}
		path := filepath.Join(f.dir, "setup-token")
		if got := f.svc.SetupTokenPath(); got != path {
			t.Errorf("SetupTokenPath = %q, want %q", got, path)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(data); got != tok+"\n" {
			t.Errorf("setup-token holds %q, want %q", got, tok+"\n")
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if perm := fi.Mode().Perm(); perm != 0o600 {
			t.Errorf("setup-token mode = %v, want 0600", perm)
		}

		again, err := f.svc.PrepareSetup(ctx)
		if err != nil || again != tok {
			t.Errorf("second PrepareSetup = %q, %v; want %q", again, err, tok)
		}
		restarted, err := f.newService(t).PrepareSetup(ctx)
		if err != nil || restarted != tok {
			t.Errorf("PrepareSetup after a restart = %q, %v; want %q", restarted, err, tok)
		}
	})
}

// Replicas sharing the data directory start at once: they all print the
// same setup token, and the first admin can be created through any of them.
func TestReplicasStartingTogetherShareOneSetupToken(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		ctx := t.Context()
		svcs := make([]*Service, 6)
		for i := range svcs {
			svcs[i] = f.newService(t)
		}
		toks := make([]string, len(svcs))
		var wg sync.WaitGroup
		for i, s := range svcs {
			wg.Go(func() {
				tok, err := s.PrepareSetup(ctx)
				if err != nil {
					t.Error(err)
				}
				toks[i] = tok
			})
		}
		wg.Wait()
		for i, tok := range toks {
			if tok == "" || tok != toks[0] {
				t.Fatalf("replica %d prints setup token %q, replica 0 %q", i, tok, toks[0])
			}
		}
		if _, err := svcs[len(svcs)-1].CreateFirstAdmin(ctx, toks[0], UserSpec{Username: "admin", Password: "a-long-password-1"}); err != nil {
			t.Fatalf("CreateFirstAdmin through another replica: %v", err)
		}
		if _, err := svcs[0].CreateFirstAdmin(ctx, toks[0], UserSpec{Username: "admin2", Password: "a-long-password-1"}); err == nil {
			t.Fatal("the setup token created a second admin through another replica")
		}
	})
}

func TestCreateFirstAdminRefusesWrongSetupToken(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		ctx := t.Context()
		tok, err := f.svc.PrepareSetup(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, wrong := range []string{"", "wrong", tok[:len(tok)-1], tok + "x"} {
			_, err := f.svc.CreateFirstAdmin(ctx, wrong, UserSpec{Username: "root", Password: "root-password"})
			wantFault(t, err, fault.Unauthorized, "A valid setup token is required to create the first admin")
		}
		if n, err := st.CountUsers(ctx); err != nil || n != 0 {
			t.Errorf("CountUsers = %d, %v; want 0", n, err)
		}
	})
}

func TestCreateFirstAdminSpendsSetupToken(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		ctx := t.Context()
		tok, err := f.svc.PrepareSetup(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// A refused spec does not spend the token.
		_, err = f.svc.CreateFirstAdmin(ctx, tok, UserSpec{Username: "root", Password: "short"})
		wantFault(t, err, fault.Invalid, "Password must be at least 8 characters")

		u, err := f.svc.CreateFirstAdmin(ctx, tok, UserSpec{Username: "root", Password: "root-password"})
		if err != nil {
			t.Fatal(err)
		}
		if !u.IsAdmin || !u.IsActive || u.AuthProvider != "local" || u.ID == 0 {
			t.Errorf("first admin = %+v, want an active local admin", u)
		}
		if _, err := os.Stat(f.svc.SetupTokenPath()); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("setup-token after use: Stat error = %v, want ErrNotExist", err)
		}
		if again, err := f.svc.PrepareSetup(ctx); err != nil || again != "" {
			t.Errorf("PrepareSetup once a user exists = %q, %v; want \"\"", again, err)
		}
		_, err = f.svc.CreateFirstAdmin(ctx, tok, UserSpec{Username: "root2", Password: "root2-password"})
		wantFault(t, err, fault.Unauthorized, "A valid setup token is required to create the first admin")
		if n, err := st.CountUsers(ctx); err != nil || n != 1 {
			t.Errorf("CountUsers = %d, %v; want 1", n, err)
		}
		ident, _ := f.login(t, "root")
		if !ident.Access.Admin {
			t.Errorf("first admin signs in without admin access: %+v", ident.Access)
		}
	})
}

func TestCreateFirstAdminAfterRestartUsesTheSameToken(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		ctx := t.Context()
		tok, err := f.svc.PrepareSetup(ctx)
		if err != nil {
			t.Fatal(err)
		}
		restarted := f.newService(t)
		if _, err := restarted.PrepareSetup(ctx); err != nil { // as main does at start-up
			t.Fatal(err)
		}
		if _, err := restarted.CreateFirstAdmin(ctx, tok, UserSpec{Username: "root", Password: "root-password"}); err != nil {
			t.Errorf("CreateFirstAdmin with the token of the previous run: %v", err)
		}
	})
}
