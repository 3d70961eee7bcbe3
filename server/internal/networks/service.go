// Package networks provides network operations on an environment's engine:
// listing with the attached containers, inspection, creation, removal, and
// connecting and disconnecting containers, with errors turned into the
// faults clients see.
package networks

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// Service runs network operations.
type Service struct {
	engines *engine.Manager
	log     *slog.Logger
}

// New returns a Service.
func New(engines *engine.Manager, log *slog.Logger) *Service {
	return &Service{engines: engines, log: log}
}

// BuiltIn are the networks every engine creates itself; they cannot be removed.
var BuiltIn = []string{"bridge", "host", "none"}

// opFault turns an engine error of operation op ("remove network") into the
// fault clients see. notFound is the message of a 404 (which object the
// operation could not find).
func opFault(op, notFound string, err error) error {
	details := engine.Details(err)
	switch {
	case errors.Is(err, engine.ErrNotFound):
		return fault.Wrap(fault.NotFound, notFound, err)
	case errors.Is(err, engine.ErrInvalid):
		details = strings.TrimPrefix(details, engine.ErrInvalid.Error()+": ")
		return fault.Wrap(fault.Invalid, "Failed to "+op, err).WithDetails(details)
	}
	return fault.Wrap(fault.Internal, "Failed to "+op, err).WithDetails(details)
}

const msgNotFound = "Network not found"

// List returns the networks of env with their attached containers. An
// offline environment lists as empty.
func (s *Service) List(ctx context.Context, env store.Environment) ([]engine.Network, error) {
	c, err := s.engines.Client(ctx, env.Endpoint())
	if err != nil {
		if engine.IsOffline(err) || errors.Is(err, engine.ErrUnsupported) {
			return []engine.Network{}, nil
		}
		return nil, opFault("list networks", msgNotFound, err)
	}
	list, err := c.ListNetworks(ctx)
	if err != nil {
		if engine.IsOffline(err) {
			return []engine.Network{}, nil
		}
		return nil, opFault("list networks", msgNotFound, err)
	}
	return list, nil
}

// Inspect returns the engine's inspection document of a network (id or name).
func (s *Service) Inspect(ctx context.Context, env store.Environment, id string) (json.RawMessage, error) {
	c, err := s.engines.Client(ctx, env.Endpoint())
	if err != nil {
		return nil, opFault("inspect network", msgNotFound, err)
	}
	raw, _, err := c.InspectNetwork(ctx, id)
	if err != nil {
		return nil, opFault("inspect network", msgNotFound, err)
	}
	return raw, nil
}

// Remove deletes a network (id or name). The built-in networks are refused
// (400), and so is a network with attached containers (409).
func (s *Service) Remove(ctx context.Context, env store.Environment, id string) error {
	const op = "remove network"
	c, err := s.engines.Client(ctx, env.Endpoint())
	if err != nil {
		return opFault(op, msgNotFound, err)
	}
	_, n, err := c.InspectNetwork(ctx, id)
	if err != nil {
		return opFault(op, msgNotFound, err)
	}
	if slices.Contains(BuiltIn, n.Name) {
		return fault.New(fault.Invalid, "Cannot remove a built-in network")
	}
	if len(n.Containers) > 0 {
		return inUse(n, nil)
	}
	if err := c.RemoveNetwork(ctx, n.ID); err != nil {
		switch {
		case errors.Is(err, engine.ErrConflict): // a container attached meanwhile
			return inUse(n, err)
		case errors.Is(err, engine.ErrInvalid): // the engine's own pre-defined networks
			return fault.Wrap(fault.Invalid, "Cannot remove a built-in network", err).WithDetails(engine.Details(err))
		}
		return opFault(op, msgNotFound, err)
	}
	return nil
}

// inUse is the 409 of removing network n, naming its containers.
func inUse(n engine.Network, cause error) error {
	f := fault.Wrap(fault.Conflict, "Network is in use", cause)
	if len(n.Containers) == 0 {
		return f.WithDetails(engine.Details(cause))
	}
	names := make([]string, 0, len(n.Containers))
	for id, ep := range n.Containers {
		if ep.Name != "" {
			names = append(names, ep.Name)
		} else {
			names = append(names, id[:min(12, len(id))])
		}
	}
	slices.Sort(names)
	return f.WithDetails("containers attached: " + strings.Join(names, ", ") + "; disconnect them first")
}

// Connect attaches a container (id or name) to a network (id or name).
func (s *Service) Connect(ctx context.Context, env store.Environment, networkID, containerID string) error {
	const op = "connect container to network"
	containerID = strings.TrimSpace(containerID)
	if containerID == "" {
		return fault.New(fault.Invalid, "Container ID is required")
	}
	c, n, err := s.network(ctx, env, networkID, op)
	if err != nil {
		return err
	}
	if err := c.ConnectNetwork(ctx, n.ID, containerID); err != nil {
		if errors.Is(err, engine.ErrConflict) {
			return fault.Wrap(fault.Conflict, "Container is already connected to this network", err).WithDetails(engine.Details(err))
		}
		return opFault(op, "Container not found", err)
	}
	return nil
}

// Disconnect detaches a container (id or name) from a network (id or name);
// force detaches it even when the engine cannot clean up.
func (s *Service) Disconnect(ctx context.Context, env store.Environment, networkID, containerID string, force bool) error {
	const op = "disconnect container from network"
	containerID = strings.TrimSpace(containerID)
	if containerID == "" {
		return fault.New(fault.Invalid, "Container ID is required")
	}
	c, n, err := s.network(ctx, env, networkID, op)
	if err != nil {
		return err
	}
	if err := c.DisconnectNetwork(ctx, n.ID, containerID, force); err != nil {
		if errors.Is(err, engine.ErrConflict) {
			return fault.Wrap(fault.Conflict, "Container is not connected to this network", err).WithDetails(engine.Details(err))
		}
		return opFault(op, "Container not found", err)
	}
	return nil
}

// network resolves a network id or name, so that a 404 says which of the
// network and the container is missing.
func (s *Service) network(ctx context.Context, env store.Environment, id, op string) (*engine.Client, engine.Network, error) {
	c, err := s.engines.Client(ctx, env.Endpoint())
	if err != nil {
		return nil, engine.Network{}, opFault(op, msgNotFound, err)
	}
	_, n, err := c.InspectNetwork(ctx, id)
	if err != nil {
		return nil, engine.Network{}, opFault(op, msgNotFound, err)
	}
	return c, n, nil
}
