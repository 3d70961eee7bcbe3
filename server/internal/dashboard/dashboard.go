// Package dashboard gathers the dashboard's figures of each environment:
// counts of containers by state, images, volumes, networks and stacks, read
// from the engine at the time of the request. Environments are gathered
// concurrently, each within its own time limit, so that an offline or slow
// engine shows as offline without delaying the others.
package dashboard

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/berth-dev/berth/server/internal/activity"
	"github.com/berth-dev/berth/server/internal/scan"
	"github.com/berth-dev/berth/server/internal/stacks"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
)

// Timeout bounds the gathering of one environment. It is longer than the
// engine's connection attempt (engine.PingTimeout), so that an unreachable
// host reports why it failed rather than only that it ran out of time.
const Timeout = 5 * time.Second

// maxConcurrent bounds how many environments are gathered at once.
const maxConcurrent = 16

// Stats are the dashboard figures of one environment (COMPAT.md,
// "Dashboard"). Metrics, their history and the top containers come from
// the activity collector (environments with collectMetrics), events from
// the stored activity (collectActivity).
type Stats struct {
	ID                    int64    `json:"id"`
	Name                  string   `json:"name"`
	Host                  string   `json:"host"`
	Port                  int      `json:"port"`
	Icon                  string   `json:"icon"`
	ConnectionType        string   `json:"connectionType"`
	Labels                []string `json:"labels"`
	CollectActivity       bool     `json:"collectActivity"`
	CollectMetrics        bool     `json:"collectMetrics"`
	ScannerEnabled        bool     `json:"scannerEnabled"`
	UpdateCheckEnabled    bool     `json:"updateCheckEnabled"`
	UpdateCheckAutoUpdate bool     `json:"updateCheckAutoUpdate"`
	Online                bool     `json:"online"`
	// Error says why the figures are missing or incomplete.
	Error      string     `json:"error,omitempty"`
	Containers Containers `json:"containers"`
	Images     Images     `json:"images"`
	Volumes    Volumes    `json:"volumes"`
	Networks   Networks   `json:"networks"`
	Stacks     Stacks     `json:"stacks"`
	// ContainersSize is the disk use of the containers' writable layers,
	// BuildCacheSize that of the build cache (bytes; the engine's disk
	// usage, cached for diskUsageTTL).
	ContainersSize int64            `json:"containersSize"`
	BuildCacheSize int64            `json:"buildCacheSize"`
	TopContainers  []activity.Top   `json:"topContainers"`
	Metrics        *Metrics         `json:"metrics,omitempty"`
	MetricsHistory []activity.Point `json:"metricsHistory,omitempty"`
	Events         *EventCounts     `json:"events,omitempty"`
	RecentEvents   []RecentEvent    `json:"recentEvents,omitempty"`
}

// Containers counts containers by state. Stopped counts every container
// neither running, paused nor restarting (exited, created, dead).
type Containers struct {
	Total      int `json:"total"`
	Running    int `json:"running"`
	Stopped    int `json:"stopped"`
	Paused     int `json:"paused"`
	Restarting int `json:"restarting"`
	Unhealthy  int `json:"unhealthy"`
	// PendingUpdates counts the containers the environment's last update
	// check found a newer image for (those still there).
	PendingUpdates int `json:"pendingUpdates"`
}

// Images counts images and their total size in bytes.
type Images struct {
	Total     int   `json:"total"`
	TotalSize int64 `json:"totalSize"`
}

// Volumes counts volumes. TotalSize comes from the engine's disk usage,
// which is too slow for every dashboard request: it is cached (diskUsage).
type Volumes struct {
	Total     int   `json:"total"`
	TotalSize int64 `json:"totalSize"`
}

// Networks counts networks.
type Networks struct {
	Total int `json:"total"`
}

// Stacks counts stacks by status. Stopped includes stacks that have no
// containers (created but never deployed).
type Stacks struct {
	Total   int `json:"total"`
	Running int `json:"running"`
	Partial int `json:"partial"`
	Stopped int `json:"stopped"`
}

// Service gathers dashboard figures.
type Service struct {
	store   *store.Store
	engines *engine.Manager
	stacks  *stacks.Service
	scan    *scan.Service
	log     *slog.Logger
	timeout time.Duration
	// activity, when set, adds the collector's history and the stored
	// activity (UseActivity).
	activity *activity.Service

	diskMu sync.Mutex
	disk   map[int64]*diskEntry // cached disk usage by environment
}

// New returns a Service.
func New(st *store.Store, engines *engine.Manager, stk *stacks.Service, sc *scan.Service, log *slog.Logger) *Service {
	return &Service{store: st, engines: engines, stacks: stk, scan: sc, log: log, timeout: Timeout}
}

// historyBatch is how many environments' metrics histories All and Each
// read in one go (histories), rather than one environment at a time.
const historyBatch = 4 * maxConcurrent

