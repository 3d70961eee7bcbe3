package stacks

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/compose-spec/compose-go/v2/dotenv"
	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"

	"github.com/berth-dev/berth/server/internal/hostpath"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// projectSource is what a compose project is loaded from.
type projectSource struct {
	name        string
	composePath string
	content     []byte   // the compose file's text; nil reads composePath
	envFiles    []string // env files in precedence order (later wins); missing ones are skipped
	secrets     []store.StackSecret
}

// load parses and validates a compose project the way compose does, with
// the stack's variables as its only environment: Berth's own process
// environment never leaks into a stack.
func (src projectSource) load(ctx context.Context) (*types.Project, error) {
	env := types.Mapping{}
	for _, f := range src.envFiles {
		if _, err := os.Stat(f); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		m, err := dotenv.GetEnvFromFile(env, []string{f})
		if err != nil {
			return nil, fault.Invalidf("Invalid env file %s: %v", filepath.Base(f), err)
		}
		env.Merge(m)
	}
	for _, sec := range src.secrets {
		env[sec.Key] = sec.Value
	}
	content := src.content
	if content == nil {
		b, err := os.ReadFile(src.composePath)
		if err != nil {
			return nil, fmt.Errorf("stacks: read compose file: %w", err)
		}
		content = b
	}
	dir := filepath.Dir(src.composePath)
	var refused error
	p, err := loader.LoadWithContext(ctx, types.ConfigDetails{
		WorkingDir:  dir,
		ConfigFiles: []types.ConfigFile{{Filename: src.composePath, Content: content}},
		Environment: env,
	}, func(o *loader.Options) {
		o.SetProjectName(src.name, true)
		o.ResolvePaths = true
		// Files the compose file names are read only from its own
		// directory: include and extends through the guard (before they are
		// read), env_file and label_file below (before they are resolved).
		o.ResourceLoaders = []loader.ResourceLoader{outsideLoader{dir: dir, refused: &refused}}
		o.SkipResolveEnvironment, o.SkipResolveLabels = true, true
	})
	if refused != nil {
		return nil, refused
	}
	if err != nil {
		return nil, invalidCompose(err)
	}
	if err := checkReadFiles(p, dir); err != nil {
		return nil, err
	}
	if p, err = p.WithServicesEnvironmentResolved(false); err != nil {
		return nil, invalidCompose(err)
	}
	if p, err = p.WithServicesLabelsResolved(false); err != nil {
		return nil, invalidCompose(err)
	}
	p.ComposeFiles = []string{src.composePath}
	engine.LabelProject(p)
	return p, nil
}

// outsideFault is the 403 for a file a compose file names outside its own
// directory (what is one of include, extends, env_file, label_file).
func outsideFault(what, p string) error {
	return fault.New(fault.Forbidden, fmt.Sprintf(
		"Compose %s %s is outside the stack's directory: a compose file may only read files next to it", what, p))
}

// within reports whether p, once its symbolic links are followed, is dir
// or below it (dir resolved too).
func within(dir, p string) bool {
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	rdir, err := hostpath.Resolve(dir)
	if err != nil {
		return false
	}
	rp, err := hostpath.Resolve(filepath.Clean(p))
	return err == nil && hostpath.Within(rdir, rp)
}

// outsideLoader is the first resource loader of a project load: it takes
// (and refuses, before anything is read) a file that include or extends
// names outside the compose file's directory; the loader's own local
// loader reads the others. A relative path of a nested include or extends
// is judged against the top directory: it can only refuse more.
type outsideLoader struct {
	dir     string
	refused *error
}

func (l outsideLoader) Accept(p string) bool { return !within(l.dir, p) }

func (l outsideLoader) Load(_ context.Context, p string) (string, error) {
	err := outsideFault("include or extends file", p)
	if *l.refused == nil {
		*l.refused = err
	}
	return "", err
}

func (l outsideLoader) Dir(p string) string { return filepath.Dir(p) }

// checkReadFiles refuses a project whose services read env or label files
// outside dir.
func checkReadFiles(p *types.Project, dir string) error {
	for _, services := range []types.Services{p.Services, p.DisabledServices} {
		for _, svc := range services {
			for _, f := range svc.EnvFiles {
				if !within(dir, f.Path) {
					return outsideFault("env_file", f.Path)
				}
			}
			for _, f := range svc.LabelFiles {
				if !within(dir, f) {
					return outsideFault("label_file", f)
				}
			}
		}
	}
	return nil
}

// invalidCompose is the 400 for a compose file the parser refuses, with the
// parser's own message.
func invalidCompose(err error) error {
	msg := strings.TrimSpace(err.Error())
	return fault.Wrap(fault.Invalid, "Invalid compose file: "+msg, err)
}

// source returns what st's project is loaded from.
func (s *Service) source(ctx context.Context, st store.Stack) (projectSource, error) {
	secrets, err := s.store.StackSecrets(ctx, st.ID)
	if err != nil {
		return projectSource{}, err
	}
	files, err := s.files(ctx, st)
	if err != nil {
		return projectSource{}, err
	}
	src := projectSource{name: st.Name, composePath: files.compose, secrets: secrets}
	if files.gitEnv != "" {
		src.envFiles = append(src.envFiles, files.gitEnv)
	}
	src.envFiles = append(src.envFiles, files.env)
	return src, nil
}

// project loads the project of a stack Berth knows from its files.
func (s *Service) project(ctx context.Context, st store.Stack) (*types.Project, error) {
	src, err := s.source(ctx, st)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(src.composePath); err != nil {
		return nil, errNoComposeFile(st.Name, err)
	}
	return src.load(ctx)
}
