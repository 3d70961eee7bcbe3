// Package selfupdate replaces the container Berth runs in with one on a
// newer image. Berth cannot stop itself and carry on, so the hand-over is
// done by an updater: a short-lived container on the new image, started
// beside Berth with the engine socket, that stops the old container, starts
// a copy of it (same mounts, environment, ports, networks) on the new image,
// and keeps it only once it proved healthy; otherwise it removes the copy
// and starts the old container again. The old container is removed last.
package selfupdate

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// ErrNotInContainer is the refusal when Berth does not run as a container.
var ErrNotInContainer = fault.New(fault.Invalid,
	"Berth is not running in a container: self-update replaces Berth's own container; update Berth the way it was installed")

// containerPath finds a container id in the paths the engine mounts into
// its containers (/var/lib/docker/containers/<id>/hostname, resolv.conf).
var containerPath = regexp.MustCompile(`/containers/([0-9a-f]{64})/`)

// Detect returns the id of the container whose mount table mountinfo is
// (/proc/self/mountinfo), or "" when it is not a container's.
func Detect(mountinfo io.Reader) string {
	sc := bufio.NewScanner(mountinfo)
	for sc.Scan() {
		if m := containerPath.FindStringSubmatch(sc.Text()); m != nil {
			return m[1]
		}
	}
	return ""
}

// Gate is how long a new container must stay up (and, with a health check,
// become healthy) before the old one is removed.
type Gate struct {
	Grace   time.Duration // stay running this long
	Healthy time.Duration // then, with a health check still starting, wait this much more
	Poll    time.Duration
}

// DefaultGate is the gate of a self-update.
var DefaultGate = Gate{Grace: 10 * time.Second, Healthy: 2 * time.Minute, Poll: time.Second}

// HandOver replaces container oldID by a copy on image newImage (a
// reference or id): the old container is stopped (freeing its ports) and
// renamed aside, the copy is created under its name and started, and must
// pass the gate. Then the old container is removed; on any failure the copy
// is removed and the old container renamed back and started again. log
// receives each step. It returns the new container's id.
func HandOver(ctx context.Context, c *engine.Client, oldID, newImage string, g Gate, log func(string)) (string, error) {
	cfg, err := c.InspectConfig(ctx, oldID)
	if err != nil {
		return "", fmt.Errorf("inspect the running container: %w", err)
	}
	cfg.Image = newImage
	aside := fmt.Sprintf("%s-berth-old-%s", cfg.Name, cfg.ID[:12])
	log("Stopping " + cfg.Name)
	if err := c.StopContainer(ctx, cfg.ID); err != nil {
		return "", fmt.Errorf("stop the old container: %w", err)
	}
	back := func(why string, newID string) error {
		ctx := context.WithoutCancel(ctx)
		log("Rolling back: " + why)
		var problems []string
		if newID != "" {
			if err := c.RemoveContainer(ctx, newID, true); err != nil {
				problems = append(problems, "the new container stays: "+engine.Details(err))
			}
		}
		if current, err := c.InspectConfig(ctx, cfg.ID); err == nil && current.Name != cfg.Name {
			if err := c.RenameContainer(ctx, cfg.ID, cfg.Name); err != nil {
				problems = append(problems, "the old container is still named "+aside+": "+engine.Details(err))
			}
		}
		if err := c.StartContainer(ctx, cfg.ID); err != nil && !errors.Is(err, engine.ErrNotModified) {
			problems = append(problems, "the old container could not be started: "+engine.Details(err))
		}
		if len(problems) > 0 {
			return fmt.Errorf("self-update rolled back (%s), incompletely: %s", why, strings.Join(problems, "; "))
		}
		log("Rolled back: the old container runs again")
		return fmt.Errorf("self-update rolled back: %s", why)
	}
	if err := c.RenameContainer(ctx, cfg.ID, aside); err != nil {
		return "", back("the old container could not be renamed: "+engine.Details(err), "")
	}
	log("Creating " + cfg.Name + " on " + newImage)
	newID, err := c.CreateLike(ctx, cfg, cfg.Name)
	if err != nil {
		return "", back("the new container could not be created: "+engine.Details(err), "")
	}
	if err := c.StartContainer(ctx, newID); err != nil {
		return "", back("the new container could not be started: "+engine.Details(err), newID)
	}
	log("Waiting for the new container to prove itself")
	if why := g.wait(ctx, c, newID); why != "" {
		return "", back(why, newID)
	}
	log("The new container is up; removing the old one")
	if err := c.RemoveContainer(context.WithoutCancel(ctx), cfg.ID, true); err != nil {
		log("The old container " + aside + " could not be removed: " + engine.Details(err))
	}
	log("Updated " + cfg.Name)
	return newID, nil
}

// wait watches container id through the gate; it returns why it failed,
// or "".
func (g Gate) wait(ctx context.Context, c *engine.Client, id string) string {
	start := time.Now()
	for {
		_, st, err := c.InspectContainer(ctx, id)
		if err != nil {
			return "the new container could not be inspected: " + engine.Details(err)
		}
		switch {
		case st.Restarting || st.RestartCount > 0:
			return fmt.Sprintf("the new container restarted (exit code %d)", st.ExitCode)
		case !st.Running:
			return fmt.Sprintf("the new container exited with code %d", st.ExitCode)
		case st.Health == "unhealthy":
			return "the new container turned unhealthy"
		}
		if el := time.Since(start); el >= g.Grace {
			switch {
			case st.Health != "starting":
				return ""
			case el >= g.Grace+g.Healthy:
				return "the new container did not become healthy in time"
			}
		}
		select {
		case <-ctx.Done():
			return "the update was interrupted"
		case <-time.After(g.Poll):
		}
	}
}
