package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
)

// Deadlines of engine calls. Every call carries one.
const (
	callTimeout = 30 * time.Second
	listTimeout = 10 * time.Second
	// StopGrace is the grace period between the termination signal and the
	// forced kill when stopping or restarting a container.
	StopGrace = 10 * time.Second
)

// Container is one entry of a container list, in the shape API clients decode.
type Container struct {
	ID           string            `json:"id"`
	Name         string            `json:"name"`
	Image        string            `json:"image"`
	ImageID      string            `json:"imageId"`
	State        string            `json:"state"`
	Status       string            `json:"status"`
	Created      int64             `json:"created"`
	Ports        []Port            `json:"ports"`
	Networks     map[string]NetIP  `json:"networks"`
	Health       string            `json:"health,omitempty"`
	RestartCount int               `json:"restartCount"`
	ExitCode     *int              `json:"exitCode,omitempty"`
	Mounts       []Mount           `json:"mounts"`
	Labels       map[string]string `json:"labels"`
	Command      string            `json:"command"`
}

// Port is a published or exposed port of a container.
type Port struct {
	IP          string `json:"IP,omitempty"`
	PrivatePort int    `json:"PrivatePort"`
	PublicPort  int    `json:"PublicPort,omitempty"`
	Type        string `json:"Type"`
}

// NetIP is a container's address on one network.
type NetIP struct {
	IPAddress string `json:"ipAddress"`
}

// Mount is a volume or bind mount of a container.
type Mount struct {
	Type        string `json:"type"`
	Name        string `json:"name,omitempty"`
	Source      string `json:"source"`
	Destination string `json:"destination"`
	Mode        string `json:"mode"`
	RW          bool   `json:"rw"`
}

// ContainerState is the part of an inspection Berth itself relies on.
type ContainerState struct {
	ID           string
	Name         string // without the leading slash
	Status       string // running, exited, paused, …
	Running      bool
	Paused       bool
	Restarting   bool
	RestartCount int
	ExitCode     int
	Tty          bool
	Health       string    // healthy, unhealthy, starting; "" without a health check
	Error        string    // why the engine could not start it, if so
	StartedAt    time.Time // when it last started (zero: never)
	FinishedAt   time.Time // when it last stopped (zero: never)
}

// CreateSpec describes a container to create.
type CreateSpec struct {
	Name          string
	Image         string
	Cmd           []string
	Env           []string
	Labels        map[string]string
	PortBindings  map[string][]HostPort // "<port>/<proto>" → bindings
	NetworkMode   string
	RestartPolicy string // no, always, unless-stopped, on-failure[:N]
	Privileged    bool
	Tty           bool
	OpenStdin     bool
	Memory        int64
	NanoCPUs      int64
	CapAdd        []string
	Binds         []string
	// Options are the other settings, applied over the fields above.
	Options Settings
}

// HostPort is one host side of a port binding.
type HostPort struct {
	HostIP   string
	HostPort string
}

// ListContainers lists the containers; all includes stopped ones. Lists of
// one engine asked for at the same time share engine calls (see flights).
func (c *Client) ListContainers(ctx context.Context, all bool) ([]Container, error) {
	key := "containers"
	if all {
		key = "containers?all"
	}
	return coalesce(ctx, &c.conn.reads, key, func(ctx context.Context) ([]Container, error) {
		return c.listContainers(ctx, all)
	}, CloneContainers)
}

// CloneContainers is a deep copy of list: every caller may change its own.
func CloneContainers(list []Container) []Container {
	out := make([]Container, len(list))
	for i, c := range list {
		c.Ports = slices.Clone(c.Ports)
		c.Mounts = slices.Clone(c.Mounts)
		c.Networks = maps.Clone(c.Networks)
		c.Labels = maps.Clone(c.Labels)
		if c.ExitCode != nil {
			code := *c.ExitCode
			c.ExitCode = &code
		}
		out[i] = c
	}
	return out
}

func (c *Client) listContainers(ctx context.Context, all bool) ([]Container, error) {
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	var q url.Values
	if all {
		q = url.Values{"all": {"1"}}
	}
	body, err := c.rawGet(ctx, "/containers/json", q)
	if err != nil {
		return nil, err
	}
	items, err := decodeListItems(body)
	if err != nil {
		return nil, fmt.Errorf("engine: decode container list: %w", err)
	}
	out := make([]Container, 0, len(items))
	for i := range items {
		out = append(out, items[i].container())
	}
	return out, nil
}

// canonicalIP is ip as Go writes it (the engine's own text in practice),
// "" when it is not an address.
func canonicalIP(ip string) string {
	if ip == "" {
		return ""
	}
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return ""
	}
	return a.String()
}

// healthFromStatus reads the health from a status text such as
// "Up 5 minutes (healthy)", for engines whose list carries no Health field.
func healthFromStatus(status string) string {
	switch {
	case strings.HasSuffix(status, "(healthy)"):
		return "healthy"
	case strings.HasSuffix(status, "(unhealthy)"):
		return "unhealthy"
	case strings.HasSuffix(status, "(health: starting)"):
		return "starting"
	}
	return ""
}

