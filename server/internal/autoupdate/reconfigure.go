package autoupdate

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// reconfigureGrace bounds how long a container recreated with a new
// configuration must stay up before the old one is removed: a client waits
// for the answer.
const reconfigureGrace = 3 * time.Second

// Reconfiguration is a change of a container's configuration.
type Reconfiguration struct {
	Settings engine.Settings
	Name     string // the new container's name ("": the old one's)
	Start    bool   // start the new container even if the old one was not running
	// Allow judges what the new configuration asks of the host (the
	// environment's security settings); nil allows everything.
	Allow func(engine.HostNeeds) error
}

// Reconfigure recreates container id of env with the settings of rc over
// its whole configuration, through the same recreate as an update: the old
// container is stopped and set aside, the new one created under the name
// and started if the old one ran (or rc asks), and kept only if it stays up;
// otherwise the old one comes back under its name, as it was. It returns
// the new container's id.
func (s *Service) Reconfigure(ctx context.Context, env store.Environment, id string, rc Reconfiguration) (string, error) {
	c, err := s.engines.Client(ctx, env.Endpoint())
	if err != nil {
		return "", engineFault("reach the environment", env, err)
	}
	cfg, err := c.InspectConfig(ctx, id)
	if err != nil {
		if errors.Is(err, engine.ErrNotFound) {
			return "", fault.Wrap(fault.NotFound, "Container not found", err)
		}
		return "", engineFault("inspect the container", env, err)
	}
	next := cfg.With(rc.Settings)
	needs, err := next.Needs()
	if err != nil {
		return "", fault.Wrap(fault.Invalid, strings.TrimPrefix(err.Error(), engine.ErrInvalid.Error()+": "), err)
	}
	if rc.Allow != nil {
		if err := rc.Allow(needs); err != nil {
			return "", err
		}
	}
	if rc.Settings.Image != "" {
		if _, err := c.InspectImage(ctx, rc.Settings.Image); err != nil {
			if errors.Is(err, engine.ErrNotFound) {
				return "", fault.Wrap(fault.NotFound, "Image not found: "+rc.Settings.Image, err)
			}
			return "", engineFault("inspect the image", env, err)
		}
	}
	name := strings.TrimPrefix(strings.TrimSpace(rc.Name), "/")
	if name != "" && !engine.ValidName(name) {
		return "", fault.New(fault.Invalid, "Invalid container name: use letters, digits, '_', '.' and '-', starting with a letter or digit")
	}
	newID, err := s.recreate(ctx, env.ID, c, next, "", "", &notes{}, recreateOptions{name: name, start: rc.Start,
		grace: min(s.grace, reconfigureGrace), healthStarting: true})
	if err != nil {
		return "", err
	}
	if _, err := s.store.DeletePendingUpdate(context.WithoutCancel(ctx), env.ID, cfg.Name); err != nil {
		s.log.Warn("the pending update record stays", "container", cfg.Name, "err", err)
	}
	return newID, nil
}
