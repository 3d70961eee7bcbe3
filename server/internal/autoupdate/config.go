package autoupdate

import (
	"context"
	"errors"
	"strings"

	"github.com/berth-dev/berth/server/internal/schedule"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// Request is a container's auto-update configuration as a client sends it.
type Request struct {
	Enabled               *bool
	CronExpression        string
	VulnerabilityCriteria string
	ScheduleType          string
}

// Default settings shown for a container without a configuration.
const DefaultCron = "0 3 * * *"

// Configure applies the spec's state table to container name of env:
// enabled true creates or updates its configuration; enabled false deletes
// it (deleted true), whether or not there was one.
func (s *Service) Configure(ctx context.Context, env store.Environment, name string, req Request) (a store.AutoUpdate, deleted bool, err error) {
	name = strings.TrimPrefix(strings.TrimSpace(name), "/")
	if !engine.ValidName(name) {
		return store.AutoUpdate{}, false, fault.Invalidf("Invalid container name %q", name)
	}
	// A missing enabled is false, as in the reference: the configuration
	// is deleted.
	if req.Enabled == nil || !*req.Enabled {
		if _, err := s.store.DeleteAutoUpdate(ctx, &env.ID, name); err != nil {
			return store.AutoUpdate{}, false, err
		}
		return store.AutoUpdate{}, true, nil
	}
	cron := strings.Join(strings.Fields(req.CronExpression), " ")
	if _, err := schedule.ParseCron(cron); err != nil {
		return store.AutoUpdate{}, false, err
	}
	criteria, err := CheckCriteria(req.VulnerabilityCriteria)
	if err != nil {
		return store.AutoUpdate{}, false, err
	}
	scheduleType, err := schedule.CheckScheduleType(req.ScheduleType, cron)
	if err != nil {
		return store.AutoUpdate{}, false, err
	}
	a = store.AutoUpdate{ContainerName: name, EnvironmentID: &env.ID, Enabled: true, ScheduleType: scheduleType,
		CronExpression: cron, VulnerabilityCriteria: criteria}
	if err := s.store.UpsertAutoUpdate(ctx, &a); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return store.AutoUpdate{}, false, fault.New(fault.NotFound, "Environment not found")
		}
		return store.AutoUpdate{}, false, err
	}
	return a, false, nil
}

// Config returns container name's configuration in env, or found false.
func (s *Service) Config(ctx context.Context, env store.Environment, name string) (a store.AutoUpdate, found bool, err error) {
	a, err = s.store.GetAutoUpdate(ctx, &env.ID, name)
	if errors.Is(err, store.ErrNotFound) {
		return store.AutoUpdate{}, false, nil
	}
	return a, err == nil, err
}

// Configs returns the configurations of env's containers.
func (s *Service) Configs(ctx context.Context, env store.Environment) ([]store.AutoUpdate, error) {
	all, err := s.store.ListAutoUpdates(ctx)
	if err != nil {
		return nil, err
	}
	out := []store.AutoUpdate{}
	for _, a := range all {
		if a.EnvironmentID != nil && *a.EnvironmentID == env.ID {
			out = append(out, a)
		}
	}
	return out, nil
}

// Remove deletes container name's configuration in env; deleted is false
// when there was none.
func (s *Service) Remove(ctx context.Context, env store.Environment, name string) (bool, error) {
	return s.store.DeleteAutoUpdate(ctx, &env.ID, name)
}