// exitCodeFromStatus reads the exit code from a status text such as
// "Exited (137) 2 minutes ago".
func exitCodeFromStatus(state, status string) *int {
	if state != "exited" && state != "dead" {
		return nil
	}
	_, rest, ok := strings.Cut(status, "(")
	if !ok {
		return nil
	}
	num, _, ok := strings.Cut(rest, ")")
	if !ok {
		return nil
	}
	code, err := strconv.Atoi(num)
	if err != nil {
		return nil
	}
	return &code
}

// InspectContainer returns the engine's own inspection document and the state
// fields Berth uses. id is a container id or name.
func (c *Client) InspectContainer(ctx context.Context, id string) (json.RawMessage, ContainerState, error) {
	id, err := checkContainer(id)
	if err != nil {
		return nil, ContainerState{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	res, err := c.cli.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
	if err != nil {
		return nil, ContainerState{}, c.fail(err)
	}
	r := res.Container
	st := ContainerState{ID: r.ID, Name: strings.TrimPrefix(r.Name, "/"), RestartCount: r.RestartCount}
	if r.State != nil {
		st.Status = string(r.State.Status)
		st.Running, st.Paused, st.Restarting = r.State.Running, r.State.Paused, r.State.Restarting
		st.ExitCode = r.State.ExitCode
		st.Error = r.State.Error
		st.StartedAt = engineTime(r.State.StartedAt)
		st.FinishedAt = engineTime(r.State.FinishedAt)
		if r.State.Health != nil {
			st.Health = string(r.State.Health.Status)
		}
	}
	if r.Config != nil {
		st.Tty = r.Config.Tty
	}
	return res.Raw, st, nil
}

// engineTime parses a time of an inspection; the engine's zero time
// ("0001-01-01T00:00:00Z") and anything unreadable are the zero time.
func engineTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || t.Year() <= 1 {
		return time.Time{}
	}
	return t
}

// CreateContainer creates a container and returns its full id.
func (c *Client) CreateContainer(ctx context.Context, spec CreateSpec) (string, error) {
	if err := CheckImage(spec.Image); err != nil {
		return "", err
	}
	if spec.Name != "" {
		name, err := checkContainer(spec.Name)
		if err != nil {
			return "", err
		}
		spec.Name = name
	}
	cfg := &container.Config{
		Image:     spec.Image,
		Cmd:       spec.Cmd,
		Env:       spec.Env,
		Labels:    spec.Labels,
		Tty:       spec.Tty,
		OpenStdin: spec.OpenStdin,
	}
	hc := &container.HostConfig{
		NetworkMode: container.NetworkMode(spec.NetworkMode),
		Privileged:  spec.Privileged,
		CapAdd:      spec.CapAdd,
		Binds:       spec.Binds,
		Resources:   container.Resources{Memory: spec.Memory, NanoCPUs: spec.NanoCPUs},
	}
	if spec.RestartPolicy != "" {
		rp, err := restartPolicy(spec.RestartPolicy)
		if err != nil {
			return "", err
		}
		hc.RestartPolicy = rp
	}
	if len(spec.PortBindings) > 0 {
		cfg.ExposedPorts = network.PortSet{}
		hc.PortBindings = network.PortMap{}
		for key, binds := range spec.PortBindings {
			p, err := network.ParsePort(key)
			if err != nil {
				return "", fmt.Errorf("%w: port %q: %v", ErrInvalid, key, err)
			}
			cfg.ExposedPorts[p] = struct{}{}
			for _, b := range binds {
				pb := network.PortBinding{HostPort: b.HostPort}
				if b.HostIP != "" {
					ip, err := parseAddr(b.HostIP)
					if err != nil {
						return "", fmt.Errorf("%w: host ip %q", ErrInvalid, b.HostIP)
					}
					pb.HostIP = ip
				}
				hc.PortBindings[p] = append(hc.PortBindings[p], pb)
			}
		}
	}
	o := spec.Options
	if err := o.apply(cfg, hc); err != nil {
		return "", err
	}
	var nets map[string]*network.EndpointSettings
	if o.Networks != nil || o.NetworkAliases != nil || o.IPv4Address != nil || o.IPv6Address != nil || o.GwPriority != nil || o.MacAddress != nil {
		var err error
		if nets, err = o.applyNetworks(string(hc.NetworkMode), nil); err != nil {
			return "", err
		}
	}
	return c.createConnected(ctx, spec.Name, cfg, hc, nets)
}

// CheckCreate checks what CreateContainer would refuse of spec before any
// engine is asked, and tells what the container would ask of its host.
func CheckCreate(spec CreateSpec) (HostNeeds, error) {
	cfg, hc := &container.Config{}, &container.HostConfig{NetworkMode: container.NetworkMode(spec.NetworkMode),
		Privileged: spec.Privileged, CapAdd: spec.CapAdd, Binds: spec.Binds}
	if err := spec.Options.apply(cfg, hc); err != nil {
		return HostNeeds{}, err
	}
	if _, err := spec.Options.applyNetworks(string(hc.NetworkMode), nil); err != nil {
		return HostNeeds{}, err
	}
	return needs(hc), nil
}

func restartPolicy(s string) (container.RestartPolicy, error) {
	name, count, hasCount := strings.Cut(s, ":")
	rp := container.RestartPolicy{Name: container.RestartPolicyMode(name)}
	switch rp.Name {
	case "no", "always", "unless-stopped":
		if hasCount {
			return rp, fmt.Errorf("%w: restart policy %q takes no retry count", ErrInvalid, s)
		}
	case "on-failure":
		if hasCount {
			n, err := strconv.Atoi(count)
			if err != nil || n < 0 {
				return rp, fmt.Errorf("%w: restart policy %q", ErrInvalid, s)
			}
			rp.MaximumRetryCount = n
		}
	default:
		return rp, fmt.Errorf("%w: unknown restart policy %q", ErrInvalid, s)
	}
	return rp, nil
}

// StartContainer starts a container.
func (c *Client) StartContainer(ctx context.Context, id string) error {
	id, err := checkContainer(id)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	_, err = c.cli.ContainerStart(ctx, id, client.ContainerStartOptions{})
	return c.fail(err)
}

// StopContainer sends the termination signal, then kills after StopGrace.
func (c *Client) StopContainer(ctx context.Context, id string) error {
	id, err := checkContainer(id)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout+StopGrace)
	defer cancel()
	secs := int(StopGrace / time.Second)
	_, err = c.cli.ContainerStop(ctx, id, client.ContainerStopOptions{Timeout: &secs})
	return c.fail(err)
}

