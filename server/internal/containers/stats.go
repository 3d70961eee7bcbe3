package containers

import (
	"context"
	"errors"
	"math"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// Limits of a pass over all running containers.
const (
	StatsPerContainer     = 8 * time.Second // one container's sample
	snapshotSampleTimeout = 15 * time.Second
)

// Snapshot is a container's resource usage at one instant.
type Snapshot struct {
	CPUPercent    float64 `json:"cpuPercent"`
	MemoryUsage   uint64  `json:"memoryUsage"`
	MemoryRaw     uint64  `json:"memoryRaw"`
	MemoryCache   uint64  `json:"memoryCache"`
	MemoryLimit   uint64  `json:"memoryLimit"`
	MemoryPercent float64 `json:"memoryPercent"`
	NetworkRx     uint64  `json:"networkRx"`
	NetworkTx     uint64  `json:"networkTx"`
	BlockRead     uint64  `json:"blockRead"`
	BlockWrite    uint64  `json:"blockWrite"`
}

// TimedSnapshot is a single snapshot with its time (Unix milliseconds).
type TimedSnapshot struct {
	Snapshot
	Timestamp int64 `json:"timestamp"`
}

// Stat is one container's snapshot within a pass over all containers.
type Stat struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Snapshot
}

// Compute derives a snapshot from the engine's raw sample:
//   - cpuPercent = (cpu delta / system delta) × online CPUs × 100, so one busy
//     core is 100 and the value may exceed 100 on multi-core hosts (0 when
//     the engine gave no previous sample);
//   - memoryUsage = raw usage − inactive file cache (cgroup v1
//     total_inactive_file, cgroup v2 inactive_file), never below zero;
//   - memoryPercent = memoryUsage / limit × 100.
func Compute(st engine.Stats) Snapshot {
	s := Snapshot{
		MemoryRaw:   st.MemoryUsage,
		MemoryLimit: st.MemoryLimit,
		NetworkRx:   st.NetworkRxBytes,
		NetworkTx:   st.NetworkTxBytes,
		BlockRead:   st.BlockRead,
		BlockWrite:  st.BlockWrite,
	}
	cpus := uint64(st.OnlineCPUs)
	if cpus == 0 {
		cpus = uint64(st.PerCPUCount)
	}
	// Without a previous sample (PreSystemCPU 0) the delta would be the usage
	// since boot, not a rate: report 0 rather than a wrong figure.
	if st.PreSystemCPU > 0 && st.CPUTotal > st.PreCPUTotal && st.SystemCPU > st.PreSystemCPU && cpus > 0 {
		cpuDelta := float64(st.CPUTotal - st.PreCPUTotal)
		sysDelta := float64(st.SystemCPU - st.PreSystemCPU)
		s.CPUPercent = round2(cpuDelta / sysDelta * float64(cpus) * 100)
	}
	cache, ok := st.MemoryStats["total_inactive_file"] // cgroup v1
	if !ok {
		cache = st.MemoryStats["inactive_file"] // cgroup v2
	}
	if cache < st.MemoryUsage {
		s.MemoryCache = cache
	}
	s.MemoryUsage = st.MemoryUsage - s.MemoryCache
	if st.MemoryLimit > 0 {
		s.MemoryPercent = round2(float64(s.MemoryUsage) / float64(st.MemoryLimit) * 100)
	}
	return s
}

func round2(f float64) float64 { return math.Round(f*100) / 100 }

// Stats takes one snapshot of a running container.
func (s *Service) Stats(ctx context.Context, env store.Environment, id string) (TimedSnapshot, error) {
	c, err := s.client(ctx, env, "get container stats")
	if err != nil {
		return TimedSnapshot{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, snapshotSampleTimeout)
	defer cancel()
	raw, err := c.ContainerStats(ctx, id)
	if err != nil {
		return TimedSnapshot{}, opFault("get container stats", err)
	}
	return TimedSnapshot{Snapshot: Compute(raw), Timestamp: s.now().UnixMilli()}, nil
}

// StatsDebug is one container's sample as the engine reported it beside
// what Berth computes from it, for finding out why a figure looks wrong.
type StatsDebug struct {
	Container string       `json:"container"`
	Raw       engine.Stats `json:"raw"`
	Computed  Snapshot     `json:"computed"`
	Timestamp int64        `json:"timestamp"` // Unix milliseconds
}

// Debug takes one sample of running container id (an id or a name) and
// answers it raw and computed.
func (s *Service) Debug(ctx context.Context, env store.Environment, id string) (StatsDebug, error) {
	c, err := s.client(ctx, env, "get container stats")
	if err != nil {
		return StatsDebug{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, snapshotSampleTimeout)
	defer cancel()
	raw, err := c.ContainerStats(ctx, id)
	if err != nil {
		return StatsDebug{}, opFault("get container stats", err)
	}
	return StatsDebug{Container: id, Raw: raw, Computed: Compute(raw), Timestamp: s.now().UnixMilli()}, nil
}

// StatsAll takes one snapshot of every running container of env and calls
// emit (never concurrently) as each arrives. Containers whose sample fails or
// takes longer than StatsPerContainer are skipped. An offline environment has
// no running containers. Through an agent the samples are taken on the agent
// host in one operation.
func (s *Service) StatsAll(ctx context.Context, env store.Environment, emit func(Stat) error) error {
	return s.StatsOf(ctx, env, nil, emit)
}

// StatsOf is StatsAll of the running containers that ids name (full ids or
// prefixes of at least 12 characters; nil: every one).
func (s *Service) StatsOf(ctx context.Context, env store.Environment, ids []string, emit func(Stat) error) error {
	c, err := s.engines.Client(ctx, env.Endpoint())
	if err != nil {
		if engine.IsOffline(err) {
			return nil
		}
		return opFault("list containers", err)
	}
	var emitErr error
	err = c.SampleRunningOf(ctx, StatsPerContainer, ids, func(cs engine.ContainerSample) error {
		emitErr = emit(Stat{ID: cs.ID, Name: cs.Name, Snapshot: Compute(cs.Stats)})
		return emitErr
	})
	switch {
	case emitErr != nil && !errors.Is(emitErr, context.Canceled):
		return fault.Wrap(fault.Internal, "Failed to send container stats", emitErr)
	case emitErr != nil || ctx.Err() != nil:
		return nil
	case err != nil:
		return opFault("list containers", err)
	}
	return nil
}

// fanOut calls fn for every item with at most limit calls at once, and
// returns when all have returned or ctx ends (pending items are dropped).
func fanOut[T any](ctx context.Context, items []T, limit int, fn func(context.Context, T)) {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(limit)
	for _, it := range items {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			if gctx.Err() == nil {
				fn(gctx, it)
			}
			return nil
		})
	}
	_ = g.Wait()
}
