package selfbackup

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"strings"
)

// Archives written by Berth before its own dump of PostgreSQL (postgres.go)
// hold pg_dump's custom format (postgresEntry; no Manifest.PostgresFormat):
// they are restored with pg_restore and psql, when installed.

// pgDumpTools is nil when the tools that restore a pg_dump archive are on
// PATH, else an error that says so.
func pgDumpTools() error {
	for _, tool := range []string{"pg_restore", "psql"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("the archive's database was dumped by pg_dump (a Berth before its own PostgreSQL dump wrote it): its restore needs pg_restore and psql, which are not on PATH: install the PostgreSQL client tools (Debian: apt-get install postgresql-client) of the server's major version or newer, or restore it with the Berth that wrote it")
		}
	}
	return nil
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

// restorePgDump loads the pg_dump archive at dump into the database of
// databaseURL in one transaction (pg_restore's script run by psql with
// --single-transaction): a failure leaves the database as it was. With
// replace, the current schema's contents are dropped first, in the same
// transaction.
func restorePgDump(ctx context.Context, databaseURL, dump string, replace bool) error {
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
