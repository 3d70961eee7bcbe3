package api

import (
	"context"

	"github.com/berth-dev/berth/server/internal/backup"
	"github.com/berth-dev/berth/server/internal/store"
)

// backupRepo returns how the backup jobs open a destination's repository
// (nil without a store: a Server that only describes the API).
func backupRepo(st *store.Store) func(ctx context.Context, destID int64) (backup.Repo, int64, error) {
	if st == nil {
		return nil
	}
	return st.BackupDestinationRepo
}

// backupInstance returns how the backup jobs read this install's instance id.
func backupInstance(st *store.Store) func(ctx context.Context) (string, error) {
	if st == nil {
		return nil
	}
	return st.BackupInstanceID
}
