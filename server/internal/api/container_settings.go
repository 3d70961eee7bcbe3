package api

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/berth-dev/berth/server/internal/policy"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// containerSettingsInput is a container's settings as clients send them
// to POST /api/containers and POST …/update: every field of the reference's
// create options, and Berth's own names (command, portBindings, ports as a
// list, volumes as a list of binds, nanoCpus, cpus) as aliases. An absent
// field is not set.
type containerSettingsInput struct {
	Name       string            `json:"name"`
	Image      string            `json:"image"`
	Cmd        flexCommand       `json:"cmd"`
	Command    flexCommand       `json:"command"` // Berth's name of cmd
	Entrypoint flexCommand       `json:"entrypoint"`
	WorkingDir *string           `json:"workingDir"`
	User       *string           `json:"user"`
	Hostname   *string           `json:"hostname"`
	Domainname *string           `json:"domainname"`
	Env        []string          `json:"env"`
	Labels     map[string]string `json:"labels"`
	// Ports are the reference's {"80/tcp": {HostIp, HostPort}} or Berth's
	// [{containerPort, hostPort, hostIp, protocol}]; null publishes nothing.
	Ports        flexPorts                `json:"ports"`
	PortBindings map[string][]portBinding `json:"portBindings"` // the engine's form
	// Volumes are the reference's anonymous volumes ({"/data": {}}) or
	// Berth's binds (["src:/dst:ro"]).
	Volumes           flexVolumes   `json:"volumes"`
	VolumeBinds       nullableList  `json:"volumeBinds"`
	RestartPolicy     restartPolicy `json:"restartPolicy"`
	RestartMaxRetries *int          `json:"restartMaxRetries"`
	MaximumRetryCount *int          `json:"maximumRetryCount"`

	NetworkMode        *string  `json:"networkMode"`
	AdditionalNetworks []string `json:"additionalNetworks"`
	Networks           []string `json:"networks"` // the first is the primary network
	NetworkAliases     []string `json:"networkAliases"`
	NetworkIPv4Address *string  `json:"networkIpv4Address"`
	NetworkIPv6Address *string  `json:"networkIpv6Address"`
	NetworkGwPriority  *int     `json:"networkGwPriority"`
	MacAddress         *string  `json:"macAddress"`

	Healthcheck       healthInput       `json:"healthcheck"`
	Privileged        *bool             `json:"privileged"`
	Memory            *int64            `json:"memory"`
	MemoryReservation *int64            `json:"memoryReservation"`
	MemorySwap        *int64            `json:"memorySwap"`
	MemorySwappiness  *int64            `json:"memorySwappiness"`
	CPUShares         *int64            `json:"cpuShares"`
	CPUQuota          *int64            `json:"cpuQuota"`
	CPUPeriod         *int64            `json:"cpuPeriod"`
	NanoCPUs          *int64            `json:"nanoCpus"`
	CPUs              *float64          `json:"cpus"`
	CpusetCpus        *string           `json:"cpusetCpus"`
	CpusetMems        *string           `json:"cpusetMems"`
	PidsLimit         *int64            `json:"pidsLimit"`
	OomKillDisable    *bool             `json:"oomKillDisable"`
	ShmSize           *int64            `json:"shmSize"`
	CapAdd            []string          `json:"capAdd"`
	CapDrop           []string          `json:"capDrop"`
	Devices           []deviceInput     `json:"devices"`
	DeviceRequests    []deviceRequest   `json:"deviceRequests"`
	DNS               []string          `json:"dns"`
	DNSSearch         []string          `json:"dnsSearch"`
	DNSOptions        []string          `json:"dnsOptions"`
	SecurityOpt       []string          `json:"securityOpt"`
	Ulimits           []ulimitInput     `json:"ulimits"`
	Tty               *bool             `json:"tty"`
	StdinOpen         *bool             `json:"stdinOpen"`
	Tmpfs             map[string]string `json:"tmpfs"`
	Sysctls           map[string]string `json:"sysctls"`
	LogDriver         *string           `json:"logDriver"`
	LogOptions        map[string]string `json:"logOptions"`
	IpcMode           *string           `json:"ipcMode"`
	PidMode           *string           `json:"pidMode"`
	UTSMode           *string           `json:"utsMode"`
	UsernsMode        *string           `json:"usernsMode"`
	CgroupParent      *string           `json:"cgroupParent"`
	Runtime           *string           `json:"runtime"`
	Init              *bool             `json:"init"`
	ReadonlyRootfs    *bool             `json:"readonlyRootfs"`
	StopSignal        *string           `json:"stopSignal"`
	StopTimeout       *int              `json:"stopTimeout"`
	ExtraHosts        []string          `json:"extraHosts"`
	GroupAdd          []string          `json:"groupAdd"`
	// NetworkConfigs (per-network addresses and aliases) is refused: the
	// primary network's are networkAliases/networkIpv4Address/….
	NetworkConfigs map[string]json.RawMessage `json:"networkConfigs"`
}

