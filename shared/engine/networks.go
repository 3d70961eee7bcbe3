package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"golang.org/x/sync/errgroup"
)

// Network is a network in the shape API clients decode. Maps and lists are
// never nil.
type Network struct {
	ID         string                     `json:"id"`
	Name       string                     `json:"name"`
	Driver     string                     `json:"driver"`
	Scope      string                     `json:"scope"`
	Internal   bool                       `json:"internal"`
	Attachable bool                       `json:"attachable"`
	IPAM       IPAM                       `json:"ipam"`
	Containers map[string]NetworkEndpoint `json:"containers"` // by container id
	Labels     map[string]string          `json:"labels"`
	Options    map[string]string          `json:"options"`
	CreatedAt  time.Time                  `json:"createdAt"`
}

// IPAM is the address management of a network.
type IPAM struct {
	Driver string       `json:"driver"`
	Config []IPAMConfig `json:"config"`
}

// IPAMConfig is one address pool of a network.
type IPAMConfig struct {
	Subnet  string `json:"subnet"`
	Gateway string `json:"gateway"`
	IPRange string `json:"ipRange,omitempty"`
}

// NetworkEndpoint is a container attached to a network. The addresses carry
// their prefix length ("172.18.0.2/16"), as the engine's inspection does.
type NetworkEndpoint struct {
	Name        string `json:"name"`
	IPv4Address string `json:"ipv4Address"`
	IPv6Address string `json:"ipv6Address,omitempty"`
}

// NetworkSpec describes a network to create.
type NetworkSpec struct {
	Name       string
	Driver     string
	Internal   bool
	Attachable bool
	EnableIPv6 bool // give the network IPv6 addresses
	Ingress    bool // the swarm routing mesh (refused by an engine outside a swarm)
	Labels     map[string]string
	Options    map[string]string
	IPAMDriver string
	IPAM       []IPAMConfig
}

func toNetwork(n network.Network) Network {
	out := Network{
		ID: n.ID, Name: n.Name, Driver: n.Driver, Scope: n.Scope, Internal: n.Internal, Attachable: n.Attachable,
		IPAM:       IPAM{Driver: n.IPAM.Driver, Config: make([]IPAMConfig, 0, len(n.IPAM.Config))},
		Containers: map[string]NetworkEndpoint{}, Labels: n.Labels, Options: n.Options, CreatedAt: n.Created,
	}
	for _, p := range n.IPAM.Config {
		cfg := IPAMConfig{}
		if p.Subnet.IsValid() {
			cfg.Subnet = p.Subnet.String()
		}
		if p.Gateway.IsValid() {
			cfg.Gateway = p.Gateway.String()
		}
		if p.IPRange.IsValid() {
			cfg.IPRange = p.IPRange.String()
		}
		out.IPAM.Config = append(out.IPAM.Config, cfg)
	}
	if out.Labels == nil {
		out.Labels = map[string]string{}
	}
	if out.Options == nil {
		out.Options = map[string]string{}
	}
	return out
}

// ListNetworks lists the networks with the containers attached to each.
//
// The engine's network list has not carried the attached containers since
// API 1.28, and inspecting every network costs one round trip per network.
// Instead the running containers are listed once (both lists are fetched
// concurrently): each summary names the networks it is attached to, with
// the network id, the endpoint and the address. A container without an
// endpoint (one that is not running) is attached to nothing, as in the
// engine's own inspection.
func (c *Client) ListNetworks(ctx context.Context) ([]Network, error) {
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	var (
		nets  client.NetworkListResult
		conts client.ContainerListResult
	)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		nets, err = c.cli.NetworkList(gctx, client.NetworkListOptions{})
		return err
	})
	g.Go(func() (err error) {
		conts, err = c.cli.ContainerList(gctx, client.ContainerListOptions{})
		return err
	})
	if err := g.Wait(); err != nil {
		return nil, c.fail(err)
	}
	out := make([]Network, 0, len(nets.Items))
	byID := make(map[string]int, len(nets.Items))
	byName := make(map[string]int, len(nets.Items))
	for i, n := range nets.Items {
		out = append(out, toNetwork(n.Network))
		byID[n.ID] = i
		byName[n.Name] = i
	}
	for _, s := range conts.Items {
		attachEndpoints(out, byID, byName, s)
	}
	return out, nil
}

