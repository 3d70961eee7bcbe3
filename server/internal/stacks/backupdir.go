package stacks

import (
	"context"
	"path/filepath"

	"github.com/berth-dev/berth/server/internal/store"
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
