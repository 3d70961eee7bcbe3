// Package storetest provides helpers for tests that need a real store.Store
// on each supported database.
package storetest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/berth-dev/berth/server/internal/secret"
	"github.com/berth-dev/berth/server/internal/store"
)

// PostgresURLEnv names the environment variable holding the admin URL of the
// PostgreSQL server tests use, e.g.
// postgres://berth:berth@127.0.0.1:5432/postgres?sslmode=disable.
const PostgresURLEnv = "BERTH_TEST_POSTGRES_URL"

// ForEachDialect runs fn as subtests "sqlite" and "postgres", each with a
// fresh, migrated, empty Store.
//
// SQLite uses a file in t.TempDir(). PostgreSQL uses a new database created
// through the admin URL in $BERTH_TEST_POSTGRES_URL and dropped when the
// subtest ends. Without that variable the postgres subtest is skipped, or
// fails when CI=true: a skipped suite is not a passing one.
func ForEachDialect(t *testing.T, fn func(t *testing.T, s *store.Store)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) {
		fn(t, openSQLite(t))
	})
	t.Run("postgres", func(t *testing.T) {
		fn(t, openPostgres(t))
	})
}

// Box returns a *secret.Box with a random key.
func Box(t testing.TB) *secret.Box {
	t.Helper()
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		t.Fatalf("storetest: random key: %v", err)
	}
	box, err := secret.New(key)
	if err != nil {
		t.Fatalf("storetest: new box: %v", err)
	}
	return box
}

func openSQLite(t *testing.T) *store.Store {
	t.Helper()
	s, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "berth.db"), Box(t))
	if err != nil {
		t.Fatalf("storetest: open sqlite: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func openPostgres(t *testing.T) *store.Store {
	t.Helper()
	s, err := store.Open(t.Context(), migratedPostgresDatabase(t), Box(t))
	if err != nil {
		t.Fatalf("storetest: open postgres: %v", err)
	}
	t.Cleanup(func() { s.Close() }) // runs before the drop: cleanups are last in, first out
	return s
}

// PostgresDatabase creates a new, empty PostgreSQL database through the admin
// URL in $BERTH_TEST_POSTGRES_URL, drops it when the test ends, and returns
// its URL. Without that variable the test is skipped, or fails when CI=true.
func PostgresDatabase(t *testing.T) string {
	t.Helper()
	return newDatabase(t, postgresAdminURL(t), "")
}

// postgresAdminURL is $BERTH_TEST_POSTGRES_URL; without it the test is
// skipped, or fails when CI=true.
func postgresAdminURL(t *testing.T) string {
	t.Helper()
	adminURL := os.Getenv(PostgresURLEnv)
	if adminURL == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("storetest: %s is not set; PostgreSQL tests cannot be skipped when CI=true", PostgresURLEnv)
		}
		t.Skipf("storetest: %s is not set; skipping PostgreSQL", PostgresURLEnv)
	}
	return adminURL
}

// migratedPostgresDatabase is PostgresDatabase with the store's schema
// already in it: a copy of the migrated template (migratedTemplate), which is
// cheaper than running every migration again for each test.
func migratedPostgresDatabase(t *testing.T) string {
	t.Helper()
	adminURL := postgresAdminURL(t)
	return newDatabase(t, adminURL, migratedTemplate(t, adminURL))
}

// newDatabase creates a database (a copy of template unless it is empty)
// through adminURL, drops it when the test ends and returns its URL.
func newDatabase(t *testing.T, adminURL, template string) string {
	t.Helper()
	u, err := url.Parse(adminURL)
	if err != nil {
		t.Fatalf("storetest: parse %s: %v", PostgresURLEnv, err)
	}
	admin := openAdmin(t, adminURL)
	name := "berth_test_" + randomHex(t, 8)
	create := "CREATE DATABASE " + name
	if template != "" {
		create += " TEMPLATE " + template
	}
	// A copy waits for the template's last connection to be gone (its
	// maker's backend may take a moment to end).
	for i := 0; ; i++ {
		err := admin.WithContext(t.Context()).Exec(create).Error
		if err == nil {
			break
		}
		if i == 20 || !strings.Contains(err.Error(), "being accessed by other users") {
			t.Fatalf("storetest: create database: %v", err)
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Cleanup(func() {
		// t.Context() is already canceled when cleanups run.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		// A background worker (autovacuum) may hold the database a moment
		// longer; retry briefly before reporting.
		var err error
		for range 20 {
			if err = admin.WithContext(ctx).Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)").Error; err == nil {
				break
			}
			time.Sleep(250 * time.Millisecond)
		}
		if err != nil {
			t.Errorf("storetest: drop database %s: %v", name, err)
		}
	})
	u.Path = "/" + name
	return u.String()
}

