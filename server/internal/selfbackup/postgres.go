package selfbackup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/berth-dev/berth/server/internal/store"
)

// A PostgreSQL database is archived as Berth's own logical dump, read
// through the driver (no client tools): every table of the current schema
// as the text of "COPY table (columns) TO STDOUT", all read in one REPEATABLE
// READ snapshot, and an index of the tables (pgTables) in the order a
// restore loads them.
const (
	postgresCopy  = "copy" // Manifest.PostgresFormat of this dump; "" is pg_dump's (postgresEntry)
	pgPrefix      = "database/pg/"
	pgTablesEntry = pgPrefix + "tables.json"
	pgCopySuffix  = ".copy"
)

// pgTableName is the form of the table names an archive holds: Berth's
// tables are named in lower case, and the names become entry names.
var pgTableName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// pgTables is the index of a PostgreSQL dump.
type pgTables struct {
	Tables    []pgTable    `json:"tables"`    // in load order: a table after those it references
	Sequences []pgSequence `json:"sequences"` // of serial and identity columns
}

// pgTable is one table of a dump: its entry holds its rows as COPY's text
// format, Columns in that order.
type pgTable struct {
	Name    string   `json:"name"`
	Columns []string `json:"columns"`
	Rows    int64    `json:"rows"`
	oid     uint32
}

// pgSequence is the state of the sequence of a serial or identity column.
type pgSequence struct {
	Table     string `json:"table"`
	Column    string `json:"column"`
	LastValue int64  `json:"lastValue"`
	IsCalled  bool   `json:"isCalled"`
	name      string // qualified, as pg_get_serial_sequence returns it
}

func pgCopyEntry(table string) string { return pgPrefix + table + pgCopySuffix }

func quoteIdent(name string) string { return pgx.Identifier{name}.Sanitize() }

func quoteColumns(cols []string) string {
	q := make([]string, len(cols))
	for i, c := range cols {
		q[i] = quoteIdent(c)
	}
	return strings.Join(q, ", ")
}

// connectPostgres connects to the database of databaseURL with the
// settings that make COPY's text the same on every server whatever its
// defaults (as pg_dump sets them): dates in ISO form, intervals in
// PostgreSQL's, floating-point numbers with every digit.
func connectPostgres(ctx context.Context, databaseURL string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(databaseURL)
	if err != nil {
		return nil, err
	}
	cfg.RuntimeParams["datestyle"] = "ISO"
	cfg.RuntimeParams["intervalstyle"] = "postgres"
	cfg.RuntimeParams["extra_float_digits"] = "3"
	return pgx.ConnectConfig(ctx, cfg)
}

// pgSchemaVersion is the highest migration applied to the database of q.
func pgSchemaVersion(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}) (int64, error) {
	var v int64
	err := q.QueryRow(ctx, "SELECT COALESCE(MAX(version_id), 0) FROM goose_db_version WHERE is_applied").Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("backup: the database has no schema version (is it Berth's?): %w", err)
	}
	return v, nil
}