// attachEndpoints adds the container s to each listed network it has an
// endpoint on (matched by network id, or by name when the id is missing).
func attachEndpoints(nets []Network, byID, byName map[string]int, s container.Summary) {
	if s.NetworkSettings == nil {
		return
	}
	name := ""
	if len(s.Names) > 0 {
		name = strings.TrimPrefix(s.Names[0], "/")
	}
	for netName, ep := range s.NetworkSettings.Networks {
		if ep == nil || ep.EndpointID == "" {
			continue
		}
		i, ok := byID[ep.NetworkID]
		if !ok && ep.NetworkID == "" {
			i, ok = byName[netName]
		}
		if !ok {
			continue // created after the network list was taken
		}
		nets[i].Containers[s.ID] = NetworkEndpoint{
			Name:        name,
			IPv4Address: withPrefix(ep.IPAddress, ep.IPPrefixLen),
			IPv6Address: withPrefix(ep.GlobalIPv6Address, ep.GlobalIPv6PrefixLen),
		}
	}
}

// withPrefix renders an address as the engine's inspection does: "a/len",
// or "" when there is no address.
func withPrefix(a netip.Addr, bits int) string {
	if !a.IsValid() {
		return ""
	}
	return a.String() + "/" + strconv.Itoa(bits)
}

