package stacks

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/berth-dev/berth/server/internal/hostpath"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// composeNames are the file names compose looks for in a directory, in its
// order of preference.
var composeNames = []string{"compose.yaml", "compose.yml", "docker-compose.yaml", "docker-compose.yml"}

// Bounds of the path hints: how deep and how many entries a walk visits,
// and how many hints an answer holds.
const (
	hintDirDepth     = 2
	hintComposeDepth = 3
	hintMaxVisits    = 5000
	hintMaxResults   = 100
)

// likelyComposeRoots are directories where compose projects are commonly
// kept on a host; the hints look for compose files there when they exist.
var likelyComposeRoots = []string{"/opt/stacks", "/opt/docker", "/opt/compose", "/srv/docker", "/srv/stacks"}

// RepositoryDir is where a git repository's own clone (its mirror, fetched
// by repository syncs and previews) is kept.
func (s *Service) RepositoryDir(repoID int64) string {
	return filepath.Join(s.dataDir, "git", fmt.Sprintf("repo-%d", repoID))
}

// BasePath is the directory Berth keeps env's stacks in (DATA_DIR/stacks/<env>),
// absolute.
func (s *Service) BasePath(env store.Environment) string {
	return absPath(filepath.Join(s.dataDir, "stacks", fmt.Sprint(env.ID)))
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// DefaultPath is where a new stack's files would be written.
type DefaultPath struct {
	Name      string `json:"name"`
	Directory string `json:"directory"`
	// StackDir is Directory under the reference's name; Source says where
	// it comes from: "custom" (the location asked for) or "default".
	StackDir    string `json:"stackDir"`
	Source      string `json:"source"`
	ComposePath string `json:"composePath"`
	EnvPath     string `json:"envPath"`
	Exists      bool   `json:"exists"` // the directory exists already
	Taken       bool   `json:"taken"`  // a stack of that name exists in the environment
}

// DefaultPathOf answers where a new stack called name would be written in
// env: under location (the reference's custom base directory) when it is
// not "", else in env's stack directory. location must be an absolute
// directory path without ".." (400) under the allowed stack roots once
// links are followed (403).
func (s *Service) DefaultPathOf(ctx context.Context, env store.Environment, name, location string) (DefaultPath, error) {
	if err := CheckName(name); err != nil {
		return DefaultPath{}, err
	}
	dir, source := absPath(s.stackDir(env.ID, name)), "default"
	if location != "" {
		source = "custom"
		pol, err := s.policy(ctx, env.ID)
		if err != nil {
			return DefaultPath{}, err
		}
		base, err := pol.Confine("location", location, hostpath.Dir)
		if err != nil {
			return DefaultPath{}, err
		}
		if dir, err = pol.Confine("location", filepath.Join(base, name), hostpath.Dir); err != nil {
			return DefaultPath{}, err
		}
	}
	out := DefaultPath{Name: name, Directory: dir, StackDir: dir, Source: source, ComposePath: filepath.Join(dir, ComposeFileName), EnvPath: filepath.Join(dir, EnvFile)}
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
		out.Exists = true
	}
	_, err := s.store.GetStack(ctx, env.ID, name)
	switch {
	case err == nil:
		out.Taken = true
	case !errors.Is(err, store.ErrNotFound):
		return DefaultPath{}, err
	}
	return out, nil
}

// PathCheck is the verdict on a location for a stack's files.
type PathCheck struct {
	Valid   bool   `json:"valid"`
	Message string `json:"message,omitempty"`
	// Directory is the directory the files would go to (the path itself, or
	// the parent of a compose file path).
	Directory      string `json:"directory"`
	Exists         bool   `json:"exists"`
	Writable       bool   `json:"writable"`
	HasComposeFile bool   `json:"hasComposeFile"`
	ComposeFile    string `json:"composeFile,omitempty"` // the compose file found there
}

var errPathRequired = fault.New(fault.Invalid, "Path is required")

// isComposeFileName reports whether p names a YAML file rather than a
// directory.
func isComposeFileName(p string) bool {
	ext := strings.ToLower(filepath.Ext(p))
	return ext == ".yaml" || ext == ".yml"
}