// snapshotPostgres dumps the database of databaseURL into dir/pg, one
// file per table and the index, in one REPEATABLE READ, READ ONLY
// transaction that first locks every table against schema changes (as
// pg_dump does); a migration committed meanwhile (the schema version
// changed) fails the backup.
func snapshotPostgres(ctx context.Context, databaseURL, dir, dataDir string) (dbSnapshot, error) {
	conn, err := connectPostgres(ctx, databaseURL)
	if err != nil {
		return dbSnapshot{}, fmt.Errorf("backup: open the database: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	before, err := pgSchemaVersion(ctx, conn)
	if err != nil {
		return dbSnapshot{}, err
	}
	out := filepath.Join(dir, "pg")
	if err := os.Mkdir(out, 0o700); err != nil {
		return dbSnapshot{}, err
	}
	snap := dbSnapshot{kind: Postgres, format: postgresCopy}
	var index pgTables
	err = pgx.BeginTxFunc(ctx, conn, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		tables, err := pgLoadOrder(ctx, tx)
		if err != nil {
			return err
		}
		names := make([]string, len(tables))
		for i, t := range tables {
			if !pgTableName.MatchString(t.Name) {
				return fmt.Errorf("the database holds table %q, which is not one of Berth's (whose names are lower case letters, digits and '_')", t.Name)
			}
			names[i] = quoteIdent(t.Name)
		}
		if len(names) > 0 {
			if _, err := tx.Exec(ctx, "LOCK TABLE "+strings.Join(names, ", ")+" IN ACCESS SHARE MODE"); err != nil {
				return fmt.Errorf("lock the tables: %w", err)
			}
		}
		if index.Sequences, err = pgSequences(ctx, tx); err != nil {
			return err
		}
		for i := range tables {
			t := &tables[i]
			path := filepath.Join(out, t.Name+pgCopySuffix)
			if t.Rows, err = copyTableTo(ctx, tx, *t, path); err != nil {
				return err
			}
			snap.files = append(snap.files, snapshotFile{entry: pgCopyEntry(t.Name), path: path})
		}
		index.Tables = tables
		if snap.schemaVersion, err = pgSchemaVersion(ctx, tx); err != nil {
			return err
		}
		stacks, err := pgStackPaths(ctx, tx)
		if err != nil {
			return err
		}
		snap.external, err = externalStacks(dataDir, stacks)
		return err
	})
	if err != nil {
		return dbSnapshot{}, fmt.Errorf("backup: %w", err)
	}
	after, err := pgSchemaVersion(ctx, conn)
	if err != nil {
		return dbSnapshot{}, err
	}
	if after != before || snap.schemaVersion != before {
		return dbSnapshot{}, errors.New("backup: the database's schema was migrated while it was copied: run the backup again")
	}
	raw, err := json.MarshalIndent(index, "", "  ")
	if err != nil {
		return dbSnapshot{}, err
	}
	indexPath := filepath.Join(out, "tables.json")
	if err := os.WriteFile(indexPath, raw, 0o600); err != nil {
		return dbSnapshot{}, err
	}
	snap.files = append([]snapshotFile{{entry: pgTablesEntry, path: indexPath}}, snap.files...)
	return snap, nil
}

// copyTableTo writes the rows of t into a new file at path and returns how
// many it wrote.
func copyTableTo(ctx context.Context, tx pgx.Tx, t pgTable, path string) (int64, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, err
	}
	tag, err := tx.Conn().PgConn().CopyTo(ctx, f,
		fmt.Sprintf("COPY %s (%s) TO STDOUT", quoteIdent(t.Name), quoteColumns(t.Columns)))
	if err != nil {
		f.Close()
		return 0, fmt.Errorf("copy table %s: %w", t.Name, err)
	}
	if err := f.Close(); err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

func pgStackPaths(ctx context.Context, tx pgx.Tx) ([]stackPath, error) {
	rows, err := tx.Query(ctx, stacksQuery)
	if err != nil {
		return nil, fmt.Errorf("list stacks: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (stackPath, error) {
		var s stackPath
		err := r.Scan(&s.name, &s.path)
		return s, err
	})
}

// pgLoadOrder lists the tables of the current schema with their columns
// (generated ones left out: they are computed again), each after the
// tables its foreign keys reference (a table's references to itself are
// checked at the end of its COPY, in any order). A cycle of references
// between tables is an error: no order loads them.
func pgLoadOrder(ctx context.Context, tx pgx.Tx) ([]pgTable, error) {
	rows, err := tx.Query(ctx, `SELECT c.oid, c.relname,
			array_agg(a.attname::text ORDER BY a.attnum) FILTER (WHERE a.attname IS NOT NULL)
		FROM pg_class c
		LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
		WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r'
		GROUP BY c.oid, c.relname ORDER BY c.relname`)
	if err != nil {
		return nil, fmt.Errorf("list the tables: %w", err)
	}
	tables, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (pgTable, error) {
		var t pgTable
		err := r.Scan(&t.oid, &t.Name, &t.Columns)
		return t, err
	})
	if err != nil {
		return nil, fmt.Errorf("list the tables: %w", err)
	}
	rows, err = tx.Query(ctx, `SELECT DISTINCT conrelid, confrelid FROM pg_constraint
		WHERE contype = 'f' AND connamespace = current_schema()::regnamespace AND conrelid <> confrelid`)
	if err != nil {
		return nil, fmt.Errorf("list the foreign keys: %w", err)
	}
	refs := map[uint32][]uint32{} // table → the tables it references
	var from, to uint32
	if _, err := pgx.ForEachRow(rows, []any{&from, &to}, func() error {
		refs[from] = append(refs[from], to)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("list the foreign keys: %w", err)
	}
	// Tables come out in name order among those whose references are out.
	var (
		order  []pgTable
		placed = map[uint32]bool{}
	)
	known := map[uint32]bool{}
	for _, t := range tables {
		known[t.oid] = true
	}
	for len(order) < len(tables) {
		progress := false
		for _, t := range tables {
			if placed[t.oid] {
				continue
			}
			ready := true
			for _, r := range refs[t.oid] {
				// A reference to a table of another schema is not loaded here.
				ready = ready && (placed[r] || !known[r])
			}
			if ready {
				order = append(order, t)
				placed[t.oid] = true
				progress = true
			}
		}
		if !progress {
			var left []string
			for _, t := range tables {
				if !placed[t.oid] {
					left = append(left, t.Name)
				}
			}
			return nil, fmt.Errorf("the foreign keys of tables %s reference each other in a cycle: no order loads them", strings.Join(left, ", "))
		}
	}
	return order, nil
}

// pgSequences lists the sequences of the serial and identity columns of
// the current schema's tables, with their state.
func pgSequences(ctx context.Context, tx pgx.Tx) ([]pgSequence, error) {
	rows, err := tx.Query(ctx, `SELECT table_name, column_name, seq FROM (
			SELECT c.relname::text AS table_name, a.attname::text AS column_name,
				pg_get_serial_sequence(format('%I.%I', n.nspname, c.relname), a.attname) AS seq
			FROM pg_class c
			JOIN pg_namespace n ON n.oid = c.relnamespace
			JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
			WHERE n.nspname = current_schema() AND c.relkind = 'r') s
		WHERE seq IS NOT NULL ORDER BY 1, 2`)
	if err != nil {
		return nil, fmt.Errorf("list the sequences: %w", err)
	}
	seqs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (pgSequence, error) {
		var s pgSequence
		err := r.Scan(&s.Table, &s.Column, &s.name)
		return s, err
	})
	if err != nil {
		return nil, fmt.Errorf("list the sequences: %w", err)
	}
	for i := range seqs {
		// s.name is quoted by the server as a qualified name.
		if err := tx.QueryRow(ctx, "SELECT last_value, is_called FROM "+seqs[i].name).Scan(&seqs[i].LastValue, &seqs[i].IsCalled); err != nil {
			return nil, fmt.Errorf("read sequence %s: %w", seqs[i].name, err)
		}
	}
	return seqs, nil
}

