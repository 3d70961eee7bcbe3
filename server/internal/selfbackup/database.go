package selfbackup

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"gorm.io/driver/postgres"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/berth-dev/berth/server/internal/config"
)

// dbSnapshot is a database copied into a file.
type dbSnapshot struct {
	kind          string // SQLite or Postgres
	entry         string // its archive entry
	path          string
	schemaVersion int64
	external      []string // stacks whose files are outside the data directory: "name (path)"
}

// snapshotDatabase copies the database at databaseURL into dir in one
// consistent snapshot, while Berth may write to it: SQLite with VACUUM INTO
// (a read transaction), PostgreSQL with pg_dump (one REPEATABLE READ
// transaction).
func snapshotDatabase(ctx context.Context, databaseURL, dir, dataDir string) (dbSnapshot, error) {
	if config.IsPostgres(databaseURL) {
		return snapshotPostgres(ctx, databaseURL, dir, dataDir)
	}
	return snapshotSQLite(ctx, databaseURL, dir, dataDir)
}

// externalStacks lists the stacks whose compose file is not in the data
// directory (adopted ones, custom paths): an archive does not hold their
// files. A git stack's path is inside its checkout.
func externalStacks(ctx context.Context, db *sql.DB, dataDir string) ([]string, error) {
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, "SELECT name, compose_path FROM stacks WHERE compose_path <> '' AND source_type <> 'git' ORDER BY name")
	if err != nil {
		return nil, fmt.Errorf("backup: list stacks: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var name, path string
		if err := rows.Scan(&name, &path); err != nil {
			return nil, err
		}
		if rel, err := filepath.Rel(abs, path); err != nil || !filepath.IsLocal(rel) {
			out = append(out, fmt.Sprintf("%s (%s)", name, path))
		}
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
	ext, err := externalStacks(ctx, snap, dataDir)
	if err != nil {
		return dbSnapshot{}, err
	}
	return dbSnapshot{kind: SQLite, entry: sqliteEntry, path: out, schemaVersion: v, external: ext}, nil
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

// pgCommand returns the PostgreSQL client tool with the connection of
// databaseURL (as --dbname when connect): the URL without its password (arguments are visible to other
// local users) and PGPASSWORD in its environment.
func pgCommand(ctx context.Context, tool, databaseURL string, connect bool, args ...string) (*exec.Cmd, error) {
	bin, err := exec.LookPath(tool)
	if err != nil {
		return nil, fmt.Errorf("%s is not on PATH: install the PostgreSQL client tools (Debian: apt-get install postgresql-client), of the server's major version or newer", tool)
	}
	u, err := url.Parse(databaseURL)
	if err != nil {
		return nil, fmt.Errorf("DATABASE_URL: %w", err)
	}
	env := os.Environ()
	if pw, ok := u.User.Password(); ok {
		env = append(env, "PGPASSWORD="+pw)
		u.User = url.User(u.User.Username())
	}
	if connect {
		args = append(args, "--dbname="+u.String())
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	return cmd, nil
}

func openPostgres(databaseURL string) (*sql.DB, error) {
	gdb, err := gorm.Open(postgres.Open(databaseURL), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		return nil, err
	}
	return gdb.DB()
}

func snapshotPostgres(ctx context.Context, databaseURL, dir, dataDir string) (dbSnapshot, error) {
	db, err := openPostgres(databaseURL)
	if err != nil {
		return dbSnapshot{}, fmt.Errorf("backup: open the database: %w", err)
	}
	defer db.Close()
	before, err := schemaVersion(ctx, db)
	if err != nil {
		return dbSnapshot{}, err
	}
	out := filepath.Join(dir, "berth.pgdump")
	cmd, err := pgCommand(ctx, "pg_dump", databaseURL, true, "--format=custom", "--no-owner", "--no-privileges", "--file="+out)
	if err != nil {
		return dbSnapshot{}, fmt.Errorf("backup: %w", err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return dbSnapshot{}, fmt.Errorf("backup: pg_dump: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	after, err := schemaVersion(ctx, db)
	if err != nil {
		return dbSnapshot{}, err
	}
	if after != before {
		return dbSnapshot{}, errors.New("backup: the database's schema was migrated while it was copied: run the backup again")
	}
	ext, err := externalStacks(ctx, db, dataDir)
	if err != nil {
		return dbSnapshot{}, err
	}
	return dbSnapshot{kind: Postgres, entry: postgresEntry, path: out, schemaVersion: after, external: ext}, nil
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

// restorePostgres loads the pg_dump archive at dump into the database of
// databaseURL in one transaction (pg_restore's script run by psql with
// --single-transaction): a failure leaves the database as it was. With
// replace, the current schema's contents are dropped first, in the same
// transaction.
func restorePostgres(ctx context.Context, databaseURL, dump string, replace bool) error {
	// Given no database, pg_restore writes the script to run.
	script, err := pgCommand(ctx, "pg_restore", databaseURL, false, "--no-owner", "--no-privileges", "--file=-", dump)
	if err != nil {
		return err
	}
	var scriptErr bytes.Buffer
	script.Stderr = &scriptErr
	sqlText, err := script.Output()
	if err != nil {
		return fmt.Errorf("pg_restore: %w: %s", err, strings.TrimSpace(scriptErr.String()))
	}
	psql, err := pgCommand(ctx, "psql", databaseURL, true, "--no-psqlrc", "--quiet", "--single-transaction",
		"--set=ON_ERROR_STOP=1", "--file=-")
	if err != nil {
		return err
	}
	var in bytes.Buffer
	if replace {
		in.WriteString("DROP SCHEMA public CASCADE;\nCREATE SCHEMA public;\n")
	}
	in.Write(sqlText)
	psql.Stdin = &in
	var out bytes.Buffer
	psql.Stdout, psql.Stderr = &out, &out
	if err := psql.Run(); err != nil {
		return fmt.Errorf("psql: %w: %s", err, strings.TrimSpace(out.String()))
	}
	return nil
}
