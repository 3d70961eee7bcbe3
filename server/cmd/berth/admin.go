package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/berth-dev/berth/server/internal/auth"
	"github.com/berth-dev/berth/server/internal/config"
)

const adminUsage = `usage: berth admin <command> [flags]

  create-user     -username NAME [-password PW | -password-stdin] [-admin] [-email E] [-display-name N]
  reset-password  -username NAME [-password PW | -password-stdin]   (also re-activates the account)
  disable-auth    turn authentication off (open access: bind Berth to a trusted interface)
  enable-auth     turn authentication on
  backup          [-with-git] [-passphrase-stdin] FILE   archive Berth itself (database, key, stack files)
                  while it may run
  restore         [-force] [-passphrase-stdin] FILE      restore such an archive onto an empty data
                  directory and database (Berth stopped)

"berth admin backup -h" tells more about backup and restore.

Every command also takes -data-dir and -database-url (or DATA_DIR, DATABASE_URL,
ENCRYPTION_KEY from the environment), like "berth serve".
`

// admin runs a recovery command directly on the database.
func admin(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "help" {
		fmt.Fprint(stderr, adminUsage)
		if len(args) == 0 {
			return errors.New("admin: a command is required")
		}
		return nil
	}
	cmd, args := args[0], args[1:]
	if cmd == "backup" || cmd == "restore" {
		return adminBackup(ctx, cmd, args, getenv, stdin, stderr)
	}
	cfg, err := config.Load(nil, getenv, stderr)
	if err != nil {
		return err
	}
	fs := flag.NewFlagSet("berth admin "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.DataDir, "data-dir", cfg.DataDir, "data directory (DATA_DIR)")
	// config.Load defaulted DATABASE_URL to the file of the default data
	// directory; an unset one follows -data-dir.
	cfg.DatabaseURL = getenv("DATABASE_URL")
	fs.StringVar(&cfg.DatabaseURL, "database-url", cfg.DatabaseURL, "database URL (DATABASE_URL); default: SQLite in the data directory")
	username := fs.String("username", "", "user name")
	password := fs.String("password", "", "password (prefer -password-stdin: arguments are visible to other local users)")
	passwordStdin := fs.Bool("password-stdin", false, "read the password from the first line of standard input")
	isAdmin := fs.Bool("admin", false, "the user is an admin")
	email := fs.String("email", "", "email address")
	displayName := fs.String("display-name", "", "display name")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if cfg.DatabaseURL == "" {
		cfg.DatabaseURL = filepath.Join(cfg.DataDir, "berth.db")
	}
	if *passwordStdin {
		line, err := bufio.NewReader(stdin).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		*password = strings.TrimRight(line, "\r\n")
	}

	st, _, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	a, err := auth.New(ctx, auth.Options{Store: st, Log: log, DataDir: cfg.DataDir})
	if err != nil {
		return err
	}

	switch cmd {
	case "create-user":
		u, err := a.CreateUser(ctx, auth.UserSpec{Username: *username, Password: *password, Email: *email,
			DisplayName: *displayName, IsAdmin: *isAdmin})
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "created user %q (id %d, admin %v)\n", u.Username, u.ID, u.IsAdmin)
	case "reset-password":
		u, err := a.ResetPassword(ctx, *username, *password)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "password of %q reset; its sessions are closed\n", u.Username)
	case "disable-auth", "enable-auth":
		on := cmd == "enable-auth"
		if err := a.SetEnabled(ctx, on); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "authentication %s (running servers apply it within seconds)\n", map[bool]string{true: "enabled", false: "disabled"}[on])
	default:
		fmt.Fprint(stderr, adminUsage)
		return fmt.Errorf("admin: unknown command %q", cmd)
	}
	return nil
}