// openAdmin connects to the PostgreSQL server at adminURL, to create and drop
// test databases; the connection closes when the test ends.
func openAdmin(t *testing.T, adminURL string) *gorm.DB {
	t.Helper()
	admin, err := gorm.Open(postgres.Open(adminURL), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatalf("storetest: open admin connection: %v", err)
	}
	pool, err := admin.DB()
	if err != nil {
		t.Fatalf("storetest: admin connection pool: %v", err)
	}
	t.Cleanup(func() { pool.Close() })
	return admin
}

func randomHex(t testing.TB, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatalf("storetest: random: %v", err)
	}
	return hex.EncodeToString(b)
}

// templates holds the migrated template of each admin URL, made once per
// process.
var templates sync.Map // admin URL → template name

// migratedTemplate returns the name of a database that holds the store's
// PostgreSQL schema as its migrations make it. It is made once for each set
// of migrations (named by their digest) and kept on the server, like a build
// cache keyed by version (about 8 MB each): processes that start together
// take turns through an advisory lock, and a later run finds it made.
func migratedTemplate(t *testing.T, adminURL string) string {
	t.Helper()
	if name, ok := templates.Load(adminURL); ok {
		return name.(string)
	}
	name, err := makeTemplate(adminURL)
	if err != nil {
		t.Fatalf("storetest: migrated template: %v", err)
	}
	templates.Store(adminURL, name)
	return name
}

// migrationsDigest names the PostgreSQL migrations of this source tree.
func migrationsDigest() (string, error) {
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("no source path")
	}
	dir := filepath.Join(filepath.Dir(self), "..", "migrations", "postgres")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, e := range entries { // sorted by name
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", e.Name(), len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

func makeTemplate(adminURL string) (string, error) {
	digest, err := migrationsDigest()
	if err != nil {
		return "", err
	}
	name := "berth_tmpl_" + digest
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	gdb, err := gorm.Open(postgres.Open(adminURL), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		return "", err
	}
	db, err := gdb.DB()
	if err != nil {
		return "", err
	}
	defer db.Close()
	conn, err := db.Conn(ctx) // the lock belongs to this one session
	if err != nil {
		return "", err
	}
	defer conn.Close()
	const lockID = 0x6265727468746d70 // "berthtmp"
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", int64(lockID)); err != nil {
		return "", err
	}
	defer conn.ExecContext(context.Background(), "SELECT pg_advisory_unlock($1)", int64(lockID)) //nolint:errcheck
	var n int
	if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM pg_database WHERE datname = $1", name).Scan(&n); err != nil {
		return "", err
	}
	if n == 1 {
		return name, nil
	}
	// Made under a temporary name and renamed when whole, so a process that
	// died while making it leaves nothing another would copy.
	building := name + "_building"
	if _, err := conn.ExecContext(ctx, "DROP DATABASE IF EXISTS "+building+" WITH (FORCE)"); err != nil {
		return "", err
	}
	if _, err := conn.ExecContext(ctx, "CREATE DATABASE "+building); err != nil {
		return "", err
	}
	u, err := url.Parse(adminURL)
	if err != nil {
		return "", err
	}
	u.Path = "/" + building
	key := make([]byte, 32)
	box, err := secret.New(key)
	if err != nil {
		return "", err
	}
	s, err := store.Open(ctx, u.String(), box)
	if err != nil {
		return "", err
	}
	s.Close()
	for i := 0; ; i++ {
		_, err := conn.ExecContext(ctx, "ALTER DATABASE "+building+" RENAME TO "+name)
		if err == nil {
			return name, nil
		}
		if i == 20 || !strings.Contains(err.Error(), "being accessed by other users") {
			return "", err
		}
		time.Sleep(250 * time.Millisecond)
	}
}
