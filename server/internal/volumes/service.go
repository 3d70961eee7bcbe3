// Package volumes provides volume operations on an environment's engine:
// listing, inspection, creation with the name rules of the spec, and
// removal, with errors turned into the faults clients see.
package volumes

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// Service runs volume operations.
type Service struct {
	engines *engine.Manager
	log     *slog.Logger

	hadVolumes sync.Map // env id → bool: its last volume list was not empty
}

// New returns a Service.
func New(engines *engine.Manager, log *slog.Logger) *Service {
	return &Service{engines: engines, log: log}
}

// opFault turns an engine error of operation op ("remove volume") into the
// fault clients see. A volume that does not exist is 404 Volume not found.
func opFault(op string, err error) error {
	if errors.Is(err, engine.ErrNotFound) {
		return fault.Wrap(fault.NotFound, "Volume not found", err)
	}
	return fault.Wrap(fault.Internal, "Failed to "+op, err).WithDetails(engine.Details(err))
}

// Volume is the volume object clients see: the engine's volume, created
// (the same value as createdAt, for clients that read that name) and the
// containers that mount it.
type Volume struct {
	engine.Volume
	Created string `json:"created"`
	UsedBy  []User `json:"usedBy"`
}

// User is a container that mounts a volume.
type User struct {
	ContainerID   string `json:"containerId"`
	ContainerName string `json:"containerName"`
}

// List returns the volumes of env with the containers using each. The
// engine's container list, which tells the users, is only fetched when
// there are volumes: beside the volume list when the environment had
// volumes last time, else after it, when it lists any. An offline
// environment lists as empty.
func (s *Service) List(ctx context.Context, env store.Environment) ([]Volume, error) {
	c, err := s.engines.Client(ctx, env.Endpoint())
	if err != nil {
		if engine.IsOffline(err) || errors.Is(err, engine.ErrUnsupported) {
			return []Volume{}, nil
		}
		return nil, opFault("list volumes", err)
	}
	list, users, err := s.listWithUsers(ctx, env.ID, c)
	if err != nil {
		if engine.IsOffline(err) {
			return []Volume{}, nil
		}
		return nil, opFault("list volumes", err)
	}
	out := make([]Volume, 0, len(list))
	for _, v := range list {
		out = append(out, withUsers(v, users))
	}
	return out, nil
}

// listWithUsers lists the volumes and, when there are any, their users.
func (s *Service) listWithUsers(ctx context.Context, envID int64, c *engine.Client) ([]engine.Volume, map[string][]User, error) {
	had, _ := s.hadVolumes.Load(envID)
	if had != true {
		list, err := c.ListVolumes(ctx)
		if err != nil {
			return nil, nil, err
		}
		s.hadVolumes.Store(envID, len(list) > 0)
		if len(list) == 0 {
			return list, nil, nil
		}
		users, err := usersByVolume(ctx, c)
		return list, users, err
	}
	var (
		list  []engine.Volume
		users map[string][]User
	)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		list, err = c.ListVolumes(gctx)
		return err
	})
	g.Go(func() (err error) {
		users, err = usersByVolume(gctx, c)
		return err
	})
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	s.hadVolumes.Store(envID, len(list) > 0)
	return list, users, nil
}

// Inspect returns the volume called name.
func (s *Service) Inspect(ctx context.Context, env store.Environment, name string) (Volume, error) {
	c, err := s.engines.Client(ctx, env.Endpoint())
	if err != nil {
		return Volume{}, opFault("inspect volume", err)
	}
	v, err := c.InspectVolume(ctx, name)
	if err != nil {
		return Volume{}, opFault("inspect volume", err)
	}
	users, err := usersByVolume(ctx, c)
	if err != nil {
		return Volume{}, opFault("inspect volume", err)
	}
	return withUsers(v, users), nil
}

// usersByVolume maps each volume name to the containers (running or not)
// that mount it, from the engine's container list.
func usersByVolume(ctx context.Context, c *engine.Client) (map[string][]User, error) {
	containers, err := c.ListContainers(ctx, true)
	if err != nil {
		return nil, err
	}
	users := map[string][]User{}
	for _, ct := range containers {
		for _, m := range ct.Mounts {
			if m.Type == "volume" && m.Name != "" {
				users[m.Name] = append(users[m.Name], User{ContainerID: ct.ID, ContainerName: ct.Name})
			}
		}
	}
	return users, nil
}

// withUsers returns v as clients see it; usedBy is never null.
func withUsers(v engine.Volume, users map[string][]User) Volume {
	used := users[v.Name]
	if used == nil {
		used = []User{}
	}
	return Volume{Volume: v, Created: v.CreatedAt, UsedBy: used}
}

// Remove deletes a volume. A volume in use by a container is refused (409)
// and stays as it is, with or without force.
func (s *Service) Remove(ctx context.Context, env store.Environment, name string, force bool) error {
	c, err := s.engines.Client(ctx, env.Endpoint())
	if err != nil {
		return opFault("remove volume", err)
	}
	if err := c.RemoveVolume(ctx, name, force); err != nil {
		if errors.Is(err, engine.ErrConflict) {
			f := fault.Wrap(fault.Conflict, "Volume is in use by a container", err)
			var e *engine.Error
			if errors.As(err, &e) {
				f = f.WithDetails(strings.TrimPrefix(e.Msg, "Error response from daemon: "))
			}
			return f
		}
		return opFault("remove volume", err)
	}
	return nil
}
