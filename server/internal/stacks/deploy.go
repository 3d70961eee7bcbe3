package stacks

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/compose-spec/compose-go/v2/types"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// CreateSpec is a new internal stack.
type CreateSpec struct {
	Name          string
	Compose       string
	EnvVars       []Variable
	RawEnvContent *string // non-secret env file text, comments kept; nil renders EnvVars
	ComposePath   string  // custom absolute location of the compose file
	EnvPath       string  // custom absolute location of the env file
}

// Create validates spec, writes the stack's files atomically and records it
// with its secret variables. Nothing is started (see Up).
func (s *Service) Create(ctx context.Context, env store.Environment, spec CreateSpec) (store.Stack, error) {
	if err := CheckName(spec.Name); err != nil {
		return store.Stack{}, err
	}
	if strings.TrimSpace(spec.Compose) == "" {
		return store.Stack{}, errComposeRequired
	}
	composePath, envPath, err := s.confineFiles(ctx, env.ID, spec.ComposePath, spec.EnvPath)
	if err != nil {
		return store.Stack{}, err
	}
	plain, secrets, err := splitVariables(spec.EnvVars)
	if err != nil {
		return store.Stack{}, err
	}
	envText := renderEnv(plain)
	if spec.RawEnvContent != nil {
		envText = []byte(withoutKeys(*spec.RawEnvContent, secretKeys(secrets)))
	}
	st := store.Stack{EnvironmentID: env.ID, Name: spec.Name, SourceType: store.SourceInternal,
		ComposePath: composePath, EnvPath: envPath, CreatedFiles: []string{}}
	err = s.CreateRecord(ctx, env, &st, func(st *store.Stack) error {
		if err := s.validate(ctx, env, st.Name, composePath, []byte(spec.Compose), envText, secrets); err != nil {
			return err
		}
		var err error
		if st.CreatedFiles, err = writeTracked(s.composePath(*st), []byte(spec.Compose), st.CreatedFiles, s.BasePath(env)); err != nil {
			s.removeFiles(ctx, *st)
			return err
		}
		if st.CreatedFiles, err = writeTracked(s.envPath(*st), envText, st.CreatedFiles, s.BasePath(env)); err != nil {
			s.removeFiles(ctx, *st)
			return err
		}
		if err := s.store.CreateStack(ctx, st, secrets); err != nil {
			s.removeFiles(ctx, *st)
			return err
		}
		return nil
	})
	return st, err
}

