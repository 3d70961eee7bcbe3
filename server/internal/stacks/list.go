package stacks

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
)

// Stack statuses.
const (
	StatusRunning = "running"
	StatusStopped = "stopped"
	StatusPartial = "partial"
	StatusCreated = "created"
)

// Entry is a stack list entry of the spec.
type Entry struct {
	Name             string      `json:"name"`
	Containers       []string    `json:"containers"`
	ContainerDetails []Container `json:"containerDetails"`
	Status           string      `json:"status"`
	SourceType       string      `json:"sourceType"`
	EnvironmentID    int64       `json:"environmentId"`
	Adopted          bool        `json:"adopted"`
	WorkingDir       string      `json:"workingDir,omitempty"`
	ConfigFiles      []string    `json:"configFiles,omitempty"`
}

// Container is one container of a stack.
type Container struct {
	ID           string    `json:"id"`
	Name         string    `json:"name"`
	Service      string    `json:"service"`
	State        string    `json:"state"`
	Status       string    `json:"status"`
	Health       string    `json:"health"`
	Image        string    `json:"image"`
	Ports        []Port    `json:"ports"`
	Networks     []Network `json:"networks"`
	VolumeCount  int       `json:"volumeCount"`
	RestartCount int       `json:"restartCount"`
	Created      int64     `json:"created"`
	// Labels are the container's labels (COMPAT), never null.
	Labels map[string]string `json:"labels"`
}

// Port is a port of a stack container.
type Port struct {
	PublicPort  int    `json:"publicPort"`
	PrivatePort int    `json:"privatePort"`
	Type        string `json:"type"`
	Display     string `json:"display"`
}

// Network is a network of a stack container.
type Network struct {
	Name      string `json:"name"`
	IPAddress string `json:"ipAddress"`
}

// List returns the stacks of env: compose projects on its engine (Berth's
// and others') and stacks known only to Berth (status created). An offline
// environment lists as empty.
func (s *Service) List(ctx context.Context, env store.Environment) ([]Entry, error) {
	records, err := s.store.ListStacks(ctx, env.ID)
	if err != nil {
		return nil, err
	}
	projects, err := s.projects(ctx, env)
	if err != nil {
		if engine.IsOffline(err) || errors.Is(err, engine.ErrUnsupported) {
			return []Entry{}, nil
		}
		return nil, opFault("list stacks", err)
	}
	out := []Entry{}
	for _, r := range records {
		e := projects[r.Name]
		if e == nil {
			e = &Entry{Name: r.Name, Containers: []string{}, ContainerDetails: []Container{}}
		}
		e.SourceType, e.Adopted = r.SourceType, r.SourceType == store.SourceExternal
		delete(projects, r.Name)
		out = append(out, finish(e, env.ID))
	}
	for _, e := range projects {
		e.SourceType = store.SourceExternal
		out = append(out, finish(e, env.ID))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func finish(e *Entry, envID int64) Entry {
	e.EnvironmentID = envID
	e.Status = statusOf(e.ContainerDetails)
	sort.Slice(e.ContainerDetails, func(i, j int) bool { return e.ContainerDetails[i].Name < e.ContainerDetails[j].Name })
	return *e
}

// statusOf derives a stack's status from its containers.
func statusOf(cs []Container) string {
	running := 0
	for _, c := range cs {
		if c.State == "running" {
			running++
		}
	}
	switch {
	case len(cs) == 0:
		return StatusCreated
	case running == len(cs):
		return StatusRunning
	case running == 0:
		return StatusStopped
	}
	return StatusPartial
}

// projects groups env's containers by compose project label.
func (s *Service) projects(ctx context.Context, env store.Environment) (map[string]*Entry, error) {
	c, err := s.engines.Client(ctx, env.Endpoint())
	if err != nil {
		return nil, err
	}
	list, err := c.ListContainers(ctx, true)
	if err != nil {
		return nil, err
	}
	out := map[string]*Entry{}
	for _, ct := range list {
		name := ct.Labels[engine.ComposeProjectLabel]
		if name == "" || strings.EqualFold(ct.Labels[engine.ComposeOneoffLabel], "true") {
			continue
		}
		e := out[name]
		if e == nil {
			e = &Entry{Name: name, Containers: []string{}, ContainerDetails: []Container{},
				WorkingDir: ct.Labels[engine.ComposeWorkingDirLabel]}
			if files := ct.Labels[engine.ComposeConfigLabel]; files != "" {
				e.ConfigFiles = strings.Split(files, ",")
			}
			out[name] = e
		}
		e.Containers = append(e.Containers, ct.ID)
		e.ContainerDetails = append(e.ContainerDetails, toContainer(ct))
	}
	return out, nil
}

func toContainer(ct engine.Container) Container {
	out := Container{ID: ct.ID, Name: ct.Name, Service: ct.Labels[engine.ComposeServiceLabel], State: ct.State,
		Status: ct.Status, Health: ct.Health, Image: ct.Image, RestartCount: ct.RestartCount, Created: ct.Created,
		Ports: []Port{}, Networks: []Network{}, Labels: ct.Labels}
	if out.Labels == nil {
		out.Labels = map[string]string{}
	}
	if out.Health == "" {
		out.Health = "none"
	}
	seen := map[string]bool{}
	for _, p := range ct.Ports {
		d := fmt.Sprintf("%d/%s", p.PrivatePort, p.Type)
		if p.PublicPort != 0 {
			d = fmt.Sprintf("%d:%d/%s", p.PublicPort, p.PrivatePort, p.Type)
		}
		if seen[d] { // the same binding on IPv4 and IPv6
			continue
		}
		seen[d] = true
		out.Ports = append(out.Ports, Port{PublicPort: p.PublicPort, PrivatePort: p.PrivatePort, Type: p.Type, Display: d})
	}
	for name, n := range ct.Networks {
		out.Networks = append(out.Networks, Network{Name: name, IPAddress: n.IPAddress})
	}
	sort.Slice(out.Networks, func(i, j int) bool { return out.Networks[i].Name < out.Networks[j].Name })
	for _, m := range ct.Mounts {
		if m.Type == "volume" {
			out.VolumeCount++
		}
	}
	return out
}
