// Package store provides Berth's persistent state over SQLite or PostgreSQL.
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gorm.io/driver/postgres"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
	"gorm.io/gorm/logger"

	"github.com/berth-dev/berth/server/internal/secret"
)

// ErrNotFound is returned, wrapped, when a requested row does not exist.
var ErrNotFound = errors.New("not found")

// ErrConflict is returned, wrapped, when a write would violate a unique constraint.
var ErrConflict = errors.New("conflict")

// Dialect names returned by Store.Dialect; they are also the names of the
// gorm dialectors.
const (
	dialectSQLite   = "sqlite"
	dialectPostgres = "postgres"
)

//go:embed migrations/sqlite/*.sql migrations/postgres/*.sql
var migrations embed.FS

// Store is Berth's database: a gorm handle over a connection pool, its SQL
// dialect, and the Box that encrypts secret columns.
type Store struct {
	db      *gorm.DB
	sqlDB   *sql.DB // the pool under db, for Close and tests
	dialect string
	box     *secret.Box
}

// Open opens the database named by databaseURL and brings its schema up to date.
// A "postgres://" or "postgresql://" URL selects PostgreSQL; anything else is
// the path of a SQLite file, created (with its parent directory) if missing.
func Open(ctx context.Context, databaseURL string, box *secret.Box) (*Store, error) {
	if box == nil {
		return nil, errors.New("store: open: nil secret box")
	}
	var (
		dialector gorm.Dialector
		dialect   string
	)
	if strings.HasPrefix(databaseURL, "postgres://") || strings.HasPrefix(databaseURL, "postgresql://") {
		dialect = dialectPostgres
		dialector = postgres.Open(databaseURL)
	} else {
		dialect = dialectSQLite
		dsn, err := sqliteDSN(databaseURL)
		if err != nil {
			return nil, fmt.Errorf("store: open %s: %w", dialect, err)
		}
		dialector = sqlite.Open(dsn)
	}
	db, err := gorm.Open(dialector, gormConfig())
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", dialect, err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", dialect, err)
	}
	if err := sqlDB.PingContext(ctx); err != nil {
		sqlDB.Close()
		return nil, fmt.Errorf("store: open %s: %w", dialect, err)
	}
	if dialect == dialectPostgres {
		// A bounded pool: a storm of agent reconnects (each a token check,
		// a lease claim and a last-seen write) otherwise opens a connection
		// per concurrent query, and three replicas exhausted the server's
		// max_connections (100 by default) with 300 agents (make bench).
		// Queries over the bound wait for a connection.
		sqlDB.SetMaxOpenConns(pgMaxOpenConns)
		sqlDB.SetMaxIdleConns(pgMaxOpenConns)
	}
	s := &Store{db: db, sqlDB: sqlDB, dialect: dialect, box: box}
	if err := s.migrate(ctx); err != nil {
		sqlDB.Close()
		return nil, err
	}
	return s, nil
}

// pgMaxOpenConns bounds the PostgreSQL connections of one Berth (of each
// replica): three replicas stay well under PostgreSQL's default
// max_connections of 100.
const pgMaxOpenConns = 20

// gormConfig is how the store uses gorm: driver errors translated to
// gorm.ErrDuplicatedKey and gorm.ErrForeignKeyViolated, no implicit
// transaction around single statements (methods open their own), prepared
// statements cached per connection (every request's sign-in check would
// otherwise compile the same few queries again), and no
// logging (errors are returned, wrapped, to the caller).
func gormConfig() *gorm.Config {
	return &gorm.Config{
		TranslateError:         true,
		SkipDefaultTransaction: true,
		PrepareStmt:            true,
		Logger:                 logger.Discard,
	}
}

