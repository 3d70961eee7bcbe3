package store

import "fmt"

// SchemaVersion returns the highest migration version this build knows for
// dialect ("sqlite" or "postgres"): the schema version of a database it has
// opened. A database of a higher version was written by a newer Berth.
func SchemaVersion(dialect string) (int64, error) {
	if dialect != dialectSQLite && dialect != dialectPostgres {
		return 0, fmt.Errorf("store: unknown dialect %q", dialect)
	}
	all, err := loadMigrations(migrations, "migrations/"+dialect)
	if err != nil {
		return 0, err
	}
	if len(all) == 0 {
		return 0, nil
	}
	return all[len(all)-1].version, nil
}
