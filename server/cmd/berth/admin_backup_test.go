package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gorm.io/driver/postgres"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/berth-dev/berth/server/internal/secret"
	"github.com/berth-dev/berth/server/internal/servertest"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
	"github.com/berth-dev/berth/shared/enginetest"
)

// The fixture a backup test fills a Berth with: a user (the first admin),
// an environment, a stack with a secret variable and a registry with a
// password.
const (
	backupUser       = "admin"
	backupPassword   = "correct horse"
	backupEnvName    = "second"
	backupStack      = "backedup"
	backupSecretKey  = "DB_PASSWORD"
	backupSecretVal  = "s3cret-value-of-the-stack"
	backupPassphrase = "a passphrase of the archive"
)

// backupTarget is where a Berth keeps its state: a data directory and the
// DATABASE_URL ("" for SQLite in the data directory).
type backupTarget struct {
	dataDir, databaseURL string
}

func (b backupTarget) env() []string {
	env := []string{"DATA_DIR=" + b.dataDir}
	if b.databaseURL != "" {
		env = append(env, "DATABASE_URL="+b.databaseURL)
	}
	return env
}

// dbURL is the database the target's Berth uses.
func (b backupTarget) dbURL() string {
	if b.databaseURL != "" {
		return b.databaseURL
	}
	return filepath.Join(b.dataDir, "berth.db")
}

// forEachDatabase runs fn for SQLite and PostgreSQL, newTarget giving a
// new empty data directory and database each time it is called.
func forEachDatabase(t *testing.T, fn func(t *testing.T, newTarget func() backupTarget)) {
	t.Run("sqlite", func(t *testing.T) {
		fn(t, func() backupTarget { return backupTarget{dataDir: filepath.Join(t.TempDir(), "data")} })
	})
	t.Run("postgres", func(t *testing.T) {
		fn(t, func() backupTarget {
			return backupTarget{dataDir: filepath.Join(t.TempDir(), "data"), databaseURL: storetest.PostgresDatabase(t)}
		})
	})
}

// registryFixture is the registry the fixture saves: the test registry of
// scripts/test-env.sh when there is one (its login is then tried after the
// restore), else an address nothing answers on.
func registryFixture() (url, user, password string, real bool) {
	if r := os.Getenv("BERTH_TEST_REGISTRY"); r != "" {
		return r, os.Getenv("BERTH_TEST_REGISTRY_USER"), os.Getenv("BERTH_TEST_REGISTRY_PASSWORD"), true
	}
	return "192.0.2.1:5000", "berth", "registry-password", false
}

// fillBerth creates the fixture through the API of the Berth at base and
// returns the first admin's session cookie.
func fillBerth(t *testing.T, base, dataDir string) (cookie string) {
	t.Helper()
	cookie = servertest.FirstAdmin(t, base, dataDir, backupUser, backupPassword)
	waitLocal(t, base, cookie)
	h := map[string]string{"Cookie": cookie, "Accept": "application/json"}
	if status := do(t, "POST", base+"/api/environments", h,
		`{"name":"`+backupEnvName+`","connectionType":"direct","host":"192.0.2.1"}`, nil); status != 201 {
		t.Fatalf("create environment = %d", status)
	}
	body, _ := json.Marshal(map[string]any{"name": backupStack, "start": false,
		"compose": "services:\n  app:\n    image: " + enginetest.Image() + "\n    environment:\n      DB_PASSWORD: ${DB_PASSWORD}\n",
		"envVars": []map[string]any{{"key": backupSecretKey, "value": backupSecretVal, "isSecret": true},
			{"key": "PLAIN", "value": "plain-value"}}})
	var created struct {
		Success bool
		Error   string
	}
	if status := do(t, "POST", base+"/api/stacks?env=1", h, string(body), &created); status != 200 || !created.Success {
		t.Fatalf("create stack = %d %+v", status, created)
	}
	url, user, password, _ := registryFixture()
	body, _ = json.Marshal(map[string]any{"name": "backed-up registry", "url": url, "username": user, "password": password})
	if status := do(t, "POST", base+"/api/registries", h, string(body), nil); status != 201 {
		t.Fatalf("create registry = %d", status)
	}
	return cookie
}

