package containers

import (
	"context"
	"errors"
	"strings"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// CreateSpec is a container to create, as clients describe it.
type CreateSpec struct {
	Name             string
	Image            string
	StartAfterCreate bool
	// PortBindings is the spec's form: "<port>/<proto>" → [{HostPort}].
	PortBindings map[string][]engine.HostPort
	// Ports is the de-facto form: [{containerPort, hostPort, protocol}].
	Ports         []PortSpec
	Command       []string
	Env           []string
	Labels        map[string]string
	NetworkMode   string
	RestartPolicy string
	Privileged    bool
	Tty           bool
	Memory        int64
	NanoCPUs      int64
	CapAdd        []string
	Volumes       []string // binds: "source:destination[:mode]"
	// Options are the other settings, over the fields above.
	Options engine.Settings
}

// PortSpec is one port mapping in the de-facto form.
type PortSpec struct {
	ContainerPort string
	HostPort      string
	HostIP        string
	Protocol      string
}

// validate checks the spec and merges Ports into PortBindings.
func (sp *CreateSpec) validate() error {
	sp.Image = strings.TrimSpace(sp.Image)
	if sp.Image == "" {
		return fault.New(fault.Invalid, "Image is required")
	}
	sp.Name = strings.TrimPrefix(strings.TrimSpace(sp.Name), "/")
	if sp.Name != "" && !engine.ValidName(sp.Name) {
		return fault.New(fault.Invalid, "Invalid container name: use letters, digits, '_', '.' and '-', starting with a letter or digit")
	}
	if sp.Memory < 0 || sp.NanoCPUs < 0 {
		return fault.New(fault.Invalid, "memory and nanoCpus must not be negative")
	}
	for _, p := range sp.Ports {
		cp := strings.TrimSpace(p.ContainerPort)
		if cp == "" {
			return fault.New(fault.Invalid, "containerPort is required for each port")
		}
		proto := strings.ToLower(strings.TrimSpace(p.Protocol))
		if proto == "" {
			proto = "tcp"
		}
		key := cp
		if !strings.Contains(cp, "/") {
			key = cp + "/" + proto
		}
		if sp.PortBindings == nil {
			sp.PortBindings = map[string][]engine.HostPort{}
		}
		sp.PortBindings[key] = append(sp.PortBindings[key], engine.HostPort{HostIP: p.HostIP, HostPort: p.HostPort})
	}
	return nil
}

// Check validates sp and tells what the container would ask of its host.
func (sp *CreateSpec) Check() (engine.HostNeeds, error) {
	if err := sp.validate(); err != nil {
		return engine.HostNeeds{}, err
	}
	n, err := engine.CheckCreate(sp.engineSpec())
	if err != nil {
		return n, fault.Wrap(fault.Invalid, strings.TrimPrefix(err.Error(), engine.ErrInvalid.Error()+": "), err)
	}
	return n, nil
}

func (sp *CreateSpec) engineSpec() engine.CreateSpec {
	return engine.CreateSpec{
		Name: sp.Name, Image: sp.Image, Cmd: sp.Command, Env: sp.Env, Labels: sp.Labels,
		PortBindings: sp.PortBindings, NetworkMode: sp.NetworkMode, RestartPolicy: sp.RestartPolicy,
		Privileged: sp.Privileged, Tty: sp.Tty, OpenStdin: sp.Tty, Memory: sp.Memory, NanoCPUs: sp.NanoCPUs,
		CapAdd: sp.CapAdd, Binds: sp.Volumes, Options: sp.Options,
	}
}

// Create creates a container and, when asked, starts it. It returns the full id.
func (s *Service) Create(ctx context.Context, env store.Environment, sp CreateSpec) (string, error) {
	if err := sp.validate(); err != nil {
		return "", err
	}
	c, err := s.client(ctx, env, "create container")
	if err != nil {
		return "", err
	}
	id, err := c.CreateContainer(ctx, sp.engineSpec())
	if err != nil {
		switch {
		case errors.Is(err, engine.ErrNotFound):
			return "", fault.Wrap(fault.NotFound, "Image not found: "+sp.Image, err)
		case errors.Is(err, engine.ErrConflict):
			return "", fault.Wrap(fault.Conflict, "A container with this name already exists", err)
		}
		return "", opFault("create container", err)
	}
	if sp.StartAfterCreate {
		if err := c.StartContainer(ctx, id); err != nil {
			f := opFault("start container", err).(*fault.Error)
			return id, f.WithDetails("created " + id + " but could not start it: " + f.Details)
		}
	}
	return id, nil
}
