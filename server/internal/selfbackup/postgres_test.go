package selfbackup

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/berth-dev/berth/server/internal/secret"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
)

// withoutClientTools empties PATH for the test: no pg_dump, pg_restore or
// psql can run.
func withoutClientTools(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
}

// pgBerth is a data directory with its key and a PostgreSQL database
// migrated by the store, holding users (the last one created deleted, so
// that the id sequence is ahead of the highest id) and an environment with
// a sealed secret.
type pgBerth struct {
	dataDir, dbURL string
	lastUserID     int64 // the highest id the users' sequence gave
}

func newPostgresBerth(t *testing.T) pgBerth {
	t.Helper()
	b := pgBerth{dataDir: t.TempDir(), dbURL: storetest.PostgresDatabase(t)}
	st := openStore(t, b.dataDir, b.dbURL)
	defer st.Close()
	for _, name := range []string{"alice", "bob", "carol"} {
		u := &store.User{Username: name, Email: name + "@berth.test", IsActive: true, AuthProvider: "local"}
		if err := st.CreateUser(t.Context(), u); err != nil {
			t.Fatal(err)
		}
		b.lastUserID = u.ID
	}
	if err := st.DeleteUser(t.Context(), b.lastUserID); err != nil {
		t.Fatal(err)
	}
	env := &store.Environment{Name: "second", ConnectionType: "direct", Host: "192.0.2.1", Port: 2376, Protocol: "https",
		TLSKey: "-----BEGIN PRIVATE KEY----- sealed\tvalue\nwith a tab and a newline \\ and a backslash"}
	if err := st.CreateEnvironment(t.Context(), env); err != nil {
		t.Fatal(err)
	}
	return b
}

