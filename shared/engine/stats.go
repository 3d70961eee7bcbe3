package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
)

// Stats is one resource sample of a container with the previous CPU sample,
// as the engine reports it (before any computation).
type Stats struct {
	CPUTotal       uint64
	PreCPUTotal    uint64
	SystemCPU      uint64
	PreSystemCPU   uint64
	OnlineCPUs     uint32
	PerCPUCount    int               // length of the per-CPU usage list (cgroup v1)
	MemoryUsage    uint64            // raw usage, page cache included
	MemoryLimit    uint64            //
	MemoryStats    map[string]uint64 // cgroup v1: total_inactive_file; v2: inactive_file
	NetworkRxBytes uint64            // over all interfaces
	NetworkTxBytes uint64
	BlockRead      uint64
	BlockWrite     uint64
}

// ContainerStats takes one sample of a running container. The engine samples
// twice (about a second apart) so that the CPU delta is meaningful.
func (c *Client) ContainerStats(ctx context.Context, id string) (Stats, error) {
	id, err := checkContainer(id)
	if err != nil {
		return Stats{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	res, err := c.cli.ContainerStats(ctx, id, client.ContainerStatsOptions{Stream: false, IncludePreviousSample: true})
	if err != nil {
		return Stats{}, c.fail(err)
	}
	defer res.Body.Close()
	var s container.StatsResponse
	if err := json.NewDecoder(res.Body).Decode(&s); err != nil {
		return Stats{}, fmt.Errorf("engine: decode stats: %w", err)
	}
	out := Stats{
		CPUTotal:     s.CPUStats.CPUUsage.TotalUsage,
		PreCPUTotal:  s.PreCPUStats.CPUUsage.TotalUsage,
		SystemCPU:    s.CPUStats.SystemUsage,
		PreSystemCPU: s.PreCPUStats.SystemUsage,
		OnlineCPUs:   s.CPUStats.OnlineCPUs,
		PerCPUCount:  len(s.CPUStats.CPUUsage.PercpuUsage),
		MemoryUsage:  s.MemoryStats.Usage,
		MemoryLimit:  s.MemoryStats.Limit,
		MemoryStats:  s.MemoryStats.Stats,
	}
	for _, n := range s.Networks {
		out.NetworkRxBytes += n.RxBytes
		out.NetworkTxBytes += n.TxBytes
	}
	for _, e := range s.BlkioStats.IoServiceBytesRecursive {
		switch strings.ToLower(e.Op) {
		case "read":
			out.BlockRead += e.Value
		case "write":
			out.BlockWrite += e.Value
		}
	}
	return out, nil
}

// Limits of a pass over all running containers.
const (
	sampleListTimeout = 10 * time.Second // the container list fetch
	sampleFanOut      = 16               // samples taken at once
)

// ContainerSample is one running container's sample within a pass.
type ContainerSample struct {
	ID   string
	Name string
	Stats
}

// SampleRunning samples every running container once, at most sampleFanOut
// at a time, each bounded by perContainer, and calls fn (never concurrently)
// as each sample arrives; samples that fail or take too long are skipped.
// An error from fn ends the pass with that error. Through an agent the pass
// runs on the agent host: one operation, not one call per container across
// the network.
func (c *Client) SampleRunning(ctx context.Context, perContainer time.Duration, fn func(ContainerSample) error) error {
	return c.SampleRunningOf(ctx, perContainer, nil, fn)
}

// SampleRunningOf is SampleRunning of the running containers that ids name
// (full ids, or prefixes of at least 12 characters); nil ids samples every
// one. Through an agent the agent samples its running containers and only
// those named are passed on.
func (c *Client) SampleRunningOf(ctx context.Context, perContainer time.Duration, ids []string, fn func(ContainerSample) error) error {
	want := func(string) bool { return true }
	if ids != nil {
		want = func(id string) bool {
			for _, p := range ids {
				if len(p) >= 12 && strings.HasPrefix(id, p) {
					return true
				}
			}
			return false
		}
	}
	if c.agent != nil {
		return c.agentSample(ctx, perContainer.Milliseconds(), func(cs ContainerSample) error {
			if !want(cs.ID) {
				return nil
			}
			return fn(cs)
		})
	}
	lctx, cancel := context.WithTimeout(ctx, sampleListTimeout)
	list, err := c.ListContainers(lctx, false)
	cancel()
	if err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(sampleFanOut)
	var mu sync.Mutex
	for _, ct := range list {
		if gctx.Err() != nil {
			break
		}
		if !want(ct.ID) {
			continue
		}
		g.Go(func() error {
			sctx, cancel := context.WithTimeout(gctx, perContainer)
			defer cancel()
			raw, err := c.ContainerStats(sctx, ct.ID)
			if err != nil {
				return nil
			}
			mu.Lock()
			defer mu.Unlock()
			return fn(ContainerSample{ID: ct.ID, Name: ct.Name, Stats: raw})
		})
	}
	return g.Wait()
}
