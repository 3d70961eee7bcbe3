package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
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
	return c.containerStats(ctx, id, false)
}

// containerStats reads one sample of container id; oneShot asks for the
// engine's one-shot mode (API 1.41): the current figures at once, without
// the previous sample the engine otherwise waits a second for.
func (c *Client) containerStats(ctx context.Context, id string, oneShot bool) (Stats, error) {
	q := url.Values{"stream": {"false"}}
	if oneShot {
		q.Set("one-shot", "true")
	}
	body, err := c.rawGet(ctx, "/containers/"+id+"/stats", q)
	if err != nil {
		return Stats{}, err
	}
	var s statsDoc
	if err := json.Unmarshal(body, &s); err != nil {
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

// statsDoc is the part of the engine's stats answer that Stats holds.
type statsDoc struct {
	CPUStats    cpuDoc `json:"cpu_stats"`
	PreCPUStats cpuDoc `json:"precpu_stats"`
	MemoryStats struct {
		Usage uint64            `json:"usage"`
		Limit uint64            `json:"limit"`
		Stats map[string]uint64 `json:"stats"`
	} `json:"memory_stats"`
	Networks map[string]struct {
		RxBytes uint64 `json:"rx_bytes"`
		TxBytes uint64 `json:"tx_bytes"`
	} `json:"networks"`
	BlkioStats struct {
		IoServiceBytesRecursive []struct {
			Op    string `json:"op"`
			Value uint64 `json:"value"`
		} `json:"io_service_bytes_recursive"`
	} `json:"blkio_stats"`
}

type cpuDoc struct {
	CPUUsage struct {
		TotalUsage  uint64   `json:"total_usage"`
		PercpuUsage []uint64 `json:"percpu_usage"`
	} `json:"cpu_usage"`
	SystemUsage uint64 `json:"system_cpu_usage"`
	OnlineCPUs  uint32 `json:"online_cpus"`
}

// Limits of a pass over all running containers.
const (
	sampleListTimeout = 10 * time.Second // the container list fetch
	// sampleGap is the usual interval a container's CPU use is measured
	// over. A container's previous one-shot sample serves as the start of
	// the interval when it is between prevMinAge and prevMaxAge old; a
	// container without one is sampled again prevMinAge after the pass's
	// first samples.
	sampleGap  = time.Second
	prevMinAge = sampleGap / 2
	prevMaxAge = time.Minute
	// statsFanOut bounds the samples of a pass asked for at once. The
	// engine answers them from its stats collector, which samples every
	// container once a tick (about a second): the samples asked together
	// share the wait for the next tick (50 one-shot samples of Docker 20.10
	// take 51 s one at a time, 7.5 s eight at a time, 1.3 s all at once),
	// so the fan-out is the pass's whole size, as the raw engine's own
	// full fan-out does.
	statsFanOut = 256
)

// ContainerSample is one running container's sample within a pass.
type ContainerSample struct {
	ID   string
	Name string
	Stats
}

// SampleRunning samples every running container once, each bounded by
// perContainer, and calls fn (never concurrently) as each sample arrives;
// samples that fail or take too long are skipped. An error from fn ends the
// pass with that error. Through an agent the pass runs on the agent host:
// one operation, not one call per container across the network.
//
// All samples of a pass are asked for at once (see statsFanOut). Engines
// with the one-shot mode (API 1.41) are asked for the current figures only;
// a container's CPU use is measured from its previous sample (an earlier
// pass's, when recent, else one taken prevMinAge after this pass's first
// ones). Older engines take their own two samples per call.
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
	targets := make([]Container, 0, len(list))
	for _, ct := range list {
		if want(ct.ID) {
			targets = append(targets, ct)
		}
	}
	var mu sync.Mutex
	emit := func(ct Container, st Stats) error {
		mu.Lock()
		defer mu.Unlock()
		return fn(ContainerSample{ID: ct.ID, Name: ct.Name, Stats: st})
	}
	// Engines without the one-shot mode, or whose one-shot answers lack
	// the host's CPU figure (nothing to measure a CPU share with), take
	// their own two samples per call.
	waitEach := func(cts []Container) error {
		return sampleEach(ctx, cts, statsFanOut, func(ctx context.Context, ct Container) error {
			sctx, cancel := context.WithTimeout(ctx, perContainer)
			defer cancel()
			st, err := c.containerStats(sctx, ct.ID, false)
			if err != nil {
				return nil
			}
			return emit(ct, st)
		})
	}
	if !apiAtLeast(c.cli.ClientVersion(), 1, 41) || c.conn.oneShotBlind.Load() {
		return waitEach(targets)
	}
	if ids == nil {
		c.conn.samples.keepOnly(targets)
	}
	// First pass: the current figures of every container; those with a
	// recent previous sample are done.
	type pending struct {
		ct    Container
		first Stats
	}
	var (
		again     []pending
		againMu   sync.Mutex
		lastFirst time.Time // when the last of again's first samples came
	)
	err = sampleEach(ctx, targets, statsFanOut, func(ctx context.Context, ct Container) error {
		sctx, cancel := context.WithTimeout(ctx, perContainer)
		defer cancel()
		st, err := c.containerStats(sctx, ct.ID, true)
		if err != nil {
			return nil
		}
		if st.SystemCPU == 0 {
			c.conn.oneShotBlind.Store(true)
		}
		if c.conn.samples.since(ct.ID, &st, time.Now()) {
			return emit(ct, st)
		}
		againMu.Lock()
		again = append(again, pending{ct, st})
		lastFirst = time.Now()
		againMu.Unlock()
		return nil
	})
	if err != nil || len(again) == 0 {
		return err
	}
	if c.conn.oneShotBlind.Load() {
		cts := make([]Container, len(again))
		for i, p := range again {
			cts[i] = p.ct
		}
		return waitEach(cts)
	}
	// Second pass, for the others, once their first samples are
	// prevMinAge old.
	select {
	case <-ctx.Done():
		return nil
	case <-time.After(time.Until(lastFirst.Add(prevMinAge))):
	}
	return sampleEach(ctx, again, statsFanOut, func(ctx context.Context, p pending) error {
		sctx, cancel := context.WithTimeout(ctx, perContainer)
		defer cancel()
		st, err := c.containerStats(sctx, p.ct.ID, true)
		if err != nil || !c.conn.samples.since(p.ct.ID, &st, time.Now()) {
			// Without a usable second sample the first one still tells
			// the memory, network and disk figures (the CPU figure is 0).
			return emit(p.ct, p.first)
		}
		return emit(p.ct, st)
	})
}

// sampleEach calls fn for each item, at most limit at once, until fn
// returns an error or ctx ends.
func sampleEach[T any](ctx context.Context, items []T, limit int, fn func(context.Context, T) error) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(1, min(limit, len(items))))
	for _, it := range items {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error { return fn(gctx, it) })
	}
	return g.Wait()
}