// validate parses a compose file as it will run, with its env file text and
// secrets, before anything is written. A stack in the default location is
// parsed from a temporary directory holding its env file, so that
// "env_file: .env" resolves as it will; a custom location is parsed in
// place (customPath), where its neighbours already are.
func (s *Service) validate(ctx context.Context, env store.Environment, name, customPath string, compose, envText []byte, secrets []store.StackSecret) error {
	dir, err := os.MkdirTemp("", "berth-validate-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	envFile := filepath.Join(dir, EnvFile)
	if err := os.WriteFile(envFile, envText, 0o600); err != nil {
		return err
	}
	composePath := customPath
	if composePath == "" {
		composePath = filepath.Join(dir, ComposeFileName)
	}
	p, err := projectSource{name: name, composePath: composePath, content: compose, envFiles: []string{envFile}, secrets: secrets}.load(ctx)
	if err != nil {
		return err
	}
	return s.checkPolicy(ctx, env, p)
}

func secretKeys(secrets []store.StackSecret) map[string]bool {
	m := map[string]bool{}
	for _, sec := range secrets {
		m[sec.Key] = true
	}
	return m
}

// Up brings the stack up (up -d) from its files; force recreates every
// container so that changed variables apply.
func (s *Service) Up(ctx context.Context, env store.Environment, name string, force bool, progress engine.ComposeProgress) error {
	return s.UpWith(ctx, env, name, engine.UpOptions{Force: force}, progress)
}

// UpWith brings the stack up from its files with what o asks for besides
// (force recreation, pulling every image, building); see CheckUp.
func (s *Service) UpWith(ctx context.Context, env store.Environment, name string, o engine.UpOptions, progress engine.ComposeProgress) error {
	unlock, err := s.lock(ctx, env.ID, name)
	if err != nil {
		return err
	}
	defer unlock()
	st, err := s.get(ctx, env, name)
	if err != nil {
		return err
	}
	err = s.deploy(ctx, env, st, o, progress)
	s.notifyDeploy(env.ID, name, err)
	return err
}

// CheckUp refuses (400), before anything runs, an up with o that cannot be
// done: a build on an agent's environment, or one whose build context or
// Dockerfile is not in the stack's directory.
func (s *Service) CheckUp(ctx context.Context, env store.Environment, name string, o engine.UpOptions) error {
	st, err := s.get(ctx, env, name)
	if err != nil {
		return err
	}
	if !o.Build {
		return nil
	}
	if !directEngine(env) {
		return fault.Invalidf("%s", engine.ErrBuildRemote.Error())
	}
	p, err := s.project(ctx, st)
	if err != nil {
		return err
	}
	return checkBuilds(p)
}

// deploy brings the recorded stack st up.
func (s *Service) deploy(ctx context.Context, env store.Environment, st store.Stack, o engine.UpOptions, progress engine.ComposeProgress) error {
	p, err := s.project(ctx, st)
	if err != nil {
		return err
	}
	if err := s.checkPolicy(ctx, env, p); err != nil {
		return err
	}
	if o.Build {
		if err := checkBuilds(p); err != nil {
			return err
		}
	}
	op := fmt.Sprintf("deploy stack '%s'", st.Name)
	c, err := s.client(ctx, env, op)
	if err != nil {
		return err
	}
	if err := s.up(ctx, c, p, o, progress); err != nil {
		return opFault(op, err)
	}
	return nil
}

// up brings project p up on c, pulling with the configured registries,
// after finishing what an interrupted deploy left of it (compose would keep
// a container it left under a temporary name under that name).
func (s *Service) up(ctx context.Context, c *engine.Client, p *types.Project, o engine.UpOptions, progress engine.ComposeProgress) error {
	if err := s.repairBefore(ctx, c, p.Name, progress); err != nil {
		return err
	}
	var auths []engine.Credentials
	if s.registries != nil {
		var err error
		if auths, err = s.registries.PullCredentials(ctx); err != nil {
			return err
		}
	}
	return c.ComposeUp(ctx, p, o, auths, progress)
}

// ComposeFile is the spec's compose file object.
type ComposeFile struct {
	Content          string `json:"content"`
	StackDir         string `json:"stackDir"`
	ComposePath      string `json:"composePath"`
	EnvPath          string `json:"envPath"`
	SuggestedEnvPath string `json:"suggestedEnvPath"`
	SourceType       string `json:"sourceType"`
}

// Compose reads a stack's compose file.
func (s *Service) Compose(ctx context.Context, env store.Environment, name string) (ComposeFile, error) {
	st, err := s.get(ctx, env, name)
	if err != nil {
		return ComposeFile{}, err
	}
	files, err := s.files(ctx, st)
	if err != nil {
		return ComposeFile{}, err
	}
	path := files.compose
	b, err := os.ReadFile(path)
	if err != nil {
		return ComposeFile{}, errNoComposeFile(name, err)
	}
	return ComposeFile{Content: string(b), StackDir: filepath.Dir(path), ComposePath: path, EnvPath: files.env,
		SuggestedEnvPath: filepath.Join(filepath.Dir(path), EnvFile), SourceType: st.SourceType}, nil
}

// UpdateSpec is a new compose file for a stack, optionally at a new place.
type UpdateSpec struct {
	Content     string
	ComposePath string
	EnvPath     string
}

// UpdateCompose validates and saves a stack's compose file (atomically),
// moving its files when new paths are given. It starts nothing.
func (s *Service) UpdateCompose(ctx context.Context, env store.Environment, name string, spec UpdateSpec) error {
	if strings.TrimSpace(spec.Content) == "" {
		return errComposeRequired
	}
	composePath, envPath, err := s.confineFiles(ctx, env.ID, spec.ComposePath, spec.EnvPath)
	if err != nil {
		return err
	}
	unlock, err := s.lock(ctx, env.ID, name)
	if err != nil {
		return err
	}
	defer unlock()
	st, err := s.get(ctx, env, name)
	if err != nil {
		return err
	}
	if st.SourceType == store.SourceGit {
		return fault.New(fault.Invalid, fmt.Sprintf("Stack '%s' is deployed from git: change its compose file in the repository", name))
	}
	src, err := s.source(ctx, st) // the stack's own files, confined
	if err != nil {
		return err
	}
	oldCompose := s.composePath(st)
	if _, err := os.Stat(oldCompose); err != nil {
		return errNoComposeFile(name, err)
	}
	moved := st
	if composePath != "" {
		moved.ComposePath = composePath
	}
	if envPath != "" {
		moved.EnvPath = envPath
	}
	newCompose := s.composePath(moved)
	src.composePath, src.content = newCompose, []byte(spec.Content)
	p, err := src.load(ctx)
	if err != nil {
		return err
	}
	if err := s.checkPolicy(ctx, env, p); err != nil {
		return err
	}
	return s.moveFiles(ctx, st, moved, []byte(spec.Content))
}

// CreateRecord records a stack whose files come from elsewhere (a git
// clone), under the stack's lock: create runs the store writes, and a name
// already taken in the environment is refused.
func (s *Service) CreateRecord(ctx context.Context, env store.Environment, st *store.Stack, create func(*store.Stack) error) error {
	unlock, err := s.lock(ctx, env.ID, st.Name)
	if err != nil {
		return err
	}
	defer unlock()
	if _, err := s.store.GetStack(ctx, env.ID, st.Name); err == nil {
		return errExists(st.Name)
	}
	if err := create(st); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return errExists(st.Name)
		}
		return err
	}
	return nil
}

func errExists(name string) error {
	return fault.New(fault.Conflict, fmt.Sprintf("Stack '%s' already exists", name))
}
