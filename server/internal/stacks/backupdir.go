package stacks

import (
	"context"
	"os"
	"path/filepath"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// Dir is the directory on Berth's host that holds the files of env's stack
// called name (a git stack's clone), for backups; the 404 naming the stack
// when Berth keeps no files of it.
func (s *Service) Dir(ctx context.Context, env store.Environment, name string) (string, error) {
	st, err := s.get(ctx, env, name)
	if err != nil {
		return "", err
	}
	return absPath(filepath.Dir(s.composePath(st))), nil
}

// RecordRestored records as one of env's internal stacks, called name, the
// directory dir that a backup restore to a new name wrote: dir must be the
// stack's default directory (DATA_DIR/stacks/<env>/<name>) holding a compose
// file that parses; secrets are kept with it (the original stack's). Its
// files are the stack's own from then on (removed with it). Nothing is
// started.
func (s *Service) RecordRestored(ctx context.Context, env store.Environment, name, dir string, secrets []store.StackSecret) (store.Stack, error) {
	if err := CheckName(name); err != nil {
		return store.Stack{}, err
	}
	if absPath(dir) != s.stackDir(env.ID, name) {
		return store.Stack{}, fault.Invalidf("%s is not the default directory of a stack named '%s'", dir, name)
	}
	st := store.Stack{EnvironmentID: env.ID, Name: name, SourceType: store.SourceInternal, CreatedFiles: []string{}}
	if _, err := os.Stat(s.composePath(st)); err != nil {
		// A compose file of another of compose's names: recorded where it is.
		found := ""
		for _, n := range composeNames {
			if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
				found = filepath.Join(s.stackDir(env.ID, name), n)
				break
			}
		}
		if found == "" {
			return store.Stack{}, fault.Invalidf("%s holds no compose file", dir)
		}
		st.ComposePath = found
	}
	for _, p := range []string{s.composePath(st), s.envPath(st)} {
		if _, err := os.Stat(p); err == nil {
			st.CreatedFiles = append(st.CreatedFiles, p)
		}
	}
	err := s.CreateRecord(ctx, env, &st, func(st *store.Stack) error {
		if _, err := s.project(ctx, *st); err != nil {
			return err
		}
		return s.store.CreateStack(ctx, st, secrets)
	})
	return st, err
}
