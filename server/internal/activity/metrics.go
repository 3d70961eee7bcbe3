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
// the default interval of 30 s), in the database.
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

// History is an environment's samples, oldest first, and the containers of
// its latest sample that used the most CPU (then memory); Top is nil before
// the first sample.
type History struct {
	Points []Point
	Top    []Top
}

// History returns the stored history of environment envID, whichever
// replica sampled it.
func (s *Service) History(ctx context.Context, envID int64) (History, error) {
	h, err := s.store.MetricHistory(ctx, envID)
	if err != nil {
		return History{}, err
	}
	return historyOf(h), nil
}

// HistoryOf returns the stored history of each environment of ids (those
// without one are missing), in a few queries for all of them.
func (s *Service) HistoryOf(ctx context.Context, ids []int64) (map[int64]History, error) {
	all, err := s.store.MetricHistories(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]History, len(all))
	for id, h := range all {
		out[id] = historyOf(h)
	}
	return out, nil
}

func historyOf(h store.MetricHistory) History {
	var out History
	for _, m := range h.Samples {
		out.Points = append(out.Points, Point{CPUPercent: m.CPUPercent, MemoryPercent: m.MemoryPercent,
			Timestamp: m.SampledAt.UTC().Format(time.RFC3339), MemoryUsed: m.MemoryUsed, MemoryTotal: m.MemoryTotal})
	}
	if h.Top != nil {
		out.Top = make([]Top, 0, len(h.Top))
		for _, t := range h.Top {
			out.Top = append(out.Top, Top(t))
		}
	}
	return out
}

// sampleLoop samples env every interval until ctx ends. The first sample
// comes after a random part of the interval, so that the environments of a
// server that starts (or of a test suite's many servers on one engine) are
// not all sampled at once.
func (s *Service) sampleLoop(ctx context.Context, env store.Environment) {
	defer func() {
		if s.heldElsewhere(env.ID) { // stopped because the agent is held elsewhere now
			ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			s.leaveRounds(ctx, env.ID)
		}
	}()
	select {
	case <-ctx.Done():
		return
	case <-time.After(rand.N(s.sample)):
	}
	t := time.NewTicker(s.sample)
	defer t.Stop()
	for {
		switch sampled, err := s.Sample(ctx, env); {
		case err != nil && ctx.Err() == nil:
			s.log.Debug("activity: metrics not sampled", "env", env.ID, "err", engine.Details(err))
		case err == nil && !sampled:
			s.log.Debug("activity: metrics round taken by another server", "env", env.ID)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Sample takes the current round's sample of env and adds it to the
// history, unless another replica sharing the database claimed the round
// (or holds env's agent, and samples it there: this replica hands its
// rounds over): it reports whether it sampled. A round whose sample fails is lost (no point), as is one that
// another replica took over in the meantime.
func (s *Service) Sample(ctx context.Context, env store.Environment) (bool, error) {
	if s.heldElsewhere(env.ID) {
		s.leaveRounds(ctx, env.ID)
		return false, nil
	}
	at := s.now()
	claim := func() (bool, error) { return s.store.ClaimMetricsRound(ctx, env.ID, s.replica, at, s.sample) }
	// An edge environment is sampled only by the replica holding its
	// agent (Away, heldElsewhere): its round is claimed once the sample is
	// taken, so that an agent that cannot answer costs the database
	// nothing (at 5,000 agents the claims of failed rounds starved the
	// lease claims of agents connecting). Any replica reaches other
	// engines: the round is claimed first, so that one samples it.
	edge := env.ConnectionType == engine.AgentEdge
	if !edge {
		if claimed, err := claim(); err != nil || !claimed {
			return false, err
		}
	}
	p, tops, err := s.measure(ctx, env)
	if err != nil {
		return false, err
	}
	if edge {
		if claimed, err := claim(); err != nil || !claimed {
			return false, err
		}
	}
	m := store.MetricSample{EnvironmentID: env.ID, SampledAt: p.at, CPUPercent: p.CPUPercent,
		MemoryPercent: p.MemoryPercent, MemoryUsed: p.MemoryUsed, MemoryTotal: p.MemoryTotal}
	top := make([]store.MetricTop, 0, len(tops))
	for _, t := range tops {
		top = append(top, store.MetricTop(t))
	}
	return s.store.RecordMetrics(ctx, s.replica, at, m, top, HistorySize)
}

// leaveRounds hands environment envID's sampling rounds over, if this
// replica holds them: another replica holds its agent now and samples it,
// from the next round on.
func (s *Service) leaveRounds(ctx context.Context, envID int64) {
	if err := s.store.ReleaseMetricsRounds(ctx, envID, s.replica); err != nil {
		s.log.Warn("activity: metrics rounds not handed over", "env", envID, "err", err)
	}
}

// sample is a Point with its time.
type sample struct {
	Point
	at time.Time
}

// measure takes one sample of env's running containers (and, through an
// agent, of its host). Without an agent the host's figures are the sum of
// its containers': CPU as a share of all the host's cores, memory as a
// share of the engine's memory.
func (s *Service) measure(ctx context.Context, env store.Environment) (sample, []Top, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*perContainer)
	defer cancel()
	c, err := s.engines.Client(ctx, env.Endpoint())
	if err != nil {
		return sample{}, nil, err
	}
	info, err := c.Info(ctx)
	if err != nil {
		return sample{}, nil, err
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
		return sample{}, nil, err
	}
	at := s.now()
	p := Point{Timestamp: at.UTC().Format(time.RFC3339), MemoryUsed: memSum, MemoryTotal: memTotal}
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
	return sample{Point: p, at: at}, tops, nil
}

func round2(f float64) float64 { return math.Round(f*100) / 100 }
