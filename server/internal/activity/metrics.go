package activity

import (
	"cmp"
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/berth-dev/berth/server/internal/containers"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
)

// HistorySize is how many samples of each environment are kept (an hour at
// the default interval of 30 s).
const HistorySize = 120

// TopSize is how many containers a sample ranks.
const TopSize = 5

// perContainer bounds the sampling of one container.
const perContainer = 8 * time.Second

// Point is one sample of an environment's host (COMPAT's metricsHistory).
type Point struct {
	CPUPercent    float64 `json:"cpu_percent"`
	MemoryPercent float64 `json:"memory_percent"`
	Timestamp     string  `json:"timestamp"` // RFC 3339, UTC
	// MemoryUsed and MemoryTotal are in bytes.
	MemoryUsed  uint64 `json:"-"`
	MemoryTotal uint64 `json:"-"`
}

// Top is a container ranked by its CPU and memory use.
type Top struct {
	ID            string  `json:"id"`
	Name          string  `json:"name"`
	CPUPercent    float64 `json:"cpuPercent"`
	MemoryPercent float64 `json:"memoryPercent"`
	MemoryUsage   uint64  `json:"memoryUsage"`
}

// ring is an environment's bounded history and its latest ranking.
type ring struct {
	points []Point
	top    []Top
}

// History returns the samples of environment envID, oldest first, and the
// containers of its latest sample that used the most CPU (then memory).
func (s *Service) History(envID int64) ([]Point, []Top) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.history[envID]
	if !ok {
		return nil, nil
	}
	return slices.Clone(r.points), slices.Clone(r.top)
}

func (s *Service) record(envID int64, p Point, top []Top) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.history[envID]
	if !ok {
		r = &ring{}
		s.history[envID] = r
	}
	if len(r.points) == HistorySize {
		r.points = append(r.points[:0], r.points[1:]...)
	}
	r.points = append(r.points, p)
	r.top = top
}

// forgetHistory drops the history of environments no longer collecting
// metrics (or gone).
func (s *Service) forgetHistory(envs []store.Environment) {
	keep := map[int64]bool{}
	for _, e := range envs {
		if e.CollectMetrics {
			keep[e.ID] = true
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for id := range s.history {
		if !keep[id] {
			delete(s.history, id)
		}
	}
}

// sampleLoop samples env every interval until ctx ends. The first sample
// comes after a random part of the interval, so that the environments of a
// server that starts (or of a test suite's many servers on one engine) are
// not all sampled at once.
func (s *Service) sampleLoop(ctx context.Context, env store.Environment) {
	select {
	case <-ctx.Done():
		return
	case <-time.After(rand.N(s.sample)):
	}
	t := time.NewTicker(s.sample)
	defer t.Stop()
	for {
		if err := s.Sample(ctx, env); err != nil && ctx.Err() == nil {
			s.log.Debug("activity: metrics not sampled", "env", env.ID, "err", engine.Details(err))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Sample takes one sample of env's running containers (and, through an
// agent, of its host) and adds it to the history. Without an agent the
// host's figures are the sum of its containers': CPU as a share of all the
// host's cores, memory as a share of the engine's memory.
func (s *Service) Sample(ctx context.Context, env store.Environment) error {
	ctx, cancel := context.WithTimeout(ctx, 2*perContainer)
	defer cancel()
	c, err := s.engines.Client(ctx, env.Endpoint())
	if err != nil {
		return err
	}
	info, err := c.Info(ctx)
	if err != nil {
		return err
	}
	var (
		tops     []Top
		cpuSum   float64
		memSum   uint64
		memTotal = uint64(max(info.MemTotal, 0))
	)
	err = c.SampleRunning(ctx, perContainer, func(cs engine.ContainerSample) error {
		snap := containers.Compute(cs.Stats)
		cpuSum += snap.CPUPercent
		memSum += snap.MemoryUsage
		top := Top{ID: cs.ID, Name: cs.Name, CPUPercent: snap.CPUPercent, MemoryUsage: snap.MemoryUsage,
			MemoryPercent: snap.MemoryPercent}
		if memTotal > 0 {
			top.MemoryPercent = round2(float64(snap.MemoryUsage) / float64(memTotal) * 100)
		}
		tops = append(tops, top)
		return nil
	})
	if err != nil {
		return err
	}
	p := Point{Timestamp: s.now().UTC().Format(time.RFC3339), MemoryUsed: memSum, MemoryTotal: memTotal}
	if info.CPUs > 0 {
		p.CPUPercent = round2(cpuSum / float64(info.CPUs))
	}
	if memTotal > 0 {
		p.MemoryPercent = round2(float64(memSum) / float64(memTotal) * 100)
	}
	// Only an agent measures its host (other environments answer at once
	// that they cannot).
	if h, err := c.HostMetrics(ctx); err == nil && h.MemoryTotal > 0 {
		p.CPUPercent, p.MemoryUsed, p.MemoryTotal = round2(h.CPUPercent), h.MemoryUsed, h.MemoryTotal
		p.MemoryPercent = round2(float64(h.MemoryUsed) / float64(h.MemoryTotal) * 100)
	}
	slices.SortFunc(tops, func(a, b Top) int {
		return cmp.Or(cmp.Compare(b.CPUPercent, a.CPUPercent), cmp.Compare(b.MemoryUsage, a.MemoryUsage),
			cmp.Compare(a.Name, b.Name))
	})
	if len(tops) > TopSize {
		tops = tops[:TopSize]
	}
	if tops == nil {
		tops = []Top{}
	}
	s.record(env.ID, p, tops)
	return nil
}

func round2(f float64) float64 { return math.Round(f*100) / 100 }
