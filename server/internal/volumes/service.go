// Package volumes provides volume operations on an environment's engine:
// listing, inspection, creation with the name rules of the spec, and
// removal, with errors turned into the faults clients see.
package volumes

import (
	"context"
	"errors"
	"log/slog"
	"strings"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// Service runs volume operations.
type Service struct {
	engines *engine.Manager
	log     *slog.Logger
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

// List returns the volumes of env. An offline environment lists as empty.
func (s *Service) List(ctx context.Context, env store.Environment) ([]engine.Volume, error) {
	c, err := s.engines.Client(ctx, env.Endpoint())
	if err != nil {
		if engine.IsOffline(err) || errors.Is(err, engine.ErrUnsupported) {
			return []engine.Volume{}, nil
		}
		return nil, opFault("list volumes", err)
	}
	list, err := c.ListVolumes(ctx)
	if err != nil {
		if engine.IsOffline(err) {
			return []engine.Volume{}, nil
		}
		return nil, opFault("list volumes", err)
	}
	return list, nil
}

// Inspect returns the volume called name.
func (s *Service) Inspect(ctx context.Context, env store.Environment, name string) (engine.Volume, error) {
	c, err := s.engines.Client(ctx, env.Endpoint())
	if err != nil {
		return engine.Volume{}, opFault("inspect volume", err)
	}
	v, err := c.InspectVolume(ctx, name)
	if err != nil {
		return engine.Volume{}, opFault("inspect volume", err)
	}
	return v, nil
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
