package autoupdate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// rollbackTimeout bounds putting the old container back, which happens even
// when the update's own context has ended.
const rollbackTimeout = 2 * time.Minute

// recreate replaces the container cfg with a copy on the image newID: the
// container's reference ref is moved to newID, the old container is stopped
// and renamed aside, the copy is created under the old name and started,
// and it must stay up for the grace period. Only then is the old container
// removed; on any failure the old container and the old tag come back. A
// container is never lost: the old one is removed last, after the new one
// proved itself.
func (s *Service) recreate(ctx context.Context, c *engine.Client, cfg engine.ContainerConfig, ref, newID string, p Progress) (string, error) {
	aside := fmt.Sprintf("%s-berth-old-%s", cfg.Name, cfg.ID[:min(12, len(cfg.ID))])
	p.Logf("Recreating %s on %s", cfg.Name, shortImage(newID))
	if err := c.TagImage(ctx, newID, ref); err != nil {
		return "", fault.Wrap(fault.Internal, "Failed to tag the new image", err).WithDetails(engine.Details(err))
	}
	r := rollback{c: c, cfg: cfg, ref: ref, aside: aside, p: p}
	if cfg.Running {
		p.Logf("Stopping the old container")
		if err := c.StopContainer(ctx, cfg.ID); err != nil {
			return "", r.undo(ctx, "the old container could not be stopped: "+engine.Details(err))
		}
	}
	if err := c.RenameContainer(ctx, cfg.ID, aside); err != nil {
		return "", r.undo(ctx, "the old container could not be renamed: "+engine.Details(err))
	}
	r.renamed = true
	id, err := c.CreateLike(ctx, cfg, cfg.Name)
	if err != nil {
		return "", r.undo(ctx, "the new container could not be created: "+engine.Details(err))
	}
	r.newID = id
	p.Detail("newContainerId", id)
	if cfg.Running {
		if err := c.StartContainer(ctx, id); err != nil {
			return "", r.undo(ctx, "the new container could not be started: "+engine.Details(err))
		}
		p.Logf("Waiting %s for the new container to prove itself", s.grace)
		if why := s.healthGate(ctx, c, id); why != "" {
			return "", r.undo(ctx, why)
		}
	}
	if err := c.RemoveContainer(context.WithoutCancel(ctx), cfg.ID, true); err != nil {
		p.Logf("The old container %s could not be removed: %s", aside, engine.Details(err))
	}
	p.Logf("Updated %s to %s", cfg.Name, shortImage(newID))
	return id, nil
}

func shortImage(id string) string {
	id = strings.TrimPrefix(id, "sha256:")
	return id[:min(12, len(id))]
}

// rollback undoes the steps of a recreate done so far.
type rollback struct {
	c       *engine.Client
	cfg     engine.ContainerConfig
	ref     string
	aside   string
	renamed bool
	newID   string
	p       Progress
}

// undo removes the new container, gives the reference back to the old
// image, renames the old container back and starts it if it ran. It returns
// the update's failure: "Update rolled back: <why>", plus what could not be
// undone, if anything.
func (r rollback) undo(ctx context.Context, why string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
	defer cancel()
	r.p.Logf("Rolling back: %s", why)
	r.p.Detail("rolledBack", true)
	r.p.Detail("reason", why)
	var problems []string
	if r.newID != "" {
		if err := r.c.RemoveContainer(ctx, r.newID, true); err != nil {
			problems = append(problems, "the new container stays: "+engine.Details(err))
		}
	}
	if err := r.c.TagImage(ctx, r.cfg.ImageID, r.ref); err != nil {
		problems = append(problems, r.ref+" still names the new image: "+engine.Details(err))
	}
	if r.renamed {
		if err := r.c.RenameContainer(ctx, r.cfg.ID, r.cfg.Name); err != nil {
			problems = append(problems, fmt.Sprintf("the old container is still named %s: %s", r.aside, engine.Details(err)))
		}
	}
	if r.cfg.Running {
		if err := r.c.StartContainer(ctx, r.cfg.ID); err != nil && !errors.Is(err, engine.ErrNotModified) {
			problems = append(problems, "the old container could not be started again: "+engine.Details(err))
		}
	}
	f := fault.New(fault.Internal, "Update rolled back: "+why)
	if len(problems) > 0 {
		r.p.Logf("Rollback incomplete: %s", strings.Join(problems, "; "))
		return f.WithDetails("rollback incomplete: " + strings.Join(problems, "; "))
	}
	r.p.Logf("Rolled back to %s", shortImage(r.cfg.ImageID))
	return f
}

// healthGate watches the new container for the grace period (longer while
// its health check is still starting). It returns why the container failed,
// or "" when it stayed up.
func (s *Service) healthGate(ctx context.Context, c *engine.Client, id string) string {
	start := s.now()
	for {
		_, st, err := c.InspectContainer(ctx, id)
		if err != nil {
			if ctx.Err() != nil {
				return "the update was interrupted"
			}
			return "the new container could not be inspected: " + engine.Details(err)
		}
		switch {
		case st.Restarting || st.RestartCount > 0:
			return fmt.Sprintf("the new container restarted (exit code %d) within the grace period", st.ExitCode)
		case !st.Running:
			why := fmt.Sprintf("the new container exited with code %d within the grace period", st.ExitCode)
			if st.Error != "" {
				why += ": " + st.Error
			}
			return why
		case st.Health == "unhealthy":
			return "the new container turned unhealthy"
		}
		elapsed := s.now().Sub(start)
		if elapsed >= s.grace {
			switch {
			case st.Health != "starting":
				return ""
			case elapsed >= s.grace+s.healthTimeout:
				return "the new container did not become healthy in time"
			}
		}
		select {
		case <-ctx.Done():
			return "the update was interrupted"
		case <-time.After(s.poll):
		}
	}
}
