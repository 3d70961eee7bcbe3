package dashboard

import (
	"context"
	"sync"
	"time"

	"github.com/berth-dev/berth/server/internal/activity"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
)

// Metrics is an environment's latest host sample (collectMetrics).
type Metrics struct {
	CPUPercent    float64 `json:"cpuPercent"`
	MemoryPercent float64 `json:"memoryPercent"`
	MemoryUsed    uint64  `json:"memoryUsed"`
	MemoryTotal   uint64  `json:"memoryTotal"`
}

// EventCounts counts an environment's stored activity (collectActivity):
// in all, and since midnight UTC.
type EventCounts struct {
	Total int `json:"total"`
	Today int `json:"today"`
}

// RecentEvent is one of an environment's latest container events.
type RecentEvent struct {
	ContainerName string `json:"container_name"`
	Action        string `json:"action"`
	Timestamp     string `json:"timestamp"` // RFC 3339, UTC
}

// recentEvents is how many container events a dashboard entry carries.
const recentEvents = 5

// UseActivity makes the figures carry the activity collector's history
// (metrics, metricsHistory, topContainers) and the stored activity (events,
// recentEvents), and returns s.
func (s *Service) UseActivity(a *activity.Service) *Service {
	s.activity = a
	return s
}

// histories reads the metrics histories of the environments of envs that
// collect metrics, in one go (nil without the collector, or when the read
// fails: each environment then reads its own).
func (s *Service) histories(ctx context.Context, envs []store.Environment) map[int64]activity.History {
	if s.activity == nil {
		return nil
	}
	var ids []int64
	for _, env := range envs {
		if env.CollectMetrics {
			ids = append(ids, env.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	all, err := s.activity.HistoryOf(ctx, ids)
	if err != nil {
		s.log.Warn("dashboard: metrics history", "err", err)
		return nil
	}
	return all
}

// addActivity adds to st what the activity collector knows of env: its
// metrics history (hist when it was read with the others', else read here)
// and its stored activity.
func (s *Service) addActivity(ctx context.Context, env store.Environment, st *Stats, hist map[int64]activity.History) {
	if s.activity != nil && env.CollectMetrics {
		h, ok := hist[env.ID]
		if hist == nil {
			var err error
			if h, err = s.activity.History(ctx, env.ID); err != nil {
				s.log.Warn("dashboard: metrics history", "env", env.ID, "err", err)
			}
			ok = err == nil
		}
		if ok && h.Top != nil {
			st.TopContainers = h.Top
		}
		if ok && len(h.Points) > 0 {
			st.MetricsHistory = h.Points
			p := h.Points[len(h.Points)-1]
			st.Metrics = &Metrics{CPUPercent: p.CPUPercent, MemoryPercent: p.MemoryPercent, MemoryUsed: p.MemoryUsed,
				MemoryTotal: p.MemoryTotal}
		}
	}
	if !env.CollectActivity {
		return
	}
	f := store.ActivityFilter{EnvironmentIDs: []int64{env.ID}, Type: "container", Limit: recentEvents}
	recent, _, err := s.store.ListActivity(ctx, f)
	if err != nil {
		s.log.Warn("dashboard: activity", "env", env.ID, "err", err)
		return
	}
	f = store.ActivityFilter{EnvironmentIDs: []int64{env.ID}, Limit: 1}
	_, total, err := s.store.ListActivity(ctx, f)
	if err != nil {
		s.log.Warn("dashboard: activity", "env", env.ID, "err", err)
		return
	}
	midnight := time.Now().UTC().Truncate(24 * time.Hour)
	f.Since = &midnight
	_, today, err := s.store.ListActivity(ctx, f)
	if err != nil {
		s.log.Warn("dashboard: activity", "env", env.ID, "err", err)
		return
	}
	st.Events = &EventCounts{Total: total, Today: today}
	st.RecentEvents = make([]RecentEvent, 0, len(recent))
	for _, e := range recent {
		st.RecentEvents = append(st.RecentEvents, RecentEvent{ContainerName: e.ActorName, Action: e.Action,
			Timestamp: e.Time.UTC().Format(time.RFC3339)})
	}
}

// Each gathers the figures of every environment of envs concurrently and
// calls emit with each as soon as it is ready (never concurrently), so that
// a slow or offline environment delays no other; each arrives within the
// time limit.
func (s *Service) Each(ctx context.Context, envs []store.Environment, emit func(Stats) error) error {
	var (
		mu       sync.Mutex
		emitErr  error
		wg       sync.WaitGroup
		sem      = make(chan struct{}, maxConcurrent)
		gctx, cf = context.WithCancel(ctx)
		hist     map[int64]activity.History
	)
	defer cf()
	for i, env := range envs {
		select {
		case sem <- struct{}{}:
		case <-gctx.Done():
		}
		if gctx.Err() != nil {
			break
		}
		if i%historyBatch == 0 {
			hist = s.histories(gctx, envs[i:min(i+historyBatch, len(envs))])
		}
		h := hist
		wg.Go(func() {
			defer func() { <-sem }()
			st := s.environment(gctx, env, h)
			mu.Lock()
			defer mu.Unlock()
			if emitErr != nil || gctx.Err() != nil {
				return
			}
			if emitErr = emit(st); emitErr != nil {
				cf()
			}
		})
	}
	wg.Wait()
	return emitErr
}

// Disk usage (the engine's /system/df) is slow on engines with many
// objects: each environment's is kept for diskUsageTTL and refreshed in the
// background, so that no dashboard request waits for it (the first ones
// after a start show 0 until it arrives).
const (
	diskUsageTTL     = 5 * time.Minute
	diskUsageTimeout = time.Minute
)

// diskEntry is an environment's cached disk usage.
type diskEntry struct {
	at         time.Time
	usage      engine.DiskUsage
	valid      bool
	refreshing bool
}

// diskUsage returns env's cached disk usage (zero before the first answer)
// and starts a refresh when it is missing or older than diskUsageTTL.
func (s *Service) diskUsage(env store.Environment, c *engine.Client) engine.DiskUsage {
	s.diskMu.Lock()
	defer s.diskMu.Unlock()
	if s.disk == nil {
		s.disk = map[int64]*diskEntry{}
	}
	e, ok := s.disk[env.ID]
	if !ok {
		e = &diskEntry{}
		s.disk[env.ID] = e
	}
	if !e.refreshing && (!e.valid || time.Since(e.at) > diskUsageTTL) {
		e.refreshing = true
		go func() { // bounded by diskUsageTimeout
			ctx, cancel := context.WithTimeout(context.Background(), diskUsageTimeout)
			defer cancel()
			u, err := c.DiskUsage(ctx)
			s.diskMu.Lock()
			defer s.diskMu.Unlock()
			e.refreshing = false
			if err != nil {
				s.log.Debug("dashboard: disk usage", "env", env.ID, "err", engine.Details(err))
				return
			}
			e.usage, e.valid, e.at = u, true, time.Now()
		}()
	}
	return e.usage
}
