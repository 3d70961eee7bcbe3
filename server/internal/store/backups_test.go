package store_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/berth-dev/berth/server/internal/backup"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
)

func TestBackupDestinationRoundTripsWithSecretsSealed(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		env := createEnvironment(t, s, "env")
		d := store.BackupDestination{
			Name: "offsite", Type: backup.TypeS3, Repository: "s3:http://127.0.0.1:7070/bucket/restic",
			Password: "repo-pass", EnvVars: map[string]string{"AWS_ACCESS_KEY_ID": "ak", "AWS_SECRET_ACCESS_KEY": "sk"},
			SSHKey: "-----BEGIN KEY-----", SSHKnownHosts: "host ssh-ed25519 AAAA", Flags: "--limit-upload 100 -o s3.region=eu --insecure-tls",
			EnvironmentID: &env.ID, Policies: `{"pruneEnabled":true}`,
		}
		if err := s.CreateBackupDestination(ctx, &d); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetBackupDestination(ctx, d.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(d, got); diff != "" {
			t.Errorf("GetBackupDestination (-want +got):\n%s", diff)
		}
		var password, envVars, sshKey string
		err = s.DB().QueryRowContext(ctx, "SELECT password, env_vars, ssh_key FROM backup_destinations WHERE id = $1", d.ID).
			Scan(&password, &envVars, &sshKey)
		if err != nil {
			t.Fatal(err)
		}
		for _, raw := range []string{password, envVars, sshKey} {
			if raw == "" || strings.Contains(raw, "repo-pass") || strings.Contains(raw, "sk") && strings.Contains(raw, "AWS") ||
				strings.Contains(raw, "BEGIN KEY") {
				t.Errorf("secret column stored in clear: %q", raw)
			}
		}

		repo, envID, err := s.BackupDestinationRepo(ctx, d.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := backup.Repo{Type: backup.TypeS3, Repository: d.Repository, Password: "repo-pass", Env: d.EnvVars,
			SSHKey: d.SSHKey, SSHKnownHosts: d.SSHKnownHosts, Flags: []string{"--limit-upload 100", "-o s3.region=eu", "--insecure-tls"}}
		if diff := cmp.Diff(want, repo); diff != "" || envID != env.ID {
			t.Errorf("BackupDestinationRepo = env %d (want %d), (-want +got):\n%s", envID, env.ID, diff)
		}

		dup := store.BackupDestination{Name: "offsite", Type: backup.TypeLocal, Repository: "/srv/r", Password: "p"}
		if err := s.CreateBackupDestination(ctx, &dup); !errors.Is(err, store.ErrConflict) {
			t.Errorf("duplicate name: err = %v, want ErrConflict", err)
		}
	})
}

func TestBackupDestinationUpdateClearsTheTestOnlyWhenAccessChanged(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		d := store.BackupDestination{Name: "d", Type: backup.TypeREST, Repository: "rest:http://127.0.0.1:8008/", Password: "p"}
		if err := s.CreateBackupDestination(ctx, &d); err != nil {
			t.Fatal(err)
		}
		test := store.BackupDestinationTest{At: d.CreatedAt, Status: store.BackupTestSuccess, Message: "ok"}
		if err := s.RecordBackupDestinationTest(ctx, d.ID, test); err != nil {
			t.Fatal(err)
		}
		d.Name = "renamed"
		if err := s.UpdateBackupDestination(ctx, &d); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetBackupDestination(ctx, d.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != "renamed" || got.LastTest == nil || *got.LastTest != test {
			t.Errorf("after rename: name %q, last test %+v; want renamed, %+v", got.Name, got.LastTest, test)
		}
		d.Password = "other"
		if err := s.UpdateBackupDestination(ctx, &d); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.GetBackupDestination(ctx, d.ID); got.LastTest != nil || got.Password != "other" {
			t.Errorf("after a password change: last test %+v, password %q; want none, other", got.LastTest, got.Password)
		}
		if err := s.SetBackupDestinationPassword(ctx, d.ID, "rotated"); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.GetBackupDestination(ctx, d.ID); got.Password != "rotated" {
			t.Errorf("after SetBackupDestinationPassword: %q", got.Password)
		}
		missing := store.BackupDestination{ID: d.ID + 100, Name: "x", Type: backup.TypeLocal, Repository: "/x"}
		if err := s.UpdateBackupDestination(ctx, &missing); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("update of a missing destination: err = %v, want ErrNotFound", err)
		}
	})
}

func TestBackupDestinationInUseByAConfigurationIsNotDeleted(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		env := createEnvironment(t, s, "env")
		d := store.BackupDestination{Name: "d", Type: backup.TypeLocal, Repository: "/srv/restic", Password: "p", EnvironmentID: &env.ID}
		if err := s.CreateBackupDestination(ctx, &d); err != nil {
			t.Fatal(err)
		}
		_, err := s.DB().ExecContext(ctx, `INSERT INTO backup_configs (type, target_name, environment_id, destination_id, created_at, updated_at)
			VALUES ('stack', 'web', $1, $2, $3, $3)`, env.ID, d.ID, "2026-01-01T00:00:00.000000000Z")
		if err != nil {
			t.Fatal(err)
		}
		users, err := s.BackupDestinationUsers(ctx, d.ID)
		if err != nil || len(users) != 1 || users[0].TargetName != "web" || users[0].EnvironmentID != env.ID {
			t.Errorf("BackupDestinationUsers = %+v, %v; want the web configuration", users, err)
		}
		if err := s.DeleteBackupDestination(ctx, d.ID); !errors.Is(err, store.ErrInUse) {
			t.Errorf("delete in use: err = %v, want ErrInUse", err)
		}
		if _, err := s.DB().ExecContext(ctx, "DELETE FROM backup_configs"); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteBackupDestination(ctx, d.ID); err != nil {
			t.Errorf("delete once unused: %v", err)
		}
		if err := s.DeleteBackupDestination(ctx, d.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("second delete: err = %v, want ErrNotFound", err)
		}
	})
}