// restorePostgresCopy loads the dump extracted into dir into the database
// of databaseURL in one transaction: with replace, the current schema is
// dropped and created again; Berth's migrations create the schema of
// version schemaVersion (the archive's); every table is loaded with COPY
// FROM, its columns named, in an order its foreign keys accept; the
// sequences continue after the archive's values and the loaded rows. A
// failure rolls it all back: the database is as it was.
func restorePostgresCopy(ctx context.Context, databaseURL, dir string, schemaVersion int64, replace bool) error {
	raw, err := os.ReadFile(filepath.Join(dir, "tables.json"))
	if err != nil {
		return fmt.Errorf("the archive's index of tables: %w", err)
	}
	var index pgTables
	if err := json.Unmarshal(raw, &index); err != nil {
		return fmt.Errorf("the archive's index of tables: %w", err)
	}
	archived := map[string]pgTable{}
	for _, t := range index.Tables {
		if !pgTableName.MatchString(t.Name) {
			return fmt.Errorf("the archive's index names table %q: not a name Berth writes", t.Name)
		}
		archived[t.Name] = t
	}
	schema, err := store.SchemaStatements(Postgres, schemaVersion)
	if err != nil {
		return err
	}
	conn, err := connectPostgres(ctx, databaseURL)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if replace {
			var name *string
			if err := tx.QueryRow(ctx, "SELECT current_schema()").Scan(&name); err != nil {
				return err
			}
			if name == nil {
				return errors.New("no current schema: the search_path names no existing schema")
			}
			if _, err := tx.Exec(ctx, fmt.Sprintf("DROP SCHEMA %s CASCADE; CREATE SCHEMA %[1]s", quoteIdent(*name))); err != nil {
				return fmt.Errorf("drop the current contents: %w", err)
			}
		}
		for _, stmt := range schema {
			if _, err := tx.Exec(ctx, stmt); err != nil {
				return fmt.Errorf("create the schema of version %d: %w", schemaVersion, err)
			}
		}
		tables, err := pgLoadOrder(ctx, tx)
		if err != nil {
			return err
		}
		names := make([]string, len(tables))
		for i, t := range tables {
			if _, ok := archived[t.Name]; !ok {
				return fmt.Errorf("table %s of schema version %d is not in the archive", t.Name, schemaVersion)
			}
			names[i] = quoteIdent(t.Name)
		}
		if len(tables) != len(archived) {
			for name := range archived {
				if !slices.ContainsFunc(tables, func(t pgTable) bool { return t.Name == name }) {
					return fmt.Errorf("the archive holds table %s, which Berth's schema version %d does not have", name, schemaVersion)
				}
			}
		}
		// Migrations may write rows of their own; the archive has them.
		if len(names) > 0 {
			if _, err := tx.Exec(ctx, "TRUNCATE "+strings.Join(names, ", ")); err != nil {
				return err
			}
		}
		for _, t := range tables {
			if err := copyTableFrom(ctx, tx, archived[t.Name], filepath.Join(dir, t.Name+pgCopySuffix)); err != nil {
				return err
			}
		}
		return setSequences(ctx, tx, index.Sequences)
	})
}

