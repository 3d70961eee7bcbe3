package autoupdate

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/berth-dev/berth/server/internal/images"
	"github.com/berth-dev/berth/server/internal/schedule"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// checkConcurrency bounds the registry lookups of one update check.
const checkConcurrency = 4

// CheckProblem is a container an update check could not check.
type CheckProblem struct {
	Container string `json:"container"`
	Error     string `json:"error"`
}

// Check finds the containers of env whose image has a newer version in its
// registry and records them as env's pending updates (replacing the last
// check's). Containers pinned to a digest or id are not checked; one whose
// registry cannot be asked is reported, not fatal.
func (s *Service) Check(ctx context.Context, env store.Environment, p Progress) ([]store.PendingUpdate, []CheckProblem, error) {
	c, err := s.engines.Client(ctx, env.Endpoint())
	if err != nil {
		return nil, nil, engineFault("reach the environment", env, err)
	}
	list, err := c.ListContainers(ctx, true)
	if err != nil {
		return nil, nil, engineFault("list containers", env, err)
	}
	var (
		mu       sync.Mutex
		pending  []store.PendingUpdate
		problems []CheckProblem
	)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(checkConcurrency)
	for _, ct := range list {
		g.Go(func() error {
			image := ct.Image
			if pinned(image, ct.ImageID) {
				// The engine lists a container by its image's id when its
				// reference now names another image (a newer one pulled or
				// tagged since): the reference it was created with says what
				// to check.
				if !imageID.MatchString(image) {
					return nil // pinned to a digest
				}
				cfg, err := c.InspectConfig(gctx, ct.ID)
				if err != nil || pinned(cfg.Image, ct.ImageID) {
					return nil
				}
				image = cfg.Image
			}
			ref := images.PullReference(image)
			creds, err := s.images.CredentialsFor(gctx, ref)
			if err != nil {
				return err
			}
			remote, err := c.RegistryDigest(gctx, ref, creds)
			var cur engine.ImageInfo
			if err == nil {
				cur, err = c.InspectImage(gctx, ct.ImageID)
			}
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				problems = append(problems, CheckProblem{Container: ct.Name, Error: engine.Details(err)})
			case !hasDigest(cur.RepoDigests, remote):
				pending = append(pending, store.PendingUpdate{EnvironmentID: env.ID, ContainerName: ct.Name, ContainerID: ct.ID,
					Image: image, CurrentImageID: ct.ImageID, NewDigest: remote, CheckedAt: s.now().UTC()})
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	sort.Slice(pending, func(i, j int) bool { return pending[i].ContainerName < pending[j].ContainerName })
	sort.Slice(problems, func(i, j int) bool { return problems[i].Container < problems[j].Container })
	if err := s.store.ReplacePendingUpdates(ctx, env.ID, pending); err != nil {
		return nil, nil, err
	}
	s.notifyDetected(env.ID, env.Name, pending)
	for _, pu := range pending {
		p.Logf("Update available: %s (%s → %s)", pu.ContainerName, pu.Image, pu.NewDigest)
	}
	for _, pr := range problems {
		p.Logf("Not checked: %s: %s", pr.Container, pr.Error)
	}
	p.Logf("Checked %d containers: %d updates available", len(list), len(pending))
	return pending, problems, nil
}

// PendingUpdates returns the pending updates the last check of env found.
func (s *Service) PendingUpdates(ctx context.Context, env store.Environment) ([]store.PendingUpdate, error) {
	return s.store.ListPendingUpdates(ctx, env.ID)
}

// prefixed is a Progress whose log lines name one container.
type prefixed struct {
	Progress
	name string
}

func (p prefixed) Logf(format string, args ...any) {
	p.Progress.Logf("%s: %s", p.name, fmt.Sprintf(format, args...))
}

func (p prefixed) Detail(string, any) {}

// RunUpdateCheck is the env_update_check schedule: check env (d.ID), and
// with auto-update on, update each container found by the criteria.
func (s *Service) RunUpdateCheck(ctx context.Context, d schedule.Definition, run *schedule.Run) error {
	env, err := s.store.GetEnvironment(ctx, d.ID)
	if err != nil {
		return err
	}
	pending, problems, err := s.Check(ctx, env, run)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(pending))
	for _, pu := range pending {
		names = append(names, pu.ContainerName)
	}
	run.Detail("pendingUpdates", names)
	if len(problems) > 0 {
		run.Detail("notChecked", problems)
	}
	if !d.AutoUpdate || len(pending) == 0 {
		return nil
	}
	var updated, blocked, failed []string
	for _, pu := range pending {
		out, err := s.Update(ctx, env, pu.ContainerName, d.VulnerabilityCriteria, prefixed{run, pu.ContainerName})
		s.notifyOutcome(env.ID, pu.ContainerName, out, err)
		switch {
		case err != nil:
			run.Logf("%s: update failed: %s", pu.ContainerName, errorText(err))
			failed = append(failed, pu.ContainerName)
		case out.Skipped != "":
			run.Logf("%s: skipped: %s", pu.ContainerName, out.Skipped)
			blocked = append(blocked, pu.ContainerName)
		case out.Updated:
			updated = append(updated, pu.ContainerName)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	run.Detail("updated", nonNil(updated))
	run.Detail("skipped", nonNil(blocked))
	run.Detail("failed", nonNil(failed))
	if len(failed) > 0 {
		return fmt.Errorf("%d of %d container updates failed: %s", len(failed), len(pending), strings.Join(failed, ", "))
	}
	return nil
}

// RunContainerUpdate is the container_update schedule: update container
// d.EntityName of its environment by its criteria.
func (s *Service) RunContainerUpdate(ctx context.Context, d schedule.Definition, run *schedule.Run) error {
	if d.EnvironmentID == nil {
		return fault.New(fault.Invalid, "The auto-update configuration names no environment")
	}
	env, err := s.store.GetEnvironment(ctx, *d.EnvironmentID)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return fault.New(fault.NotFound, "Environment not found")
		}
		return err
	}
	out, err := s.Update(ctx, env, d.EntityName, d.VulnerabilityCriteria, run)
	if errors.Is(err, ErrContainerGone) {
		return s.dropOrphan(ctx, env, d, run)
	}
	s.notifyOutcome(env.ID, d.EntityName, out, err)
	if err != nil {
		return err
	}
	if out.Skipped != "" {
		run.Skip(out.Skipped)
	}
	return nil
}

// dropOrphan removes the auto-update of a container that was removed
// outside Berth (a container removed through Berth takes its auto-update
// with it): the run is recorded as skipped with the reason, once, instead
// of failing at every tick of the schedule, and the schedule is gone.
func (s *Service) dropOrphan(ctx context.Context, env store.Environment, d schedule.Definition, run *schedule.Run) error {
	if _, err := s.store.DeleteAutoUpdate(ctx, &env.ID, d.EntityName); err != nil {
		return err
	}
	s.log.Info("auto-update of a removed container removed", "environment", env.ID, "container", d.EntityName)
	if s.schedulesChanged != nil {
		s.schedulesChanged(ctx)
	}
	run.Skip(fmt.Sprintf("Container %s no longer exists (removed outside Berth): its auto-update was removed", d.EntityName))
	return nil
}

func errorText(err error) string {
	if f, ok := fault.As(err); ok {
		if f.Details != "" {
			return f.Message + ": " + f.Details
		}
		return f.Message
	}
	return err.Error()
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
