package selfbackup

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/berth-dev/berth/server/internal/secret"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/version"
)

// RestoreOptions say where to restore an archive.
type RestoreOptions struct {
	DataDir       string
	DatabaseURL   string // DATABASE_URL; "" is DataDir/berth.db
	EncryptionKey string // ENCRYPTION_KEY of the target, if set: must be the archive's key
	// Force replaces a data directory and database that are not empty.
	Force      bool
	Passphrase []byte
}

func (o RestoreOptions) databaseURL() string {
	return Options{DataDir: o.DataDir, DatabaseURL: o.DatabaseURL}.databaseURL()
}

// ErrNotEmpty is returned, wrapped, when the target of a restore holds data
// and Force is not set.
var ErrNotEmpty = errors.New("the target is not empty")

// ErrInUse is returned, wrapped, when a process (a running Berth) uses the
// target's database.
var ErrInUse = errors.New("the target is in use")

// restoreStaging names the directory, inside the data directory, an archive
// is extracted into before it replaces the directory's contents; previous
// contents are moved into restoreOld until the restore has succeeded.
const (
	restoreStaging = ".berth-restore"
	restoreOld     = ".berth-restore-old"
	restorePgDir   = ".database" // in the staging directory: a PostgreSQL dump, removed once loaded
)

// Restore restores the archive at file. It reads the archive once to verify
// it (passphrase, every entry against the manifest, schema version, database
// kind) before it writes anything, checks the target (empty unless Force;
// never in use), then extracts it into a staging directory inside the data
// directory (so that it works on a data directory that is a mount point)
// while verifying it again, restores a PostgreSQL database in one
// transaction, and last moves the staged entries in place of the data
// directory's contents, moving them back if that fails.
//
// A restored database of an older schema is migrated by the next
// "berth serve".
func Restore(ctx context.Context, opts RestoreOptions, file string) (Manifest, error) {
	if opts.DataDir == "" {
		return Manifest{}, errors.New("restore: the data directory is not set")
	}
	dataDir, err := filepath.Abs(opts.DataDir)
	if err != nil {
		return Manifest{}, err
	}
	dbURL := opts.databaseURL()
	kind := databaseKind(dbURL)

	// 1. Verify, writing nothing; keep the key to compare it.
	var key []byte
	dbEntries := map[string]bool{}
	m, err := readFile(file, opts.Passphrase, func(e Entry, body io.Reader) error {
		if e.Path == sqliteEntry || e.Path == postgresEntry || e.Path == pgTablesEntry {
			dbEntries[e.Path] = true
		}
		if e.Path == keyEntry {
			b, err := io.ReadAll(io.LimitReader(body, 1024))
			key = bytes.TrimSpace(b)
			return err
		}
		return nil
	})
	if err != nil {
		return Manifest{}, err
	}
	if m.Database != kind {
		return m, fmt.Errorf("restore: the archive holds a %s database and DATABASE_URL selects %s: restore a backup of the same kind", m.Database, kind)
	}
	known, err := store.SchemaVersion(kind)
	if err != nil {
		return m, err
	}
	if m.SchemaVersion > known {
		return m, fmt.Errorf("restore: the archive's database schema (version %d, Berth %s) is newer than this Berth's (version %d, Berth %s): restore it with that Berth or a newer one",
			m.SchemaVersion, m.BerthVersion, known, version.Version)
	}
	if err := checkDatabaseEntries(m, dbEntries); err != nil {
		return m, err
	}
	writeKey, err := checkKey(key, opts.EncryptionKey)
	if err != nil {
		return m, err
	}

	// 2. The target.
	dbPath := ""
	dbInDataDir := false
	if kind == SQLite {
		if dbPath, err = filepath.Abs(sqlitePath(dbURL)); err != nil {
			return m, err
		}
		dbInDataDir = dbPath == filepath.Join(dataDir, "berth.db")
	}
	nonEmpty, err := checkTarget(ctx, dataDir, dbURL, dbPath, dbInDataDir)
	if err != nil {
		return m, err
	}
	if nonEmpty != "" && !opts.Force {
		return m, fmt.Errorf("restore: %w (%s): restore onto an empty data directory and database, or give -force to replace them", ErrNotEmpty, nonEmpty)
	}

	// 3. Extract into the staging directory, verifying again.
	createdDataDir := false
	if _, err := os.Stat(dataDir); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dataDir, 0o700); err != nil {
			return m, fmt.Errorf("restore: %w", err)
		}
		createdDataDir = true
	}
	staging := filepath.Join(dataDir, restoreStaging)
	old := filepath.Join(dataDir, restoreOld)
	// A restore killed while it moved entries leaves old behind, holding
	// what the data directory held: never removed here.
	if _, err := os.Lstat(old); err == nil {
		return m, fmt.Errorf("restore: %s exists: an earlier restore was interrupted while it replaced the data directory's contents, which are in there; move them back (or remove it) first", old)
	}
	// One killed before that leaves only the staging directory.
	if err := removeLeftover(staging); err != nil {
		return m, err
	}
	var dbTmp string // a SQLite file outside the data directory, staged next to it
	success := false
	defer func() {
		if !success {
			os.RemoveAll(staging)
			if dbTmp != "" {
				os.Remove(dbTmp)
			}
			if createdDataDir {
				os.RemoveAll(dataDir)
			}
		}
	}()
	if err := os.Mkdir(staging, 0o700); err != nil {
		return m, fmt.Errorf("restore: %w", err)
	}
	pgDir := filepath.Join(staging, restorePgDir)
	if kind == Postgres {
		if err := os.Mkdir(pgDir, 0o700); err != nil {
			return m, fmt.Errorf("restore: %w", err)
		}
	}
	if kind == SQLite && !dbInDataDir {
		if err := os.MkdirAll(filepath.Dir(dbPath), 0o700); err != nil {
			return m, fmt.Errorf("restore: %w", err)
		}
		f, err := os.CreateTemp(filepath.Dir(dbPath), "."+filepath.Base(dbPath)+".restore-")
		if err != nil {
			return m, fmt.Errorf("restore: %w", err)
		}
		dbTmp = f.Name()
		f.Close()
	}
	x := &extractor{root: staging, symlinks: map[string]bool{}}
	_, err = readFile(file, opts.Passphrase, func(e Entry, body io.Reader) error {
		switch e.Path {
		case keyEntry:
			if !writeKey {
				return nil
			}
			return x.file(filepath.Join(staging, secret.KeyFile), 0o600, body)
		case sqliteEntry:
			if dbTmp != "" {
				return x.file(dbTmp, 0o600, body)
			}
			return x.file(filepath.Join(staging, "berth.db"), 0o600, body)
		case postgresEntry:
			return x.file(filepath.Join(pgDir, "berth.pgdump"), 0o600, body)
		}
		if rest, ok := strings.CutPrefix(e.Path, pgPrefix); ok {
			return x.file(filepath.Join(pgDir, rest), 0o600, body) // validName: a file name
		}
		return x.put(e, body)
	})
	if err != nil {
		return m, fmt.Errorf("restore: %w", err)
	}

	// 4. The database, then the files.
	if kind == Postgres {
		if m.PostgresFormat == postgresCopy {
			err = restorePostgresCopy(ctx, dbURL, pgDir, m.SchemaVersion, nonEmpty != "")
		} else {
			err = restorePgDump(ctx, dbURL, filepath.Join(pgDir, "berth.pgdump"), nonEmpty != "")
		}
		if err != nil {
			return m, fmt.Errorf("restore: the database: %w", err)
		}
		if err := os.RemoveAll(pgDir); err != nil {
			return m, err
		}
	}
	if err := swapIn(dataDir, staging, old); err != nil {
		return m, fmt.Errorf("restore: %w", err)
	}
	if dbTmp != "" {
		for _, suffix := range []string{"-wal", "-shm", "-journal"} {
			if err := os.Remove(dbPath + suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return m, fmt.Errorf("restore: %w", err)
			}
		}
		if err := os.Rename(dbTmp, dbPath); err != nil {
			return m, fmt.Errorf("restore: %w", err)
		}
		syncDir(filepath.Dir(dbPath))
	}
	success = true
	if err := os.RemoveAll(old); err != nil {
		return m, fmt.Errorf("restore: restored, but the previous contents could not be removed from %s: %w", old, err)
	}
	os.Remove(staging)
	return m, nil
}