// copyTableFrom loads the rows of t from the file at path.
func copyTableFrom(ctx context.Context, tx pgx.Tx, t pgTable, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("table %s: %w", t.Name, err)
	}
	defer f.Close()
	tag, err := tx.Conn().PgConn().CopyFrom(ctx, f,
		fmt.Sprintf("COPY %s (%s) FROM STDIN", quoteIdent(t.Name), quoteColumns(t.Columns)))
	if err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Where != "" {
			return fmt.Errorf("load table %s: %w (%s)", t.Name, err, pgErr.Where)
		}
		return fmt.Errorf("load table %s: %w", t.Name, err)
	}
	if n := tag.RowsAffected(); n != t.Rows {
		return fmt.Errorf("load table %s: %d rows loaded, the archive's index says %d", t.Name, n, t.Rows)
	}
	return nil
}

// setSequences sets each sequence of a serial or identity column of the
// restored tables to continue after both the archive's value of it (ids of
// rows deleted before the backup are not given again) and the column's
// highest value.
func setSequences(ctx context.Context, tx pgx.Tx, archived []pgSequence) error {
	seqs, err := pgSequences(ctx, tx)
	if err != nil {
		return err
	}
	for _, s := range seqs {
		var last int64
		if err := tx.QueryRow(ctx, fmt.Sprintf("SELECT COALESCE(MAX(%s), 0)::bigint FROM %s",
			quoteIdent(s.Column), quoteIdent(s.Table))).Scan(&last); err != nil {
			return fmt.Errorf("sequence of %s.%s: %w", s.Table, s.Column, err)
		}
		for _, a := range archived {
			if a.Table == s.Table && a.Column == s.Column {
				used := a.LastValue
				if !a.IsCalled {
					used--
				}
				last = max(last, used)
			}
		}
		if last < 1 {
			_, err = tx.Exec(ctx, "SELECT setval($1::regclass, 1, false)", s.name)
		} else {
			_, err = tx.Exec(ctx, "SELECT setval($1::regclass, $2, true)", s.name, last)
		}
		if err != nil {
			return fmt.Errorf("sequence of %s.%s: %w", s.Table, s.Column, err)
		}
	}
	return nil
}