// CheckLocation applies the rules of stack creation in env to a location
// for a stack's files: a directory, or a compose file path (ending in .yaml
// or .yml). It must be absolute, without ".." (else the answer is valid
// false with the reason), under the allowed stack roots once links are
// followed (else the 403 of the rule, before anything about the place is
// looked at), and writable (its nearest existing ancestor, when it does not
// exist yet: creation makes the directories). An existing compose file is
// reported, not refused: the message warns that it would be replaced.
func (s *Service) CheckLocation(ctx context.Context, env store.Environment, p string) (PathCheck, error) {
	if strings.TrimSpace(p) == "" {
		return PathCheck{}, errPathRequired
	}
	if err := hostpath.CheckForm("path", p); err != nil {
		f, _ := fault.As(err)
		return PathCheck{Valid: false, Message: f.Message}, nil
	}
	if err := s.confineLocation(ctx, env.ID, p, hostpath.Any); err != nil {
		return PathCheck{}, err
	}
	return checkLocation(p), nil
}

// confineLocation checks a location for a stack's files (a directory, or
// a compose file path) against the confinement of environment envID; kind
// is hostpath.Any when what is there is judged by the caller.
func (s *Service) confineLocation(ctx context.Context, envID int64, p string, kind hostpath.Kind) error {
	pol, err := s.policy(ctx, envID)
	if err != nil {
		return err
	}
	if kind != hostpath.Any && isComposeFileName(p) {
		kind = hostpath.File
	}
	_, err = pol.Confine("path", p, kind)
	return err
}

// checkLocation is CheckLocation on a well-formed, allowed path.
func checkLocation(p string) PathCheck {
	p = filepath.Clean(p)
	out := PathCheck{Directory: p}
	composeFile := ""
	if isComposeFileName(p) {
		out.Directory, composeFile = filepath.Dir(p), p
	}
	fi, err := os.Stat(out.Directory)
	switch {
	case err == nil && !fi.IsDir():
		out.Message = fmt.Sprintf("%s is a file, not a directory", out.Directory)
		return out
	case err == nil:
		out.Exists = true
	case !errors.Is(err, fs.ErrNotExist):
		out.Message = fmt.Sprintf("%s cannot be read: %v", out.Directory, err)
		return out
	}
	if composeFile != "" {
		if fi, err := os.Stat(composeFile); err == nil && !fi.IsDir() {
			out.HasComposeFile, out.ComposeFile = true, composeFile
		}
	} else if out.Exists {
		out.ComposeFile = findComposeFile(out.Directory)
		out.HasComposeFile = out.ComposeFile != ""
	}
	ancestor := out.Directory
	for {
		if fi, err := os.Stat(ancestor); err == nil {
			if !fi.IsDir() {
				out.Message = fmt.Sprintf("%s is a file, not a directory", ancestor)
				return out
			}
			break
		}
		parent := filepath.Dir(ancestor)
		if parent == ancestor {
			break
		}
		ancestor = parent
	}
	out.Writable = writable(ancestor)
	switch {
	case !out.Writable:
		out.Message = fmt.Sprintf("%s is not writable", ancestor)
	case out.HasComposeFile:
		out.Valid = true
		out.Message = fmt.Sprintf("A compose file already exists at %s: it would be replaced", out.ComposeFile)
	default:
		out.Valid = true
	}
	return out
}

// writable reports whether a file can be created in dir, by creating (and
// removing) one: permission bits alone miss read-only mounts and ACLs.
func writable(dir string) bool {
	f, err := os.CreateTemp(dir, ".berth-write-check-*")
	if err != nil {
		return false
	}
	name := f.Name()
	f.Close()
	os.Remove(name)
	return true
}

// findComposeFile returns the compose file of dir, by compose's names.
func findComposeFile(dir string) string {
	for _, n := range composeNames {
		p := filepath.Join(dir, n)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p
		}
	}
	return ""
}

// PathHints are suggestions for the path field of the stack editor.
type PathHints struct {
	BasePath     string   `json:"basePath"`
	Directories  []string `json:"directories"`
	ComposeFiles []string `json:"composeFiles"`
	Truncated    bool     `json:"truncated"`
	// With a stack name (the reference's ?name): the stack, and the working
	// directory and compose files its containers' labels name ("" and []
	// when it has no containers).
	StackName   string    `json:"stackName,omitempty"`
	WorkingDir  *string   `json:"workingDir,omitempty"`
	ConfigFiles *[]string `json:"configFiles,omitempty"`
}

