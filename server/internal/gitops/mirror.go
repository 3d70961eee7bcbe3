package gitops

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/berth-dev/berth/server/internal/stacks"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// Mirrors keeps one clone of each repository's branch (its mirror, apart
// from the clones git stacks deploy from, so that looking never moves a
// deployed stack's files), fetched on demand: by a repository sync, a git
// stack test, the env file helpers and previews. Operations on one mirror
// are serialized. The outcome of each repository's last fetch is recorded
// with the repository, so every server (and a restarted one) tells it.
type Mirrors struct {
	svc *Service
	dir func(repoID int64) string

	mu    sync.Mutex
	locks map[int64]*sync.Mutex
}

// NewMirrors returns the mirrors of s's repositories, kept in dir(id).
func NewMirrors(s *Service, dir func(repoID int64) string) *Mirrors {
	return &Mirrors{svc: s, dir: dir, locks: map[int64]*sync.Mutex{}}
}

// SyncStatus is the state of a repository's mirror.
type SyncStatus struct {
	RepositoryID int64  `json:"repositoryId"`
	Branch       string `json:"branch"`
	// Status is "never" (not fetched yet), "success" or "failed".
	Status   string     `json:"status"`
	Commit   string     `json:"commit,omitempty"`
	Error    string     `json:"error,omitempty"`
	SyncedAt *time.Time `json:"syncedAt"` // the last fetch of the mirror
	// LastSync is the repository's last sync as recorded (a fetch here or
	// a deploy of one of its git stacks).
	LastSync *time.Time `json:"lastSync"`
}

func (m *Mirrors) lock(id int64) func() {
	m.mu.Lock()
	l, ok := m.locks[id]
	if !ok {
		l = &sync.Mutex{}
		m.locks[id] = l
	}
	m.mu.Unlock()
	l.Lock()
	return l.Unlock
}

// fetch brings the mirror of r to the head of its branch (the caller holds
// its lock) and records the outcome.
func (m *Mirrors) fetch(ctx context.Context, r store.GitRepository) (string, error) {
	dir := m.dir(r.ID)
	// A mirror of another URL (the repository was edited, or its id
	// reused) is cloned again.
	if repo, err := git.PlainOpen(dir); err == nil {
		if rem, err := repo.Remote("origin"); err != nil || len(rem.Config().URLs) == 0 || rem.Config().URLs[0] != r.URL {
			if err := os.RemoveAll(dir); err != nil {
				return "", err
			}
		}
	}
	auth, err := m.svc.repositoryAuth(ctx, r)
	var commit string
	if err == nil {
		var rctx context.Context
		if rctx, err = m.svc.remoteContext(ctx); err == nil {
			commit, err = checkout(rctx, dir, r.URL, r.Branch, auth)
		}
	}
	f := store.GitFetch{At: m.svc.now().UTC(), Branch: r.Branch, Status: store.GitFetchSuccess, Commit: commit}
	if err != nil {
		f.Status, f.Error = store.GitFetchFailed, stacks.Message(err)
	}
	if rerr := m.svc.store.RecordGitFetch(context.WithoutCancel(ctx), r.ID, f); rerr != nil {
		m.svc.log.Error("record repository fetch", "repository", r.ID, "err", rerr)
	}
	return commit, err
}

// with fetches the mirror of repository id and runs fn on it, holding its
// lock.
func (m *Mirrors) with(ctx context.Context, r store.GitRepository, fn func(dir, commit string) error) error {
	defer m.lock(r.ID)()
	commit, err := m.fetch(ctx, r)
	if err != nil {
		return err
	}
	return fn(m.dir(r.ID), commit)
}

// Sync fetches repository id's branch now; a fetch that fails is reported
// in the status (Status failed), not as an error.
func (m *Mirrors) Sync(ctx context.Context, id int64) (SyncStatus, error) {
	r, err := m.svc.Repository(ctx, id)
	if err != nil {
		return SyncStatus{}, err
	}
	unlock := m.lock(id)
	_, err = m.fetch(ctx, r)
	unlock()
	var f *fault.Error
	if err != nil && (!errors.As(err, &f) || f.Kind == fault.Forbidden) {
		return SyncStatus{}, err // a refused credential or host is the request's error
	}
	return m.Status(ctx, id)
}