type deviceInput struct {
	HostPath      string `json:"hostPath"`
	ContainerPath string `json:"containerPath"`
	Permissions   string `json:"permissions"`
}

type deviceRequest struct {
	Driver       string            `json:"driver"`
	Count        *int              `json:"count"`
	DeviceIDs    []string          `json:"deviceIDs"`
	Capabilities [][]string        `json:"capabilities"`
	Options      map[string]string `json:"options"`
}

type ulimitInput struct {
	Name string `json:"name"`
	Soft int64  `json:"soft"`
	Hard int64  `json:"hard"`
}

// healthInput is a health check ({test, interval, timeout, retries,
// startPeriod}, durations in nanoseconds as the engine takes them); null
// turns the image's health check off, and an empty test ({"test": []}, as
// the engine's own "inherit") leaves it to the image.
type healthInput struct {
	set, off    bool
	Test        []string `json:"test"`
	Interval    int64    `json:"interval"`
	Timeout     int64    `json:"timeout"`
	Retries     int      `json:"retries"`
	StartPeriod int64    `json:"startPeriod"`
}

func (h *healthInput) UnmarshalJSON(b []byte) error {
	h.set = true
	if strings.TrimSpace(string(b)) == "null" {
		h.off = true
		return nil
	}
	type plain healthInput
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return fault.New(fault.Invalid, "healthcheck must be {test, interval, timeout, retries, startPeriod} or null")
	}
	p.set = true
	*h = healthInput(p)
	return nil
}

// nullableList is a list of strings where null (clear) differs from absent.
type nullableList struct {
	set   bool
	items []string
}

func (l *nullableList) UnmarshalJSON(b []byte) error {
	l.set = true
	if strings.TrimSpace(string(b)) == "null" {
		l.items = []string{}
		return nil
	}
	if err := json.Unmarshal(b, &l.items); err != nil {
		return fault.New(fault.Invalid, "expected a list of strings or null")
	}
	if l.items == nil {
		l.items = []string{}
	}
	return nil
}

// flexPorts are port mappings in the reference's form, Berth's list, or
// null (none).
type flexPorts struct {
	set      bool
	bindings map[string][]engine.HostPort
}

func (f *flexPorts) UnmarshalJSON(b []byte) error {
	f.set = true
	f.bindings = map[string][]engine.HostPort{}
	s := strings.TrimSpace(string(b))
	switch {
	case s == "null":
		return nil
	case strings.HasPrefix(s, "["):
		var list []struct {
			ContainerPort flexString `json:"containerPort"`
			HostPort      flexString `json:"hostPort"`
			HostIP        string     `json:"hostIp"`
			Protocol      string     `json:"protocol"`
		}
		if err := json.Unmarshal(b, &list); err != nil {
			return fault.New(fault.Invalid, "ports must be an object {\"80/tcp\": {HostPort}} or a list [{containerPort, hostPort, protocol}]")
		}
		for _, p := range list {
			cp := strings.TrimSpace(string(p.ContainerPort))
			if cp == "" {
				return fault.New(fault.Invalid, "containerPort is required for each port")
			}
			if !strings.Contains(cp, "/") {
				proto := strings.ToLower(strings.TrimSpace(p.Protocol))
				if proto == "" {
					proto = "tcp"
				}
				cp += "/" + proto
			}
			f.bindings[cp] = append(f.bindings[cp], engine.HostPort{HostIP: p.HostIP, HostPort: string(p.HostPort)})
		}
	default:
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			return fault.New(fault.Invalid, "ports must be an object {\"80/tcp\": {HostPort}} or a list [{containerPort, hostPort, protocol}]")
		}
		for k, raw := range m {
			var one []portBinding // the engine's list form, or one binding
			if err := json.Unmarshal(raw, &one); err != nil {
				var pb portBinding
				if err := json.Unmarshal(raw, &pb); err != nil {
					return fault.Invalidf("ports[%q] must be {HostIp, HostPort}", k)
				}
				one = []portBinding{pb}
			}
			for _, pb := range one {
				f.bindings[k] = append(f.bindings[k], engine.HostPort{HostIP: pb.HostIP, HostPort: string(pb.HostPort)})
			}
			if len(one) == 0 {
				f.bindings[k] = nil
			}
		}
	}
	return nil
}

