package store_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
)

func TestDialect(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		want := t.Name()[len(t.Name())-len(s.Dialect()):]
		if s.Dialect() != want {
			t.Errorf("Dialect() = %q in subtest %q", s.Dialect(), t.Name())
		}
	})
}

func TestReopenKeepsEnvironments(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "nested", "dir", "berth.db")
	box := storetest.Box(t)

	s, err := store.Open(ctx, path, box)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	e := fullEnvironment("persistent")
	if err := s.CreateEnvironment(ctx, &e); err != nil {
		t.Fatalf("CreateEnvironment: %v", err)
	}
	versions := migrationCount(t, s)
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	info, err := os.Stat(filepath.Dir(path))
	if err != nil {
		t.Fatalf("stat parent directory: %v", err)
	}
	if perm := info.Mode().Perm(); perm != 0o700 {
		t.Errorf("parent directory mode = %v, want 0700", perm)
	}
	for _, f := range []string{path, path + "-wal", path + "-shm"} {
		if info, err := os.Stat(f); err == nil && info.Mode().Perm() != 0o600 {
			t.Errorf("%s mode = %v, want 0600 (it holds secrets)", filepath.Base(f), info.Mode().Perm())
		} else if err != nil && f == path {
			t.Fatalf("stat database: %v", err)
		}
	}

	s, err = store.Open(ctx, path, box)
	if err != nil {
		t.Fatalf("second Open: %v", err)
	}
	defer s.Close()
	got, err := s.ListEnvironments(ctx)
	if err != nil {
		t.Fatalf("ListEnvironments: %v", err)
	}
	if diff := cmp.Diff([]store.Environment{e}, got, approxTime); diff != "" {
		t.Errorf("after reopening (-want +got):\n%s", diff)
	}
	if again := migrationCount(t, s); again != versions {
		t.Errorf("reopening recorded migrations again: %d rows, want %d", again, versions)
	}
}

func migrationCount(t *testing.T, s *store.Store) int {
	t.Helper()
	var n int
	if err := s.DB().QueryRowContext(t.Context(), `SELECT COUNT(*) FROM goose_db_version`).Scan(&n); err != nil {
		t.Fatalf("count migrations: %v", err)
	}
	return n
}

func TestSQLitePragmasApplyToEveryConnection(t *testing.T) {
	ctx := t.Context()
	s, err := store.Open(ctx, filepath.Join(t.TempDir(), "berth.db"), storetest.Box(t))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()

	// Hold several connections at once, so the pool must open new ones.
	var conns []*sql.Conn
	for range 3 {
		c, err := s.DB().Conn(ctx)
		if err != nil {
			t.Fatalf("Conn: %v", err)
		}
		defer c.Close()
		conns = append(conns, c)
	}
	want := map[string]string{"journal_mode": "wal", "busy_timeout": "5000", "foreign_keys": "1", "synchronous": "1"}
	for i, c := range conns {
		got := map[string]string{}
		for pragma := range want {
			got[pragma] = queryPragma(ctx, t, c, pragma)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("connection %d pragmas (-want +got):\n%s", i, diff)
		}
	}
}

func queryPragma(ctx context.Context, t *testing.T, c *sql.Conn, pragma string) string {
	t.Helper()
	var v string
	if err := c.QueryRowContext(ctx, "PRAGMA "+pragma).Scan(&v); err != nil {
		t.Fatalf("PRAGMA %s: %v", pragma, err)
	}
	return v
}

func TestOpenWithoutBoxFails(t *testing.T) {
	if s, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "berth.db"), nil); err == nil {
		s.Close()
		t.Fatal("Open with a nil Box succeeded")
	}
}
