// Package store provides Berth's persistent state over SQLite or PostgreSQL.
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/berth-dev/berth/server/internal/secret"
)

// ErrNotFound is returned, wrapped, when a requested row does not exist.
var ErrNotFound = errors.New("not found")

// ErrConflict is returned, wrapped, when a write would violate a unique constraint.
var ErrConflict = errors.New("conflict")

// Dialect names returned by Store.Dialect.
const (
	dialectSQLite   = "sqlite"
	dialectPostgres = "postgres"
)

//go:embed migrations/sqlite/*.sql migrations/postgres/*.sql
var migrations embed.FS

// Store is Berth's database: a connection pool, its SQL dialect, and the Box
// that encrypts secret columns.
type Store struct {
	db      *sql.DB
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
		db      *sql.DB
		dialect string
		err     error
	)
	if strings.HasPrefix(databaseURL, "postgres://") || strings.HasPrefix(databaseURL, "postgresql://") {
		dialect = dialectPostgres
		db, err = sql.Open("pgx", databaseURL)
	} else {
		dialect = dialectSQLite
		db, err = openSQLite(databaseURL)
	}
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", dialect, err)
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: open %s: %w", dialect, err)
	}
	s := &Store{db: db, dialect: dialect, box: box}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// openSQLite opens the SQLite file at path. The pragmas travel in the DSN so
// that every connection of the pool gets them, not only the first one.
// _txlock=immediate makes every transaction take the write lock when it
// begins, so a transaction that reads before it writes waits (busy_timeout)
// instead of failing with SQLITE_BUSY when another writer got there first.
func openSQLite(path string) (*sql.DB, error) {
	if path == "" {
		return nil, errors.New("empty database path")
	}
	if strings.ContainsRune(path, '?') {
		// The driver reads everything after '?' as DSN parameters.
		return nil, fmt.Errorf("database path %q must not contain '?'", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	// The database holds password hashes and sealed secrets: create it
	// readable by its owner only (SQLite gives its -wal and -shm files the
	// same mode).
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	f.Close()
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(5000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "foreign_keys(ON)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Set("_txlock", "immediate")
	return sql.Open("sqlite", path+"?"+q.Encode())
}

// migrate applies the embedded migrations of the store's dialect.
func (s *Store) migrate(ctx context.Context) error {
	var (
		gooseDialect goose.Dialect
		opts         = []goose.ProviderOption{goose.WithDisableGlobalRegistry(true)}
	)
	switch s.dialect {
	case dialectPostgres:
		gooseDialect = goose.DialectPostgres
		// Several replicas may start at once against one database.
		locker, err := lock.NewPostgresSessionLocker()
		if err != nil {
			return fmt.Errorf("store: migrate: %w", err)
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	default:
		gooseDialect = goose.DialectSQLite3
	}
	fsys, err := fs.Sub(migrations, "migrations/"+s.dialect)
	if err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	// The provider is not closed: its Close would close s.db.
	p, err := goose.NewProvider(gooseDialect, s.db, fsys, opts...)
	if err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	return nil
}

// Close closes the connection pool.
func (s *Store) Close() error {
	return s.db.Close()
}

// Dialect returns "sqlite" or "postgres".
func (s *Store) Dialect() string {
	return s.dialect
}

// DB returns the underlying pool, for tests that inspect raw rows.
func (s *Store) DB() *sql.DB {
	return s.db
}

// rebind turns the ? placeholders of query into $1, $2, … for PostgreSQL.
// A ? inside a quoted string or identifier is left alone.
func (s *Store) rebind(query string) string {
	if s.dialect != dialectPostgres || !strings.Contains(query, "?") {
		return query
	}
	var (
		b     strings.Builder
		n     int
		quote rune // the quote we are inside of, or 0
	)
	b.Grow(len(query) + 8)
	for _, r := range query {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == '?':
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// inTx runs fn in a transaction, committing when it returns nil and rolling
// back otherwise.
func (s *Store) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// translate wraps a unique violation in ErrConflict and a missing row in
// ErrNotFound; any other error is returned as is.
func translate(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("%w: %w", ErrNotFound, err)
	case isUniqueViolation(err):
		return fmt.Errorf("%w: %w", ErrConflict, err)
	}
	return err
}

func isUniqueViolation(err error) bool {
	var le *sqlite.Error
	if errors.As(err, &le) {
		return le.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || le.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
	}
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

func isForeignKeyViolation(err error) bool {
	var le *sqlite.Error
	if errors.As(err, &le) {
		return le.Code() == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY
	}
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23503"
}

// now returns the current time as stored: UTC, at the microsecond precision
// both dialects keep, so that what a write reports equals what a read returns.
func now() time.Time {
	return time.Now().UTC().Truncate(time.Microsecond)
}

// sqliteTimeLayout is how SQLite stores a timestamp: RFC 3339 in UTC with a
// fixed nine-digit fraction, so that text order is time order.
const sqliteTimeLayout = "2006-01-02T15:04:05.000000000Z"

// timeArg returns t as a query argument for the store's dialect.
func (s *Store) timeArg(t time.Time) any {
	if s.dialect == dialectSQLite {
		return t.UTC().Format(sqliteTimeLayout)
	}
	return t.UTC()
}

// nullTimeArg is timeArg for a nullable column.
func (s *Store) nullTimeArg(t *time.Time) any {
	if t == nil {
		return nil
	}
	return s.timeArg(*t)
}

// dbTime scans a timestamp column of either dialect: a time.Time from
// PostgreSQL, the text written by timeArg from SQLite. Valid is false for NULL.
type dbTime struct {
	Time  time.Time
	Valid bool
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

// rowScanner is a *sql.Row or *sql.Rows.
type rowScanner interface {
	Scan(dest ...any) error
}