// All returns the figures of every environment of envs, in their order.
func (s *Service) All(ctx context.Context, envs []store.Environment) []Stats {
	out := make([]Stats, len(envs))
	var (
		g    errgroup.Group
		hist map[int64]activity.History
	)
	g.SetLimit(maxConcurrent)
	for i, env := range envs {
		if i%historyBatch == 0 {
			hist = s.histories(ctx, envs[i:min(i+historyBatch, len(envs))])
		}
		h := hist
		g.Go(func() error {
			out[i] = s.environment(ctx, env, h)
			return nil
		})
	}
	_ = g.Wait()
	return out
}

// Environment returns the figures of env. It returns within the time limit
// even when the engine does not: the environment is then reported offline,
// and the calls still under way end at the same deadline.
func (s *Service) Environment(ctx context.Context, env store.Environment) Stats {
	return s.environment(ctx, env, nil)
}

// environment is Environment with the metrics histories read beforehand
// (nil: env's is read here).
func (s *Service) environment(ctx context.Context, env store.Environment, hist map[int64]activity.History) Stats {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	st := base(env)
	s.addActivity(ctx, env, &st, hist)
	if setting, err := s.scan.Setting(ctx, env.ID); err != nil {
		s.log.Warn("dashboard: scanner setting", "env", env.ID, "err", err)
	} else {
		st.ScannerEnabled = setting != scan.SettingNone
	}
	done := make(chan Stats, 1) // buffered: a gatherer that finishes late never blocks
	go func() { done <- s.gather(ctx, env, st) }()
	select {
	case st = <-done:
	case <-ctx.Done():
		st.Online, st.Error = false, engine.Details(ctx.Err())
	}
	return st
}

// base is env's own part of its figures.
func base(env store.Environment) Stats {
	labels := env.Labels
	if labels == nil {
		labels = []string{}
	}
	return Stats{
		ID: env.ID, Name: env.Name, Host: env.Host, Port: env.Port, Icon: env.Icon,
		ConnectionType: env.ConnectionType, Labels: labels, CollectActivity: env.CollectActivity,
		CollectMetrics: env.CollectMetrics, UpdateCheckEnabled: env.UpdateCheckEnabled,
		UpdateCheckAutoUpdate: env.UpdateCheckAutoUpdate, TopContainers: []activity.Top{},
	}
}

// gather reads the engine's lists concurrently and counts them. A list that
// fails leaves its counts at zero and its reason in Error; an engine that
// cannot be reached makes the environment offline.
func (s *Service) gather(ctx context.Context, env store.Environment, st Stats) Stats {
	c, err := s.engines.Client(ctx, env.Endpoint())
	if err != nil {
		st.Error = engine.Details(err)
		return st
	}
	st.Online = true
	var (
		containers []engine.Container
		images     []engine.Image
		volumes    []engine.Volume
		networks   []engine.Network
		stackList  []stacks.Entry
	)
	var g errgroup.Group
	g.Go(func() (err error) { containers, err = c.ListContainers(ctx, true); return err })
	g.Go(func() (err error) { images, err = c.ListImages(ctx); return err })
	g.Go(func() (err error) { volumes, err = c.ListVolumes(ctx); return err })
	g.Go(func() (err error) { networks, err = c.ListNetworks(ctx); return err })
	g.Go(func() (err error) { stackList, err = s.stacks.List(ctx, env); return err })
	if err := g.Wait(); err != nil {
		st.Error = engine.Details(err)
		if engine.IsOffline(err) {
			st.Online = false
		}
	}
	st.Containers = countContainers(containers)
	st.Containers.PendingUpdates = s.pendingUpdates(ctx, env.ID, containers)
	st.Images = Images{Total: len(images)}
	for _, im := range images {
		st.Images.TotalSize += im.Size
	}
	disk := s.diskUsage(env, c)
	st.ContainersSize, st.BuildCacheSize = disk.Containers.Size, disk.BuildCache.Size
	st.Volumes = Volumes{Total: len(volumes), TotalSize: disk.Volumes.Size}
	st.Networks = Networks{Total: len(networks)}
	st.Stacks = countStacks(stackList)
	return st
}

// pendingUpdates counts the containers of list that the last update check
// of environment envID found a newer image for.
func (s *Service) pendingUpdates(ctx context.Context, envID int64, list []engine.Container) int {
	pending, err := s.store.ListPendingUpdates(ctx, envID)
	if err != nil {
		s.log.Warn("dashboard: pending updates", "env", envID, "err", err)
		return 0
	}
	names := make(map[string]bool, len(pending))
	for _, p := range pending {
		names[p.ContainerName] = true
	}
	n := 0
	for _, c := range list {
		if names[c.Name] {
			n++
		}
	}
	return n
}

func countContainers(list []engine.Container) Containers {
	n := Containers{Total: len(list)}
	for _, c := range list {
		switch c.State {
		case "running":
			n.Running++
		case "paused":
			n.Paused++
		case "restarting":
			n.Restarting++
		default:
			n.Stopped++
		}
		if c.Health == "unhealthy" {
			n.Unhealthy++
		}
	}
	return n
}

func countStacks(list []stacks.Entry) Stacks {
	n := Stacks{Total: len(list)}
	for _, e := range list {
		switch e.Status {
		case stacks.StatusRunning:
			n.Running++
		case stacks.StatusPartial:
			n.Partial++
		default:
			n.Stopped++
		}
	}
	return n
}
