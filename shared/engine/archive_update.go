package engine

import (
	"context"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
)

// ResourceUpdate is a change of a container's resources and restart policy.
// Zero fields (nil pointers) are left as they are.
type ResourceUpdate struct {
	Memory            int64
	MemorySwap        int64 // -1: unlimited swap
	MemoryReservation int64
	CPUShares         int64
	NanoCPUs          int64
	CPUQuota          int64
	CPUPeriod         int64
	CpusetCpus        string
	PidsLimit         *int64 // 0 or -1: unlimited
	RestartPolicy     string // no, always, unless-stopped, on-failure[:N]; "" keeps it
}

// HostResources are the resource and restart settings of a container's
// HostConfig, in the shape clients read.
type HostResources struct {
	Memory            int64               `json:"memory"`
	MemorySwap        int64               `json:"memorySwap"`
	MemoryReservation int64               `json:"memoryReservation"`
	CPUShares         int64               `json:"cpuShares"`
	NanoCPUs          int64               `json:"nanoCpus"`
	CPUQuota          int64               `json:"cpuQuota"`
	CPUPeriod         int64               `json:"cpuPeriod"`
	CpusetCpus        string              `json:"cpusetCpus"`
	PidsLimit         int64               `json:"pidsLimit"`
	RestartPolicy     RestartPolicyValues `json:"restartPolicy"`
}

// RestartPolicyValues is a restart policy as the engine stores it.
type RestartPolicyValues struct {
	Name              string `json:"name"`
	MaximumRetryCount int    `json:"maximumRetryCount"`
}

// UpdateContainer changes a running or stopped container's resources and
// restart policy in place and returns the engine's warnings.
func (c *Client) UpdateContainer(ctx context.Context, containerID string, u ResourceUpdate) ([]string, error) {
	containerID, err := checkContainer(containerID)
	if err != nil {
		return nil, err
	}
	opts := client.ContainerUpdateOptions{Resources: &container.Resources{
		Memory: u.Memory, MemorySwap: u.MemorySwap, MemoryReservation: u.MemoryReservation,
		CPUShares: u.CPUShares, NanoCPUs: u.NanoCPUs, CPUQuota: u.CPUQuota, CPUPeriod: u.CPUPeriod,
		CpusetCpus: u.CpusetCpus, PidsLimit: u.PidsLimit,
	}}
	if u.RestartPolicy != "" {
		rp, err := restartPolicy(u.RestartPolicy)
		if err != nil {
			return nil, err
		}
		opts.RestartPolicy = &rp
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	res, err := c.cli.ContainerUpdate(ctx, containerID, opts)
	if err != nil {
		return nil, c.fail(err)
	}
	if res.Warnings == nil {
		return []string{}, nil
	}
	return res.Warnings, nil
}

// ContainerResources reads a container's resource and restart settings.
func (c *Client) ContainerResources(ctx context.Context, containerID string) (HostResources, error) {
	containerID, err := checkContainer(containerID)
	if err != nil {
		return HostResources{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	res, err := c.cli.ContainerInspect(ctx, containerID, client.ContainerInspectOptions{})
	if err != nil {
		return HostResources{}, c.fail(err)
	}
	hc := res.Container.HostConfig
	if hc == nil {
		return HostResources{}, nil
	}
	r := hc.Resources
	h := HostResources{Memory: r.Memory, MemorySwap: r.MemorySwap, MemoryReservation: r.MemoryReservation,
		CPUShares: r.CPUShares, NanoCPUs: r.NanoCPUs, CPUQuota: r.CPUQuota, CPUPeriod: r.CPUPeriod,
		CpusetCpus:    r.CpusetCpus,
		RestartPolicy: RestartPolicyValues{Name: string(hc.RestartPolicy.Name), MaximumRetryCount: hc.RestartPolicy.MaximumRetryCount}}
	if r.PidsLimit != nil {
		h.PidsLimit = *r.PidsLimit
	}
	return h, nil
}
