package store

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

func TestUpStatementsSplitsTheUpSectionOnly(t *testing.T) {
	src := `-- a comment before the sections
-- +goose Up
CREATE TABLE a (
    id INTEGER, -- trailing comment stays
    -- a comment line inside is dropped
    name TEXT
);
INSERT INTO a VALUES (1, 'x;y');

-- +goose StatementBegin
CREATE FUNCTION f() RETURNS trigger AS $$
BEGIN
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;
-- +goose StatementEnd
-- +goose Down
DROP TABLE a;
`
	got, err := upStatements(src)
	if err != nil {
		t.Fatalf("upStatements: %v", err)
	}
	want := []string{
		"CREATE TABLE a (\n    id INTEGER, -- trailing comment stays\n    name TEXT\n);",
		"INSERT INTO a VALUES (1, 'x;y');",
		"CREATE FUNCTION f() RETURNS trigger AS $$\nBEGIN\n    RETURN NEW;\nEND;\n$$ LANGUAGE plpgsql;",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("statements (-want +got):\n%s", diff)
	}
}

func TestUpStatementsRejectsMalformedFiles(t *testing.T) {
	for name, src := range map[string]string{
		"no up section":  "CREATE TABLE a (id INTEGER);\n",
		"unclosed block": "-- +goose Up\n-- +goose StatementBegin\nCREATE TABLE a (id INTEGER);\n",
	} {
		if _, err := upStatements(src); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestLoadMigrationsOrdersByVersion(t *testing.T) {
	fsys := fstest.MapFS{
		"m/010_later.sql": {Data: []byte("-- +goose Up\nSELECT 10;\n")},
		"m/002_first.sql": {Data: []byte("-- +goose Up\nSELECT 2;\n")},
		"m/README":        {Data: []byte("not a migration")},
	}
	got, err := loadMigrations(fsys, "m")
	if err != nil {
		t.Fatalf("loadMigrations: %v", err)
	}
	var names []string
	for _, m := range got {
		names = append(names, m.name+"="+strings.Join(m.statements, " "))
	}
	if diff := cmp.Diff([]string{"002_first.sql=SELECT 2;", "010_later.sql=SELECT 10;"}, names); diff != "" {
		t.Errorf("migrations (-want +got):\n%s", diff)
	}
	for name, data := range map[string]string{"x_bad.sql": "-- +goose Up\n", "001_a.sql": "-- +goose Up\n"} {
		bad := fstest.MapFS{"m/" + name: {Data: []byte(data)}, "m/001_b.sql": {Data: []byte("-- +goose Up\n")}}
		if _, err := loadMigrations(bad, "m"); err == nil {
			t.Errorf("loadMigrations with %s: no error", name)
		}
	}
}