// checkDatabaseEntries checks that the archive holds its database in the
// form its manifest says, and that this Berth can restore that form.
func checkDatabaseEntries(m Manifest, entries map[string]bool) error {
	var want string
	switch {
	case m.Database == SQLite:
		want = sqliteEntry
	case m.PostgresFormat == postgresCopy:
		want = pgTablesEntry
	case m.PostgresFormat == "":
		want = postgresEntry
	default:
		return fmt.Errorf("restore: the archive's PostgreSQL database is in form %q, which this Berth does not know: restore it with the Berth that wrote it (%s) or a newer one", m.PostgresFormat, m.BerthVersion)
	}
	if !entries[want] {
		return fmt.Errorf("restore: the archive has no %s entry: its database is missing", want)
	}
	if want == postgresEntry {
		if err := pgDumpTools(); err != nil {
			return fmt.Errorf("restore: %w", err)
		}
	}
	return nil
}

func readFile(file string, passphrase []byte, put sink) (Manifest, error) {
	f, err := os.Open(file)
	if err != nil {
		return Manifest{}, fmt.Errorf("restore: %w", err)
	}
	defer f.Close()
	m, err := readArchive(f, passphrase, put)
	if err != nil {
		return Manifest{}, fmt.Errorf("restore: %s: %w", file, err)
	}
	return m, nil
}