func TestBackupEnvironmentDefaultsToTheFirstSocketForRemoteRepositoriesOnly(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		local := store.BackupDestination{Name: "l", Type: backup.TypeLocal, Repository: "local:/srv/restic"}
		if _, err := s.BackupEnvironment(ctx, local); !errors.Is(err, store.ErrBackupNoEnvironment) {
			t.Errorf("local without environment: err = %v, want ErrBackupNoEnvironment", err)
		}
		remote := store.BackupDestination{Name: "r", Type: backup.TypeSFTP, Repository: "sftp:u@h:/r"}
		if _, err := s.BackupEnvironment(ctx, remote); !errors.Is(err, store.ErrBackupNoEnvironment) {
			t.Errorf("no environment at all: err = %v, want ErrBackupNoEnvironment", err)
		}
		direct := store.Environment{Name: "direct", ConnectionType: "direct", Host: "10.0.0.1", Port: 2375, Protocol: "http"}
		if err := s.CreateEnvironment(ctx, &direct); err != nil {
			t.Fatal(err)
		}
		if id, err := s.BackupEnvironment(ctx, remote); err != nil || id != direct.ID {
			t.Errorf("only a direct environment: %d, %v; want %d", id, err, direct.ID)
		}
		sock := store.Environment{Name: "sock", ConnectionType: "socket", SocketPath: "/var/run/docker.sock", Protocol: "http"}
		if err := s.CreateEnvironment(ctx, &sock); err != nil {
			t.Fatal(err)
		}
		if id, err := s.BackupEnvironment(ctx, remote); err != nil || id != sock.ID {
			t.Errorf("with a socket environment: %d, %v; want %d", id, err, sock.ID)
		}
		if got := local.LocalPath(); got != "/srv/restic" {
			t.Errorf("LocalPath = %q, want /srv/restic", got)
		}
	})
}

func TestBackupInstanceIDIsMadeOnceAndKept(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		a, err := s.BackupInstanceID(ctx)
		if err != nil || len(a) != 32 {
			t.Fatalf("BackupInstanceID = %q, %v; want 32 hex digits", a, err)
		}
		b, err := s.BackupInstanceID(ctx)
		if err != nil || a != b {
			t.Errorf("second BackupInstanceID = %q, %v; want %q", b, err, a)
		}
	})
}

func TestBackupDestinationRunningSeesOnlyLiveRuns(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		d := store.BackupDestination{Name: "d", Type: backup.TypeREST, Repository: "rest:http://127.0.0.1:8008/", Password: "p"}
		if err := s.CreateBackupDestination(ctx, &d); err != nil {
			t.Fatal(err)
		}
		const layout = "2006-01-02T15:04:05.000000000Z"
		insert := func(status string, started time.Time, finished bool) {
			t.Helper()
			var fin any
			if finished {
				fin = started.Add(time.Minute).Format(layout)
			}
			_, err := s.DB().ExecContext(ctx, `INSERT INTO backup_runs (destination_id, kind, status, started_at, finished_at)
				VALUES ($1, 'backup', $2, $3, $4)`, d.ID, status, started.UTC().Format(layout), fin)
			if err != nil {
				t.Fatal(err)
			}
		}
		insert("success", time.Now(), true)
		insert("running", time.Now().Add(-48*time.Hour), false) // its Berth died two days ago
		if running, err := s.BackupDestinationRunning(ctx, d.ID); err != nil || running {
			t.Errorf("with a finished and a stale run: running = %v, %v; want false", running, err)
		}
		insert("running", time.Now().Add(-time.Minute), false)
		if running, err := s.BackupDestinationRunning(ctx, d.ID); err != nil || !running {
			t.Errorf("with a live run: running = %v, %v; want true", running, err)
		}
	})
}

// SplitResticFlags only regroups the words of a user's flags: nothing is
// lost, added or reordered, and a group is an option (with at most one
// value) or one stray word.
func FuzzSplitResticFlags(f *testing.F) {
	for _, s := range []string{"", "--limit-upload 1000 -o s3.region=eu --insecure-tls", "x --a=1 b c", "--a --b 1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, flags string) {
		groups := store.SplitResticFlags(flags)
		if got, want := strings.Fields(strings.Join(groups, " ")), strings.Fields(flags); !slices.Equal(got, want) {
			t.Fatalf("SplitResticFlags(%q) = %q: words %q, want %q", flags, groups, got, want)
		}
		for i, g := range groups {
			if n := len(strings.Fields(g)); n == 0 || n > 2 || n == 2 && !strings.HasPrefix(g, "-") {
				t.Fatalf("SplitResticFlags(%q) = %q: group %d is neither an option nor one word", flags, groups, i)
			}
		}
	})
}