// RestartContainer stops (with StopGrace) and starts a container.
func (c *Client) RestartContainer(ctx context.Context, id string) error {
	id, err := checkContainer(id)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout+StopGrace)
	defer cancel()
	secs := int(StopGrace / time.Second)
	_, err = c.cli.ContainerRestart(ctx, id, client.ContainerRestartOptions{Timeout: &secs})
	return c.fail(err)
}

// PauseContainer suspends all processes of a container.
func (c *Client) PauseContainer(ctx context.Context, id string) error {
	id, err := checkContainer(id)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	_, err = c.cli.ContainerPause(ctx, id, client.ContainerPauseOptions{})
	return stateConflict(c.fail(err), "is not running", "is already paused", "is restarting")
}

// UnpauseContainer resumes a paused container.
func (c *Client) UnpauseContainer(ctx context.Context, id string) error {
	id, err := checkContainer(id)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	_, err = c.cli.ContainerUnpause(ctx, id, client.ContainerUnpauseOptions{})
	return stateConflict(c.fail(err), "is not paused", "is not running")
}

// KillContainer sends signal (a name such as SIGKILL or KILL, or a number;
// empty: SIGKILL) to a running container's main process.
func (c *Client) KillContainer(ctx context.Context, id, signal string) error {
	id, err := checkContainer(id)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	_, err = c.cli.ContainerKill(ctx, id, client.ContainerKillOptions{Signal: signal})
	return stateConflict(c.fail(err), "is not running")
}

// RemoveContainer removes a container; force kills a running one first.
func (c *Client) RemoveContainer(ctx context.Context, id string, force bool) error {
	id, err := checkContainer(id)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	_, err = c.cli.ContainerRemove(ctx, id, client.ContainerRemoveOptions{Force: force})
	return c.fail(err)
}

// RemoveContainerAndVolumes removes a container that is not running with
// its anonymous volumes (those the engine created for it, named by their id:
// nothing else can use them); named volumes stay.
func (c *Client) RemoveContainerAndVolumes(ctx context.Context, id string) error {
	id, err := checkContainer(id)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	_, err = c.cli.ContainerRemove(ctx, id, client.ContainerRemoveOptions{RemoveVolumes: true})
	return c.fail(err)
}

// RenameContainer gives a container a new name.
func (c *Client) RenameContainer(ctx context.Context, id, name string) error {
	id, err := checkContainer(id)
	if err != nil {
		return err
	}
	if name, err = checkContainer(name); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	_, err = c.cli.ContainerRename(ctx, id, client.ContainerRenameOptions{NewName: name})
	return c.fail(err)
}

// Processes is the process table of a container.
type Processes struct {
	Titles    []string   `json:"Titles"`
	Processes [][]string `json:"Processes"`
}

// TopContainer lists the processes running in a container.
func (c *Client) TopContainer(ctx context.Context, id string) (Processes, error) {
	id, err := checkContainer(id)
	if err != nil {
		return Processes{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	res, err := c.cli.ContainerTop(ctx, id, client.ContainerTopOptions{})
	if err != nil {
		return Processes{}, c.fail(err)
	}
	p := Processes{Titles: res.Titles, Processes: res.Processes}
	if p.Titles == nil {
		p.Titles = []string{}
	}
	if p.Processes == nil {
		p.Processes = [][]string{}
	}
	return p, nil
}
