package selfbackup

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"gorm.io/driver/postgres"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/berth-dev/berth/server/internal/config"
)

// dbSnapshot is a database copied into files.
type dbSnapshot struct {
	kind          string // SQLite or Postgres
	format        string // of a PostgreSQL dump: postgresCopy
	files         []snapshotFile
	schemaVersion int64
	external      []string // stacks whose files are outside the data directory: "name (path)"
}

// snapshotFile is a file of a database's copy and its archive entry.
type snapshotFile struct{ entry, path string }

// snapshotDatabase copies the database at databaseURL into dir in one
// consistent snapshot, while Berth may write to it: SQLite with VACUUM INTO
// (a read transaction), PostgreSQL with COPY of every table (one REPEATABLE
// READ transaction; postgres.go).
func snapshotDatabase(ctx context.Context, databaseURL, dir, dataDir string) (dbSnapshot, error) {
	if config.IsPostgres(databaseURL) {
		return snapshotPostgres(ctx, databaseURL, dir, dataDir)
	}
	return snapshotSQLite(ctx, databaseURL, dir, dataDir)
}

// stacksQuery lists the stacks with a compose path of their own, but git
// stacks (whose path is inside their checkout).
const stacksQuery = "SELECT name, compose_path FROM stacks WHERE compose_path <> '' AND source_type <> 'git' ORDER BY name"

// stackPath is a row of stacksQuery.
type stackPath struct{ name, path string }

// externalStacks lists the stacks whose compose file is not in the data
// directory (adopted ones, custom paths): an archive does not hold their
// files.
func externalStacks(dataDir string, stacks []stackPath) ([]string, error) {
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, s := range stacks {
		if rel, err := filepath.Rel(abs, s.path); err != nil || !filepath.IsLocal(rel) {
			out = append(out, fmt.Sprintf("%s (%s)", s.name, s.path))
		}
	}
	return out, nil
}

func sqliteStackPaths(ctx context.Context, db *sql.DB) ([]stackPath, error) {
	rows, err := db.QueryContext(ctx, stacksQuery)
	if err != nil {
		return nil, fmt.Errorf("backup: list stacks: %w", err)
	}
	defer rows.Close()
	var out []stackPath
	for rows.Next() {
		var s stackPath
		if err := rows.Scan(&s.name, &s.path); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// sqlitePath is the file of a SQLite DATABASE_URL.
func sqlitePath(databaseURL string) string {
	return config.Config{DatabaseURL: databaseURL}.SQLitePath()
}

func openSQLite(path string, readOnly bool) (*sql.DB, error) {
	dsn := path + "?_busy_timeout=5000"
	if readOnly {
		dsn = "file:" + path + "?mode=ro&_busy_timeout=5000"
	}
	gdb, err := gorm.Open(sqlite.Open(dsn), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		return nil, err
	}
	return gdb.DB()
}

func snapshotSQLite(ctx context.Context, databaseURL, dir, dataDir string) (dbSnapshot, error) {
	src := sqlitePath(databaseURL)
	if strings.ContainsRune(src, '?') {
		return dbSnapshot{}, fmt.Errorf("backup: database path %q must not contain '?'", src)
	}
	if _, err := os.Stat(src); err != nil {
		return dbSnapshot{}, fmt.Errorf("backup: no database: %w", err)
	}
	db, err := openSQLite(src, true)
	if err != nil {
		return dbSnapshot{}, fmt.Errorf("backup: open %s: %w", src, err)
	}
	defer db.Close()
	out := filepath.Join(dir, "berth.db")
	if _, err := db.ExecContext(ctx, "VACUUM INTO ?", out); err != nil {
		return dbSnapshot{}, fmt.Errorf("backup: copy the database: %w", err)
	}
	snap, err := openSQLite(out, true)
	if err != nil {
		return dbSnapshot{}, err
	}
	defer snap.Close()
	v, err := schemaVersion(ctx, snap)
	if err != nil {
		return dbSnapshot{}, err
	}
	stacks, err := sqliteStackPaths(ctx, snap)
	if err != nil {
		return dbSnapshot{}, err
	}
	ext, err := externalStacks(dataDir, stacks)
	if err != nil {
		return dbSnapshot{}, err
	}
	return dbSnapshot{kind: SQLite, files: []snapshotFile{{entry: sqliteEntry, path: out}}, schemaVersion: v, external: ext}, nil
}

// schemaVersion is the highest migration applied to db.
func schemaVersion(ctx context.Context, db *sql.DB) (int64, error) {
	var v int64
	err := db.QueryRowContext(ctx, "SELECT COALESCE(MAX(version_id), 0) FROM goose_db_version WHERE is_applied").Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("backup: the database has no schema version (is it Berth's?): %w", err)
	}
	return v, nil
}

func openPostgres(databaseURL string) (*sql.DB, error) {
	gdb, err := gorm.Open(postgres.Open(databaseURL), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		return nil, err
	}
	return gdb.DB()
}

// sqliteInUse reports whether a process has the SQLite database at path
// open, and which (0 when it is in another PID namespace, another
// container). A connection to a database in WAL mode (Berth's) holds a shared lock
// on the "DMS" byte (offset 128) of its -shm file for as long as it is open,
// and a running Berth keeps connections open in its pool: asking the kernel
// who holds that byte finds a running Berth, or any other process using the
// database.
func sqliteInUse(path string) (bool, int, error) {
	f, err := os.Open(path + "-shm")
	if errors.Is(err, os.ErrNotExist) {
		return false, 0, nil
	}
	if err != nil {
		return false, 0, err
	}
	defer f.Close()
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0, Start: 128, Len: 1}
	if err := syscall.FcntlFlock(f.Fd(), syscall.F_GETLK, &lk); err != nil {
		return false, 0, fmt.Errorf("lock check of %s-shm: %w", path, err)
	}
	if lk.Type == syscall.F_UNLCK {
		return false, 0, nil
	}
	return true, int(lk.Pid), nil
}

// sqliteHasTables reports whether the SQLite file at path holds any table.
func sqliteHasTables(ctx context.Context, path string) (bool, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) || (err == nil && fi.Size() == 0) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	db, err := openSQLite(path, true)
	if err != nil {
		return false, err
	}
	defer db.Close()
	var n int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE type = 'table'").Scan(&n); err != nil {
		return false, err
	}
	return n > 0, nil
}

// postgresState reports whether the database of databaseURL holds tables in
// its current schema, and how many other clients are connected to it (a
// running Berth keeps some open; the server's own workers do not count).
func postgresState(ctx context.Context, databaseURL string) (tables, sessions int, err error) {
	db, err := openPostgres(databaseURL)
	if err != nil {
		return 0, 0, err
	}
	defer db.Close()
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM information_schema.tables
		WHERE table_schema = current_schema()`).Scan(&tables); err != nil {
		return 0, 0, err
	}
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`).Scan(&sessions); err != nil {
		return 0, 0, err
	}
	return tables, sessions, nil
}
