package stacks

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/compose-spec/compose-go/v2/types"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// Action is a lifecycle operation on a stack's containers.
type Action string

// The lifecycle actions.
const (
	Start   Action = "start"
	Stop    Action = "stop"
	Restart Action = "restart"
	Down    Action = "down"
	// DownVolumes takes the stack down and removes its named volumes too.
	DownVolumes Action = "down-volumes"
)

// target is a stack an operation acts on: Berth's record (ID 0 for a compose
// project Berth does not know) and its project when its files can be read.
type target struct {
	record  store.Stack
	project *types.Project
	running bool
	exists  bool // the engine has containers of it
}

// resolve finds the stack called name for operation op: Berth's record, or
// a compose project on the engine (neither is the 404 naming the stack),
// and returns the engine with it.
func (s *Service) resolve(ctx context.Context, env store.Environment, name, op string) (*engine.Client, target, error) {
	c, err := s.client(ctx, env, op)
	if err != nil {
		return nil, target{}, err
	}
	t, err := s.find(ctx, c, env, name)
	if err != nil {
		return nil, target{}, opFault(op, err)
	}
	return c, t, nil
}

func (s *Service) find(ctx context.Context, c *engine.Client, env store.Environment, name string) (target, error) {
	var t target
	st, err := s.store.GetStack(ctx, env.ID, name)
	switch {
	case err == nil:
		t.record = st
		// A record whose files are not under the allowed stack roots (one
		// written before the rule) acts on its containers only.
		if _, confErr := s.files(ctx, st); confErr != nil {
			s.log.Warn("stack files refused", "stack", st.Name, "err", confErr)
		} else if _, statErr := os.Stat(s.composePath(st)); statErr == nil {
			if t.project, err = s.project(ctx, st); err != nil {
				return target{}, err
			}
		}
	case !errors.Is(err, store.ErrNotFound):
		return target{}, err
	}
	list, err := c.ListContainers(ctx, true)
	if err != nil {
		return target{}, err
	}
	for _, ct := range list {
		if ct.Labels[engine.ComposeProjectLabel] == name {
			t.exists = true
			t.running = t.running || ct.State == "running"
		}
	}
	if t.record.ID == 0 && !t.exists {
		return target{}, notFound(name)
	}
	return t, nil
}

// Run applies a lifecycle action to the stack called name.
func (s *Service) Run(ctx context.Context, env store.Environment, name string, a Action, progress engine.ComposeProgress) error {
	op := fmt.Sprintf("%s stack '%s'", a, name)
	unlock, err := s.lock(ctx, env.ID, name)
	if err != nil {
		return err
	}
	defer unlock()
	c, t, err := s.resolve(ctx, env, name, op)
	if err != nil {
		return err
	}
	if t.exists && t.record.ID != 0 && (a == Start || a == Restart) {
		// Compose would start a container an interrupted deploy of Berth's
		// left under a temporary name under that name.
		if err := s.repairBefore(ctx, c, name, progress); err != nil {
			return opFault(op, err)
		}
	}
	switch a {
	case Start:
		if !t.exists && t.project != nil { // never created (deployed with start false): bring it up
			if err := s.checkPolicy(ctx, env, t.project); err != nil {
				return err
			}
			err = s.up(ctx, c, t.project, engine.UpOptions{}, progress)
		} else {
			err = c.ComposeStart(ctx, name, t.project, progress)
		}
	case Stop:
		err = c.ComposeStop(ctx, name, t.project, progress)
	case Restart:
		err = c.ComposeRestart(ctx, name, t.project, progress)
	case Down, DownVolumes:
		err = c.ComposeDown(ctx, name, t.project, a == DownVolumes, progress)
	default:
		return fault.Invalidf("Unknown stack action %q", a)
	}
	if a == DownVolumes {
		a = Down
	}
	s.notifyAction(env.ID, name, a, err)
	if err != nil {
		return opFault(op, err)
	}
	return nil
}

// Delete removes a stack by the spec's rules: containers and the networks
// it created go (named volumes only with force); an internal or git stack's
// files, clone, schedule and records go; an adopted stack loses only
// Berth's records, its files and containers stay. A running stack needs
// force.
func (s *Service) Delete(ctx context.Context, env store.Environment, name string, force bool) error {
	return s.DeleteWith(ctx, env, name, DeleteOptions{Force: force, Volumes: force})
}

// DeleteOptions are the choices of DeleteWith.
type DeleteOptions struct {
	Force     bool // delete a running stack
	Volumes   bool // remove its named volumes too (down -v)
	KeepFiles bool // keep the stack's compose and env files on disk (only the records go)
}

// DeleteWith is Delete with the volumes and the files chosen apart from
// force (the reference's volumes and files).
func (s *Service) DeleteWith(ctx context.Context, env store.Environment, name string, o DeleteOptions) error {
	force := o.Force
	op := fmt.Sprintf("delete stack '%s'", name)
	unlock, err := s.lock(ctx, env.ID, name)
	if err != nil {
		return err
	}
	defer unlock()
	st, err := s.store.GetStack(ctx, env.ID, name)
	if err == nil && st.SourceType == store.SourceExternal {
		return s.store.DeleteStack(ctx, st.ID)
	}
	c, t, err := s.resolve(ctx, env, name, op)
	if err != nil {
		return err
	}
	if t.running && !force {
		return fault.New(fault.Invalid, fmt.Sprintf("Stack '%s' is running. Stop it first or use force=true to delete it.", name))
	}
	if t.exists || force {
		if err := c.ComposeDown(ctx, name, t.project, o.Volumes, nil); err != nil {
			return opFault(op, err)
		}
	}
	if t.record.ID == 0 {
		return nil
	}
	if t.record.SourceType == store.SourceGit {
		if err := os.RemoveAll(s.CloneDir(t.record.ID)); err != nil {
			s.log.Warn("remove git clone", "stack", name, "err", err)
		}
	}
	if err := s.store.DeleteStack(ctx, t.record.ID); err != nil {
		return err
	}
	if !o.KeepFiles {
		s.removeFiles(ctx, t.record)
	}
	return nil
}
