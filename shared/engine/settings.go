package engine

import (
	"fmt"
	"maps"
	"net"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
)

// Settings are a container's settings as clients give them (the
// reference's create options). A nil field is not set: a new container gets
// the engine's default, a reconfigured one keeps what it has. Lists and maps
// replace the container's whole list or map; an empty, non-nil one clears it.
type Settings struct {
	Image       string // "": unchanged
	Cmd         []string
	Entrypoint  []string
	Env         []string
	Labels      map[string]string
	WorkingDir  *string
	User        *string
	Hostname    *string
	Domainname  *string
	Tty         *bool
	OpenStdin   *bool
	Healthcheck *Healthcheck // Disable turns the image's off, Inherit goes back to it
	StopSignal  *string
	StopTimeout *int
	Volumes     []string // anonymous volumes: paths in the container
	Binds       []string // "source:destination[:mode]"
	// Ports are "<port>/<proto>" → host bindings; an empty, non-nil map
	// publishes nothing.
	Ports         map[string][]HostPort
	RestartPolicy *string // no, always, unless-stopped, on-failure[:N]

	// NetworkMode is the primary network (bridge, host, none,
	// container:<id>, or a network's name); Networks the others the
	// container joins. Aliases, addresses, priority and MAC address are the
	// primary network's endpoint.
	NetworkMode    *string
	Networks       []string
	NetworkAliases []string
	IPv4Address    *string
	IPv6Address    *string
	GwPriority     *int
	MacAddress     *string

	Privileged        *bool
	Memory            *int64
	MemoryReservation *int64
	MemorySwap        *int64
	MemorySwappiness  *int64
	CPUShares         *int64
	CPUQuota          *int64
	CPUPeriod         *int64
	NanoCPUs          *int64
	CpusetCpus        *string
	CpusetMems        *string
	PidsLimit         *int64
	OomKillDisable    *bool
	ShmSize           *int64
	CapAdd            []string
	CapDrop           []string
	Devices           []Device
	DeviceRequests    []DeviceRequest
	DNS               []string
	DNSSearch         []string
	DNSOptions        []string
	SecurityOpt       []string
	Ulimits           []Ulimit
	Tmpfs             map[string]string
	Sysctls           map[string]string
	LogDriver         *string
	LogOptions        map[string]string
	IpcMode           *string
	PidMode           *string
	UTSMode           *string
	UsernsMode        *string
	CgroupParent      *string
	Runtime           *string
	Init              *bool
	ReadonlyRootfs    *bool
	ExtraHosts        []string
	GroupAdd          []string
}

// Healthcheck is a container's health check; durations as the engine takes them.
type Healthcheck struct {
	Disable bool
	// Inherit leaves the health check to the image: the container's own
	// (a custom one, or NONE) is dropped from its configuration.
	Inherit     bool
	Test        []string
	Interval    time.Duration
	Timeout     time.Duration
	StartPeriod time.Duration
	Retries     int
}

// Device maps a host device into the container.
type Device struct {
	HostPath, ContainerPath, Permissions string
}

// DeviceRequest asks a device driver for devices (GPUs).
type DeviceRequest struct {
	Driver       string
	Count        int
	DeviceIDs    []string
	Capabilities [][]string
	Options      map[string]string
}

// Ulimit is a resource limit of the container's processes.
type Ulimit struct {
	Name       string
	Soft, Hard int64
}

// HostNeeds is what a container's configuration asks of its host, for the
// environment's security settings to judge.
type HostNeeds struct {
	Privileged  bool
	NetworkMode string
	PidMode     string
	IpcMode     string
	CapAdd      []string
	SecurityOpt []string
	Devices     []string // host device paths
	BindSources []string // host paths mounted into the container
}

// needs is what conf and hc ask of the host.
func needs(hc *container.HostConfig) HostNeeds {
	n := HostNeeds{Privileged: hc.Privileged, NetworkMode: string(hc.NetworkMode), PidMode: string(hc.PidMode),
		IpcMode: string(hc.IpcMode), CapAdd: slices.Clone(hc.CapAdd), SecurityOpt: slices.Clone(hc.SecurityOpt)}
	for _, d := range hc.Devices {
		n.Devices = append(n.Devices, d.PathOnHost)
	}
	for _, b := range hc.Binds {
		if src, _, ok := strings.Cut(b, ":"); ok && isHostPath(src) {
			n.BindSources = append(n.BindSources, src)
		}
	}
	for _, m := range hc.Mounts {
		if m.Type == "bind" {
			n.BindSources = append(n.BindSources, m.Source)
		}
	}
	return n
}

// isHostPath tells a bind's host path from a volume's name.
func isHostPath(src string) bool {
	return strings.ContainsAny(src, "/\\") || strings.HasPrefix(src, ".") || strings.HasPrefix(src, "~")
}