// sampleMemo remembers the last one-shot CPU figures of each container of
// an engine, so that the next pass measures CPU use from them.
type sampleMemo struct {
	mu   sync.Mutex
	last map[string]cpuMark
}

type cpuMark struct {
	cpu, system uint64
	at          time.Time
}

// since records st as id's latest sample and, when the previous one is
// usable (between prevMinAge and prevMaxAge old, and not from before a
// restart of the container), fills st's previous figures from it and
// reports true.
func (m *sampleMemo) since(id string, st *Stats, now time.Time) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.last == nil {
		m.last = map[string]cpuMark{}
	}
	prev, ok := m.last[id]
	if st.SystemCPU == 0 {
		return false // nothing to measure with
	}
	if ok && now.Sub(prev.at) < prevMinAge && st.SystemCPU >= prev.system {
		// Too close to the previous sample to measure: keep that one as
		// the start of the next interval.
		return false
	}
	m.last[id] = cpuMark{cpu: st.CPUTotal, system: st.SystemCPU, at: now}
	if !ok || now.Sub(prev.at) > prevMaxAge || st.CPUTotal < prev.cpu || st.SystemCPU <= prev.system {
		return false
	}
	st.PreCPUTotal, st.PreSystemCPU = prev.cpu, prev.system
	return true
}

// keepOnly forgets the containers that are not in list.
func (m *sampleMemo) keepOnly(list []Container) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.last) == 0 {
		return
	}
	keep := make(map[string]bool, len(list))
	for _, ct := range list {
		keep[ct.ID] = true
	}
	for id := range m.last {
		if !keep[id] {
			delete(m.last, id)
		}
	}
}
