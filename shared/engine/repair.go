package engine

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/docker/compose/v5/pkg/api"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
)

// A compose up recreates a container in four steps: it creates the new
// container under a temporary name (the replaced container's short id, "_",
// and the final name: "3f2a1b0c9d8e_web-app-1"), stops the old one, removes
// it, and renames the new one; the project's containers are started after
// every recreate. A run stopped between those steps (Berth killed, its
// context cancelled, an agent gone) leaves a container under the temporary
// name, and a later up, which sees two containers for one replica, keeps the
// up-to-date one under that name for good.

// tempRecreateName matches a temporary recreate name: the replaced
// container's short id and the final name.
var tempRecreateName = regexp.MustCompile(`^([0-9a-f]{12})_(.+)$`)

// recreateTarget tells whether s is the new container of an unfinished
// recreate, and then the short id of the container it replaces and its
// final name: its name is the temporary one of a container of its project,
// service and number (compose's default name, or the container_name its
// replace label keeps), so that a container whose own name merely looks
// like one ("0123456789ab_x-app-1" of a stack called "0123456789ab_x") is
// not taken for it.
func recreateTarget(s container.Summary) (replaced, final string, ok bool) {
	m := tempRecreateName.FindStringSubmatch(containerName(s))
	if m == nil {
		return "", "", false
	}
	project, service, number := s.Labels[ComposeProjectLabel], s.Labels[ComposeServiceLabel], s.Labels[api.ContainerNumberLabel]
	switch r := s.Labels[api.ContainerReplaceLabel]; m[2] {
	case project + api.Separator + service + api.Separator + number, r:
		return m[1], m[2], true
	}
	return "", "", false
}

// repairTimeout bounds the repair of one project (stops included).
const repairTimeout = 5 * time.Minute

// RepairOptions say what RepairRecreates does besides the names.
type RepairOptions struct {
	// Start starts the containers whose recreate it finished, and the
	// project's containers created but never started: what the interrupted
	// up would have done last. A deploy, which starts them itself, leaves
	// it false.
	Start bool
	// Before, when set, limits the repair to containers created before it:
	// a container created later belongs to a run in progress (another
	// server's, or compose's own), not to an interrupted one.
	Before time.Time
}

// InterruptedProjects returns the compose projects of the engine that an
// interrupted up left half done: with a container under a temporary
// recreate name, or with one created but never started (one-off containers
// aside), each created before before (zero: any time).
func (c *Client) InterruptedProjects(ctx context.Context, before time.Time) (map[string]bool, error) {
	list, err := c.composeContainers(ctx, "")
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, s := range list {
		if !createdBefore(s, before) {
			continue
		}
		if _, _, temp := recreateTarget(s); temp || s.State == container.StateCreated {
			out[s.Labels[ComposeProjectLabel]] = true
		}
	}
	return out, nil
}