// openStore opens the store of the database at dbURL with the key of
// dataDir (made when missing), migrating it.
func openStore(t *testing.T, dataDir, dbURL string) *store.Store {
	t.Helper()
	key, err := secret.LoadKey(dataDir, "")
	if err != nil {
		t.Fatal(err)
	}
	box, err := secret.New(key)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(t.Context(), dbURL, box)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// pgRows reads every row of every table of the current schema of the
// database at dbURL as text, sorted; and the tables' names.
func pgRows(t *testing.T, dbURL string) map[string][]string {
	t.Helper()
	conn, err := connectPostgres(t.Context(), dbURL) // the same text on both sides
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	rows, err := conn.Query(t.Context(), `SELECT relname::text FROM pg_class
		WHERE relnamespace = current_schema()::regnamespace AND relkind = 'r' ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, table := range tables {
		rows, err := conn.Query(t.Context(), "SELECT t::text FROM "+quoteIdent(table)+" t ORDER BY 1")
		if err != nil {
			t.Fatal(err)
		}
		if out[table], err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func pgVersion(t *testing.T, dbURL string) int64 {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	v, err := pgSchemaVersion(t.Context(), conn)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// setDateStyle makes style the default DateStyle of the database at dbURL.
func setDateStyle(t *testing.T, dbURL, style string) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	var name string
	if err := conn.QueryRow(t.Context(), "SELECT current_database()").Scan(&name); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(t.Context(), "ALTER DATABASE "+quoteIdent(name)+" SET datestyle = '"+style+"'"); err != nil {
		t.Fatal(err)
	}
}

// TestPostgresBackupAndRestoreNeedNoClientTools backs up a PostgreSQL
// Berth and restores it into an empty database with no PostgreSQL client
// tool on PATH: every row of every table comes back, at the same schema
// version, and a user created afterwards gets an id the original never
// gave (the sequences continue, past the deleted user's id too). The two
// databases write dates in different styles by default (day first, month
// first): the dump's text does not depend on them.
func TestPostgresBackupAndRestoreNeedNoClientTools(t *testing.T) {
	src := newPostgresBerth(t)
	setDateStyle(t, src.dbURL, "SQL, DMY")
	withoutClientTools(t)
	archive := filepath.Join(t.TempDir(), "b")
	if _, err := WriteFile(t.Context(), Options{DataDir: src.dataDir, DatabaseURL: src.dbURL}, archive); err != nil {
		t.Fatal(err)
	}
	target := pgBerth{dataDir: filepath.Join(t.TempDir(), "data"), dbURL: storetest.PostgresDatabase(t)}
	setDateStyle(t, target.dbURL, "Postgres, MDY")
	m, err := Restore(t.Context(), RestoreOptions{DataDir: target.dataDir, DatabaseURL: target.dbURL}, archive)
	if err != nil {
		t.Fatal(err)
	}
	if m.Database != Postgres || m.PostgresFormat != postgresCopy {
		t.Errorf("manifest database %q form %q, want %q %q", m.Database, m.PostgresFormat, Postgres, postgresCopy)
	}
	want, got := pgRows(t, src.dbURL), pgRows(t, target.dbURL)
	for _, table := range []string{"users", "environments", "goose_db_version"} {
		if len(want[table]) == 0 {
			t.Errorf("the original's table %s is empty: the fixture does not exercise it", table)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rows (-original +restored):\n%s", diff)
	}
	if v, w := pgVersion(t, target.dbURL), pgVersion(t, src.dbURL); v != w || v != m.SchemaVersion {
		t.Errorf("restored schema version %d, want the original's %d (manifest %d)", v, w, m.SchemaVersion)
	}
	if _, err := os.Stat(filepath.Join(target.dataDir, restoreStaging)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the staging directory is left: %v", err)
	}

	st := openStore(t, target.dataDir, target.dbURL)
	defer st.Close()
	u := &store.User{Username: "dave", IsActive: true, AuthProvider: "local"}
	if err := st.CreateUser(t.Context(), u); err != nil {
		t.Fatalf("a new user after the restore: %v", err)
	}
	if u.ID != src.lastUserID+1 {
		t.Errorf("new user's id = %d, want %d (after the original's last)", u.ID, src.lastUserID+1)
	}
	env := &store.Environment{Name: "third", ConnectionType: "direct", Host: "192.0.2.2", Port: 2375, Protocol: "http"}
	if err := st.CreateEnvironment(t.Context(), env); err != nil {
		t.Fatalf("a new environment after the restore: %v", err)
	}
	envs, err := st.ListEnvironments(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range envs {
		if e.Name == "second" && !strings.Contains(e.TLSKey, "sealed\tvalue\nwith a tab") {
			t.Errorf("restored environment's sealed key = %q", e.TLSKey)
		}
	}
}

// rewriteTable rewrites the unencrypted archive at src into dst with the
// entry of table passed through edit, and the manifest updated to match
// it (so that only the database's load can find the damage).
func rewriteTable(t *testing.T, src, dst, table string, edit func([]byte) []byte) {
	t.Helper()
	var size int64
	var sum string
	rewrite(t, src, dst, func(name string, body []byte) []byte {
		switch name {
		case pgCopyEntry(table):
			body = edit(body)
			h := sha256.Sum256(body)
			size, sum = int64(len(body)), hex.EncodeToString(h[:])
		case manifestEntry:
			var m Manifest
			if err := json.Unmarshal(body, &m); err != nil {
				t.Fatal(err)
			}
			i := slices.IndexFunc(m.Entries, func(e Entry) bool { return e.Path == pgCopyEntry(table) })
			if i < 0 || sum == "" {
				t.Fatalf("the archive has no entry %s", pgCopyEntry(table))
			}
			m.Entries[i].Size, m.Entries[i].SHA256 = size, sum
			body, _ = json.Marshal(m)
		}
		return body
	})
}

// TestPostgresRestoreOfADamagedTableRollsBack: an archive whose users
// table holds a row PostgreSQL refuses (its manifest matching, so that
// the load finds it, after other tables were loaded) fails naming the
// table and leaves the target as it was: an empty database stays empty
// (not even the schema), a replaced one keeps its rows, and no data
// directory is written.
func TestPostgresRestoreOfADamagedTableRollsBack(t *testing.T) {
	src := newPostgresBerth(t)
	withoutClientTools(t)
	archive := filepath.Join(t.TempDir(), "b")
	if _, err := WriteFile(t.Context(), Options{DataDir: src.dataDir, DatabaseURL: src.dbURL}, archive); err != nil {
		t.Fatal(err)
	}
	damaged := filepath.Join(t.TempDir(), "damaged")
	rewriteTable(t, archive, damaged, "users", func(b []byte) []byte {
		return append(b, []byte("not-a-number\tone column only\n")...)
	})

	empty := storetest.PostgresDatabase(t)
	dataDir := filepath.Join(t.TempDir(), "data")
	_, err := Restore(t.Context(), RestoreOptions{DataDir: dataDir, DatabaseURL: empty}, damaged)
	if err == nil || !strings.Contains(err.Error(), "load table users") {
		t.Fatalf("restore of a damaged table: %v, want it to name table users", err)
	}
	if tables, _, err := postgresState(t.Context(), empty); err != nil || tables != 0 {
		t.Errorf("the empty target holds %d tables after the failed restore (%v), want 0", tables, err)
	}
	if _, err := os.Stat(dataDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the data directory was written: %v", err)
	}

	// Replacing: the original itself, given another data directory.
	before := pgRows(t, src.dbURL)
	_, err = Restore(t.Context(), RestoreOptions{DataDir: dataDir, DatabaseURL: src.dbURL, Force: true}, damaged)
	if err == nil || !strings.Contains(err.Error(), "load table users") {
		t.Fatalf("forced restore of a damaged table: %v", err)
	}
	if diff := cmp.Diff(before, pgRows(t, src.dbURL)); diff != "" {
		t.Errorf("the replaced database changed (-before +after):\n%s", diff)
	}
	// The undamaged archive replaces it.
	if _, err := Restore(t.Context(), RestoreOptions{DataDir: dataDir, DatabaseURL: src.dbURL, Force: true}, archive); err != nil {
		t.Fatalf("forced restore: %v", err)
	}
	if diff := cmp.Diff(before, pgRows(t, src.dbURL)); diff != "" {
		t.Errorf("rows after a forced restore of the database's own backup (-before +after):\n%s", diff)
	}
}

// TestPostgresRestoreOfAnOlderSchemaIsMigratedByTheNextOpen: a database at
// the schema version before this build's restores at that version (the
// migrations run up to the archive's), and the next open migrates it.
func TestPostgresRestoreOfAnOlderSchemaIsMigratedByTheNextOpen(t *testing.T) {
	known, err := store.SchemaVersion(Postgres)
	if err != nil {
		t.Fatal(err)
	}
	older := known - 1
	stmts, err := store.SchemaStatements(Postgres, older)
	if err != nil {
		t.Fatal(err)
	}
	src := pgBerth{dataDir: t.TempDir(), dbURL: storetest.PostgresDatabase(t)}
	if _, err := secret.LoadKey(src.dataDir, ""); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(t.Context(), src.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range stmts {
		if _, err := conn.Exec(t.Context(), s); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := conn.Exec(t.Context(), "INSERT INTO goose_db_version (version_id, is_applied) VALUES (0, true), ($1, true)", older); err != nil {
		t.Fatal(err)
	}
	conn.Close(t.Context())

	withoutClientTools(t)
	archive := filepath.Join(t.TempDir(), "b")
	if _, err := WriteFile(t.Context(), Options{DataDir: src.dataDir, DatabaseURL: src.dbURL}, archive); err != nil {
		t.Fatal(err)
	}
	target := pgBerth{dataDir: filepath.Join(t.TempDir(), "data"), dbURL: storetest.PostgresDatabase(t)}
	m, err := Restore(t.Context(), RestoreOptions{DataDir: target.dataDir, DatabaseURL: target.dbURL}, archive)
	if err != nil {
		t.Fatal(err)
	}
	if m.SchemaVersion != older || pgVersion(t, target.dbURL) != older {
		t.Errorf("restored schema version %d (manifest %d), want %d", pgVersion(t, target.dbURL), m.SchemaVersion, older)
	}
	st := openStore(t, target.dataDir, target.dbURL)
	st.Close()
	if v := pgVersion(t, target.dbURL); v != known {
		t.Errorf("schema version after the open = %d, want %d", v, known)
	}
}

// writePgDumpArchive writes an unencrypted archive of the form earlier
// releases wrote: pg_dump's custom format, no PostgresFormat.
func writePgDumpArchive(t *testing.T, b pgBerth, file string) {
	t.Helper()
	dump := filepath.Join(t.TempDir(), "berth.pgdump")
	cmd, err := pgCommand(t.Context(), "pg_dump", b.dbURL, true, "--format=custom", "--no-owner", "--no-privileges", "--file="+dump)
	if err != nil {
		t.Skipf("no pg_dump to make an archive of the earlier form: %v", err)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pg_dump: %v: %s", err, out)
	}
	key, err := readKey(b.dataDir, "")
	if err != nil {
		t.Fatal(err)
	}
	m := Manifest{Format: Format, BerthVersion: "earlier", SchemaVersion: pgVersion(t, b.dbURL), Database: Postgres,
		CreatedAt: time.Now().UTC().Truncate(time.Second)}
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	tw := tar.NewWriter(zw)
	aw := &archiveWriter{tw: tw, m: &m, created: m.CreatedAt}
	if err := aw.addFile(t.Context(), postgresEntry, dump, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := aw.addBytes(keyEntry, []byte(hex.EncodeToString(key)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(m)
	if err := writeTarFile(tw, manifestEntry, raw, 0o600, m.CreatedAt); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, out.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestPgDumpArchiveNeedsTheClientTools: an archive of an earlier release
// (pg_dump's format) is refused without pg_restore and psql, saying so,
// with nothing written; with them it restores every row.
func TestPgDumpArchiveNeedsTheClientTools(t *testing.T) {
	src := newPostgresBerth(t)
	archive := filepath.Join(t.TempDir(), "b")
	writePgDumpArchive(t, src, archive)
	target := pgBerth{dataDir: filepath.Join(t.TempDir(), "data"), dbURL: storetest.PostgresDatabase(t)}

	t.Run("without them", func(t *testing.T) {
		withoutClientTools(t)
		_, err := Restore(t.Context(), RestoreOptions{DataDir: target.dataDir, DatabaseURL: target.dbURL}, archive)
		if err == nil || !strings.Contains(err.Error(), "dumped by pg_dump") || !strings.Contains(err.Error(), "postgresql-client") {
			t.Fatalf("restore of a pg_dump archive without the tools: %v", err)
		}
		if _, err := os.Stat(target.dataDir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the data directory was written: %v", err)
		}
		if tables, _, err := postgresState(t.Context(), target.dbURL); err != nil || tables != 0 {
			t.Errorf("the database holds %d tables (%v), want 0", tables, err)
		}
	})
	t.Run("with them", func(t *testing.T) {
		if _, err := Restore(t.Context(), RestoreOptions{DataDir: target.dataDir, DatabaseURL: target.dbURL}, archive); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(pgRows(t, src.dbURL), pgRows(t, target.dbURL)); diff != "" {
			t.Errorf("rows (-original +restored):\n%s", diff)
		}
	})
}
