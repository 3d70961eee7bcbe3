// Package selfbackup provides the backup and restore of Berth itself: one
// archive file holding a consistent snapshot of the database, the
// encryption key that opens its sealed secrets, and the files under the data
// directory a restore needs (stack files, file template sources, git
// checkouts optionally), described by a manifest with every file's size and
// SHA-256; optionally encrypted with a passphrase.
//
// The archive is gzip'd tar (encrypted: see crypt.go) whose entries are
//
//	database/berth.db          SQLite: a VACUUM INTO copy, taken while Berth may run
//	database/pg/tables.json    PostgreSQL: the tables, in load order, with their columns
//	database/pg/<table>.copy   PostgreSQL: a table's rows, as COPY's text format
//	database/berth.pgdump      PostgreSQL, archives of earlier releases: pg_dump's custom format
//	key/encryption_key     the key, as 64 hex digits
//	data/<path>            files of the data directory
//	manifest.json          last: Manifest
package selfbackup

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/berth-dev/berth/server/internal/config"
	"github.com/berth-dev/berth/server/internal/secret"
	"github.com/berth-dev/berth/shared/version"
)

// Format is the version of the archive layout this package writes and reads.
const Format = 1

// Database kinds in a manifest.
const (
	SQLite   = "sqlite"
	Postgres = "postgres"
)

// Names of the archive's entries.
const (
	sqliteEntry   = "database/berth.db"
	postgresEntry = "database/berth.pgdump"
	keyEntry      = "key/encryption_key"
	dataPrefix    = "data/"
	manifestEntry = "manifest.json"
)

// Directories of the data directory that an archive holds. The others Berth
// writes there are caches or one-time files a restore does not need:
// template-logos (fetched again), setup-token (made again while no user
// exists), the SQLite file and its -wal/-shm (the database entry replaces
// them).
var (
	dataDirs = []string{"stacks", "templates"}
	gitDir   = "git" // git stacks' checkouts and repositories' mirrors: cloned again when absent
)

// Manifest describes an archive: what it holds and what wrote it.
type Manifest struct {
	Format        int    `json:"format"`
	BerthVersion  string `json:"berthVersion"`
	SchemaVersion int64  `json:"schemaVersion"` // the database's highest applied migration
	Database      string `json:"database"`      // SQLite or Postgres
	// PostgresFormat is the form of a PostgreSQL database: "copy" (Berth's
	// own dump, database/pg/); "" is pg_dump's (database/berth.pgdump).
	PostgresFormat string    `json:"postgresFormat,omitempty"`
	CreatedAt      time.Time `json:"createdAt"`
	Encrypted      bool      `json:"encrypted"`
	WithGit        bool      `json:"withGit"`
	Entries        []Entry   `json:"entries"`
}

