package api

import (
	"context"
	"errors"

	"github.com/berth-dev/berth/server/internal/backup"
	"github.com/berth-dev/berth/server/internal/stacks"
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

// restoredStack returns how a restore to a new stack name records the
// stack: with the secrets of the stack it was backed up from, when that one
// still exists.
func restoredStack(st *store.Store, stk *stacks.Service) func(ctx context.Context, env store.Environment, name, dir string,
	fromEnv int64, from string) error {
	if st == nil || stk == nil {
		return nil
	}
	return func(ctx context.Context, env store.Environment, name, dir string, fromEnv int64, from string) error {
		var secrets []store.StackSecret
		if orig, err := st.GetStack(ctx, fromEnv, from); err == nil {
			if secrets, err = st.StackSecrets(ctx, orig.ID); err != nil {
				return err
			}
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		_, err := stk.RecordRestored(ctx, env, name, dir, secrets)
		return err
	}
}
