package stacks

import (
	"context"
	"sync"
	"time"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
)

// repairParallel is how many environments RepairInterrupted visits at once.
const repairParallel = 4

// RepairInterrupted puts right, on every environment, the stacks Berth
// knows that a deploy interrupted by Berth's last stop left half done (see
// engine.Client.RepairRecreates): each recreate it left under compose's
// temporary name is finished, and the containers it finished or had created
// but not started yet are started. Containers created after since (when
// this server started) belong to runs in progress and are left alone. An
// environment whose engine cannot be reached now is skipped: its stacks are
// put right before their next deploy. Berth runs it in the background at
// start; it logs what it did.
func (s *Service) RepairInterrupted(ctx context.Context, since time.Time) {
	envs, err := s.store.ListEnvironments(ctx)
	if err != nil {
		s.log.Error("stacks left by an interrupted deploy not looked for", "err", err)
		return
	}
	sem := make(chan struct{}, repairParallel)
	var wg sync.WaitGroup
	for _, env := range envs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			s.repairEnvironment(ctx, env, since)
		})
	}
	wg.Wait()
}

// repairEnvironment is RepairInterrupted on one environment.
func (s *Service) repairEnvironment(ctx context.Context, env store.Environment, since time.Time) {
	records, err := s.store.ListStacks(ctx, env.ID)
	if err != nil {
		s.log.Error("stacks left by an interrupted deploy not looked for", "environment", env.ID, "err", err)
		return
	}
	if len(records) == 0 {
		return
	}
	c, err := s.engines.Client(ctx, env.Endpoint())
	if err != nil {
		s.log.Debug("stacks left by an interrupted deploy not looked for: engine unreachable", "environment", env.ID, "err", err)
		return
	}
	projects, err := c.InterruptedProjects(ctx, since)
	if err != nil {
		s.log.Debug("stacks left by an interrupted deploy not looked for", "environment", env.ID, "err", err)
		return
	}
	for _, st := range records {
		if projects[st.Name] {
			s.repairStack(ctx, c, env, st.Name, engine.RepairOptions{Start: true, Before: since})
		}
	}
}

// repairStack repairs stack name under its lock.
func (s *Service) repairStack(ctx context.Context, c *engine.Client, env store.Environment, name string, o engine.RepairOptions) {
	unlock, err := s.lock(ctx, env.ID, name)
	if err != nil {
		s.log.Warn("stacks: not repaired", "env", env.ID, "stack", name, "err", err)
		return
	}
	defer unlock()
	notes, err := c.RepairRecreates(ctx, name, o)
	for _, n := range notes {
		s.log.Warn("stack put right after an interrupted deploy", "environment", env.ID, "stack", name, "did", n)
	}
	if err != nil {
		s.log.Error("stack left by an interrupted deploy not put right", "environment", env.ID, "stack", name, "err", err)
	}
}

// repairBefore finishes, before an operation on project (its stack's lock
// held), what an interrupted deploy left of it, telling progress what it
// did. The operation starts the containers itself.
func (s *Service) repairBefore(ctx context.Context, c *engine.Client, project string, progress engine.ComposeProgress) error {
	notes, err := c.RepairRecreates(ctx, project, engine.RepairOptions{})
	for _, n := range notes {
		s.log.Warn("stack put right after an interrupted deploy", "stack", project, "did", n)
		if progress != nil {
			progress(n)
		}
	}
	return err
}