// Hints lists existing directories under env's base path (two levels) and
// the directories of the stacks with custom locations, and compose files
// found under the base path, those directories and the common places
// compose projects live in (three levels). With prefix (an absolute path
// being typed) the subdirectories completing it are added. Only what lies
// under the allowed stack roots (once links are followed) is listed or
// even walked: never DATA_DIR outside env's stack directory, nor the rest
// of the host. Walks are bounded in depth, visits and results; hidden
// directories are skipped.
//
// With name, the answer also holds the working directory and compose files
// the labels of that compose project's containers name (engine data any
// container viewer sees); they join the hints only where allowed.
func (s *Service) Hints(ctx context.Context, env store.Environment, prefix, name string) (PathHints, error) {
	base := s.BasePath(env)
	out := PathHints{BasePath: base, Directories: []string{}, ComposeFiles: []string{}}
	pol, err := s.policy(ctx, env.ID)
	if err != nil {
		return PathHints{}, err
	}
	allowed := func(p string) bool {
		real, err := hostpath.Resolve(p)
		return err == nil && pol.Allows(real)
	}
	dirs, files := newHintSet(), newHintSet()
	if name != "" {
		if err := CheckName(name); err != nil {
			return PathHints{}, err
		}
		projects, err := s.projects(ctx, env)
		if err != nil {
			return PathHints{}, opFault("path hints", err)
		}
		wd, cf := "", []string{}
		if e := projects[name]; e != nil {
			wd = e.WorkingDir
			cf = append(cf, e.ConfigFiles...)
		}
		out.StackName, out.WorkingDir, out.ConfigFiles = name, &wd, &cf
		if wd != "" && filepath.IsAbs(wd) && allowed(wd) {
			dirs.add(wd)
		}
		for _, f := range cf {
			if filepath.IsAbs(f) && allowed(f) {
				files.add(f)
			}
		}
	}
	if prefix != "" && hostpath.CheckForm("path", prefix) == nil {
		dir, start := prefix, ""
		if !strings.HasSuffix(prefix, "/") {
			dir, start = filepath.Dir(prefix), filepath.Base(prefix)
		}
		if entries, err := os.ReadDir(dir); err == nil && allowed(dir) {
			for _, e := range entries {
				p := filepath.Join(dir, e.Name())
				if e.IsDir() && strings.HasPrefix(e.Name(), start) && !strings.HasPrefix(e.Name(), ".") && allowed(p) {
					dirs.add(p)
				}
			}
		}
	}
	roots := []string{base}
	records, err := s.store.ListStacks(ctx, env.ID)
	if err != nil {
		return PathHints{}, err
	}
	for _, r := range records {
		if r.SourceType != store.SourceGit && r.ComposePath != "" && allowed(r.ComposePath) {
			d := filepath.Dir(r.ComposePath)
			dirs.add(d)
			roots = append(roots, filepath.Dir(d))
		}
	}
	visits := 0
	walk(base, hintDirDepth, &visits, func(p string, d fs.DirEntry) {
		if d.IsDir() && p != base {
			dirs.add(p)
		}
	})
	for _, r := range append(roots, likelyComposeRoots...) {
		if !allowed(r) {
			continue
		}
		walk(r, hintComposeDepth, &visits, func(p string, d fs.DirEntry) {
			if !d.IsDir() && isComposeName(d.Name()) && allowed(p) {
				files.add(p)
			}
		})
	}
	out.Directories, out.ComposeFiles = dirs.list(), files.list()
	out.Truncated = dirs.over || files.over || visits >= hintMaxVisits
	return out, nil
}

func isComposeName(n string) bool {
	for _, c := range composeNames {
		if n == c {
			return true
		}
	}
	return false
}

// walk visits the entries under root down to depth levels, sharing the
// visit budget of one answer; hidden directories are not entered.
func walk(root string, depth int, visits *int, fn func(string, fs.DirEntry)) {
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return
	}
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if d != nil && d.IsDir() && p != root {
				return fs.SkipDir
			}
			return nil
		}
		*visits++
		if *visits >= hintMaxVisits {
			return fs.SkipAll
		}
		rel, _ := filepath.Rel(root, p)
		level := 0
		if rel != "." {
			level = strings.Count(rel, string(filepath.Separator)) + 1
		}
		if d.IsDir() && p != root && (strings.HasPrefix(d.Name(), ".") || level > depth) {
			return fs.SkipDir
		}
		if level > depth {
			return nil
		}
		fn(p, d)
		return nil
	})
}

// hintSet is a bounded set of paths kept in insertion order.
type hintSet struct {
	seen  map[string]bool
	order []string
	over  bool
}

func newHintSet() *hintSet { return &hintSet{seen: map[string]bool{}} }

func (h *hintSet) add(p string) {
	if h.seen[p] {
		return
	}
	if len(h.order) >= hintMaxResults {
		h.over = true
		return
	}
	h.seen[p] = true
	h.order = append(h.order, p)
}

// list returns the paths, sorted.
func (h *hintSet) list() []string {
	out := append([]string{}, h.order...)
	sort.Strings(out)
	return out
}
