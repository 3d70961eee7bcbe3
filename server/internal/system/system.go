// Package system provides the engine-wide operations of an environment that
// belong to no single object: host facts, disk usage, container sizes and
// the prunes of stopped containers, unused networks and volumes (and, for a
// prune of everything, dangling images).
package system

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// Service runs the operations on the environments' engines.
type Service struct {
	engines *engine.Manager
}

// New returns a Service.
func New(engines *engine.Manager) *Service { return &Service{engines: engines} }

// opFault turns an engine error of operation op into the fault clients see.
func opFault(op string, err error) error {
	details := engine.Details(err)
	if errors.Is(err, engine.ErrInvalid) {
		return fault.Wrap(fault.Invalid, "Failed to "+op, err).WithDetails(details)
	}
	return fault.Wrap(fault.Internal, "Failed to "+op, err).WithDetails(details)
}

func (s *Service) client(ctx context.Context, env store.Environment, op string) (*engine.Client, error) {
	c, err := s.engines.Client(ctx, env.Endpoint())
	if err != nil {
		return nil, opFault(op, err)
	}
	return c, nil
}

// Host returns what env's engine tells about itself and its host.
func (s *Service) Host(ctx context.Context, env store.Environment) (engine.HostInfo, error) {
	c, err := s.client(ctx, env, "get host information")
	if err != nil {
		return engine.HostInfo{}, err
	}
	info, err := c.HostInfo(ctx)
	if err != nil {
		return engine.HostInfo{}, opFault("get host information", err)
	}
	return info, nil
}

// Disk returns env's engine disk usage.
func (s *Service) Disk(ctx context.Context, env store.Environment) (engine.DiskUsage, error) {
	c, err := s.client(ctx, env, "get disk usage")
	if err != nil {
		return engine.DiskUsage{}, err
	}
	du, err := c.DiskUsage(ctx)
	if err != nil {
		return engine.DiskUsage{}, opFault("get disk usage", err)
	}
	return du, nil
}

// Sizes returns the sizes of env's containers.
func (s *Service) Sizes(ctx context.Context, env store.Environment) ([]engine.ContainerSize, error) {
	c, err := s.client(ctx, env, "get container sizes")
	if err != nil {
		return nil, err
	}
	list, err := c.ContainerSizes(ctx)
	if err != nil {
		return nil, opFault("get container sizes", err)
	}
	return list, nil
}

// Kind is what a prune removes.
type Kind string

// The prune kinds.
const (
	Containers Kind = "containers"
	Networks   Kind = "networks"
	Volumes    Kind = "volumes"
	All        Kind = "all"
)

// ValidLabels checks label selectors ("key" or "key=value"): a non-empty
// key without spaces or control characters.
func ValidLabels(labels []string) error {
	for _, l := range labels {
		key, _, _ := strings.Cut(l, "=")
		if strings.TrimSpace(key) == "" || strings.IndexFunc(l, unicode.IsControl) >= 0 || strings.ContainsAny(key, " \t") {
			return fault.Invalidf("Invalid label filter %q: use key or key=value", l)
		}
	}
	return nil
}

// Report is what a prune removed. Of a prune of everything, each part's
// report, and the bytes freed in all.
type Report struct {
	Deleted        []string       `json:"deleted,omitempty"`
	SpaceReclaimed uint64         `json:"spaceReclaimed"`
	Containers     *engine.Pruned `json:"containers,omitempty"`
	Networks       *engine.Pruned `json:"networks,omitempty"`
	Volumes        *engine.Pruned `json:"volumes,omitempty"`
	Images         *engine.Pruned `json:"images,omitempty"`
}

// Prune removes what kind names from env, only objects carrying every
// label of labels (none: everything unused). A prune of everything removes
// stopped containers, unused networks and dangling images, in that order,
// and unused volumes too when volumes is true.
func (s *Service) Prune(ctx context.Context, env store.Environment, kind Kind, labels []string, volumes bool) (Report, error) {
	if err := ValidLabels(labels); err != nil {
		return Report{}, err
	}
	op := "prune " + string(kind)
	if kind == All {
		op = "prune unused objects"
	}
	c, err := s.client(ctx, env, op)
	if err != nil {
		return Report{}, err
	}
	one := func(k Kind) (engine.Pruned, error) {
		var (
			p   engine.Pruned
			err error
		)
		switch k {
		case Containers:
			p, err = c.PruneContainers(ctx, labels)
		case Networks:
			p, err = c.PruneNetworks(ctx, labels)
		case Volumes:
			p, err = c.PruneVolumes(ctx, labels)
		default:
			p, err = c.PruneDanglingImages(ctx, labels)
		}
		if err != nil {
			return p, opFault(fmt.Sprintf("prune %s", k), err)
		}
		return p, nil
	}
	if kind != All {
		p, err := one(kind)
		if err != nil {
			return Report{}, err
		}
		return Report{Deleted: p.Deleted, SpaceReclaimed: p.SpaceReclaimed}, nil
	}
	var rep Report
	parts := []struct {
		kind Kind
		into **engine.Pruned
	}{{Containers, &rep.Containers}, {Networks, &rep.Networks}, {"images", &rep.Images}}
	if volumes {
		parts = append(parts, struct {
			kind Kind
			into **engine.Pruned
		}{Volumes, &rep.Volumes})
	}
	for _, part := range parts {
		p, err := one(part.kind)
		if err != nil {
			return Report{}, err
		}
		*part.into = &p
		rep.SpaceReclaimed += p.SpaceReclaimed
	}
	return rep, nil
}
