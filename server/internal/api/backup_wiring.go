package api

import (
	"context"

	"github.com/berth-dev/berth/server/internal/backup"
	"github.com/berth-dev/berth/server/internal/store"
)

// backupRepo returns how the backup jobs open a destination's repository.
// TODO(h-dest): the store's destination lookup once merged.
func backupRepo(st *store.Store) func(ctx context.Context, destID int64) (backup.Repo, int64, error) {
	return nil
}

// backupInstance returns how the backup jobs read this install's instance id.
// TODO(h-dest): the store's instance id once merged.
func backupInstance(st *store.Store) func(ctx context.Context) (string, error) {
	return nil
}