// RepairRecreates finishes the recreates an interrupted up left in project,
// as compose would have finished them: a container under a temporary name
// whose old container is still there has that one stopped and removed, and
// takes the final name; one whose old container is gone takes the final
// name; one whose final name another container holds is a stray and is
// removed. With o.Start the finished containers, and the project's
// containers created but never started, are started. It returns what it did,
// one line per step (none when there was nothing to do), and the errors of the steps that
// failed (the others are done all the same). The caller makes sure no
// compose run of its own is in progress on the project.
func (c *Client) RepairRecreates(ctx context.Context, project string, o RepairOptions) ([]string, error) {
	if err := CheckProjectName(project); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, repairTimeout)
	defer cancel()
	list, err := c.composeContainers(ctx, project)
	if err != nil {
		return nil, err
	}
	// Oldest first: a recreate of a container that was itself a temporary
	// one is finished after that one.
	slices.SortStableFunc(list, func(a, b container.Summary) int {
		if a.Created != b.Created {
			return int(a.Created - b.Created)
		}
		return strings.Compare(containerName(a), containerName(b))
	})
	byName := map[string]container.Summary{}
	for _, s := range list {
		byName[containerName(s)] = s
	}
	var notes []string
	var errs []error
	var start []container.Summary
	for _, s := range list {
		name := containerName(s)
		if !createdBefore(s, o.Before) {
			continue
		}
		replaced, final, temp := recreateTarget(s)
		if !temp {
			if s.State == container.StateCreated {
				start = append(start, s)
			}
			continue
		}
		old, taken := byName[final]
		if taken && !strings.HasPrefix(old.ID, replaced) {
			// Not the container it replaced: the recreate was already
			// finished or undone another way.
			if _, err := c.cli.ContainerRemove(ctx, s.ID, client.ContainerRemoveOptions{Force: true}); err != nil {
				errs = append(errs, fmt.Errorf("remove the stray container %s: %w", name, c.fail(err)))
				continue
			}
			notes = append(notes, fmt.Sprintf("Removed %s, left by an interrupted recreate of %s", name, final))
			delete(byName, name)
			continue
		}
		if taken {
			// As compose's own steps: stop the old container (its own
			// stop timeout; a stop the interrupted run asked for goes on in
			// the engine, and this waits for it too), then remove it.
			_, err := c.cli.ContainerStop(ctx, old.ID, client.ContainerStopOptions{})
			if err := c.fail(err); err != nil && !errors.Is(err, ErrNotModified) && !errors.Is(err, ErrNotFound) {
				errs = append(errs, fmt.Errorf("stop the replaced container %s: %w", final, err))
				continue
			}
			_, err = c.cli.ContainerRemove(ctx, old.ID, client.ContainerRemoveOptions{Force: true})
			if err := c.fail(err); err != nil && !errors.Is(err, ErrNotFound) {
				errs = append(errs, fmt.Errorf("remove the replaced container %s: %w", final, err))
				continue
			}
		}
		if _, err := c.cli.ContainerRename(ctx, s.ID, client.ContainerRenameOptions{NewName: final}); err != nil {
			errs = append(errs, fmt.Errorf("rename %s to %s: %w", name, final, c.fail(err)))
			continue
		}
		delete(byName, name)
		s.Names = []string{"/" + final}
		byName[final] = s
		if taken {
			notes = append(notes, fmt.Sprintf("Finished the interrupted recreate of %s (the old container was replaced by the new one)", final))
		} else {
			notes = append(notes, fmt.Sprintf("Finished the interrupted recreate of %s (the new container took its name)", final))
		}
		if s.State != container.StateRunning {
			start = append(start, s)
		}
	}
	if o.Start {
		for _, s := range start {
			_, err := c.cli.ContainerStart(ctx, s.ID, client.ContainerStartOptions{})
			switch err = c.fail(err); {
			case err == nil:
				notes = append(notes, "Started "+containerName(s))
			case !errors.Is(err, ErrNotModified):
				errs = append(errs, fmt.Errorf("start %s: %w", containerName(s), err))
			}
		}
	}
	return notes, errors.Join(errs...)
}

// composeContainers lists the containers of project ("": of every compose
// project), stopped ones included, one-off ones (compose run) left out.
func (c *Client) composeContainers(ctx context.Context, project string) ([]container.Summary, error) {
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	label := ComposeProjectLabel
	if project != "" {
		label += "=" + project
	}
	res, err := c.cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: make(client.Filters).Add("label", label)})
	if err != nil {
		return nil, c.fail(err)
	}
	return slices.DeleteFunc(res.Items, func(s container.Summary) bool {
		return s.Labels[ComposeOneoffLabel] == "True"
	}), nil
}

// containerName is the name of a listed container, without its slash (not
// one of the "/other/alias" names legacy links add).
func containerName(s container.Summary) string {
	for _, n := range s.Names {
		if n = strings.TrimPrefix(n, "/"); !strings.Contains(n, "/") {
			return n
		}
	}
	return ""
}

// createdBefore reports whether s was created no later than t (zero: any
// time); the engine gives creation times in whole seconds.
func createdBefore(s container.Summary, t time.Time) bool {
	return t.IsZero() || s.Created <= t.Unix()
}
