// Package storetest provides helpers for tests that need a real store.Store
// on each supported database.
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
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
	s, err := store.Open(t.Context(), PostgresDatabase(t), Box(t))
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
	adminURL := os.Getenv(PostgresURLEnv)
	if adminURL == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("storetest: %s is not set; PostgreSQL tests cannot be skipped when CI=true", PostgresURLEnv)
		}
		t.Skipf("storetest: %s is not set; skipping PostgreSQL", PostgresURLEnv)
	}
	u, err := url.Parse(adminURL)
	if err != nil {
		t.Fatalf("storetest: parse %s: %v", PostgresURLEnv, err)
	}

	admin := openAdmin(t, adminURL)
	name := "berth_test_" + randomHex(t, 8)
	if err := admin.WithContext(t.Context()).Exec("CREATE DATABASE " + name).Error; err != nil {
		t.Fatalf("storetest: create database: %v", err)
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