// Status answers repository id's last sync.
func (m *Mirrors) Status(ctx context.Context, id int64) (SyncStatus, error) {
	r, err := m.svc.Repository(ctx, id)
	if err != nil {
		return SyncStatus{}, err
	}
	return RepositoryStatus(r), nil
}

// RepositoryStatus is r's sync status as recorded.
func RepositoryStatus(r store.GitRepository) SyncStatus {
	st := SyncStatus{RepositoryID: r.ID, Branch: r.Branch, Status: "never", LastSync: r.LastSyncAt}
	if f := r.LastFetch; f != nil {
		at := f.At
		st.Branch, st.Status, st.Commit, st.Error, st.SyncedAt = f.Branch, f.Status, f.Commit, f.Error, &at
	}
	return st
}

// StackTest is the outcome of a git stack test.
type StackTest struct {
	Success           bool   `json:"success"`
	Commit            string `json:"commit,omitempty"`
	Branch            string `json:"branch"`
	ComposePath       string `json:"composePath"`
	ComposeFileExists bool   `json:"composeFileExists"`
	EnvFilePath       string `json:"envFilePath"`
	EnvFileExists     *bool  `json:"envFileExists"` // null when the stack has no env file path
	Error             string `json:"error,omitempty"`
}

// TestStack fetches git stack id's repository and checks that its compose
// file and env file exist at the branch head. Nothing is deployed.
func (m *Mirrors) TestStack(ctx context.Context, id int64) (StackTest, error) {
	g, err := m.svc.Stack(ctx, id)
	if err != nil {
		return StackTest{}, err
	}
	r, err := m.svc.Repository(ctx, g.RepositoryID)
	if err != nil {
		return StackTest{}, err
	}
	out := StackTest{Branch: r.Branch, ComposePath: g.ComposePath, EnvFilePath: g.EnvFilePath}
	err = m.with(ctx, r, func(dir, commit string) error {
		out.Commit = commit
		out.ComposeFileExists = fileInside(dir, g.ComposePath) == nil
		var missing []string
		if !out.ComposeFileExists {
			missing = append(missing, fmt.Sprintf("compose file '%s' not found", g.ComposePath))
		}
		if g.EnvFilePath != "" {
			ok := fileInside(dir, g.EnvFilePath) == nil
			out.EnvFileExists = &ok
			if !ok {
				missing = append(missing, fmt.Sprintf("env file '%s' not found", g.EnvFilePath))
			}
		}
		out.Success = len(missing) == 0
		out.Error = strings.Join(missing, "; ")
		return nil
	})
	if f, ok := fault.As(err); ok && err != nil && f.Kind != fault.Forbidden {
		out.Error = stacks.Message(f)
		return out, nil
	}
	return out, err
}

// fileInside checks that rel names a regular file inside dir, also once
// symbolic links are followed (a repository cannot make Berth read a file
// of the host), and returns its path.
func fileInside(dir, rel string) error {
	_, err := insidePath(dir, rel)
	return err
}

func insidePath(dir, rel string) (string, error) {
	p := filepath.Join(dir, filepath.FromSlash(rel))
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", err
	}
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	if real != root && !strings.HasPrefix(real, root+string(filepath.Separator)) {
		return "", fs.ErrNotExist
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", fs.ErrNotExist
	}
	return real, nil
}

// Bounds of the env file search in a repository.
const (
	envSearchDepth  = 4
	envSearchVisits = 5000
	envSearchMax    = 100
)

// isEnvFileName reports whether a file name looks like an env file: .env,
// .env.<suffix>, <name>.env.
func isEnvFileName(n string) bool {
	return n == ".env" || strings.HasPrefix(n, ".env.") || strings.HasSuffix(n, ".env")
}