// apply sets on conf and hc what s sets.
func (s Settings) apply(conf *container.Config, hc *container.HostConfig) error {
	if s.Image != "" {
		conf.Image = s.Image
	}
	setSlice(&conf.Cmd, s.Cmd)
	setSlice(&conf.Entrypoint, s.Entrypoint)
	setSlice(&conf.Env, s.Env)
	if s.Labels != nil {
		conf.Labels = maps.Clone(s.Labels)
	}
	set(&conf.WorkingDir, s.WorkingDir)
	set(&conf.User, s.User)
	set(&conf.Hostname, s.Hostname)
	set(&conf.Domainname, s.Domainname)
	set(&conf.Tty, s.Tty)
	set(&conf.OpenStdin, s.OpenStdin)
	set(&conf.StopSignal, s.StopSignal)
	if s.StopTimeout != nil {
		v := *s.StopTimeout
		conf.StopTimeout = &v
	}
	if h := s.Healthcheck; h != nil {
		if h.Inherit {
			conf.Healthcheck = nil
		} else if h.Disable {
			conf.Healthcheck = &container.HealthConfig{Test: []string{"NONE"}}
		} else {
			conf.Healthcheck = &container.HealthConfig{Test: h.Test, Interval: h.Interval, Timeout: h.Timeout,
				StartPeriod: h.StartPeriod, Retries: h.Retries}
		}
	}
	if s.Volumes != nil {
		conf.Volumes = map[string]struct{}{}
		for _, v := range s.Volumes {
			conf.Volumes[v] = struct{}{}
		}
	}
	setSlice(&hc.Binds, s.Binds)
	if s.Ports != nil {
		conf.ExposedPorts = network.PortSet{}
		hc.PortBindings = network.PortMap{}
		for key, binds := range s.Ports {
			p, err := network.ParsePort(key)
			if err != nil {
				return fmt.Errorf("%w: port %q: %v", ErrInvalid, key, err)
			}
			conf.ExposedPorts[p] = struct{}{}
			for _, b := range binds {
				pb := network.PortBinding{HostPort: b.HostPort}
				if b.HostIP != "" {
					ip, err := parseAddr(b.HostIP)
					if err != nil {
						return fmt.Errorf("%w: host ip %q", ErrInvalid, b.HostIP)
					}
					pb.HostIP = ip
				}
				hc.PortBindings[p] = append(hc.PortBindings[p], pb)
			}
		}
	}
	if s.RestartPolicy != nil {
		rp, err := restartPolicy(*s.RestartPolicy)
		if err != nil {
			return err
		}
		hc.RestartPolicy = rp
	}
	if s.NetworkMode != nil {
		hc.NetworkMode = container.NetworkMode(*s.NetworkMode)
	}
	set(&hc.Privileged, s.Privileged)
	r := &hc.Resources
	// The swap limit counts memory plus swap. A memory limit removed takes
	// it along (the engine refuses a swap limit without a memory limit); a
	// changed one drops the engine's default (twice the memory) and one
	// below the new limit, so that the engine derives it again.
	if s.Memory != nil && s.MemorySwap == nil && *s.Memory != r.Memory {
		if *s.Memory == 0 || r.MemorySwap == 2*r.Memory || (r.MemorySwap > 0 && r.MemorySwap < *s.Memory) {
			r.MemorySwap = 0
		}
	}
	set(&r.Memory, s.Memory)
	set(&r.MemoryReservation, s.MemoryReservation)
	set(&r.MemorySwap, s.MemorySwap)
	set(&r.CPUShares, s.CPUShares)
	set(&r.CPUQuota, s.CPUQuota)
	set(&r.CPUPeriod, s.CPUPeriod)
	set(&r.NanoCPUs, s.NanoCPUs)
	set(&r.CpusetCpus, s.CpusetCpus)
	set(&r.CpusetMems, s.CpusetMems)
	set(&r.CgroupParent, s.CgroupParent)
	if s.PidsLimit != nil {
		v := *s.PidsLimit
		r.PidsLimit = &v
	}
	if s.MemorySwappiness != nil {
		v := *s.MemorySwappiness
		r.MemorySwappiness = &v
	}
	if s.OomKillDisable != nil {
		v := *s.OomKillDisable
		r.OomKillDisable = &v
	}
	if s.Devices != nil {
		r.Devices = []container.DeviceMapping{}
		for _, d := range s.Devices {
			perm := d.Permissions
			if perm == "" {
				perm = "rwm"
			}
			r.Devices = append(r.Devices, container.DeviceMapping{PathOnHost: d.HostPath, PathInContainer: d.ContainerPath, CgroupPermissions: perm})
		}
	}
	if s.DeviceRequests != nil {
		r.DeviceRequests = []container.DeviceRequest{}
		for _, d := range s.DeviceRequests {
			r.DeviceRequests = append(r.DeviceRequests, container.DeviceRequest{Driver: d.Driver, Count: d.Count,
				DeviceIDs: d.DeviceIDs, Capabilities: d.Capabilities, Options: d.Options})
		}
	}
	if s.Ulimits != nil {
		r.Ulimits = []*container.Ulimit{}
		for _, u := range s.Ulimits {
			r.Ulimits = append(r.Ulimits, &container.Ulimit{Name: u.Name, Soft: u.Soft, Hard: u.Hard})
		}
	}
	set(&hc.ShmSize, s.ShmSize)
	setSlice(&hc.CapAdd, s.CapAdd)
	setSlice(&hc.CapDrop, s.CapDrop)
	if s.DNS != nil {
		hc.DNS = []netip.Addr{}
		for _, d := range s.DNS {
			ip, err := parseAddr(strings.TrimSpace(d))
			if err != nil {
				return fmt.Errorf("%w: DNS server %q is not an IP address", ErrInvalid, d)
			}
			hc.DNS = append(hc.DNS, ip)
		}
	}
	setSlice(&hc.DNSSearch, s.DNSSearch)
	setSlice(&hc.DNSOptions, s.DNSOptions)
	setSlice(&hc.SecurityOpt, s.SecurityOpt)
	setSlice(&hc.ExtraHosts, s.ExtraHosts)
	setSlice(&hc.GroupAdd, s.GroupAdd)
	if s.Tmpfs != nil {
		hc.Tmpfs = maps.Clone(s.Tmpfs)
	}
	if s.Sysctls != nil {
		hc.Sysctls = maps.Clone(s.Sysctls)
	}
	if s.LogDriver != nil {
		hc.LogConfig = container.LogConfig{Type: *s.LogDriver, Config: maps.Clone(s.LogOptions)}
	} else if s.LogOptions != nil {
		hc.LogConfig.Config = maps.Clone(s.LogOptions)
	}
	if s.IpcMode != nil {
		hc.IpcMode = container.IpcMode(*s.IpcMode)
	}
	if s.PidMode != nil {
		hc.PidMode = container.PidMode(*s.PidMode)
	}
	if s.UTSMode != nil {
		hc.UTSMode = container.UTSMode(*s.UTSMode)
	}
	if s.UsernsMode != nil {
		hc.UsernsMode = container.UsernsMode(*s.UsernsMode)
	}
	set(&hc.Runtime, s.Runtime)
	if s.Init != nil {
		v := *s.Init
		hc.Init = &v
	}
	set(&hc.ReadonlyRootfs, s.ReadonlyRootfs)
	return nil
}

