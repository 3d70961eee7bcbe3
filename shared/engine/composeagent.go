package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/compose-spec/compose-go/v2/types"

	"github.com/berth-dev/berth/shared/agentpb"
)

// agentComposeRequest is the compose operation an agent runs for p: the
// project in the compose specification's JSON form, its variables already
// applied (env files read from Berth's stack directory and inlined, secrets
// included), with the paths Berth resolved under its working directory made
// relative again so that they resolve in the agent's own stack directory.
// p may be nil (start, stop, restart or down by the containers' labels).
func agentComposeRequest(action agentpb.ComposeAction, name string, p *types.Project) (*agentpb.ComposeRequest, error) {
	req := &agentpb.ComposeRequest{Action: action, ProjectName: name}
	if p == nil {
		return req, nil
	}
	q, err := p.WithServicesEnvironmentResolved(true)
	if err != nil {
		return nil, fmt.Errorf("compose: %w", err)
	}
	relativize(q, p.WorkingDir)
	b, err := q.MarshalJSON(types.WithSecretContent)
	if err != nil {
		return nil, fmt.Errorf("compose: %w", err)
	}
	req.Project, req.WorkingDir = b, p.WorkingDir
	return req, nil
}

// relativize rewrites the absolute paths of q under dir (bind mounts, build
// contexts, secret and config files) as paths relative to dir.
func relativize(q *types.Project, dir string) {
	if dir == "" {
		return
	}
	rel := func(path string) string {
		if !filepath.IsAbs(path) {
			return path
		}
		r, err := filepath.Rel(dir, path)
		if err != nil || r == ".." || strings.HasPrefix(r, "../") {
			return path
		}
		return "./" + filepath.ToSlash(r)
	}
	for name, s := range q.Services {
		for i, v := range s.Volumes {
			if v.Type == types.VolumeTypeBind {
				s.Volumes[i].Source = rel(v.Source)
			}
		}
		if s.Build != nil {
			s.Build.Context = rel(s.Build.Context)
		}
		q.Services[name] = s
	}
	for name, sec := range q.Secrets {
		sec.File = rel(sec.File)
		q.Secrets[name] = sec
	}
	for name, cfg := range q.Configs {
		cfg.File = rel(cfg.File)
		q.Configs[name] = cfg
	}
}

// composeOnAgent runs one compose action of project name (p may be nil) on
// the agent.
func (c *Client) composeOnAgent(ctx context.Context, action agentpb.ComposeAction, name string, p *types.Project,
	configure func(*agentpb.ComposeRequest), progress ComposeProgress) error {
	req, err := agentComposeRequest(action, name, p)
	if err != nil {
		return err
	}
	if configure != nil {
		configure(req)
	}
	return c.agentCompose(ctx, req, progress)
}