// Entry is one entry of an archive.
type Entry struct {
	Path   string `json:"path"`
	Type   string `json:"type"` // "file", "dir" or "symlink"
	Mode   uint32 `json:"mode"` // permission bits
	Size   int64  `json:"size,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
	Target string `json:"target,omitempty"` // of a symlink
}

// Entry types.
const (
	typeFile    = "file"
	typeDir     = "dir"
	typeSymlink = "symlink"
)

// Options say what to back up.
type Options struct {
	DataDir       string
	DatabaseURL   string // DATABASE_URL; "" is DataDir/berth.db
	EncryptionKey string // ENCRYPTION_KEY; "" is the data directory's key file
	WithGit       bool   // include DataDir/git
	// Passphrase encrypts the archive; nil or empty writes it in the clear
	// (it then holds the encryption key readable by whoever reads the file).
	Passphrase []byte
	// TempDir holds the database's copy while the archive is written; ""
	// is the system's temporary directory.
	TempDir string
	// Warn, when not nil, is told what the archive leaves out that a
	// restore may miss: stacks whose files are outside the data directory.
	Warn func(string)
}

func (o Options) databaseURL() string {
	if o.DatabaseURL == "" {
		return filepath.Join(o.DataDir, "berth.db")
	}
	return o.DatabaseURL
}

// Write writes an archive of the Berth of opts to w. It may run while that
// Berth serves: the database is read in one snapshot. It is what a
// scheduled backup to a destination calls with the destination's writer.
func Write(ctx context.Context, opts Options, w io.Writer) (err error) {
	if opts.DataDir == "" {
		return errors.New("backup: the data directory is not set")
	}
	if fi, err := os.Stat(opts.DataDir); err != nil || !fi.IsDir() {
		return fmt.Errorf("backup: data directory %s: not a directory (%v)", opts.DataDir, err)
	}
	key, err := readKey(opts.DataDir, opts.EncryptionKey)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(opts.TempDir, ".berth-backup-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	db, err := snapshotDatabase(ctx, opts.databaseURL(), tmp, opts.DataDir)
	if err != nil {
		return err
	}
	if len(db.external) > 0 && opts.Warn != nil {
		opts.Warn("the files of these stacks are outside the data directory and not in the archive (back them up with their directory): " +
			strings.Join(db.external, ", "))
	}

	m := Manifest{Format: Format, BerthVersion: version.Version, SchemaVersion: db.schemaVersion, Database: db.kind, PostgresFormat: db.format,
		CreatedAt: time.Now().UTC().Truncate(time.Second), Encrypted: len(opts.Passphrase) > 0, WithGit: opts.WithGit}
	out := w
	var enc *encryptWriter
	if m.Encrypted {
		if enc, err = newEncryptWriter(w, opts.Passphrase); err != nil {
			return err
		}
		out = enc
	}
	zw := gzip.NewWriter(out)
	tw := tar.NewWriter(zw)
	aw := &archiveWriter{tw: tw, m: &m, created: m.CreatedAt}

	for _, f := range db.files {
		if err := aw.addFile(ctx, f.entry, f.path, 0o600); err != nil {
			return err
		}
	}
	if err := aw.addBytes(keyEntry, []byte(hex.EncodeToString(key)+"\n"), 0o600); err != nil {
		return err
	}
	dirs := dataDirs
	if opts.WithGit {
		dirs = append(dirs[:len(dirs):len(dirs)], gitDir)
	}
	for _, d := range dirs {
		if err := aw.addTree(ctx, opts.DataDir, d); err != nil {
			return err
		}
	}
	manifest, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := writeTarFile(tw, manifestEntry, manifest, 0o600, m.CreatedAt); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if enc != nil {
		return enc.Close()
	}
	return nil
}

// WriteFile writes an archive to path atomically (a temporary file in the
// same directory, synced, then renamed; mode 0600) and returns its size in
// bytes.
func WriteFile(ctx context.Context, opts Options, file string) (int64, error) {
	dir := filepath.Dir(file)
	f, err := os.CreateTemp(dir, "."+filepath.Base(file)+".tmp-")
	if err != nil {
		return 0, fmt.Errorf("backup: %w", err)
	}
	tmp := f.Name()
	done := false
	defer func() {
		if !done {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := f.Chmod(0o600); err != nil {
		return 0, err
	}
	if opts.TempDir == "" {
		opts.TempDir = dir // where the archive goes, there is room for the database's copy
	}
	cw := &countWriter{w: f}
	if err := Write(ctx, opts, cw); err != nil {
		return 0, err
	}
	if err := f.Sync(); err != nil {
		return 0, fmt.Errorf("backup: sync %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return 0, fmt.Errorf("backup: %w", err)
	}
	if err := os.Rename(tmp, file); err != nil {
		return 0, fmt.Errorf("backup: %w", err)
	}
	done = true
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // the rename is durable
		d.Close()
	}
	return cw.n, nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// readKey returns the encryption key Berth uses: the configured one, else
// the data directory's key file, which must exist (a backup never makes a
// key: a new one would open nothing).
func readKey(dataDir, configured string) ([]byte, error) {
	if configured == "" {
		if _, err := os.Stat(filepath.Join(dataDir, secret.KeyFile)); err != nil {
			return nil, fmt.Errorf("backup: no encryption key: ENCRYPTION_KEY is not set and %s: %w",
				filepath.Join(dataDir, secret.KeyFile), err)
		}
	}
	key, err := secret.LoadKey(dataDir, configured)
	if err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	return key, nil
}

// archiveWriter adds entries to a tar stream and records them in a manifest.
type archiveWriter struct {
	tw      *tar.Writer
	m       *Manifest
	created time.Time
}

func (a *archiveWriter) addBytes(name string, data []byte, mode fs.FileMode) error {
	if err := writeTarFile(a.tw, name, data, mode, a.created); err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	a.m.Entries = append(a.m.Entries, Entry{Path: name, Type: typeFile, Mode: uint32(mode.Perm()),
		Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])})
	return nil
}

func writeTarFile(tw *tar.Writer, name string, data []byte, mode fs.FileMode, mtime time.Time) error {
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Size: int64(len(data)),
		Mode: int64(mode.Perm()), ModTime: mtime, Format: tar.FormatPAX}); err != nil {
		return err
	}
	_, err := tw.Write(data)
	return err
}

// addFile adds the regular file at src as name, its size as it is when
// opened: a file that changes size while it is read fails the backup.
func (a *archiveWriter) addFile(ctx context.Context, name, src string, mode fs.FileMode) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("backup: %w", err) // fs.ErrNotExist for a file deleted since it was listed
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if err := a.tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Size: fi.Size(),
		Mode: int64(mode.Perm()), ModTime: fi.ModTime(), Format: tar.FormatPAX}); err != nil {
		return err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(a.tw, h), io.LimitReader(f, fi.Size()))
	if err != nil {
		return fmt.Errorf("backup: %s: %w", src, err)
	}
	if n != fi.Size() {
		return fmt.Errorf("backup: %s changed while it was read (%d of %d bytes): run the backup again", src, n, fi.Size())
	}
	a.m.Entries = append(a.m.Entries, Entry{Path: name, Type: typeFile, Mode: uint32(mode.Perm()), Size: n,
		SHA256: hex.EncodeToString(h.Sum(nil))})
	return nil
}

// addTree adds dataDir/dir and everything under it (regular files,
// directories, symbolic links; nothing else) as data/dir/…. A missing
// directory adds nothing.
func (a *archiveWriter) addTree(ctx context.Context, dataDir, dir string) error {
	root := filepath.Join(dataDir, dir)
	if _, err := os.Lstat(root); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // deleted by the running Berth since it was listed
		}
		if err != nil {
			return fmt.Errorf("backup: %w", err)
		}
		rel, err := filepath.Rel(dataDir, p)
		if err != nil {
			return err
		}
		name := dataPrefix + filepath.ToSlash(rel)
		fi, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("backup: %w", err)
		}
		switch {
		case d.IsDir():
			if err := a.tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/",
				Mode: int64(fi.Mode().Perm()), ModTime: fi.ModTime(), Format: tar.FormatPAX}); err != nil {
				return err
			}
			a.m.Entries = append(a.m.Entries, Entry{Path: name, Type: typeDir, Mode: uint32(fi.Mode().Perm())})
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("backup: %w", err)
			}
			if err := a.tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: name, Linkname: target,
				Mode: 0o777, ModTime: fi.ModTime(), Format: tar.FormatPAX}); err != nil {
				return err
			}
			a.m.Entries = append(a.m.Entries, Entry{Path: name, Type: typeSymlink, Mode: 0o777, Target: target})
		case d.Type().IsRegular():
			if err := a.addFile(ctx, name, p, fi.Mode()); !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
		return nil // sockets, devices, pipes: not Berth's files
	})
}

// validName reports whether an archive entry's name is one this package
// writes: a clean relative path, data entries under one of the known
// directories.
func validName(name string) bool {
	if name != path.Clean(name) || !filepath.IsLocal(filepath.FromSlash(name)) {
		return false
	}
	switch name {
	case sqliteEntry, postgresEntry, keyEntry, manifestEntry, pgTablesEntry:
		return true
	}
	if table, ok := strings.CutPrefix(name, pgPrefix); ok {
		table, ok = strings.CutSuffix(table, pgCopySuffix)
		return ok && pgTableName.MatchString(table)
	}
	rest, ok := strings.CutPrefix(name, dataPrefix)
	if !ok {
		return false
	}
	top, _, _ := strings.Cut(rest, "/")
	for _, d := range append(dataDirs[:len(dataDirs):len(dataDirs)], gitDir) {
		if top == d {
			return true
		}
	}
	return false
}

// databaseKind is SQLite or Postgres for a DATABASE_URL.
func databaseKind(url string) string {
	if config.IsPostgres(url) {
		return Postgres
	}
	return SQLite
}