// EnvFiles are the candidate env files of a git stack.
type EnvFiles struct {
	Commit      string   `json:"commit"`
	ComposePath string   `json:"composePath"`
	EnvFilePath string   `json:"envFilePath"` // the one the stack uses ("" none)
	Files       []string `json:"files"`       // those next to the compose file first
	Truncated   bool     `json:"truncated"`
}

// EnvFiles lists the env files in git stack id's repository at the branch
// head (paths relative to the repository; bounded depth and count).
func (m *Mirrors) EnvFiles(ctx context.Context, id int64) (EnvFiles, error) {
	g, r, err := m.stackRepo(ctx, id)
	if err != nil {
		return EnvFiles{}, err
	}
	out := EnvFiles{ComposePath: g.ComposePath, EnvFilePath: g.EnvFilePath, Files: []string{}}
	err = m.with(ctx, r, func(dir, commit string) error {
		out.Commit = commit
		out.Files, out.Truncated = envCandidates(dir, path.Dir(g.ComposePath))
		return nil
	})
	return out, err
}

func (m *Mirrors) stackRepo(ctx context.Context, id int64) (store.GitStack, store.GitRepository, error) {
	g, err := m.svc.Stack(ctx, id)
	if err != nil {
		return store.GitStack{}, store.GitRepository{}, err
	}
	r, err := m.svc.Repository(ctx, g.RepositoryID)
	return g, r, err
}

// envCandidates walks a clone for env files; those in composeDir come first.
func envCandidates(dir, composeDir string) ([]string, bool) {
	var near, far []string
	visits, truncated := 0, false
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		visits++
		if visits > envSearchVisits || len(near)+len(far) >= envSearchMax {
			truncated = true
			return fs.SkipAll
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if d.Name() == ".git" || strings.Count(rel, "/") >= envSearchDepth {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !isEnvFileName(d.Name()) {
			return nil
		}
		if path.Dir(rel) == composeDir {
			near = append(near, rel)
		} else {
			far = append(far, rel)
		}
		return nil
	})
	sort.Strings(near)
	sort.Strings(far)
	return append(append([]string{}, near...), far...), truncated
}

// EnvFileVariables are the variables of one env file of a repository, as
// the reference answers them: a map of name to value (a name the file sets
// twice has its last value).
type EnvFileVariables struct {
	Commit string            `json:"commit"`
	Path   string            `json:"path"`
	Vars   map[string]string `json:"vars"`
}

// ReadEnvFile reads the variables of env file rel of git stack id's
// repository at the branch head, deploying nothing.
func (m *Mirrors) ReadEnvFile(ctx context.Context, id int64, rel string) (EnvFileVariables, error) {
	clean, err := checkRelPath("env file path", rel)
	if err != nil {
		return EnvFileVariables{}, err
	}
	if clean == "" {
		return EnvFileVariables{}, fault.New(fault.Invalid, "Env file path is required")
	}
	_, r, err := m.stackRepo(ctx, id)
	if err != nil {
		return EnvFileVariables{}, err
	}
	out := EnvFileVariables{Path: clean, Vars: map[string]string{}}
	err = m.with(ctx, r, func(dir, commit string) error {
		out.Commit = commit
		vars, err := readRepoEnv(dir, clean)
		for _, v := range vars {
			out.Vars[v.Key] = v.Value
		}
		return err
	})
	return out, err
}

