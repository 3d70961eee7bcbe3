package store_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/berth-dev/berth/server/internal/secret"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
)

// The fixtures in testdata were written by the store before it moved to gorm
// (see testdata/README.md). Rows the generator stamped with the store's own
// clock carry a time inside the generator's run, which differs per fixture.
var (
	sqliteFixtureRun   = [2]string{"2026-11-23T16:45:46.220408291Z", "2026-11-23T16:45:46.227897758Z"}
	postgresFixtureRun = [2]string{"2026-11-23T16:45:58.909053142Z", "2026-11-23T16:45:58.972831425Z"}
)

func TestUpgradeFromPreGormSQLite(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "berth-pre-gorm.db"))
	if err != nil {
		t.Fatalf("read fixture: %v", err)
	}
	path := filepath.Join(t.TempDir(), "berth.db")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatalf("copy fixture: %v", err)
	}
	s := openFixture(t, path)
	checkUpgradedStore(t, s, path, sqliteFixtureRun)

	// New writes keep the old column encoding: TEXT times with a fixed
	// nine-digit fraction, which text comparison orders like time.
	if err := s.TouchLogin(t.Context(), 1, mustTime(t, "2026-12-01T12:00:00.5Z")); err != nil {
		t.Fatalf("TouchLogin: %v", err)
	}
	var lastLogin, created string
	err = s.DB().QueryRowContext(t.Context(), `SELECT last_login, created_at FROM users WHERE id = 1`).Scan(&lastLogin, &created)
	if err != nil {
		t.Fatalf("raw select: %v", err)
	}
	if lastLogin != "2026-12-01T12:00:00.500000000Z" {
		t.Errorf("last_login written as %q, want 2026-12-01T12:00:00.500000000Z", lastLogin)
	}
	if !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$`).MatchString(created) {
		t.Errorf("created_at at rest = %q, want the layout 2006-01-02T15:04:05.000000000Z", created)
	}
}

func TestUpgradeFromPreGormPostgres(t *testing.T) {
	dbURL := storetest.PostgresDatabase(t)
	psql, err := exec.LookPath("psql")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("psql is needed to restore the PostgreSQL fixture: %v", err)
		}
		t.Skipf("psql is needed to restore the PostgreSQL fixture: %v", err)
	}
	// A plain pg_dump is a psql script (COPY … FROM stdin, meta-commands).
	cmd := exec.CommandContext(t.Context(), psql, "-X", "-q", "-v", "ON_ERROR_STOP=1",
		"-f", filepath.Join("testdata", "berth-pre-gorm.pg.sql"), dbURL)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("restore fixture: %v\n%s", err, out)
	}
	s := openFixture(t, dbURL)
	checkUpgradedStore(t, s, dbURL, postgresFixtureRun)

	// The identity sequences came along: new rows get new ids.
	u := store.User{Username: "carol", IsActive: true, AuthProvider: "local"}
	if err := s.CreateUser(t.Context(), &u); err != nil {
		t.Fatalf("CreateUser after upgrade: %v", err)
	}
	if u.ID != 4 {
		t.Errorf("new user id = %d, want 4", u.ID)
	}
}

// openFixture opens the database at url with the fixtures' key; Open runs
// the migrations, which must find nothing to do and break nothing.
func openFixture(t *testing.T, url string) *store.Store {
	t.Helper()
	keyText, err := os.ReadFile(filepath.Join("testdata", "encryption_key"))
	if err != nil {
		t.Fatalf("read fixture key: %v", err)
	}
	key, err := secret.LoadKey(t.TempDir(), string(keyText[:64]))
	if err != nil {
		t.Fatalf("parse fixture key: %v", err)
	}
	box, err := secret.New(key)
	if err != nil {
		t.Fatalf("secret box: %v", err)
	}
	s, err := store.Open(t.Context(), url, box)
	if err != nil {
		t.Fatalf("Open fixture: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func mustTime(t *testing.T, v string) time.Time {
	t.Helper()
	x, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		t.Fatal(err)
	}
	return x.UTC()
}

// checkUpgradedStore reads every row the generator wrote through the store
// API and compares it with what was written; secrets must come back as
// their plaintext.
func checkUpgradedStore(t *testing.T, s *store.Store, url string, run [2]string) {
	ctx := t.Context()
	from := mustTime(t, run[0]).Truncate(time.Microsecond)
	to := mustTime(t, run[1])
	ts := func(v string) time.Time { return mustTime(t, v) }
	tp := func(v string) *time.Time { x := ts(v); return &x }
	sp := func(v string) *string { return &v }
	ip := func(v int64) *int64 { return &v }
	// stamped checks that a time the store took from its clock lies in the
	// generator's run, then clears it for the comparison of the rest.
	stamped := func(what string, times ...*time.Time) {
		t.Helper()
		for _, x := range times {
			if x.Before(from) || x.After(to) {
				t.Errorf("%s: stamped time %s is outside the fixture's run [%s, %s]", what, x, from, to)
			}
			*x = time.Time{}
		}
	}

	t.Run("users", func(t *testing.T) {
		got, err := s.ListUsers(ctx)
		if err != nil {
			t.Fatalf("ListUsers: %v", err)
		}
		for i := range got {
			stamped("user "+got[i].Username, &got[i].CreatedAt, &got[i].UpdatedAt)
		}
		want := []store.User{
			{ID: 1, Username: "Admin", Email: "admin@example.com", DisplayName: "The Admin",
				PasswordHash: "$argon2id$v=19$m=65536,t=3,p=2$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaA",
				IsAdmin:      true, IsActive: true, AuthProvider: "local", MFAEnabled: true, LastLogin: tp("2026-11-20T08:30:15.123456Z")},
			{ID: 2, Username: "alice", Email: "alice@corp.example", DisplayName: "Alice Liddell", IsActive: true, AuthProvider: "ldap:corp"},
			{ID: 3, Username: "bob", DisplayName: "Bob", PasswordHash: "$argon2id$v=19$m=65536,t=3,p=2$Ym9ic2FsdA$Ym9iaGFzaA", AuthProvider: "local"},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("users (-want +got):\n%s", diff)
		}
		if u, err := s.GetUserByUsername(ctx, "ADMIN"); err != nil || u.ID != 1 {
			t.Errorf("GetUserByUsername(ADMIN) = %d, %v; want user 1", u.ID, err)
		}
		if n, err := s.CountActiveAdmins(ctx); err != nil || n != 1 {
			t.Errorf("CountActiveAdmins = %d, %v; want 1", n, err)
		}
	})

	t.Run("session and API token", func(t *testing.T) {
		sess, err := s.GetSession(ctx, "5e55105e55105e55105e55105e55105e55105e55105e55105e55105e55105e55")
		if err != nil {
			t.Fatalf("GetSession: %v", err)
		}
		wantSess := store.Session{ID: "5e55105e55105e55105e55105e55105e55105e55105e55105e55105e55105e55", UserID: 1,
			Provider: "local", CreatedAt: ts("2026-11-23T10:00:00.000001Z"), ExpiresAt: ts("2026-11-24T10:00:00.000001Z"),
			LastSeenAt: ts("2026-11-23T11:22:33.444555Z"), IP: "192.0.2.10", UserAgent: "Mozilla/5.0 (fixture)"}
		if diff := cmp.Diff(wantSess, sess); diff != "" {
			t.Errorf("session (-want +got):\n%s", diff)
		}
		tok, err := s.GetAPITokenByHash(ctx, "70c0e70c0e70c0e70c0e70c0e70c0e70c0e70c0e70c0e70c0e70c0e70c0e70c")
		if err != nil {
			t.Fatalf("GetAPITokenByHash: %v", err)
		}
		wantTok := store.APIToken{ID: 1, UserID: 1, Name: "ci deploy",
			TokenHash: "70c0e70c0e70c0e70c0e70c0e70c0e70c0e70c0e70c0e70c0e70c0e70c0e70c", TokenPrefix: "brt_ab12",
			ExpiresAt: tp("2027-01-01T00:00:00Z"), LastUsedAt: tp("2026-11-22T23:59:59.999999Z"), CreatedAt: ts("2026-11-01T12:00:00.5Z")}
		if diff := cmp.Diff(wantTok, tok); diff != "" {
			t.Errorf("API token (-want +got):\n%s", diff)
		}
	})

	t.Run("environments", func(t *testing.T) {
		got, err := s.ListEnvironments(ctx)
		if err != nil {
			t.Fatalf("ListEnvironments: %v", err)
		}
		for i := range got {
			stamped("environment "+got[i].Name, &got[i].CreatedAt, &got[i].UpdatedAt)
		}
		want := []store.Environment{
			{ID: 1, Name: "local", ConnectionType: "socket", Protocol: "http", SocketPath: "/var/run/docker.sock",
				AgentCapabilities: []string{}, Labels: []string{"prod", "eu-west"}, CollectActivity: true, CollectMetrics: true},
			{ID: 2, Name: "remote-tls", ConnectionType: "direct", Host: "docker.example.com", Port: 2376, Protocol: "https",
				TLSCA:             "-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n",
				TLSCert:           "-----BEGIN CERTIFICATE-----\nCERT\n-----END CERTIFICATE-----\n",
				TLSKey:            "-----BEGIN PRIVATE KEY-----\nfixture-tls-key\n-----END PRIVATE KEY-----\n",
				AgentCapabilities: []string{}, Icon: "server", Labels: []string{"staging"}, HighlightChanges: true,
				PublicIP: sp("203.0.113.7"), UpdateCheckEnabled: true, UpdateCheckAutoUpdate: true, ImagePruneEnabled: true,
				Timezone: sp("Europe/Paris")},
			{ID: 3, Name: "edge-1", ConnectionType: "agent-edge", Protocol: "https", TLSSkipVerify: true,
				AgentToken: "agt_fixture_edge_token_0123456789", AgentLastSeen: tp("2026-11-23T09:15:00.25Z"),
				AgentID: "agent-7f3a", AgentName: "edge-host", AgentVersion: "1.4.2",
				AgentCapabilities: []string{"compose", "exec", "metrics"}, Labels: []string{}},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("environments (-want +got):\n%s", diff)
		}
		// The bootstrap was recorded: it must not happen again.
		created, err := s.CreateFirstEnvironment(ctx, &store.Environment{Name: "again", ConnectionType: "socket"})
		if err != nil || created {
			t.Errorf("CreateFirstEnvironment on the upgraded store = %v, %v; want false, nil", created, err)
		}
	})

	t.Run("registries", func(t *testing.T) {
		got, err := s.ListRegistries(ctx)
		if err != nil {
			t.Fatalf("ListRegistries: %v", err)
		}
		for i := range got {
			stamped("registry "+got[i].Name, &got[i].CreatedAt, &got[i].UpdatedAt)
		}
		want := []store.Registry{
			{ID: 1, Name: "Docker Hub", URL: "docker.io"},
			{ID: 2, Name: "private", URL: "registry.example.com:5000", Username: "deployer", Password: "registry-p@ss w0rd", IsDefault: true},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("registries (-want +got):\n%s", diff)
		}
	})

	t.Run("stacks and their secrets", func(t *testing.T) {
		var got []store.Stack
		for _, env := range []int64{1, 2} {
			list, err := s.ListStacks(ctx, env)
			if err != nil {
				t.Fatalf("ListStacks(%d): %v", env, err)
			}
			got = append(got, list...)
		}
		for i := range got {
			stamped("stack "+got[i].Name, &got[i].CreatedAt, &got[i].UpdatedAt)
		}
		want := []store.Stack{
			{ID: 3, EnvironmentID: 1, Name: "monitoring", SourceType: store.SourceGit, ComposePath: "monitoring/compose.yaml"},
			{ID: 1, EnvironmentID: 1, Name: "web", SourceType: store.SourceInternal},
			{ID: 2, EnvironmentID: 2, Name: "legacy", SourceType: store.SourceExternal,
				ComposePath: "/opt/legacy/docker-compose.yml", EnvPath: "/opt/legacy/.env"},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("stacks (-want +got):\n%s", diff)
		}
		for id, want := range map[int64][]store.StackSecret{
			1: {{Key: "DB_PASSWORD", Value: "s3cret-db"}, {Key: "API_KEY", Value: "ak_live_42"}},
			2: {},
			3: {{Key: "GRAFANA_PASSWORD", Value: "graf-pass"}},
		} {
			got, err := s.StackSecrets(ctx, id)
			if err != nil {
				t.Fatalf("StackSecrets(%d): %v", id, err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("secrets of stack %d (-want +got):\n%s", id, diff)
			}
		}
	})

	t.Run("git", func(t *testing.T) {
		creds, err := s.ListGitCredentials(ctx)
		if err != nil {
			t.Fatalf("ListGitCredentials: %v", err)
		}
		for i := range creds {
			stamped("git credential "+creds[i].Name, &creds[i].CreatedAt, &creds[i].UpdatedAt)
		}
		wantCreds := []store.GitCredential{
			// Migration 018 binds a credential to the URL of the first
			// repository using it; one no repository uses is bound to none.
			{ID: 1, Name: "github-token", AuthType: "password", Username: "octo", Password: "ghp_fixturetoken",
				Host: "https://github.com/example/infra.git"},
			{ID: 2, Name: "deploy-key", AuthType: "ssh",
				SSHPrivateKey: "-----BEGIN OPENSSH PRIVATE KEY-----\nfixture-ssh-key\n-----END OPENSSH PRIVATE KEY-----\n"},
		}
		if diff := cmp.Diff(wantCreds, creds); diff != "" {
			t.Errorf("git credentials (-want +got):\n%s", diff)
		}

		repos, err := s.ListGitRepositories(ctx)
		if err != nil {
			t.Fatalf("ListGitRepositories: %v", err)
		}
		for i := range repos {
			stamped("git repository "+repos[i].Name, &repos[i].CreatedAt, &repos[i].UpdatedAt)
		}
		wantRepos := []store.GitRepository{
			{ID: 1, Name: "infra", URL: "https://github.com/example/infra.git", Branch: "main", CredentialID: ip(1),
				WebhookEnabled: true, WebhookSecret: "repo-hook-secret", LastSyncAt: tp("2026-11-23T07:00:00Z")},
			{ID: 2, Name: "public-demo", URL: "https://example.com/demo.git", Branch: "develop"},
		}
		if diff := cmp.Diff(wantRepos, repos); diff != "" {
			t.Errorf("git repositories (-want +got):\n%s", diff)
		}

		gs, err := s.ListGitStacks(ctx, 0)
		if err != nil {
			t.Fatalf("ListGitStacks: %v", err)
		}
		for i := range gs {
			stamped("git stack "+gs[i].StackName, &gs[i].CreatedAt, &gs[i].UpdatedAt)
		}
		wantGS := []store.GitStack{{ID: 1, StackID: 3, EnvironmentID: 1, StackName: "monitoring", RepositoryID: 1,
			ComposePath: "monitoring/compose.yaml", EnvFilePath: "monitoring/.env", AutoUpdate: true,
			AutoUpdateCron: "*/15 * * * *", WebhookEnabled: true, WebhookSecret: "stack-hook-secret",
			LastCommit: "0123456789abcdef0123456789abcdef01234567", LastSyncAt: tp("2026-11-23T07:00:01Z"),
			LastSyncStatus: "success"}}
		if diff := cmp.Diff(wantGS, gs); diff != "" {
			t.Errorf("git stacks (-want +got):\n%s", diff)
		}
	})

	t.Run("roles and assignments", func(t *testing.T) {
		roles, err := s.ListRoles(ctx)
		if err != nil {
			t.Fatalf("ListRoles: %v", err)
		}
		for i := range roles {
			stamped("role "+roles[i].Name, &roles[i].CreatedAt, &roles[i].UpdatedAt)
		}
		wantRoles := []store.Role{
			{ID: 1, Name: "Admin", Description: "Full access", Permissions: map[string][]string{"*": {"*"}}, IsSystem: true},
			{ID: 2, Name: "Deployers", Description: "Deploy stacks in staging",
				Permissions:    map[string][]string{"stacks": {"view", "deploy"}, "containers": {"view"}},
				EnvironmentIDs: []int64{2, 3}},
			{ID: 3, Name: "Viewer", Permissions: map[string][]string{"containers": {"view"}}, IsSystem: true},
		}
		if diff := cmp.Diff(wantRoles, roles); diff != "" {
			t.Errorf("roles (-want +got):\n%s", diff)
		}
		var got []store.RoleAssignment
		for _, user := range []int64{1, 2, 3} {
			list, err := s.ListUserRoles(ctx, user)
			if err != nil {
				t.Fatalf("ListUserRoles(%d): %v", user, err)
			}
			got = append(got, list...)
		}
		for i := range got {
			stamped("role assignment", &got[i].CreatedAt)
		}
		want := []store.RoleAssignment{
			{ID: 3, UserID: 2, RoleID: 2, Source: "ldap:1"},
			{ID: 1, UserID: 3, RoleID: 2, EnvironmentID: ip(2), Source: "manual"},
			{ID: 2, UserID: 3, RoleID: 3, Source: "manual"},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("role assignments (-want +got):\n%s", diff)
		}
	})

	t.Run("LDAP and OIDC", func(t *testing.T) {
		ldap, err := s.ListLDAPConfigs(ctx)
		if err != nil {
			t.Fatalf("ListLDAPConfigs: %v", err)
		}
		for i := range ldap {
			stamped("ldap config", &ldap[i].CreatedAt, &ldap[i].UpdatedAt)
		}
		wantLDAP := []store.LDAPConfig{{ID: 1, Name: "corp", Enabled: true, ServerURL: "ldaps://ldap.corp.example:636",
			BindDN: "cn=svc,dc=corp,dc=example", BindPassword: "ldap-bind-pw", BaseDN: "ou=people,dc=corp,dc=example",
			UserFilter: "(uid={{username}})", UsernameAttribute: "uid", EmailAttribute: "mail", DisplayNameAttribute: "cn",
			GroupBaseDN: "ou=groups,dc=corp,dc=example", GroupFilter: "(member={{user_dn}})", AdminGroup: "admins",
			RoleMappings: []store.LDAPRoleMapping{{GroupDN: "cn=deployers,ou=groups,dc=corp,dc=example", RoleID: 2}},
			TLSEnabled:   true, TLSCA: "-----BEGIN CERTIFICATE-----\nLDAPCA\n-----END CERTIFICATE-----\n"}}
		if diff := cmp.Diff(wantLDAP, ldap); diff != "" {
			t.Errorf("LDAP configs (-want +got):\n%s", diff)
		}
		oidc, err := s.ListOIDCProviders(ctx)
		if err != nil {
			t.Fatalf("ListOIDCProviders: %v", err)
		}
		for i := range oidc {
			stamped("oidc provider", &oidc[i].CreatedAt, &oidc[i].UpdatedAt)
		}
		wantOIDC := []store.OIDCProvider{{ID: 1, Name: "dex", Enabled: true, IssuerURL: "https://dex.example.com",
			ClientID: "berth", ClientSecret: "oidc-client-secret", RedirectURI: "https://berth.example.com/api/auth/oidc/callback",
			Scopes: "openid profile email groups", UsernameClaim: "preferred_username", EmailClaim: "email",
			DisplayNameClaim: "name", AdminClaim: "groups", AdminValue: "admins", RoleMappingsClaim: "groups",
			RoleMappings: []store.OIDCRoleMapping{{ClaimValue: "ops", RoleID: 2}}}}
		if diff := cmp.Diff(wantOIDC, oidc); diff != "" {
			t.Errorf("OIDC providers (-want +got):\n%s", diff)
		}
	})

	t.Run("settings, auto-update and scan result", func(t *testing.T) {
		for key, want := range map[string]string{"general.instance_name": "Fixture Berth", "bootstrap.local_environment": "done"} {
			if got, err := s.GetSetting(ctx, key); err != nil || got != want {
				t.Errorf("GetSetting(%q) = %q, %v; want %q", key, got, err, want)
			}
		}
		au, err := s.ListAutoUpdates(ctx)
		if err != nil {
			t.Fatalf("ListAutoUpdates: %v", err)
		}
		for i := range au {
			stamped("auto-update", &au[i].CreatedAt, &au[i].UpdatedAt)
		}
		wantAU := []store.AutoUpdate{{ID: 1, ContainerName: "nginx", EnvironmentID: ip(1), Enabled: true,
			ScheduleType: "custom", CronExpression: "0 4 * * *", VulnerabilityCriteria: "critical_high"}}
		if diff := cmp.Diff(wantAU, au); diff != "" {
			t.Errorf("auto-updates (-want +got):\n%s", diff)
		}
		scan, err := s.LatestScanResult(ctx, 1, "nginx:1.27", "grype")
		if err != nil {
			t.Fatalf("LatestScanResult: %v", err)
		}
		wantScan := store.ScanRecord{ID: 1, EnvironmentID: 1, ImageID: "sha256:abc123", ImageName: "nginx:1.27",
			Scanner: "grype", ScannedAt: ts("2026-11-22T12:00:00.5Z"), Result: `{"critical":1,"high":2}`}
		if diff := cmp.Diff(wantScan, scan); diff != "" {
			t.Errorf("scan result (-want +got):\n%s", diff)
		}
	})

	t.Run("audit", func(t *testing.T) {
		got, total, err := s.ListAudit(ctx, store.AuditFilter{})
		if err != nil {
			t.Fatalf("ListAudit: %v", err)
		}
		want := []store.AuditEntry{
			{ID: 3, CreatedAt: ts("2026-11-23T10:06:00Z"), Username: "unknown", Action: "login.failed",
				EntityType: "session", Description: "Wrong password for \"mallory\"", IP: "198.51.100.9"},
			{ID: 2, CreatedAt: ts("2026-11-23T10:05:00.5Z"), UserID: ip(1), Username: "Admin", EnvironmentID: ip(1),
				Action: "stack.deploy", EntityType: "stack", EntityID: "web", EntityName: "web",
				Description: "Deployed stack web", Details: `{"services":["app","db"]}`, IP: "192.0.2.10"},
			{ID: 1, CreatedAt: ts("2026-11-23T10:00:00.000001Z"), UserID: ip(1), Username: "Admin", Action: "login",
				EntityType: "session", Description: "Signed in", IP: "192.0.2.10"},
		}
		if total != 3 {
			t.Errorf("ListAudit total = %d, want 3", total)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("audit (-want +got):\n%s", diff)
		}
		// Time filters compare with the stored encoding.
		since := ts("2026-11-23T10:05:00.5Z")
		page, total, err := s.ListAudit(ctx, store.AuditFilter{Since: &since})
		if err != nil || total != 2 || len(page) != 2 {
			t.Errorf("ListAudit since %s = %d entries (total %d), %v; want 2", since, len(page), total, err)
		}
	})

	// The secrets above decrypted with the fixtures' key; another key must
	// not open them, or the comparison proved nothing about sealing.
	t.Run("another key does not open the secrets", func(t *testing.T) {
		other, err := store.Open(ctx, url, storetest.Box(t))
		if err != nil {
			t.Fatalf("Open with another key: %v", err)
		}
		defer other.Close()
		if e, err := other.GetEnvironment(ctx, 2); err == nil {
			t.Errorf("GetEnvironment with another key = TLS key %q, want an error", e.TLSKey)
		}
	})
}
