package stacks

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/berth-dev/berth/server/internal/hostpath"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// FileMove is one file a relocation moves.
type FileMove struct {
	From string `json:"from"`
	To   string `json:"to"`
	// Conflict is true when a file is already at To.
	Conflict bool `json:"conflict"`
}

// PathChange is what moving a stack's files to a new directory does.
type PathChange struct {
	Name string `json:"name"`
	From string `json:"from"` // the directory the compose file is in now
	To   string `json:"to"`
	// Files are the compose file and (when it exists) the env file.
	Files []FileMove `json:"files"`
	// Conflicts are the target paths already taken: a relocation refuses them.
	Conflicts []string `json:"conflicts"`
	// Left are the other entries of the old directory, which stay there.
	Left []string `json:"left"`
	// Warnings name what the move changes besides the files (relative bind
	// mounts, which resolve against the compose file's directory).
	Warnings []string `json:"warnings"`
	// CanRelocate is true when nothing stands in the way.
	CanRelocate bool `json:"canRelocate"`

	// The reference's names: HasChanges is false when the files are
	// already there; OldDir and NewDir are From and To; FileCount is the
	// number of entries in the old directory; CurrentComposePath is where
	// the compose file is now.
	HasChanges         bool   `json:"hasChanges"`
	OldDir             string `json:"oldDir"`
	NewDir             string `json:"newDir"`
	FileCount          int    `json:"fileCount"`
	CurrentComposePath string `json:"currentComposePath"`
}

// Target is where a relocation moves a stack's files.
type Target struct {
	// Path is the new directory, or the new compose file's path (ending in
	// .yaml or .yml).
	Path string
	// EnvPath, when set, is the env file's new path; else the env file keeps
	// its name beside the compose file.
	EnvPath string
	// OldDir, when set, must be the directory the compose file is in now
	// (a client's view of the stack that is out of date is refused).
	OldDir string
}

// plan works out the relocation of stack st to target: the stack record
// with its new paths, and the change.
func (s *Service) plan(ctx context.Context, st store.Stack, target Target) (store.Stack, PathChange, error) {
	dir := target.Path
	switch st.SourceType {
	case store.SourceGit:
		return store.Stack{}, PathChange{}, fault.New(fault.Invalid, fmt.Sprintf("Stack '%s' is deployed from git: its files live in its repository", st.Name))
	case store.SourceExternal:
		return store.Stack{}, PathChange{}, fault.New(fault.Invalid, fmt.Sprintf("Stack '%s' is adopted: its files stay where they are", st.Name))
	}
	if strings.TrimSpace(dir) == "" {
		return store.Stack{}, PathChange{}, errPathRequired
	}
	if err := hostpath.CheckForm("path", dir); err != nil {
		return store.Stack{}, PathChange{}, err
	}
	dir = filepath.Clean(dir)
	if err := s.confineLocation(ctx, st.EnvironmentID, dir, hostpath.Dir); err != nil {
		return store.Stack{}, PathChange{}, err
	}
	if _, err := s.files(ctx, st); err != nil {
		return store.Stack{}, PathChange{}, err
	}
	oldCompose, oldEnv := s.composePath(st), s.envPath(st)
	composeName := filepath.Base(oldCompose)
	if isComposeFileName(dir) {
		dir, composeName = filepath.Dir(dir), filepath.Base(dir)
	}
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return store.Stack{}, PathChange{}, fault.Invalidf("%s is a file, not a directory", dir)
	}
	if _, err := os.Stat(oldCompose); err != nil {
		return store.Stack{}, PathChange{}, errNoComposeFile(st.Name, err)
	}
	if old := strings.TrimSpace(target.OldDir); old != "" {
		if err := hostpath.CheckForm("oldDir", old); err != nil {
			return store.Stack{}, PathChange{}, err
		}
		if absPath(filepath.Clean(old)) != absPath(filepath.Dir(oldCompose)) {
			return store.Stack{}, PathChange{}, fault.Invalidf("oldDir %s is not the directory of stack '%s' (%s)", old, st.Name, filepath.Dir(oldCompose))
		}
	}
	newCompose, newEnv := filepath.Join(dir, composeName), filepath.Join(dir, filepath.Base(oldEnv))
	if e := strings.TrimSpace(target.EnvPath); e != "" {
		if err := hostpath.CheckForm("newEnvPath", e); err != nil {
			return store.Stack{}, PathChange{}, err
		}
		newEnv = filepath.Clean(e)
		if err := s.confineLocation(ctx, st.EnvironmentID, filepath.Dir(newEnv), hostpath.Dir); err != nil {
			return store.Stack{}, PathChange{}, err
		}
	}
	if absPath(newCompose) == absPath(oldCompose) && absPath(newEnv) == absPath(oldEnv) {
		dirNow := filepath.Dir(oldCompose)
		return st, PathChange{Name: st.Name, From: dirNow, To: dirNow, Files: []FileMove{}, Conflicts: []string{}, Left: []string{},
			Warnings: []string{}, OldDir: dirNow, NewDir: dirNow, FileCount: entriesIn(dirNow), CurrentComposePath: oldCompose}, nil
	}
	moved := st
	moved.ComposePath, moved.EnvPath = newCompose, ""
	if filepath.Base(newEnv) != EnvFile || filepath.Dir(newEnv) != dir {
		moved.EnvPath = newEnv
	}
	if absPath(dir) == absPath(s.stackDir(st.EnvironmentID, st.Name)) && composeName == ComposeFileName && moved.EnvPath == "" {
		moved.ComposePath = "" // back to the default location
	}
	ch := PathChange{Name: st.Name, From: filepath.Dir(oldCompose), To: dir, Files: []FileMove{}, Conflicts: []string{},
		Left: []string{}, Warnings: []string{}, HasChanges: true, OldDir: filepath.Dir(oldCompose), NewDir: dir,
		FileCount: entriesIn(filepath.Dir(oldCompose)), CurrentComposePath: oldCompose}
	var moves [][2]string
	if absPath(newCompose) != absPath(oldCompose) {
		moves = append(moves, [2]string{oldCompose, newCompose})
	}
	if _, err := os.Stat(oldEnv); err == nil && absPath(newEnv) != absPath(oldEnv) {
		moves = append(moves, [2]string{oldEnv, newEnv})
	}
	for _, m := range moves {
		fm := FileMove{From: m[0], To: m[1]}
		if _, err := os.Lstat(m[1]); err == nil {
			fm.Conflict = true
			ch.Conflicts = append(ch.Conflicts, m[1])
		}
		ch.Files = append(ch.Files, fm)
	}
	if entries, err := os.ReadDir(ch.From); err == nil {
		for _, e := range entries {
			p := filepath.Join(ch.From, e.Name())
			if p != oldCompose && p != oldEnv {
				ch.Left = append(ch.Left, p)
			}
		}
	}
	if p, err := s.project(ctx, st); err == nil {
		for _, svc := range p.Services {
			for _, v := range svc.Volumes {
				if v.Type == "bind" && (v.Source == ch.From || strings.HasPrefix(v.Source, ch.From+string(filepath.Separator))) {
					rel, _ := filepath.Rel(ch.From, v.Source)
					ch.Warnings = append(ch.Warnings, fmt.Sprintf("Service '%s' mounts %s, relative to the stack directory: after the move it resolves to %s, which is not moved",
						svc.Name, v.Source, filepath.Join(dir, rel)))
				}
			}
		}
	}
	sort.Strings(ch.Warnings)
	check := checkLocation(dir)
	switch {
	case !check.Valid:
		ch.Warnings = append(ch.Warnings, check.Message)
	case len(ch.Conflicts) == 0:
		ch.CanRelocate = true
	}
	return moved, ch, nil
}

