package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/berth-dev/berth/server/internal/config"
	"github.com/berth-dev/berth/server/internal/selfbackup"
)

const backupUsage = `usage: berth admin backup  [-data-dir D] [-database-url U] [-with-git] [-passphrase-stdin] FILE
       berth admin restore [-data-dir D] [-database-url U] [-force] [-passphrase-stdin] FILE

backup writes one archive FILE (atomically, mode 0600) while Berth may run: a
consistent snapshot of the database (SQLite: VACUUM INTO; PostgreSQL: COPY of
every table in one transaction, through Berth's own driver: no client tools), the
encryption key, the data directory's stacks/ and templates/ (and git/, the git
stacks' checkouts, with -with-git; without them they are cloned again), and a
manifest with every file's size and SHA-256. Caches (template-logos/) are left
out. With -passphrase-stdin the archive is encrypted (scrypt, AES-256-GCM) with
the first line of standard input; without it, it holds the encryption key in
the clear.

restore verifies the whole archive (passphrase, every checksum, the schema is
not newer than this Berth's) before it writes anything, then restores it into
the data directory and database, which must be empty unless -force (replace
them) and not in use: a Berth running on them is refused (SQLite: a process
holds the database's lock; PostgreSQL: other sessions are connected). A backup
restores onto the same kind of database it was taken from (SQLite or
PostgreSQL; a PostgreSQL database in one transaction: Berth's migrations up to
the archive's schema, then every table's rows). Archives of earlier releases
holding a pg_dump need pg_restore and psql on PATH (Debian's
postgresql-client). An older schema is migrated by the next "berth serve".
`

// adminBackup runs "berth admin backup" and "berth admin restore".
func adminBackup(ctx context.Context, cmd string, args []string, getenv func(string) string, stdin io.Reader, stderr io.Writer) error {
	cfg, err := config.Load(nil, getenv, stderr)
	if err != nil {
		return err
	}
	// config.Load defaults DATABASE_URL to the default data directory's
	// file; here an unset one follows -data-dir.
	databaseURL := getenv("DATABASE_URL")
	fs := flag.NewFlagSet("berth admin "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, backupUsage) }
	fs.StringVar(&cfg.DataDir, "data-dir", cfg.DataDir, "data directory (DATA_DIR)")
	fs.StringVar(&databaseURL, "database-url", databaseURL, "database URL (DATABASE_URL); default: SQLite in the data directory")
	passphraseStdin := fs.Bool("passphrase-stdin", false, "encryption passphrase: the first line of standard input")
	withGit := fs.Bool("with-git", false, "backup: include the git stacks' checkouts (DATA_DIR/git)")
	force := fs.Bool("force", false, "restore: replace a data directory and database that are not empty")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fmt.Fprint(stderr, backupUsage)
		return fmt.Errorf("admin %s: one archive FILE is required", cmd)
	}
	file := fs.Arg(0)
	var passphrase []byte
	if *passphraseStdin {
		if passphrase, err = readPassphrase(stdin); err != nil {
			return err
		}
	}

	switch cmd {
	case "backup":
		if *force {
			return errors.New("admin backup: -force is a restore flag")
		}
		if *passphraseStdin && len(passphrase) < 8 {
			return errors.New("admin backup: the passphrase must have at least 8 characters")
		}
		size, err := selfbackup.WriteFile(ctx, selfbackup.Options{DataDir: cfg.DataDir, DatabaseURL: databaseURL,
			EncryptionKey: cfg.EncryptionKey, WithGit: *withGit, Passphrase: passphrase,
			Warn: func(msg string) { fmt.Fprintln(stderr, "warning:", msg) }}, file)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "wrote %s (%d bytes)\n", file, size)
		if len(passphrase) == 0 {
			fmt.Fprintf(stderr, "warning: %s is not encrypted and holds the encryption key, which opens every secret in the database:\n"+
				"  keep it as safe as the data directory, or encrypt it with -passphrase-stdin\n", file)
		}
	case "restore":
		if *withGit {
			return errors.New("admin restore: -with-git is a backup flag (a restore restores what the archive holds)")
		}
		m, err := selfbackup.Restore(ctx, selfbackup.RestoreOptions{DataDir: cfg.DataDir, DatabaseURL: databaseURL,
			EncryptionKey: cfg.EncryptionKey, Force: *force, Passphrase: passphrase}, file)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "restored %s (Berth %s, %s schema version %d, taken %s) into %s\n",
			file, m.BerthVersion, m.Database, m.SchemaVersion, m.CreatedAt.Format("2006-01-02 15:04:05 MST"), cfg.DataDir)
		fmt.Fprintln(stderr, "start \"berth serve\" on it (an older schema is migrated then)")
	}
	return nil
}

// readPassphrase returns the first line of stdin.
func readPassphrase(stdin io.Reader) ([]byte, error) {
	line, err := bufio.NewReader(stdin).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return nil, errors.New("-passphrase-stdin: standard input holds no passphrase")
	}
	return []byte(line), nil
}

// selfArchive is how a backup configuration of type berth writes Berth's
// archive: the same as berth admin backup (without a passphrase: restic
// encrypts the repository), its database copy made in the data directory
// (0700, removed) rather than the system's temporary directory.
func selfArchive(cfg config.Config, log *slog.Logger) func(ctx context.Context, includeGit bool, w io.Writer) error {
	return func(ctx context.Context, includeGit bool, w io.Writer) error {
		return selfbackup.Write(ctx, selfbackup.Options{DataDir: cfg.DataDir, DatabaseURL: cfg.DatabaseURL,
			EncryptionKey: cfg.EncryptionKey, WithGit: includeGit, TempDir: cfg.DataDir,
			Warn: func(msg string) { log.Warn("backup of Berth itself: " + msg) }}, w)
	}
}
