package stacks

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/berth-dev/berth/server/internal/hostpath"
	"github.com/berth-dev/berth/server/internal/store"
)

// writeTracked writes a stack file like writeFile and returns created
// with the file and the directories writing it made added, those that were
// not there before: the only ones deleting the stack removes. Directories
// holding base (Berth's own stack directory of the environment) are never
// recorded.
func writeTracked(path string, data []byte, created []string, base string) ([]string, error) {
	var made []string
	for d := filepath.Dir(path); filepath.Dir(d) != d && !hostpath.Within(d, base); d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		}
		made = append(made, d)
	}
	_, statErr := os.Lstat(path)
	if err := writeFile(path, data); err != nil {
		return created, err
	}
	if errors.Is(statErr, fs.ErrNotExist) {
		made = append(made, path)
	}
	if created == nil {
		created = []string{}
	}
	for _, p := range made {
		if !slices.Contains(created, p) {
			created = append(created, p)
		}
	}
	return created, nil
}

// createdByBerth reports whether Berth created the file or directory p of
// stack st: recorded in its created files, or, for a stack recorded before
// they were kept, inside its default directory.
func (s *Service) createdByBerth(st store.Stack, p string) bool {
	if st.CreatedFiles != nil {
		return slices.Contains(st.CreatedFiles, p)
	}
	return hostpath.Within(s.stackDir(st.EnvironmentID, st.Name), p)
}

// moveFiles writes a stack's new compose content to moved's compose path
// (and its env file to moved's env path when that changed), records the
// paths and what Berth created, and then removes the old files an internal
// stack leaves, those Berth created (a file that was there before, and an
// adopted stack's files, stay).
func (s *Service) moveFiles(ctx context.Context, st, moved store.Stack, compose []byte) error {
	oldCompose, oldEnv := s.composePath(st), s.envPath(st)
	newCompose, newEnv := s.composePath(moved), s.envPath(moved)
	var err error
	if moved.CreatedFiles, err = writeTracked(newCompose, compose, st.CreatedFiles, s.basePath(st)); err != nil {
		return err
	}
	if newEnv != oldEnv {
		envText, err := readOptional(oldEnv)
		if err != nil {
			return err
		}
		if moved.CreatedFiles, err = writeTracked(newEnv, envText, moved.CreatedFiles, s.basePath(st)); err != nil {
			return err
		}
	}
	if st.CreatedFiles == nil {
		moved.CreatedFiles = nil // not recorded before: stays so (see createdByBerth)
	}
	if moved.ComposePath == st.ComposePath && moved.EnvPath == st.EnvPath {
		if slices.Equal(moved.CreatedFiles, st.CreatedFiles) {
			return nil
		}
		return s.store.UpdateStackPaths(ctx, &moved)
	}
	var gone []string
	if st.SourceType == store.SourceInternal {
		if oldCompose != newCompose && s.createdByBerth(st, oldCompose) {
			gone = append(gone, oldCompose)
		}
		if oldEnv != newEnv && s.createdByBerth(st, oldEnv) {
			gone = append(gone, oldEnv)
		}
		moved.CreatedFiles = forget(moved.CreatedFiles, gone...)
	}
	if err := s.store.UpdateStackPaths(ctx, &moved); err != nil {
		return err
	}
	s.removeCreated(st, gone)
	return nil
}

// forget returns created without the paths gone.
func forget(created []string, gone ...string) []string {
	if created == nil {
		return nil
	}
	return slices.DeleteFunc(slices.Clone(created), func(p string) bool { return slices.Contains(gone, p) })
}

// removeCreated removes the files in paths, then their directories while
// Berth created them and nothing else is left in them.
func (s *Service) removeCreated(st store.Stack, paths []string) {
	for _, p := range paths {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			s.log.Warn("remove stack file", "stack", st.Name, "path", p, "err", err)
		}
		for d := filepath.Dir(p); s.createdByBerth(st, d); d = filepath.Dir(d) {
			if !removeEmptyDir(d) {
				break
			}
		}
	}
}

// removeFiles removes what Berth created for a stack: the files and
// directories it recorded (a directory only when nothing else is left in
// it) that are still under the allowed stack roots, and its default
// directory. A file the stack named that was there before stays.
func (s *Service) removeFiles(ctx context.Context, st store.Stack) {
	def := s.stackDir(st.EnvironmentID, st.Name)
	pol, err := s.policy(ctx, st.EnvironmentID)
	if err != nil {
		s.log.Warn("remove stack files", "stack", st.Name, "err", err)
		return
	}
	created := slices.Clone(st.CreatedFiles)
	slices.SortFunc(created, func(a, b string) int { return len(b) - len(a) }) // a directory's files before it
	for _, p := range created {
		fi, err := os.Lstat(p)
		if err != nil {
			continue
		}
		if _, err := pol.Confine("path", filepath.Dir(p), hostpath.Dir); err != nil {
			s.log.Warn("stack file left: outside the stack roots now", "stack", st.Name, "path", p, "err", err)
			continue
		}
		if fi.IsDir() {
			removeEmptyDir(p)
		} else if err := os.Remove(p); err != nil {
			s.log.Warn("remove stack file", "stack", st.Name, "path", p, "err", err)
		}
	}
	if err := os.RemoveAll(def); err != nil {
		s.log.Warn("remove stack directory", "stack", st.Name, "err", err)
	}
}

// removeEmptyDir removes dir when nothing is left in it, and reports
// whether it did.
func removeEmptyDir(dir string) bool {
	entries, err := os.ReadDir(dir)
	return err == nil && len(entries) == 0 && os.Remove(dir) == nil
}

// basePath is the directory of the stacks of st's environment.
func (s *Service) basePath(st store.Stack) string {
	return s.BasePath(store.Environment{ID: st.EnvironmentID})
}