// CheckPathChange answers what relocating stack name to target would do,
// changing nothing (HasChanges false when the files are already there).
func (s *Service) CheckPathChange(ctx context.Context, env store.Environment, name string, target Target) (PathChange, error) {
	st, err := s.get(ctx, env, name)
	if err != nil {
		return PathChange{}, err
	}
	_, ch, err := s.plan(ctx, st, target)
	return ch, err
}

// entriesIn counts the entries of directory dir (0 when it cannot be read).
func entriesIn(dir string) int {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	return len(entries)
}

// Relocate moves an internal stack's compose and env files to dir: each is
// written to its new place atomically (a temporary file renamed), then the
// stack's record is updated in one statement, and only then are the old
// files removed (with the old directory when nothing else is left in it).
// A failure before the record changes removes the new copies, so the stack
// stays whole where it was. Containers are not touched: a running stack
// keeps running, and its project name stays.
func (s *Service) Relocate(ctx context.Context, env store.Environment, name string, target Target) (PathChange, error) {
	unlock, err := s.lock(ctx, env.ID, name)
	if err != nil {
		return PathChange{}, err
	}
	defer unlock()
	st, err := s.get(ctx, env, name)
	if err != nil {
		return PathChange{}, err
	}
	moved, ch, err := s.plan(ctx, st, target)
	if err != nil {
		return PathChange{}, err
	}
	if !ch.HasChanges {
		return PathChange{}, fault.Invalidf("Stack '%s' is already in %s", st.Name, ch.To)
	}
	if len(ch.Conflicts) > 0 {
		return ch, fault.New(fault.Conflict, fmt.Sprintf("Cannot relocate stack '%s': %s already exists", name, strings.Join(ch.Conflicts, ", ")))
	}
	if !ch.CanRelocate {
		return ch, fault.New(fault.Invalid, fmt.Sprintf("Cannot relocate stack '%s': %s", name, strings.Join(ch.Warnings, "; ")))
	}
	// The new copies are Berth's (none was there: a conflict is refused);
	// the old files go when Berth created them, a file that was there
	// before stays where it is.
	created := moved.CreatedFiles
	undo := func() {
		var made []string
		for _, p := range created {
			if !slices.Contains(moved.CreatedFiles, p) {
				made = append(made, p)
			}
		}
		s.removeCreated(store.Stack{Name: st.Name, CreatedFiles: created}, made)
	}
	for _, m := range ch.Files {
		data, err := os.ReadFile(m.From)
		if err != nil {
			undo()
			return PathChange{}, err
		}
		if created, err = writeTracked(m.To, data, created, s.basePath(st)); err != nil {
			undo()
			return PathChange{}, err
		}
	}
	var gone []string
	for _, m := range ch.Files {
		if s.createdByBerth(st, m.From) {
			gone = append(gone, m.From)
		}
	}
	if st.CreatedFiles != nil {
		moved.CreatedFiles = forget(created, gone...)
	}
	if err := s.store.UpdateStackPaths(ctx, &moved); err != nil {
		undo()
		return PathChange{}, err
	}
	s.removeCreated(st, gone)
	return ch, nil
}