// applyNetworks sets on the endpoints nets (by network name) what s sets:
// the primary network (mode, which may be new), the others, and the
// primary's endpoint settings. It returns the endpoints the container is to
// have.
func (s Settings) applyNetworks(mode string, nets map[string]*network.EndpointSettings) (map[string]*network.EndpointSettings, error) {
	out := map[string]*network.EndpointSettings{}
	primary := primaryNetwork(mode)
	if primary == "" {
		return out, nil // host, none, container:<id>: no endpoints of its own
	}
	keep := func(n string) *network.EndpointSettings {
		if ep, ok := nets[n]; ok && ep != nil {
			cp := *ep
			return &cp
		}
		return &network.EndpointSettings{}
	}
	out[primary] = keep(primary)
	if s.Networks != nil {
		for _, n := range s.Networks {
			if n = strings.TrimSpace(n); n != "" && n != primary {
				out[n] = keep(n)
			}
		}
	} else {
		for n := range nets {
			if _, ok := out[n]; !ok && s.NetworkMode == nil { // a new primary leaves the old one
				out[n] = keep(n)
			}
		}
	}
	ep := out[primary]
	if s.NetworkAliases != nil {
		ep.Aliases = slices.Clone(s.NetworkAliases)
	}
	if s.IPv4Address != nil || s.IPv6Address != nil {
		ipam := network.EndpointIPAMConfig{}
		if ep.IPAMConfig != nil {
			ipam = *ep.IPAMConfig
		}
		for _, a := range []struct {
			v   *string
			dst *netip.Addr
		}{{s.IPv4Address, &ipam.IPv4Address}, {s.IPv6Address, &ipam.IPv6Address}} {
			if a.v == nil {
				continue
			}
			if *a.v == "" {
				*a.dst = netip.Addr{}
				continue
			}
			ip, err := parseAddr(strings.TrimSpace(*a.v))
			if err != nil {
				return nil, fmt.Errorf("%w: address %q", ErrInvalid, *a.v)
			}
			*a.dst = ip
		}
		ep.IPAMConfig = &ipam
	}
	if s.GwPriority != nil {
		ep.GwPriority = *s.GwPriority
	}
	if s.MacAddress != nil {
		if *s.MacAddress == "" {
			ep.MacAddress = nil
		} else {
			hw, err := net.ParseMAC(strings.TrimSpace(*s.MacAddress))
			if err != nil {
				return nil, fmt.Errorf("%w: MAC address %q", ErrInvalid, *s.MacAddress)
			}
			ep.MacAddress = network.HardwareAddr(hw)
		}
	}
	return out, nil
}

// primaryNetwork is the network a container of network mode joins first:
// "" when it shares a namespace (host, none, container:<id>).
func primaryNetwork(mode string) string {
	switch {
	case mode == "host" || mode == "none" || strings.HasPrefix(mode, "container:"):
		return ""
	case mode == "" || mode == "default":
		return "bridge"
	}
	return mode
}

func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

func setSlice[T any](dst *[]T, v []T) {
	if v != nil {
		*dst = slices.Clone(v)
	}
}