// InspectNetwork returns the engine's inspection document of a network (id,
// name or unique id prefix) and the network in Berth's shape.
func (c *Client) InspectNetwork(ctx context.Context, id string) (json.RawMessage, Network, error) {
	if err := checkNetwork(id); err != nil {
		return nil, Network{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	res, err := c.cli.NetworkInspect(ctx, id, client.NetworkInspectOptions{})
	if err != nil {
		return nil, Network{}, c.fail(err)
	}
	n := toNetwork(res.Network.Network)
	for cid, ep := range res.Network.Containers {
		e := NetworkEndpoint{Name: ep.Name}
		if ep.IPv4Address.IsValid() {
			e.IPv4Address = ep.IPv4Address.String()
		}
		if ep.IPv6Address.IsValid() {
			e.IPv6Address = ep.IPv6Address.String()
		}
		n.Containers[cid] = e
	}
	return res.Raw, n, nil
}

// networkIDsNamed returns the ids of the networks called exactly name (the
// engine's name filter matches substrings).
func (c *Client) networkIDsNamed(ctx context.Context, name string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	res, err := c.cli.NetworkList(ctx, client.NetworkListOptions{Filters: make(client.Filters).Add("name", name)})
	if err != nil {
		return nil, c.fail(err)
	}
	var ids []string
	for _, n := range res.Items {
		if n.Name == name {
			ids = append(ids, n.ID)
		}
	}
	return ids, nil
}

// CreateNetwork creates a network and returns its id. A network of the same
// name fails with ErrConflict on every engine: engines before API 1.44
// create duplicates unless asked not to (which this SDK no longer can), so
// the name is checked first, and a duplicate the engine still reports (one
// created meanwhile by someone else) is removed again. A request the engine
// refuses (an overlapping subnet, a pre-defined name) is ErrInvalid.
func (c *Client) CreateNetwork(ctx context.Context, spec NetworkSpec) (string, error) {
	if err := checkNetwork(spec.Name); err != nil {
		return "", err
	}
	opts := client.NetworkCreateOptions{
		Driver: spec.Driver, Internal: spec.Internal, Attachable: spec.Attachable, Ingress: spec.Ingress,
		Labels: spec.Labels, Options: spec.Options,
	}
	if spec.EnableIPv6 {
		v6 := true
		opts.EnableIPv6 = &v6
	}
	if spec.IPAMDriver != "" || len(spec.IPAM) > 0 {
		opts.IPAM = &network.IPAM{Driver: spec.IPAMDriver}
		for _, p := range spec.IPAM {
			cfg, err := ipamConfig(p)
			if err != nil {
				return "", err
			}
			opts.IPAM.Config = append(opts.IPAM.Config, cfg)
		}
	}
	existing, err := c.networkIDsNamed(ctx, spec.Name)
	if err != nil {
		return "", err
	}
	if len(existing) > 0 {
		return "", duplicateNetwork(spec.Name)
	}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	res, err := c.cli.NetworkCreate(cctx, spec.Name, opts)
	if err != nil {
		err = c.fail(err)
		switch msg := err.Error(); {
		case errors.Is(err, ErrUnauthorized): // 403: the engine refuses this network
			err = reclassify(err, ErrInvalid)
		case strings.Contains(msg, "plugin not found"), strings.Contains(msg, "could not find plugin"),
			strings.Contains(msg, "plugin") && errors.Is(err, ErrNotFound):
			err = reclassify(err, ErrInvalid) // an unknown driver: a bad request, not a missing object
		}
		return "", err
	}
	for _, w := range res.Warning {
		if strings.Contains(w, "already exists") {
			if rerr := c.RemoveNetwork(ctx, res.ID); rerr != nil && !errors.Is(rerr, ErrNotFound) {
				return "", fmt.Errorf("engine: remove duplicate network %s: %w", res.ID, rerr)
			}
			return "", duplicateNetwork(spec.Name)
		}
	}
	return res.ID, nil
}

func duplicateNetwork(name string) error {
	msg := fmt.Sprintf("network with name %s already exists", name)
	return &Error{Kind: ErrConflict, Msg: msg, err: errors.New(msg)}
}

// ipamConfig parses one address pool.
func ipamConfig(p IPAMConfig) (network.IPAMConfig, error) {
	var cfg network.IPAMConfig
	var err error
	if p.Subnet != "" {
		if cfg.Subnet, err = netip.ParsePrefix(p.Subnet); err != nil {
			return cfg, fmt.Errorf("%w: subnet %q: %v", ErrInvalid, p.Subnet, err)
		}
	}
	if p.Gateway != "" {
		if cfg.Gateway, err = netip.ParseAddr(p.Gateway); err != nil {
			return cfg, fmt.Errorf("%w: gateway %q: %v", ErrInvalid, p.Gateway, err)
		}
	}
	if p.IPRange != "" {
		if cfg.IPRange, err = netip.ParsePrefix(p.IPRange); err != nil {
			return cfg, fmt.Errorf("%w: ipRange %q: %v", ErrInvalid, p.IPRange, err)
		}
	}
	return cfg, nil
}

// RemoveNetwork removes a network. A network with attached containers fails
// with ErrConflict, a pre-defined one (bridge, host, none) with ErrInvalid.
func (c *Client) RemoveNetwork(ctx context.Context, id string) error {
	if err := checkNetwork(id); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	_, err := c.cli.NetworkRemove(ctx, id, client.NetworkRemoveOptions{})
	if err == nil {
		return nil
	}
	err = c.fail(err)
	switch msg := err.Error(); {
	case strings.Contains(msg, "active endpoints"):
		return reclassify(err, ErrConflict) // the engine answers 403
	case strings.Contains(msg, "pre-defined network"):
		return reclassify(err, ErrInvalid)
	}
	return err
}

// ConnectNetwork attaches a container (id or name) to a network. A container
// attached already fails with ErrConflict; a connection the engine refuses
// (e.g. to the host network) with ErrInvalid.
func (c *Client) ConnectNetwork(ctx context.Context, networkID, containerID string) error {
	if err := checkNetwork(networkID); err != nil {
		return err
	}
	containerID, err := checkContainer(containerID)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	_, err = c.cli.NetworkConnect(ctx, networkID, client.NetworkConnectOptions{Container: containerID})
	if err == nil {
		return nil
	}
	err = c.fail(err)
	switch msg := err.Error(); {
	case strings.Contains(msg, "already exists in network"), strings.Contains(msg, "already attached"):
		return reclassify(err, ErrConflict)
	case errors.Is(err, ErrUnauthorized): // 403: the engine refuses this connection
		return reclassify(err, ErrInvalid)
	}
	return err
}

// DisconnectNetwork detaches a container (id or name) from a network; force
// detaches it even when the engine cannot clean up. A container that is not
// attached fails with ErrConflict.
func (c *Client) DisconnectNetwork(ctx context.Context, networkID, containerID string, force bool) error {
	if err := checkNetwork(networkID); err != nil {
		return err
	}
	containerID, err := checkContainer(containerID)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	_, err = c.cli.NetworkDisconnect(ctx, networkID, client.NetworkDisconnectOptions{Container: containerID, Force: force})
	if err == nil {
		return nil
	}
	err = c.fail(err)
	switch msg := err.Error(); {
	case strings.Contains(msg, "is not connected to"):
		return reclassify(err, ErrConflict) // the engine answers 500
	case errors.Is(err, ErrUnauthorized):
		return reclassify(err, ErrInvalid)
	}
	return err
}

// reclassify gives a translated engine error another kind, for failures the
// engine reports with a status that does not say what happened.
func reclassify(err, kind error) error {
	var e *Error
	if !errors.As(err, &e) {
		return err
	}
	return &Error{Kind: kind, Msg: e.Msg, err: e.err}
}
