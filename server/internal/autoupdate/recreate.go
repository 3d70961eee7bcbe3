package autoupdate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// rollbackTimeout bounds putting the old container back, which happens even
// when the update's own context has ended.
const rollbackTimeout = 2 * time.Minute

// recoveryKey is the execution detail that tells, while a container is
// being recreated, how to put it back: the server checkpoints it before
// each step that changes the engine, so that after a crash Recover finds
// the old container (renamed aside), the new one, and whether the new one
// had already proved itself.
const recoveryKey = "recovery"

// recovery is the value of recoveryKey.
type recovery struct {
	Environment  int64  `json:"environment"`
	Container    string `json:"container"` // the old container's id
	Name         string `json:"name"`
	Aside        string `json:"aside"`
	Ref          string `json:"ref"`
	OldImage     string `json:"oldImage"`
	Running      bool   `json:"running"`
	NewContainer string `json:"newContainer,omitempty"`
	Proven       bool   `json:"proven,omitempty"` // the new container passed its grace period
}

// checkpoint records rec as the recovery detail, now.
func checkpoint(ctx context.Context, p Progress, rec recovery) error {
	p.Detail(recoveryKey, rec)
	if err := p.Checkpoint(ctx); err != nil {
		return fault.Wrap(fault.Internal, "Failed to record the update's progress", err)
	}
	return nil
}