// checkKey compares the archive's key with the target's ENCRYPTION_KEY and
// reports whether the key file is to be written: not when ENCRYPTION_KEY
// is set (to the same key: Berth reads it from there).
func checkKey(archived []byte, configured string) (bool, error) {
	key, err := hex.DecodeString(string(archived))
	if err != nil || len(key) != 32 {
		return false, errors.New("restore: the archive's encryption key is malformed")
	}
	if configured == "" {
		return true, nil
	}
	want, err := secret.LoadKey("", configured)
	if err != nil {
		return false, fmt.Errorf("restore: ENCRYPTION_KEY: %w", err)
	}
	if !bytes.Equal(want, key) {
		return false, errors.New("restore: ENCRYPTION_KEY is set to another key than the archive's, which would open none of its secrets: unset it (the archive's key is then restored into the data directory) or set it to the backup's key")
	}
	return false, nil
}

// checkTarget refuses a target in use, and says what makes it non-empty
// ("" when it is empty).
func checkTarget(ctx context.Context, dataDir, dbURL, dbPath string, dbInDataDir bool) (string, error) {
	var reasons []string
	entries, err := os.ReadDir(dataDir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return "", fmt.Errorf("restore: %w", err)
	default:
		for _, e := range entries {
			if !kept(e.Name()) {
				reasons = append(reasons, fmt.Sprintf("data directory %s holds %s", dataDir, e.Name()))
				break
			}
		}
	}
	if dbPath != "" {
		inUse, pid, err := sqliteInUse(dbPath)
		if err != nil {
			return "", fmt.Errorf("restore: %w", err)
		}
		if inUse {
			who := "a process"
			if pid != 0 {
				who = fmt.Sprintf("process %d", pid)
			}
			return "", fmt.Errorf("restore: %w: %s has the database %s open (a running Berth?): stop it first", ErrInUse, who, dbPath)
		}
		if !dbInDataDir {
			tables, err := sqliteHasTables(ctx, dbPath)
			if err != nil {
				return "", fmt.Errorf("restore: %s: %w", dbPath, err)
			}
			if tables {
				reasons = append(reasons, "database "+dbPath+" holds tables")
			}
		}
	} else {
		tables, sessions, err := postgresState(ctx, dbURL)
		if err != nil {
			return "", fmt.Errorf("restore: the database: %w", err)
		}
		if sessions > 0 {
			return "", fmt.Errorf("restore: %w: %d other sessions are connected to the database (a running Berth?): stop them first", ErrInUse, sessions)
		}
		if tables > 0 {
			reasons = append(reasons, fmt.Sprintf("the database holds %d tables", tables))
		}
	}
	return strings.Join(reasons, "; "), nil
}

