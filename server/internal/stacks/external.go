package stacks

import (
	"context"
	"os"
	"slices"
	"sort"

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
