package ops

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"

	"github.com/berth-dev/berth/shared/agentpb"
	"github.com/berth-dev/berth/shared/engine"
)

// compose runs a compose operation on this host with the shared compose
// runner. The project arrives whole in the request and stays in memory:
// nothing of it (its secrets least of all) is written to this host's disk.
// Relative paths resolve in StacksDir/<project>.
func (r *Runner) compose(ctx context.Context, s *sender, req *agentpb.ComposeRequest) error {
	// The name is a directory name under the stacks directory: checked
	// with the engine package's rule (compose's), as Berth checks it.
	name := req.GetProjectName()
	if err := engine.CheckProjectName(name); err != nil {
		return err
	}
	var p *types.Project
	if len(req.GetProject()) > 0 {
		var err error
		if p, err = r.loadProject(ctx, name, req.GetProject()); err != nil {
			return err
		}
	}
	c, err := r.client(ctx)
	if err != nil {
		return err
	}
	var sendErr error
	progress := func(line string) {
		if sendErr == nil {
			sendErr = s.send(&agentpb.OperationOutput{Output: &agentpb.OperationOutput_ComposeEvent{ComposeEvent: &agentpb.ComposeEvent{Line: line}}})
		}
	}
	switch req.GetAction() {
	case agentpb.ComposeAction_COMPOSE_ACTION_UP:
		if p == nil {
			return fmt.Errorf("%w: up needs the project", engine.ErrInvalid)
		}
		var auths []engine.Credentials
		for _, a := range req.GetRegistries() {
			auths = append(auths, engine.Credentials{Username: a.GetUsername(), Password: a.GetPassword(), ServerAddress: a.GetServerAddress()})
		}
		err = c.ComposeUp(ctx, p, engine.UpOptions{Force: req.GetForceRecreate()}, auths, progress)
	case agentpb.ComposeAction_COMPOSE_ACTION_START:
		err = c.ComposeStart(ctx, name, p, progress)
	case agentpb.ComposeAction_COMPOSE_ACTION_STOP:
		err = c.ComposeStop(ctx, name, p, progress)
	case agentpb.ComposeAction_COMPOSE_ACTION_RESTART:
		err = c.ComposeRestart(ctx, name, p, progress)
	case agentpb.ComposeAction_COMPOSE_ACTION_DOWN:
		err = c.ComposeDown(ctx, name, p, req.GetRemoveVolumes(), progress)
	default:
		return fmt.Errorf("%w: compose action %v", engine.ErrUnsupported, req.GetAction())
	}
	if sendErr != nil {
		return sendErr
	}
	return err
}

// loadProject parses the project Berth sent (compose JSON, variables
// already applied: no interpolation again) with StacksDir/<name> as its
// working directory.
func (r *Runner) loadProject(ctx context.Context, name string, doc []byte) (*types.Project, error) {
	dir := filepath.Join(r.stacksDir, name)
	file := filepath.Join(dir, "compose.yaml")
	p, err := loader.LoadWithContext(ctx, types.ConfigDetails{
		WorkingDir:  dir,
		ConfigFiles: []types.ConfigFile{{Filename: file, Content: doc}},
		Environment: types.Mapping{},
	}, func(o *loader.Options) {
		o.SetProjectName(name, true)
		o.SkipInterpolation = true
		o.ResolvePaths = true
	})
	if err != nil {
		return nil, fmt.Errorf("%w: compose project: %v", engine.ErrInvalid, err)
	}
	p.ComposeFiles = []string{file}
	engine.LabelProject(p)
	return p, nil
}
