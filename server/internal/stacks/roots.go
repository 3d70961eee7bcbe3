package stacks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/berth-dev/berth/server/internal/hostpath"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// RootsSetting is the settings key of the external stack roots an admin
// listed (a JSON list of absolute directories).
const RootsSetting = "security.external_stack_roots"

// The messages of the confinement rule (docs/security.md, "Host paths").
const (
	msgOutsideRoots = "Path is outside the allowed stack roots (DATA_DIR/stacks and the external stack roots an admin listed: EXTERNAL_STACK_ROOTS or PUT /api/settings/stack-roots)"
	msgOwnFiles     = "Path is inside Berth's data directory, where only DATA_DIR/stacks/%d holds this environment's stack files (Berth's own files are never stack files)"
	msgOutsideClone = "Path leads outside the stack's repository"
)

// UseDefaultRoots sets the external stack roots in force while an admin has
// saved none (EXTERNAL_STACK_ROOTS).
func (s *Service) UseDefaultRoots(roots []string) *Service {
	s.defaultRoots = slices.Clone(roots)
	return s
}

// Roots returns the external stack roots in force: the admin's list, or
// the default.
func (s *Service) Roots(ctx context.Context) ([]string, error) {
	v, err := s.store.GetSetting(ctx, RootsSetting)
	if errors.Is(err, store.ErrNotFound) {
		return append([]string{}, s.defaultRoots...), nil
	}
	if err != nil {
		return nil, err
	}
	var roots []string
	if err := json.Unmarshal([]byte(v), &roots); err != nil {
		return nil, fmt.Errorf("stacks: setting %s: %w", RootsSetting, err)
	}
	if roots == nil {
		roots = []string{}
	}
	return roots, nil
}

// SetRoots validates and saves the external stack roots: absolute,
// existing directories, never / nor DATA_DIR or a directory inside it.
// It returns them cleaned, without duplicates, in their order.
func (s *Service) SetRoots(ctx context.Context, roots []string) ([]string, error) {
	if roots == nil {
		return nil, fault.Invalidf("roots is required (an empty list allows no external stack root)")
	}
	data := s.resolvedDataDir()
	out := []string{}
	for _, r := range roots {
		if err := hostpath.CheckForm("stack root", r); err != nil {
			return nil, err
		}
		r = filepath.Clean(r)
		real, err := hostpath.Resolve(r)
		if err != nil {
			return nil, fault.Invalidf("Invalid stack root %q: it cannot be resolved", r)
		}
		if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
			return nil, fault.Invalidf("Invalid stack root %q: an existing directory is required", r)
		}
		switch {
		case real == string(filepath.Separator):
			return nil, fault.Invalidf("Invalid stack root %q: the root directory / cannot be a stack root", r)
		case data != "" && hostpath.Within(data, real):
			return nil, fault.Invalidf("Invalid stack root %q: Berth's data directory and the directories inside it cannot be stack roots", r)
		}
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	if err := s.store.SetSetting(ctx, RootsSetting, string(b)); err != nil {
		return nil, err
	}
	return out, nil
}

// resolvedDataDir is DATA_DIR, absolute with its links followed.
func (s *Service) resolvedDataDir() string {
	real, err := hostpath.Resolve(absPath(s.dataDir))
	if err != nil {
		return absPath(s.dataDir)
	}
	return real
}

// policy is the confinement of the stack files of environment envID:
// DATA_DIR/stacks/<env>, or the external stack roots, never elsewhere in
// DATA_DIR.
func (s *Service) policy(ctx context.Context, envID int64) (hostpath.Policy, error) {
	roots, err := s.Roots(ctx)
	if err != nil {
		return hostpath.Policy{}, err
	}
	return hostpath.Policy{Home: s.BasePath(store.Environment{ID: envID}), Roots: roots, Own: absPath(s.dataDir),
		Outside: msgOutsideRoots, OwnFiles: fmt.Sprintf(msgOwnFiles, envID)}, nil
}

// Policy is the confinement of environment envID's stack files, for
// callers that browse them (the path pickers' file browser).
func (s *Service) Policy(ctx context.Context, envID int64) (hostpath.Policy, error) {
	return s.policy(ctx, envID)
}

// confineFiles checks the compose and env paths a request names (either
// may be empty: the default) for environment envID, and returns them
// cleaned.
func (s *Service) confineFiles(ctx context.Context, envID int64, composePath, envPath string) (string, string, error) {
	if composePath == "" && envPath == "" {
		return "", "", nil
	}
	pol, err := s.policy(ctx, envID)
	if err != nil {
		return "", "", err
	}
	if composePath != "" {
		if composePath, err = pol.Confine("compose path", composePath, hostpath.File); err != nil {
			return "", "", err
		}
	}
	if envPath != "" {
		if envPath, err = pol.Confine("env path", envPath, hostpath.File); err != nil {
			return "", "", err
		}
	}
	return composePath, envPath, nil
}

// stackFiles are the confined paths of a recorded stack's files.
type stackFiles struct {
	compose string
	env     string
	gitEnv  string // a git stack's env file in its clone ("" none)
}

// files returns where st's files are, each checked against the rule of
// its kind: an internal or adopted stack's files under the allowed stack
// roots, a git stack's compose (and env) file inside its clone once links
// are followed. A record written before the rule (or a repository holding a
// link out of itself) is refused, not read nor written.
func (s *Service) files(ctx context.Context, st store.Stack) (stackFiles, error) {
	out := stackFiles{compose: s.composePath(st), env: s.envPath(st)}
	pol, err := s.policy(ctx, st.EnvironmentID)
	if err != nil {
		return stackFiles{}, err
	}
	if _, err := pol.Confine("env path", out.env, hostpath.File); err != nil {
		return stackFiles{}, err
	}
	if st.SourceType != store.SourceGit {
		if _, err := pol.Confine("compose path", out.compose, hostpath.File); err != nil {
			return stackFiles{}, err
		}
		return out, nil
	}
	clone := hostpath.Policy{Home: s.CloneDir(st.ID), Outside: msgOutsideClone}
	if _, err := clone.Confine("compose path", out.compose, hostpath.File); err != nil {
		return stackFiles{}, err
	}
	if g, err := s.store.GetGitStackOfStack(ctx, st.ID); err == nil && g.EnvFilePath != "" {
		out.gitEnv = filepath.Join(s.CloneDir(st.ID), filepath.FromSlash(g.EnvFilePath))
		if _, err := clone.Confine("env file path", out.gitEnv, hostpath.File); err != nil {
			return stackFiles{}, err
		}
	}
	return out, nil
}