// berthAdmin runs "berth admin args…" as a process with env and stdin, and
// returns its output. Its PATH is an empty directory: a backup or restore
// runs no other program (on PostgreSQL neither pg_dump nor pg_restore nor
// psql, which the official image does not have).
func berthAdmin(t *testing.T, bin string, env []string, stdin string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"admin"}, args...)...)
	cmd.Env = append([]string{"PATH=" + t.TempDir()}, env...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestAdminBackupWhileServingRestoresOntoEmptyDataDir backs up a running
// Berth, restores the archive onto an empty data directory (and database),
// and starts a new Berth on it: the user signs in with its password, the
// environment and the stack are listed, the stack's secret and the
// registry's password decrypt (through the API, and read back from the
// restored database), and the registry's login works when a real registry
// is there to ask.
func TestAdminBackupWhileServingRestoresOntoEmptyDataDir(t *testing.T) {
	enginetest.Require(t)
	bin := servertest.Build(t)
	forEachDatabase(t, func(t *testing.T, newTarget func() backupTarget) {
		orig := newTarget()
		p := servertest.Start(t, bin, "original", orig.env()...)
		fillBerth(t, p.URL, orig.dataDir)

		archive := filepath.Join(t.TempDir(), "berth.backup")
		out, err := berthAdmin(t, bin, orig.env(), backupPassphrase+"\n", "backup", "-passphrase-stdin", archive)
		if err != nil {
			t.Fatalf("backup while serving: %v\n%s", err, out)
		}
		if fi, err := os.Stat(archive); err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("archive: %v %v, want mode 0600", fi, err)
		}
		if strings.Contains(out, "warning") {
			t.Errorf("an encrypted backup warned: %s", out)
		}

		restored := newTarget()
		if out, err := berthAdmin(t, bin, restored.env(), backupPassphrase+"\n", "restore", "-passphrase-stdin", archive); err != nil {
			t.Fatalf("restore: %v\n%s", err, out)
		}
		q := servertest.Start(t, bin, "restored", restored.env()...)
		cookie := servertest.Login(t, q.URL, backupUser, backupPassword)
		h := map[string]string{"Cookie": cookie, "Accept": "application/json"}

		var envs []struct{ Name string }
		do(t, "GET", q.URL+"/api/environments", h, "", &envs)
		if names := envNames(envs); !strings.Contains(names, "local") || !strings.Contains(names, backupEnvName) {
			t.Errorf("environments after the restore = %s, want local and %s", names, backupEnvName)
		}
		var stacks []struct{ Name string }
		if status := do(t, "GET", q.URL+"/api/stacks?env=1", h, "", &stacks); status != 200 {
			t.Fatalf("stacks = %d", status)
		}
		found := false
		for _, s := range stacks {
			found = found || s.Name == backupStack
		}
		if !found {
			t.Errorf("stacks after the restore = %+v, want %s", stacks, backupStack)
		}
		// The reference answers a secret masked; answering at all means it
		// decrypted (a wrong key fails the request).
		var vars struct {
			Variables []struct {
				Key, Value string
				IsSecret   bool
			}
		}
		if status := do(t, "GET", q.URL+"/api/stacks/"+backupStack+"/env?env=1", h, "", &vars); status != 200 {
			t.Fatalf("stack variables = %d", status)
		}
		got := map[string]bool{}
		for _, v := range vars.Variables {
			got[v.Key] = v.IsSecret
		}
		if secret, ok := got[backupSecretKey]; !ok || !secret || got["PLAIN"] {
			t.Errorf("stack variables after the restore = %+v, want secret %s and plain PLAIN", vars.Variables, backupSecretKey)
		}
		var regs []struct {
			ID             int64
			HasCredentials bool
		}
		do(t, "GET", q.URL+"/api/registries", h, "", &regs)
		if len(regs) != 1 || !regs[0].HasCredentials {
			t.Fatalf("registries after the restore = %+v, want one with credentials", regs)
		}
		if _, _, _, real := registryFixture(); real {
			var test struct {
				Success, Authenticated bool
				Message                string
			}
			do(t, "POST", q.URL+"/api/registries/test?env=1", h, fmt.Sprintf(`{"registryId":%d}`, regs[0].ID), &test)
			if !test.Success || !test.Authenticated {
				t.Errorf("login to the restored registry: %+v", test)
			}
		}

		// The values themselves, as the restored key opens them.
		st := openRestored(t, restored)
		checkRestoredStackSecret(t, st)
		reg, err := st.GetRegistry(t.Context(), regs[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, password, _ := registryFixture(); reg.Password != password {
			t.Errorf("restored registry password = %q, want %q", reg.Password, password)
		}

		// New rows get ids of their own: the restored sequences continue.
		if status := do(t, "POST", q.URL+"/api/environments", h,
			`{"name":"after-restore","connectionType":"direct","host":"192.0.2.3"}`, nil); status != 201 {
			t.Errorf("create an environment after the restore = %d, want 201", status)
		}
		body, _ := json.Marshal(map[string]any{"username": "after-restore", "password": "another password 1", "email": "after@berth.test"})
		if status := do(t, "POST", q.URL+"/api/users", h, string(body), nil); status != 201 {
			t.Errorf("create a user after the restore = %d, want 201", status)
		}
	})
}

func envNames(envs []struct{ Name string }) string {
	var names []string
	for _, e := range envs {
		names = append(names, e.Name)
	}
	return strings.Join(names, ",")
}

// checkRestoredStackSecret checks that the restored store st holds
// backupStack's secret and that the restored key opens it.
func checkRestoredStackSecret(t *testing.T, st *store.Store) {
	t.Helper()
	var stackID int64
	if err := st.DB().QueryRow("SELECT id FROM stacks WHERE name = '" + backupStack + "'").Scan(&stackID); err != nil {
		t.Fatal(err)
	}
	secrets, err := st.StackSecrets(t.Context(), stackID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]store.StackSecret{{Key: backupSecretKey, Value: backupSecretVal}}, secrets); diff != "" {
		t.Errorf("stack secrets of the restored archive (-want +got):\n%s", diff)
	}
}

// openRestored opens the store of a restored target with the key restored
// into its data directory.
func openRestored(t *testing.T, b backupTarget) *store.Store {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(b.dataDir, secret.KeyFile))
	if err != nil {
		t.Fatalf("restored key: %v", err)
	}
	key, err := secret.LoadKey(b.dataDir, strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	box, err := secret.New(key)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(t.Context(), b.dbURL(), box)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestAdminRestoreKeepsEveryRow compares the original database and the
// restored one table by table, every row, ordered: nothing is lost or
// changed by a backup and restore. The original Berth is stopped before
// the backup, so that both hold the same moment.
func TestAdminRestoreKeepsEveryRow(t *testing.T) {
	enginetest.Require(t)
	bin := servertest.Build(t)
	forEachDatabase(t, func(t *testing.T, newTarget func() backupTarget) {
		orig := newTarget()
		// A stack whose files are outside the data directory: the backup
		// says it does not hold them.
		outside := t.TempDir()
		p := servertest.Start(t, bin, "original", append(orig.env(), "EXTERNAL_STACK_ROOTS="+outside)...)
		cookie := fillBerth(t, p.URL, orig.dataDir)
		body, _ := json.Marshal(map[string]any{"name": "outside", "start": false,
			"compose":     "services:\n  app:\n    image: " + enginetest.Image() + "\n",
			"composePath": filepath.Join(outside, "outside", "compose.yaml")})
		var created struct{ Success bool }
		if status := do(t, "POST", p.URL+"/api/stacks?env=1", map[string]string{"Cookie": cookie, "Accept": "application/json"},
			string(body), &created); status != 200 || !created.Success {
			t.Fatalf("create a stack outside the data directory = %d %+v", status, created)
		}
		p.Kill(t)

		archive := filepath.Join(t.TempDir(), "berth.backup")
		out, err := berthAdmin(t, bin, orig.env(), "", "backup", archive)
		if err != nil {
			t.Fatalf("backup: %v\n%s", err, out)
		}
		if !strings.Contains(out, "warning") || !strings.Contains(out, "encryption key") {
			t.Errorf("an unencrypted backup did not warn that it holds the key: %s", out)
		}
		if !strings.Contains(out, "outside ("+filepath.Join(outside, "outside", "compose.yaml")+")") {
			t.Errorf("the backup did not warn about the stack outside the data directory: %s", out)
		}
		restored := newTarget()
		if out, err := berthAdmin(t, bin, restored.env(), "", "restore", archive); err != nil {
			t.Fatalf("restore: %v\n%s", err, out)
		}

		want, got := tableRows(t, orig.dbURL()), tableRows(t, restored.dbURL())
		for _, table := range []string{"users", "environments", "stacks", "stack_secrets", "registries", "goose_db_version"} {
			if len(want[table]) == 0 {
				t.Errorf("the original's table %s is empty: the fixture does not exercise it", table)
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("rows (-original +restored):\n%s", diff)
		}
		// The files: the stack's directory, byte for byte.
		if diff := cmp.Diff(treeOf(t, filepath.Join(orig.dataDir, "stacks")), treeOf(t, filepath.Join(restored.dataDir, "stacks"))); diff != "" {
			t.Errorf("stack files (-original +restored):\n%s", diff)
		}
		wantKey, _ := os.ReadFile(filepath.Join(orig.dataDir, secret.KeyFile))
		gotKey, _ := os.ReadFile(filepath.Join(restored.dataDir, secret.KeyFile))
		if len(wantKey) == 0 || !bytes.Equal(wantKey, gotKey) {
			t.Errorf("restored key file %q, want %q", gotKey, wantKey)
		}
	})
}

// tableRows reads every row of every table of the database at url, each
// row printed, the rows of a table ordered by all its columns (the primary
// key first, as the tables declare it).
func tableRows(t *testing.T, url string) map[string][]string {
	t.Helper()
	db := openSQL(t, url)
	listing := `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`
	if strings.HasPrefix(url, "postgres") {
		listing = `SELECT table_name FROM information_schema.tables
			WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`
	}
	tables := queryStrings(t, db, listing)
	out := map[string][]string{}
	for _, table := range tables {
		probe, err := db.Query(`SELECT * FROM "` + table + `" LIMIT 0`)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := probe.Columns()
		probe.Close()
		order := make([]string, len(cols))
		for i := range cols {
			order[i] = fmt.Sprint(i + 1)
		}
		rows, err := db.Query(`SELECT * FROM "` + table + `" ORDER BY ` + strings.Join(order, ", "))
		if err != nil {
			t.Fatal(err)
		}
		out[table] = []string{}
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			for i, v := range vals {
				if b64, ok := v.([]byte); ok {
					v = fmt.Sprintf("%x", b64)
				}
				fmt.Fprintf(&b, "%s=%v ", cols[i], v)
			}
			out[table] = append(out[table], b.String())
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
	}
	return out
}

func openSQL(t *testing.T, url string) *sql.DB {
	t.Helper()
	dialector := sqlite.Open("file:" + url + "?mode=ro")
	if strings.HasPrefix(url, "postgres") {
		dialector = postgres.Open(url)
	}
	gdb, err := gorm.Open(dialector, &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatal(err)
	}
	db, err := gdb.DB()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func queryStrings(t *testing.T, db *sql.DB, q string) []string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// treeOf maps every path under root to its mode and content.
func treeOf(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			out[rel] = fi.Mode().String()
			return nil
		}
		b, err := os.ReadFile(p)
		out[rel] = fi.Mode().String() + " " + string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 2 {
		t.Fatalf("%s holds no files", root)
	}
	return out
}

// TestAdminRestoreRefusesBadArchivesAndBusyTargets: a wrong passphrase, a
// truncated archive, a non-empty target without -force and a data
// directory a Berth serves from are refused with a clear message, and
// nothing is written.
func TestAdminRestoreRefusesBadArchivesAndBusyTargets(t *testing.T) {
	enginetest.Require(t)
	bin := servertest.Build(t)
	orig := backupTarget{dataDir: filepath.Join(t.TempDir(), "data")}
	p := servertest.Start(t, bin, "original", orig.env()...)
	servertest.FirstAdmin(t, p.URL, orig.dataDir, backupUser, backupPassword)
	dir := t.TempDir()
	archive := filepath.Join(dir, "berth.backup")
	if out, err := berthAdmin(t, bin, orig.env(), backupPassphrase+"\n", "backup", "-passphrase-stdin", archive); err != nil {
		t.Fatalf("backup: %v\n%s", err, out)
	}
	whole, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(dir, "truncated.backup")
	if err := os.WriteFile(truncated, whole[:len(whole)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	// A non-empty target: a data directory holding a file of its own.
	occupied := filepath.Join(t.TempDir(), "occupied")
	if err := os.MkdirAll(occupied, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(occupied, "mine"), []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name       string
		dataDir    string
		passphrase string
		archive    string
		force      bool
		want       string
	}{
		{"wrong passphrase", filepath.Join(t.TempDir(), "new"), "not the passphrase", archive, false, "wrong passphrase"},
		{"no passphrase", filepath.Join(t.TempDir(), "new"), "", archive, false, "the archive is encrypted"},
		{"truncated archive", filepath.Join(t.TempDir(), "new"), backupPassphrase, truncated, false, "truncated or damaged"},
		{"non-empty target", occupied, backupPassphrase, archive, false, "not empty"},
		{"served data directory", orig.dataDir, backupPassphrase, archive, false, "in use"},
		{"served data directory, forced", orig.dataDir, backupPassphrase, archive, true, "in use"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := snapshotDir(t, tc.dataDir)
			args := []string{"restore"}
			stdin := ""
			if tc.passphrase != "" {
				args, stdin = append(args, "-passphrase-stdin"), tc.passphrase+"\n"
			}
			if tc.force {
				args = append(args, "-force")
			}
			out, err := berthAdmin(t, bin, backupTarget{dataDir: tc.dataDir}.env(), stdin, append(args, tc.archive)...)
			if err == nil {
				t.Fatalf("restore succeeded:\n%s", out)
			}
			if !strings.Contains(out, tc.want) {
				t.Errorf("restore said %q, want it to say %q", out, tc.want)
			}
			if after := snapshotDir(t, tc.dataDir); !cmp.Equal(before, after) {
				t.Errorf("the target changed (-before +after):\n%s", cmp.Diff(before, after))
			}
		})
	}
}

// snapshotDir lists the names and sizes under dir, nil when it does not
// exist; a database being served is listed by name only.
func snapshotDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if strings.HasPrefix(filepath.Base(p), "berth.db") || d.IsDir() {
			out[rel] = ""
			return nil
		}
		b, err := os.ReadFile(p)
		out[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestAdminRestoreForceReplacesAStoppedBerthOnly restores onto the data
// directory and database of another Berth: refused while it runs (even
// with -force), refused once stopped without -force (its user is still
// there), done with -force: the archive's user signs in, the replaced
// Berth's user is gone.
func TestAdminRestoreForceReplacesAStoppedBerthOnly(t *testing.T) {
	enginetest.Require(t)
	bin := servertest.Build(t)
	forEachDatabase(t, func(t *testing.T, newTarget func() backupTarget) {
		orig := newTarget()
		p := servertest.Start(t, bin, "original", orig.env()...)
		fillBerth(t, p.URL, orig.dataDir)
		archive := filepath.Join(t.TempDir(), "berth.backup")
		if out, err := berthAdmin(t, bin, orig.env(), "", "backup", archive); err != nil {
			t.Fatalf("backup: %v\n%s", err, out)
		}

		other := newTarget()
		q := servertest.Start(t, bin, "other", other.env()...)
		servertest.FirstAdmin(t, q.URL, other.dataDir, "other-admin", "other password")
		out, err := berthAdmin(t, bin, other.env(), "", "restore", "-force", archive)
		if err == nil || !strings.Contains(out, "in use") {
			t.Fatalf("restore -force onto a running Berth: %v\n%s", err, out)
		}
		q.Kill(t)
		waitNoSessions(t, other)
		out, err = berthAdmin(t, bin, other.env(), "", "restore", archive)
		if err == nil || !strings.Contains(out, "not empty") {
			t.Fatalf("restore without -force onto a stopped Berth: %v\n%s", err, out)
		}
		if users := userNames(t, other.dbURL()); users != "other-admin" {
			t.Fatalf("users after a refused restore = %s, want other-admin", users)
		}
		if out, err := berthAdmin(t, bin, other.env(), "", "restore", "-force", archive); err != nil {
			t.Fatalf("restore -force: %v\n%s", err, out)
		}
		if users := userNames(t, other.dbURL()); users != backupUser {
			t.Fatalf("users after restore -force = %s, want %s", users, backupUser)
		}
		if entries, _ := os.ReadDir(other.dataDir); len(entries) == 0 {
			t.Fatal("the data directory is empty after restore -force")
		} else {
			for _, e := range entries {
				if strings.HasPrefix(e.Name(), ".berth-restore") || e.Name() == "setup-token" {
					t.Errorf("%s is left in the data directory after restore -force", e.Name())
				}
			}
		}
		r := servertest.Start(t, bin, "restored", other.env()...)
		servertest.Login(t, r.URL, backupUser, backupPassword)
		if status := do(t, "POST", r.URL+"/api/auth/login", nil, `{"username":"other-admin","password":"other password"}`, nil); status != 401 {
			t.Errorf("the replaced Berth's user signs in: %d, want 401", status)
		}
	})
}

// userNames lists the users of the database at url, comma-separated; the
// connection is closed before it returns.
func userNames(t *testing.T, url string) string {
	t.Helper()
	db := openSQL(t, url)
	defer db.Close()
	return strings.Join(queryStrings(t, db, "SELECT username FROM users ORDER BY username"), ",")
}

// waitNoSessions waits until the killed Berth's PostgreSQL sessions have
// ended (the server notices a closed connection on its own time).
func waitNoSessions(t *testing.T, b backupTarget) {
	t.Helper()
	if b.databaseURL == "" {
		return
	}
	db := openSQL(t, b.databaseURL)
	defer db.Close()
	db.SetMaxOpenConns(1)
	deadline := time.Now().Add(30 * time.Second)
	for {
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions are still connected to the killed Berth's database", n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestAdminCommandsFollowDataDirFlag: with -data-dir and no DATABASE_URL,
// an admin command uses the database in that directory (it used the
// default ./data/berth.db).
func TestAdminCommandsFollowDataDirFlag(t *testing.T) {
	dataDir := t.TempDir()
	cwd := t.TempDir()
	t.Chdir(cwd)
	getenv := func(string) string { return "" }
	if err := run(t.Context(), []string{"admin", "create-user", "-data-dir", dataDir, "-username", "ops", "-password", "ops-password-1"},
		getenv, strings.NewReader(""), io.Discard); err != nil {
		t.Fatal(err)
	}
	if users := userNames(t, filepath.Join(dataDir, "berth.db")); users != "ops" {
		t.Errorf("users in -data-dir's database = %q, want ops", users)
	}
	if _, err := os.Stat(filepath.Join(cwd, "data")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the default data directory was used: %v", err)
	}
}