// removeLeftover removes the staging directory a killed restore left.
func removeLeftover(dir string) error {
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("restore: remove %s left by an earlier restore: %w", dir, err)
	}
	return nil
}

// kept reports whether an entry of the data directory is neither its
// contents nor replaced by a restore: the restore's own directories, and
// the lost+found of a file system mounted there.
func kept(name string) bool {
	return name == restoreStaging || name == restoreOld || name == "lost+found"
}

// swapIn moves every entry of dataDir but staging and old into old, then
// every entry of staging into dataDir; if a move fails, the moves done are
// undone.
func swapIn(dataDir, staging, old string) error {
	current, err := os.ReadDir(dataDir)
	if err != nil {
		return err
	}
	staged, err := os.ReadDir(staging)
	if err != nil {
		return err
	}
	if err := os.Mkdir(old, 0o700); err != nil {
		return err
	}
	type move struct{ from, to string }
	var done []move
	undo := func(err error) error {
		for i := len(done) - 1; i >= 0; i-- {
			if uerr := os.Rename(done[i].to, done[i].from); uerr != nil {
				return fmt.Errorf("%w; and moving %s back to %s failed: %w", err, done[i].to, done[i].from, uerr)
			}
		}
		os.Remove(old)
		return err
	}
	rename := func(from, to string) error {
		if err := os.Rename(from, to); err != nil {
			return err
		}
		done = append(done, move{from, to})
		return nil
	}
	for _, e := range current {
		if kept(e.Name()) {
			continue
		}
		if err := rename(filepath.Join(dataDir, e.Name()), filepath.Join(old, e.Name())); err != nil {
			return undo(err)
		}
	}
	for _, e := range staged {
		if err := rename(filepath.Join(staging, e.Name()), filepath.Join(dataDir, e.Name())); err != nil {
			return undo(err)
		}
	}
	syncDir(dataDir)
	return nil
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// extractor writes the data entries of an archive under root.
type extractor struct {
	root     string
	symlinks map[string]bool // entries written as symbolic links: nothing is written through them
}

func (x *extractor) put(e Entry, body io.Reader) error {
	rel, ok := strings.CutPrefix(e.Path, dataPrefix)
	if !ok {
		return fmt.Errorf("unexpected entry %q", e.Path)
	}
	for p := filepath.Dir(rel); p != "." && p != "/"; p = filepath.Dir(p) {
		if x.symlinks[p] {
			return fmt.Errorf("entry %q is under the symbolic link %q", e.Path, p)
		}
	}
	dst := filepath.Join(x.root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return err
	}
	switch e.Type {
	case typeDir:
		if err := os.Mkdir(dst, fs.FileMode(e.Mode)|0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		return nil
	case typeSymlink:
		x.symlinks[filepath.FromSlash(rel)] = true
		return os.Symlink(e.Target, dst)
	}
	return x.file(dst, fs.FileMode(e.Mode), body)
}

// file writes body into a new file at dst, synced.
func (x *extractor) file(dst string, mode fs.FileMode, body io.Reader) error {
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, mode.Perm()|0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, body); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