// sqliteDSN prepares the SQLite file at path and returns its DSN. The pragmas
// travel in the DSN so that every connection of the pool gets them, not only
// the first one. _txlock=immediate makes every transaction take the write
// lock when it begins, so a transaction that reads before it writes waits
// (busy timeout) instead of failing with SQLITE_BUSY when another writer got
// there first.
func sqliteDSN(path string) (string, error) {
	if path == "" {
		return "", errors.New("empty database path")
	}
	if strings.ContainsRune(path, '?') {
		// The driver reads everything after '?' as DSN parameters.
		return "", fmt.Errorf("database path %q must not contain '?'", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	// The database holds password hashes and sealed secrets: create it
	// readable by its owner only (SQLite gives its -wal and -shm files the
	// same mode).
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return "", err
	}
	f.Close()
	q := url.Values{}
	q.Set("_busy_timeout", "5000")
	q.Set("_journal_mode", "WAL")
	q.Set("_foreign_keys", "on")
	q.Set("_synchronous", "NORMAL")
	q.Set("_txlock", "immediate")
	return path + "?" + q.Encode(), nil
}

// Close closes the connection pool.
func (s *Store) Close() error {
	return s.sqlDB.Close()
}

// Dialect returns "sqlite" or "postgres".
func (s *Store) Dialect() string {
	return s.dialect
}

// DB returns the pool under the store, for tests that inspect raw rows.
func (s *Store) DB() *sql.DB {
	return s.sqlDB
}

// translate wraps a unique violation in ErrConflict and a missing row in
// ErrNotFound; any other error, or one already translated, is returned as is.
func translate(err error) error {
	switch {
	case err == nil, errors.Is(err, ErrNotFound), errors.Is(err, ErrConflict):
		return err
	case errors.Is(err, gorm.ErrRecordNotFound):
		return fmt.Errorf("%w: %w", ErrNotFound, err)
	case errors.Is(err, gorm.ErrDuplicatedKey):
		return fmt.Errorf("%w: %w", ErrConflict, err)
	}
	return err
}

// isForeignKeyViolation reports whether err is a write naming a missing row,
// or a delete of a row others still refer to.
func isForeignKeyViolation(err error) bool {
	return errors.Is(err, gorm.ErrForeignKeyViolated)
}

// oneRow turns a statement's result into ErrNotFound when it changed no row.
func oneRow(res *gorm.DB) error {
	if res.Error != nil {
		return translate(res.Error)
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}

// now returns the current time as stored: UTC, at the microsecond precision
// both dialects keep, so that what a write reports equals what a read returns.
func now() time.Time {
	return time.Now().UTC().Truncate(time.Microsecond)
}

// sqliteTimeLayout is how SQLite stores a timestamp: RFC 3339 in UTC with a
// fixed nine-digit fraction, so that text order is time order.
const sqliteTimeLayout = "2006-01-02T15:04:05.000000000Z"

// dbTime is a timestamp column of either dialect: TIMESTAMPTZ in PostgreSQL,
// TEXT in sqliteTimeLayout in SQLite. Valid is false for NULL. It writes
// itself per dialect (GormValue) and reads either form (Scan).
type dbTime struct {
	Time  time.Time
	Valid bool
}

// timeValue is t as a non-null column value.
func timeValue(t time.Time) dbTime {
	return dbTime{Time: t, Valid: true}
}

// nullTimeValue is p as a nullable column value.
func nullTimeValue(p *time.Time) dbTime {
	if p == nil {
		return dbTime{}
	}
	return timeValue(*p)
}

// GormDataType names the column type for gorm. It is deliberately not
// "time", which would make gorm fill fields called CreatedAt and UpdatedAt
// by itself; the store sets them.
func (dbTime) GormDataType() string {
	return "timestamp"
}

// GormValue implements gorm.Valuer: the time as the dialect stores it.
func (d dbTime) GormValue(_ context.Context, db *gorm.DB) clause.Expr {
	switch {
	case !d.Valid:
		return clause.Expr{SQL: "NULL"}
	case db.Dialector.Name() == dialectSQLite:
		return clause.Expr{SQL: "?", Vars: []any{d.Time.UTC().Format(sqliteTimeLayout)}}
	}
	return clause.Expr{SQL: "?", Vars: []any{d.Time.UTC()}}
}

// Scan implements sql.Scanner.
func (d *dbTime) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*d = dbTime{}
		return nil
	case time.Time:
		*d = dbTime{Time: v.UTC(), Valid: true}
		return nil
	case string:
		return d.parse(v)
	case []byte:
		return d.parse(string(v))
	}
	return fmt.Errorf("store: cannot scan %T into a time", src)
}

func (d *dbTime) parse(s string) error {
	// time.RFC3339Nano accepts any fraction length; the second layout is
	// SQLite's own CURRENT_TIMESTAMP, for rows written by hand.
	for _, layout := range []string{time.RFC3339Nano, time.DateTime} {
		if t, err := time.Parse(layout, s); err == nil {
			*d = dbTime{Time: t.UTC(), Valid: true}
			return nil
		}
	}
	return fmt.Errorf("store: cannot parse time %q", s)
}

// ptr returns a pointer to a copy of the time, or nil when it is NULL.
func (d dbTime) ptr() *time.Time {
	if !d.Valid {
		return nil
	}
	t := d.Time
	return &t
}
