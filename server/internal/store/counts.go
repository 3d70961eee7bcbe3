package store

import (
	"context"
	"fmt"
)

// countedTables are the tables Counts reports, by the name it reports them
// under.
var countedTables = map[string]string{
	"environments": "environments",
	"users":        "users",
	"roles":        "roles",
	"stacks":       "stacks",
	"gitStacks":    "git_stacks",
	"registries":   "registries",
	"autoUpdates":  "auto_update_configs",
	"schedules":    "environment_schedules",
	"apiTokens":    "api_tokens",
	"auditEntries": "audit_log",
}

// Counts returns how many rows the main tables hold (what an administrator
// reads on the system page). The counts are read one after the other, not
// as one snapshot: figures for a glance, not for accounting.
func (s *Store) Counts(ctx context.Context) (map[string]int64, error) {
	out := make(map[string]int64, len(countedTables))
	for name, table := range countedTables {
		var n int64
		if err := s.db.WithContext(ctx).Table(table).Count(&n).Error; err != nil {
			return nil, fmt.Errorf("store: count %s: %w", table, err)
		}
		out[name] = n
	}
	return out, nil
}
