package stacks

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/compose-spec/compose-go/v2/loader"

	"github.com/berth-dev/berth/server/internal/hostpath"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// Discovered is a compose project on an engine that Berth did not create
// and has not adopted.
type Discovered struct {
	Name        string   `json:"name"`
	Status      string   `json:"status"`
	Containers  int      `json:"containers"`
	WorkingDir  string   `json:"workingDir"`
	ConfigFiles []string `json:"configFiles"`
	// Adoptable is true when Berth can read the project's compose file.
	Adoptable bool `json:"adoptable"`
}

// Scan lists the compose projects on env's engine that Berth does not know.
func (s *Service) Scan(ctx context.Context, env store.Environment) ([]Discovered, error) {
	projects, err := s.projects(ctx, env)
	if err != nil {
		return nil, opFault("scan stacks", err)
	}
	records, err := s.store.ListStacks(ctx, env.ID)
	if err != nil {
		return nil, err
	}
	for _, r := range records {
		delete(projects, r.Name)
	}
	out := []Discovered{}
	for name, e := range projects {
		d := Discovered{Name: name, Status: statusOf(e.ContainerDetails), Containers: len(e.Containers),
			WorkingDir: e.WorkingDir, ConfigFiles: e.ConfigFiles}
		if d.ConfigFiles == nil {
			d.ConfigFiles = []string{}
		}
		if len(d.ConfigFiles) > 0 {
			// Adoptable only under the allowed stack roots; nothing is
			// looked at elsewhere.
			if _, _, err := s.confineFiles(ctx, env.ID, d.ConfigFiles[0], ""); err == nil {
				_, statErr := os.Stat(d.ConfigFiles[0])
				d.Adoptable = statErr == nil
			}
		}
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// ScanPath lists the compose projects whose files are under dir (the
// reference's scan of a path) that Berth does not know: a directory holding
// a compose file (compose.yaml, compose.yml, docker-compose.yaml,
// docker-compose.yml; the first of them) is a project named after the
// directory as compose names it, with its containers' status when it runs
// on env's engine (StatusCreated when it has none). dir follows the host
// path rules (400 malformed, 403 outside the stack roots); the walk is
// bounded as the path hints' and lists only what is allowed once links are
// followed.
func (s *Service) ScanPath(ctx context.Context, env store.Environment, dir string) ([]Discovered, error) {
	pol, err := s.policy(ctx, env.ID)
	if err != nil {
		return nil, err
	}
	if dir, err = pol.Confine("path", dir, hostpath.Dir); err != nil {
		return nil, err
	}
	projects, err := s.projects(ctx, env)
	if err != nil {
		return nil, opFault("scan stacks", err)
	}
	records, err := s.store.ListStacks(ctx, env.ID)
	if err != nil {
		return nil, err
	}
	known := map[string]bool{}
	for _, r := range records {
		known[r.Name] = true
	}
	found := map[string]Discovered{}
	visits := 0
	walk(dir, hintComposeDepth, &visits, func(p string, d fs.DirEntry) {
		if d.IsDir() || !isComposeName(d.Name()) {
			return
		}
		real, err := hostpath.Resolve(p)
		if err != nil || !pol.Allows(real) {
			return
		}
		wd := filepath.Dir(p)
		name := loader.NormalizeProjectName(filepath.Base(wd))
		if CheckName(name) != nil || known[name] {
			return
		}
		if prev, ok := found[name]; ok && (prev.WorkingDir != wd || composeRank(prev.ConfigFiles[0]) <= composeRank(p)) {
			return
		}
		dsc := Discovered{Name: name, Status: StatusCreated, WorkingDir: wd, ConfigFiles: []string{p}, Adoptable: true}
		if e := projects[name]; e != nil {
			dsc.Status, dsc.Containers = statusOf(e.ContainerDetails), len(e.Containers)
		}
		found[name] = dsc
	})
	out := make([]Discovered, 0, len(found))
	for _, d := range found {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// composeRank is the place of a compose file's name in compose's own order
// of preference.
func composeRank(p string) int {
	return slices.Index(composeNames, filepath.Base(p))
}

// AdoptSpec names a compose project to adopt; ComposePath defaults to the
// compose file its containers name.
type AdoptSpec struct {
	Name        string
	ComposePath string
	EnvPath     string
}

// Adopt makes a compose project Berth did not create one of its stacks
// (source external), leaving its files where they are.
func (s *Service) Adopt(ctx context.Context, env store.Environment, spec AdoptSpec) (store.Stack, error) {
	if err := CheckName(spec.Name); err != nil {
		return store.Stack{}, err
	}
	composePath, envPath, err := s.confineFiles(ctx, env.ID, spec.ComposePath, spec.EnvPath)
	if err != nil {
		return store.Stack{}, err
	}
	st := store.Stack{EnvironmentID: env.ID, Name: spec.Name, SourceType: store.SourceExternal, EnvPath: envPath}
	err = s.CreateRecord(ctx, env, &st, func(st *store.Stack) error {
		found, err := s.Scan(ctx, env)
		if err != nil {
			return err
		}
		i := slices.IndexFunc(found, func(d Discovered) bool { return d.Name == st.Name })
		if i < 0 {
			return notFound(st.Name)
		}
		st.ComposePath = composePath
		if st.ComposePath == "" && len(found[i].ConfigFiles) > 0 {
			// As the project's containers name it: confined like a path a
			// user gives.
			if st.ComposePath, _, err = s.confineFiles(ctx, env.ID, found[i].ConfigFiles[0], ""); err != nil {
				return err
			}
		}
		if st.ComposePath == "" {
			return fault.Invalidf("The compose file of stack '%s' is unknown: give composePath", st.Name)
		}
		if _, _, err := s.confineFiles(ctx, env.ID, "", s.envPath(*st)); err != nil {
			return err // the default env file next to the compose file
		}
		if _, err := os.Stat(st.ComposePath); err != nil {
			return fault.Invalidf("Compose file %s of stack '%s' cannot be read: %v", st.ComposePath, st.Name, err)
		}
		if _, err := s.project(ctx, *st); err != nil {
			return err
		}
		return s.store.CreateStack(ctx, st, nil)
	})
	return st, err
}