// recreate replaces the container cfg with a copy on the image newID: the
// container's reference ref is moved to newID, the old container is stopped
// and renamed aside, the copy is created under the old name and started,
// and it must stay up for the grace period. Only then is the old container
// removed; on any failure the old container and the old tag come back. A
// container is never lost: the old one is removed last, after the new one
// proved itself.
//
// With ref "" the image stays as it is (a change of configuration, given
// With on cfg): nothing is tagged. o says how the copy is made.
func (s *Service) recreate(ctx context.Context, env int64, c *engine.Client, cfg engine.ContainerConfig, ref, newID string, p Progress, o recreateOptions) (string, error) {
	aside := fmt.Sprintf("%s-berth-old-%s", cfg.Name, cfg.ID[:min(12, len(cfg.ID))])
	if o.name == "" {
		o.name = cfg.Name
	}
	if o.grace <= 0 {
		o.grace = s.grace
	}
	start := cfg.Running || o.start
	if ref != "" {
		p.Logf("Recreating %s on %s", cfg.Name, shortImage(newID))
	} else {
		p.Logf("Recreating %s with its new configuration", cfg.Name)
	}
	rec := recovery{Environment: env, Container: cfg.ID, Name: cfg.Name, Aside: aside, Ref: ref, OldImage: cfg.ImageID,
		Running: cfg.Running}
	if err := checkpoint(ctx, p, rec); err != nil {
		return "", err
	}
	defer p.Clear(recoveryKey) // the run's end records the outcome instead
	if ref != "" {
		if err := c.TagImage(ctx, newID, ref); err != nil {
			return "", fault.Wrap(fault.Internal, "Failed to tag the new image", err).WithDetails(engine.Details(err))
		}
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
	id, err := c.CreateLike(ctx, cfg, o.name)
	if err != nil {
		return "", r.undo(ctx, "the new container could not be created: "+engine.Details(err))
	}
	r.newID = id
	p.Detail("newContainerId", id)
	rec.NewContainer = id
	if err := checkpoint(ctx, p, rec); err != nil {
		return "", r.undo(ctx, err.Error())
	}
	if start {
		if err := c.StartContainer(ctx, id); err != nil {
			return "", r.undo(ctx, "the new container could not be started: "+engine.Details(err))
		}
		p.Logf("Waiting %s for the new container to prove itself", o.grace)
		if why := s.healthGate(ctx, c, id, o.grace, !o.healthStarting); why != "" {
			return "", r.undo(ctx, why)
		}
	}
	rec.Proven = true
	if err := checkpoint(ctx, p, rec); err != nil {
		return "", r.undo(ctx, err.Error())
	}
	if err := c.RemoveContainer(context.WithoutCancel(ctx), cfg.ID, true); err != nil {
		p.Logf("The old container %s could not be removed: %s", aside, engine.Details(err))
	}
	if ref != "" {
		p.Logf("Updated %s to %s", cfg.Name, shortImage(newID))
	} else {
		p.Logf("Recreated %s", o.name)
	}
	return id, nil
}

// recreateOptions say how recreate makes the copy.
type recreateOptions struct {
	name           string        // the copy's name ("": the old one's)
	start          bool          // start the copy even if the old one was not running
	grace          time.Duration // how long the copy must stay up (0: the service's grace)
	healthStarting bool          // a health check still starting at the end of grace is accepted
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
	if r.ref != "" {
		if err := r.c.TagImage(ctx, r.cfg.ImageID, r.ref); err != nil {
			problems = append(problems, r.ref+" still names the new image: "+engine.Details(err))
		}
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
func (s *Service) healthGate(ctx context.Context, c *engine.Client, id string, grace time.Duration, waitHealthy bool) string {
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
		if elapsed >= grace {
			switch {
			case st.Health != "starting" || !waitHealthy:
				return ""
			case elapsed >= grace+s.healthTimeout:
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

// notes is a Progress that keeps only the log lines (for a recovery, which
// belongs to no run).
type notes struct{ lines []string }

func (n *notes) Logf(format string, args ...any) {
	n.lines = append(n.lines, fmt.Sprintf(format, args...))
}
func (n *notes) Detail(string, any)               {}
func (n *notes) Clear(string)                     {}
func (n *notes) Checkpoint(context.Context) error { return nil }

// Recover is the schedule.Recoverer of container updates and update checks.
// When the interrupted execution e stopped in the middle of recreating a
// container (it checkpointed a recovery detail), Recover puts the container
// right: if the new container had proved itself, the update is finished by
// removing the old one; otherwise the update is rolled back as if it had
// failed: the new container is removed, the reference names the old image
// again, and the old container gets its name back and runs again if it ran.
// It tells what it did ("" when e left nothing half done).
func (s *Service) Recover(ctx context.Context, e store.Execution) (string, error) {
	var d struct {
		Recovery *recovery `json:"recovery"`
	}
	if e.Details == "" || json.Unmarshal([]byte(e.Details), &d) != nil || d.Recovery == nil {
		return "", nil
	}
	rec := *d.Recovery
	env, err := s.store.GetEnvironment(ctx, rec.Environment)
	if err != nil {
		return "", err
	}
	c, err := s.engines.Client(ctx, env.Endpoint())
	if err != nil {
		return "", err
	}
	old, err := c.InspectConfig(ctx, rec.Container)
	switch {
	case errors.Is(err, engine.ErrNotFound) && rec.Proven:
		return fmt.Sprintf("%s had been updated: nothing to put right", rec.Name), nil
	case errors.Is(err, engine.ErrNotFound):
		return "", fmt.Errorf("the old container of %s (%s) is gone: nothing to roll back to", rec.Name, shortImage(rec.Container))
	case err != nil:
		return "", err
	}
	if rec.Proven {
		if err := c.RemoveContainer(ctx, old.ID, true); err != nil {
			return "", fmt.Errorf("the old container %s could not be removed: %s", rec.Aside, engine.Details(err))
		}
		return fmt.Sprintf("The new %s had passed its grace period: the update was completed (the old container was removed)", rec.Name), nil
	}
	n := &notes{}
	r := rollback{c: c, cfg: engine.ContainerConfig{ID: old.ID, Name: rec.Name, ImageID: rec.OldImage, Running: rec.Running},
		ref: rec.Ref, aside: rec.Aside, renamed: old.Name != rec.Name, newID: rec.NewContainer, p: n}
	if r.newID == "" {
		// Stopped between creating the new container and recording it: the
		// container now under the name, made from the same reference, is it.
		if cur, err := c.InspectConfig(ctx, rec.Name); err == nil && cur.ID != old.ID && cur.Image == rec.Ref {
			r.newID = cur.ID
		}
	}
	err = r.undo(ctx, fmt.Sprintf("Berth stopped while %s was being updated", rec.Name))
	if f, ok := fault.As(err); ok && f.Details != "" {
		return "", fmt.Errorf("%s: %s", f.Message, f.Details)
	}
	return fmt.Sprintf("The update of %s was rolled back: the old container is back on %s", rec.Name, shortImage(rec.OldImage)), nil
}
