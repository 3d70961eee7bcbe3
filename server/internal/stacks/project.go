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
	p, err := loader.LoadWithContext(ctx, types.ConfigDetails{
		WorkingDir:  filepath.Dir(src.composePath),
		ConfigFiles: []types.ConfigFile{{Filename: src.composePath, Content: content}},
		Environment: env,
	}, func(o *loader.Options) {
		o.SetProjectName(src.name, true)
		o.ResolvePaths = true
	})
	if err != nil {
		return nil, invalidCompose(err)
	}
	p.ComposeFiles = []string{src.composePath}
	engine.LabelProject(p)
	return p, nil
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