// readRepoEnv parses env file rel of a clone (a 404 when it is not there).
func readRepoEnv(dir, rel string) ([]stacks.Variable, error) {
	p, err := insidePath(dir, rel)
	if err != nil {
		return nil, fault.Wrap(fault.NotFound, fmt.Sprintf("Env file '%s' not found in the repository", rel), err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	vars, err := stacks.ParseEnvFile(b)
	if vars == nil && err == nil {
		vars = []stacks.Variable{}
	}
	return vars, err
}

// PreviewSpec names the files of a repository to preview: a stored
// repository (RepositoryID), or a URL with a stored or inline credential;
// Branch defaults to the repository's (or main).
type PreviewSpec struct {
	Probe
	RepositoryID *int64
	ComposePath  string
	EnvFilePath  string
}

// EnvPreview is what a git stack of those files would get.
type EnvPreview struct {
	Commit      string `json:"commit"`
	Branch      string `json:"branch"`
	ComposePath string `json:"composePath"`
	EnvFilePath string `json:"envFilePath"`
	// Variables are the env file's (none without an env file path).
	Variables []stacks.Variable `json:"variables"`
	// ComposeVariables are the variables the compose file interpolates.
	ComposeVariables []stacks.ReferencedVariable `json:"composeVariables"`
	// Missing are required compose variables the env file does not set
	// (to be given as the git stack's variables).
	Missing []string `json:"missing"`
}

// PreviewEnv reads the env file and the variables the compose file
// references at the head of a repository branch, deploying and saving
// nothing. A stored repository's own branch is read from its mirror;
// anything else from a temporary clone removed afterwards.
func (m *Mirrors) PreviewEnv(ctx context.Context, sp PreviewSpec) (EnvPreview, error) {
	composePath, err := checkRelPath("compose path", sp.ComposePath)
	if err != nil {
		return EnvPreview{}, err
	}
	if composePath == "" {
		composePath = "compose.yaml"
	}
	envPath, err := checkRelPath("env file path", sp.EnvFilePath)
	if err != nil {
		return EnvPreview{}, err
	}
	out := EnvPreview{ComposePath: composePath, EnvFilePath: envPath, Variables: []stacks.Variable{}, Missing: []string{}}
	read := func(dir, commit string) error {
		out.Commit = commit
		p, err := insidePath(dir, composePath)
		if err != nil {
			return fault.Wrap(fault.Invalid, fmt.Sprintf("Compose file '%s' not found in the repository", composePath), err)
		}
		compose, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		set := map[string]bool{}
		if envPath != "" {
			vars, err := readRepoEnv(dir, envPath)
			if f, ok := fault.As(err); ok && f.Kind == fault.NotFound {
				return fault.Wrap(fault.Invalid, f.Message, err)
			}
			if err != nil {
				return err
			}
			out.Variables = vars
			for _, v := range vars {
				set[v.Key] = true
			}
		}
		if out.ComposeVariables, err = stacks.ReferencedVariables(ctx, compose); err != nil {
			return err
		}
		for _, v := range out.ComposeVariables {
			if v.Required && !set[v.Name] {
				out.Missing = append(out.Missing, v.Name)
			}
		}
		return nil
	}
	if sp.RepositoryID != nil {
		r, err := m.svc.Repository(ctx, *sp.RepositoryID)
		if err != nil {
			return EnvPreview{}, err
		}
		if sp.Branch == "" || sp.Branch == r.Branch {
			out.Branch = r.Branch
			return out, m.with(ctx, r, read)
		}
		sp.URL, sp.CredentialID, sp.Credential = r.URL, r.CredentialID, nil
	}
	if sp.Branch == "" {
		sp.Branch = "main"
	}
	out.Branch = sp.Branch
	probe, err := m.svc.TestRepository(ctx, sp.Probe) // validates, and tells a missing branch apart
	if err != nil {
		return EnvPreview{}, err
	}
	if !probe.Success {
		return EnvPreview{}, fault.New(fault.Invalid, "Cannot read the repository: "+probe.Error)
	}
	auth, err := m.svc.probeAuth(ctx, sp.Probe)
	if err != nil {
		return EnvPreview{}, err
	}
	tmp, err := os.MkdirTemp("", "berth-preview-")
	if err != nil {
		return EnvPreview{}, err
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "repo")
	rctx, err := m.svc.remoteContext(ctx)
	if err != nil {
		return EnvPreview{}, err
	}
	cctx, cancel := context.WithTimeout(rctx, gitTimeout)
	defer cancel()
	commit, err := clone(cctx, dir, sp.URL, plumbing.NewBranchReferenceName(sp.Branch), auth)
	if err != nil {
		return EnvPreview{}, err
	}
	return out, read(dir, commit)
}