// flexVolumes are the reference's anonymous volumes ({"/data": {}}) or
// Berth's binds (["src:/dst"]).
type flexVolumes struct {
	anonymous []string
	binds     []string
}

func (f *flexVolumes) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	switch {
	case s == "null":
		return nil
	case strings.HasPrefix(s, "["):
		if err := json.Unmarshal(b, &f.binds); err != nil {
			return fault.New(fault.Invalid, "volumes must be a list of binds or an object of container paths")
		}
		if f.binds == nil {
			f.binds = []string{}
		}
	default:
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			return fault.New(fault.Invalid, "volumes must be a list of binds or an object of container paths")
		}
		f.anonymous = []string{}
		for k := range m {
			f.anonymous = append(f.anonymous, k)
		}
	}
	return nil
}

// settings turns the input into the engine's settings.
func (in containerSettingsInput) settings() (engine.Settings, error) {
	if len(in.NetworkConfigs) > 0 {
		return engine.Settings{}, fault.New(fault.Invalid, "networkConfigs is not supported: set the primary network's networkAliases, networkIpv4Address and networkIpv6Address, and the others with additionalNetworks")
	}
	s := engine.Settings{Image: strings.TrimSpace(in.Image), Env: in.Env, Labels: in.Labels, WorkingDir: in.WorkingDir,
		User: in.User, Hostname: in.Hostname, Domainname: in.Domainname, Tty: in.Tty, OpenStdin: in.StdinOpen,
		StopSignal: in.StopSignal, StopTimeout: in.StopTimeout, NetworkMode: in.NetworkMode,
		NetworkAliases: in.NetworkAliases, IPv4Address: in.NetworkIPv4Address, IPv6Address: in.NetworkIPv6Address,
		GwPriority: in.NetworkGwPriority, MacAddress: in.MacAddress, Privileged: in.Privileged,
		Memory: in.Memory, MemoryReservation: in.MemoryReservation, MemorySwap: in.MemorySwap,
		MemorySwappiness: in.MemorySwappiness, CPUShares: in.CPUShares, CPUQuota: in.CPUQuota, CPUPeriod: in.CPUPeriod,
		NanoCPUs: in.NanoCPUs, CpusetCpus: in.CpusetCpus, CpusetMems: in.CpusetMems, PidsLimit: in.PidsLimit,
		OomKillDisable: in.OomKillDisable, ShmSize: in.ShmSize, CapAdd: in.CapAdd, CapDrop: in.CapDrop,
		DNS: in.DNS, DNSSearch: in.DNSSearch, DNSOptions: in.DNSOptions, SecurityOpt: in.SecurityOpt,
		Tmpfs: in.Tmpfs, Sysctls: in.Sysctls, LogDriver: in.LogDriver, LogOptions: in.LogOptions,
		IpcMode: in.IpcMode, PidMode: in.PidMode, UTSMode: in.UTSMode, UsernsMode: in.UsernsMode,
		CgroupParent: in.CgroupParent, Runtime: in.Runtime, Init: in.Init, ReadonlyRootfs: in.ReadonlyRootfs,
		ExtraHosts: in.ExtraHosts, GroupAdd: in.GroupAdd}
	switch {
	case in.Cmd != nil:
		s.Cmd = in.Cmd
	case in.Command != nil:
		s.Cmd = in.Command
	}
	if in.Entrypoint != nil {
		s.Entrypoint = in.Entrypoint
	}
	if in.Tty != nil && *in.Tty && in.StdinOpen == nil {
		s.OpenStdin = in.Tty // Berth's create: a terminal takes input
	}
	for name, v := range map[string]*int64{"memory": in.Memory, "memoryReservation": in.MemoryReservation,
		"cpuShares": in.CPUShares, "cpuQuota": in.CPUQuota, "cpuPeriod": in.CPUPeriod, "nanoCpus": in.NanoCPUs, "shmSize": in.ShmSize} {
		if v != nil && *v < 0 {
			return s, fault.Invalidf("%s must not be negative", name)
		}
	}
	if in.CPUs != nil {
		if *in.CPUs < 0 || math.IsNaN(*in.CPUs) || math.IsInf(*in.CPUs, 0) {
			return s, fault.New(fault.Invalid, "cpus must be a non-negative number")
		}
		n := int64(math.Round(*in.CPUs * 1e9))
		if in.NanoCPUs != nil && *in.NanoCPUs != n {
			return s, fault.New(fault.Invalid, "cpus and nanoCpus disagree: send one of them")
		}
		s.NanoCPUs = &n
	}
	if in.Ports.set {
		s.Ports = in.Ports.bindings
	}
	if len(in.PortBindings) > 0 {
		if s.Ports == nil {
			s.Ports = map[string][]engine.HostPort{}
		}
		for k, binds := range in.PortBindings {
			for _, b := range binds {
				s.Ports[k] = append(s.Ports[k], engine.HostPort{HostIP: b.HostIP, HostPort: string(b.HostPort)})
			}
		}
	}
	switch {
	case in.VolumeBinds.set:
		s.Binds = append(in.VolumeBinds.items, in.Volumes.binds...)
	case in.Volumes.binds != nil:
		s.Binds = in.Volumes.binds
	}
	s.Volumes = in.Volumes.anonymous
	if in.RestartPolicy.Name != "" {
		rp := in.RestartPolicy.Name
		retries := in.RestartPolicy.MaxRetryCount
		for _, r := range []*int{in.RestartMaxRetries, in.MaximumRetryCount} {
			if retries == nil {
				retries = r
			}
		}
		if retries != nil && rp == "on-failure" {
			if *retries < 0 {
				return s, fault.New(fault.Invalid, "restartMaxRetries must not be negative")
			}
			rp += ":" + strconv.Itoa(*retries)
		}
		s.RestartPolicy = &rp
	}
	if len(in.Networks) > 0 { // the reference's older form: primary first
		if in.NetworkMode == nil {
			s.NetworkMode = &in.Networks[0]
		}
		s.Networks = in.Networks[1:]
	}
	if in.AdditionalNetworks != nil {
		s.Networks = in.AdditionalNetworks
	}
	if h := in.Healthcheck; h.set {
		s.Healthcheck = &engine.Healthcheck{Disable: h.off, Inherit: !h.off && len(h.Test) == 0, Test: h.Test, Interval: time.Duration(h.Interval),
			Timeout: time.Duration(h.Timeout), StartPeriod: time.Duration(h.StartPeriod), Retries: h.Retries}
	}
	for _, d := range in.Devices {
		if strings.TrimSpace(d.HostPath) == "" {
			return s, fault.New(fault.Invalid, "hostPath is required for each device")
		}
		cp := d.ContainerPath
		if cp == "" {
			cp = d.HostPath
		}
		s.Devices = append(s.Devices, engine.Device{HostPath: d.HostPath, ContainerPath: cp, Permissions: d.Permissions})
	}
	if in.Devices != nil && s.Devices == nil {
		s.Devices = []engine.Device{}
	}
	for _, d := range in.DeviceRequests {
		count := -1
		if d.Count != nil {
			count = *d.Count
		}
		s.DeviceRequests = append(s.DeviceRequests, engine.DeviceRequest{Driver: d.Driver, Count: count,
			DeviceIDs: d.DeviceIDs, Capabilities: d.Capabilities, Options: d.Options})
	}
	if in.DeviceRequests != nil && s.DeviceRequests == nil {
		s.DeviceRequests = []engine.DeviceRequest{}
	}
	for _, u := range in.Ulimits {
		if strings.TrimSpace(u.Name) == "" {
			return s, fault.New(fault.Invalid, "name is required for each ulimit")
		}
		s.Ulimits = append(s.Ulimits, engine.Ulimit{Name: u.Name, Soft: u.Soft, Hard: u.Hard})
	}
	if in.Ulimits != nil && s.Ulimits == nil {
		s.Ulimits = []engine.Ulimit{}
	}
	return s, nil
}

// workloadOf is what a configuration asks of the host, for the
// environment's security settings.
func workloadOf(n engine.HostNeeds) policy.Workload {
	return policy.Workload{Privileged: n.Privileged, NetworkMode: n.NetworkMode, PIDMode: n.PidMode, IPCMode: n.IpcMode,
		Devices: n.Devices, CapAdd: n.CapAdd, SecurityOpt: n.SecurityOpt, Binds: n.BindSources}
}
