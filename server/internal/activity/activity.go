// Package activity provides the activity collector: it follows the engine
// events of every environment whose collectActivity is on and stores them
// (bounded by a retention and a row cap), and it samples the CPU and memory
// of every environment whose collectMetrics is on into a bounded history in
// the database, for the dashboard: replicas sharing the database take turns
// (one sample per round, by the replica that claims it).
package activity

import (
	"context"
	"crypto/rand"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/berth-dev/berth/server/internal/events"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// Defaults of the retention settings.
const (
	DefaultRetentionDays = 7
	DefaultMaxEvents     = 100_000
)

// Setting keys of the retention.
const (
	settingRetentionDays = "activity.retention_days"
	settingMaxEvents     = "activity.max_events"
)

// Options configure a Service.
type Options struct {
	Store   *store.Store
	Engines *engine.Manager
	// Events is the hub the engine events are followed through (default:
	// a hub of the Service's own).
	Events *events.Hub
	Log    *slog.Logger
	// Rescan is how often the list of environments is read again, to pick
	// up environments added, changed or removed (default 10 s).
	Rescan time.Duration
	// PruneEvery is how often the retention is applied (default 1 h).
	PruneEvery time.Duration
	// SampleEvery is how often metrics are sampled (default 30 s).
	SampleEvery time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Elsewhere reports whether another replica holds an environment's
	// agent (a replica of several, docs/scale.md): its events are collected
	// there, where the agent's connection is, not relayed to every replica
	// to be stored once. Nil: every environment is collected here.
	Elsewhere func(envID int64) bool
	// Away reports whether nothing of an environment can be collected here
	// now (an edge environment whose agent is not connected to this
	// server): it is neither followed nor sampled until Poke (or the next
	// rescan) finds it back. Nil: none is away.
	Away func(env store.Environment) bool
	// Replica is this server's id among the replicas sharing the database
	// (docs/scale.md): the claims of the metrics rounds name it. Default: a
	// random id (a single Berth).
	Replica string
}

// Service is the activity collector.
type Service struct {
	store     *store.Store
	engines   *engine.Manager
	events    *events.Hub
	log       *slog.Logger
	now       func() time.Time
	elsewhere func(envID int64) bool
	away      func(env store.Environment) bool
	poke      chan struct{} // Poke: rescan now
	rescan    time.Duration
	prune     time.Duration
	sample    time.Duration
	replica   string

	mu     sync.Mutex
	stored chan struct{} // closed (and replaced) when an event is stored
}

// New returns a Service; Run collects.
func New(o Options) *Service {
	if o.Rescan <= 0 {
		o.Rescan = 10 * time.Second
	}
	if o.PruneEvery <= 0 {
		o.PruneEvery = time.Hour
	}
	if o.SampleEvery <= 0 {
		o.SampleEvery = 30 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Replica == "" {
		o.Replica = "berth-" + rand.Text()
	}
	if o.Events == nil {
		o.Events = events.NewHub(o.Engines, o.Log, events.HubOptions{})
	}
	return &Service{store: o.Store, engines: o.Engines, events: o.Events, log: o.Log,
		now: o.Now, rescan: o.Rescan, prune: o.PruneEvery, sample: o.SampleEvery, elsewhere: o.Elsewhere,
		away: o.Away, poke: make(chan struct{}, 1), replica: o.Replica, stored: make(chan struct{})}
}

// follower is the goroutine following (or sampling) one environment.
type follower struct {
	stamp  time.Time // the environment's UpdatedAt when it started
	cancel context.CancelFunc
	done   chan struct{}
}

// Run collects until ctx ends, then stops every follower and waits for them.
func (s *Service) Run(ctx context.Context) error {
	collectors := map[int64]*follower{}
	samplers := map[int64]*follower{}
	defer func() {
		for _, fs := range []map[int64]*follower{collectors, samplers} {
			for _, f := range fs {
				f.cancel()
				<-f.done
			}
		}
	}()
	rescan := time.NewTicker(s.rescan)
	defer rescan.Stop()
	prune := time.NewTicker(s.prune)
	defer prune.Stop()
	s.pruneNow(ctx)
	for {
		envs, err := s.store.ListEnvironments(ctx)
		if err != nil && ctx.Err() == nil {
			s.log.Error("activity: environments not listed", "err", err)
		}
		if err == nil {
			s.reconcile(ctx, collectors, envs, func(e store.Environment) bool {
				return e.CollectActivity && !s.heldElsewhere(e.ID) && !s.isAway(e)
			}, s.collect)
			s.reconcile(ctx, samplers, envs, func(e store.Environment) bool {
				return e.CollectMetrics && !s.heldElsewhere(e.ID) && !s.isAway(e)
			}, s.sampleLoop)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-rescan.C:
		case <-prune.C:
			s.pruneNow(ctx)
		case <-s.poke:
			// At most one poked rescan a second: a thousand agents
			// connecting at once cost one rescan a second, not a thousand.
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(pokeGap):
			}
		}
	}
}

// pokeGap is the least time between rescans asked for by Poke.
const pokeGap = time.Second

// Poke asks for a rescan of the environments soon (an edge agent connected:
// its environment is no longer away).
func (s *Service) Poke() {
	select {
	case s.poke <- struct{}{}:
	default:
	}
}

// isAway reports whether env is away (Options.Away).
func (s *Service) isAway(env store.Environment) bool { return s.away != nil && s.away(env) }

// heldElsewhere reports whether another replica holds environment envID's
// agent: its events are collected and its metrics sampled there.
func (s *Service) heldElsewhere(envID int64) bool {
	return s.elsewhere != nil && s.elsewhere(envID)
}

// reconcile starts a follower for each environment of envs that wants one
// and has none (or one started before its last change), and stops the
// others.
func (s *Service) reconcile(ctx context.Context, running map[int64]*follower, envs []store.Environment,
	wants func(store.Environment) bool, run func(context.Context, store.Environment)) {
	keep := map[int64]bool{}
	for _, env := range envs {
		if !wants(env) {
			continue
		}
		keep[env.ID] = true
		if f, ok := running[env.ID]; ok {
			if f.stamp.Equal(env.UpdatedAt) {
				continue
			}
			f.cancel()
			<-f.done
		}
		fctx, cancel := context.WithCancel(ctx)
		f := &follower{stamp: env.UpdatedAt, cancel: cancel, done: make(chan struct{})}
		go func() {
			defer close(f.done)
			run(fctx, env)
		}()
		running[env.ID] = f
	}
	for id, f := range running {
		if !keep[id] {
			f.cancel()
			<-f.done
			delete(running, id)
		}
	}
}

// collect stores the events of env until ctx ends; the hub reconnects to an
// engine that cannot be reached.
func (s *Service) collect(ctx context.Context, env store.Environment) {
	for {
		err := s.collectOnce(ctx, env)
		if !errors.Is(err, events.ErrLagged) || ctx.Err() != nil {
			return
		}
		s.log.Warn("activity: events came faster than they were stored; some were missed", "env", env.ID)
	}
}

// collectOnce is collect until the hub drops the subscription (its error).
func (s *Service) collectOnce(ctx context.Context, env store.Environment) error {
	offline := false
	return s.events.Follow(ctx, env, func(ev events.Event) error {
		offline = false
		typ, action, _ := strings.Cut(ev.Name, "-")
		if !Kept(typ, action) {
			return nil
		}
		// The engine's own time, to the microsecond the store keeps, names
		// the occurrence: every server following the engine stores the same
		// one, and the first to store it wins.
		e := store.ActivityEvent{EnvironmentID: env.ID, Type: typ, Action: action, ActorID: ev.ID, ActorName: ev.Object,
			Time: time.Unix(0, ev.TimeNano)}
		switch {
		case ev.TimeNano != 0:
		case ev.Time != 0:
			e.Time = time.Unix(ev.Time, 0)
		default:
			e.Time = s.now()
		}
		added, err := s.store.AddActivity(ctx, &e)
		switch {
		case err != nil:
			if ctx.Err() == nil {
				s.log.Warn("activity: event not stored", "env", env.ID, "err", err)
			}
		case added:
			s.log.Debug("activity: event stored", "env", env.ID, "type", typ, "action", action, "actor", ev.ID,
				"name", ev.Object)
			s.notify()
		default:
			s.log.Debug("activity: event already stored by another server", "env", env.ID, "type", typ, "action", action,
				"actor", ev.ID, "name", ev.Object)
		}
		return nil
	}, func(cause error) error {
		if !offline {
			s.log.Info("activity: environment unreachable; retrying", "env", env.ID, "err", engine.Details(cause))
			offline = true
		}
		return nil
	})
}

// Kept reports whether an event of type typ and action is activity worth
// storing: the lifecycle of containers, images, volumes and networks, not
// the chatter of health-check execs, attaches and copies.
func Kept(typ, action string) bool {
	switch typ {
	case "container", "image", "volume", "network":
	default:
		return false
	}
	if strings.HasPrefix(action, "exec_") {
		return false
	}
	switch action {
	case "attach", "detach", "resize", "top", "export", "copy", "archive-path", "extract-to-dir":
		return false
	}
	return true
}

// notify wakes the live streams.
func (s *Service) notify() {
	s.mu.Lock()
	close(s.stored)
	s.stored = make(chan struct{})
	s.mu.Unlock()
}

// Stored returns a channel closed when this server next stores an event.
func (s *Service) Stored() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stored
}

// Retention bounds the stored activity: events older than Days days are
// deleted, and the oldest beyond MaxEvents.
type Retention struct {
	Days      int `json:"retentionDays"`
	MaxEvents int `json:"maxEvents"`
}

// Retention returns the retention settings.
func (s *Service) Retention(ctx context.Context) (Retention, error) {
	days, err := s.store.IntSetting(ctx, settingRetentionDays, DefaultRetentionDays)
	if err != nil {
		return Retention{}, err
	}
	maxEvents, err := s.store.IntSetting(ctx, settingMaxEvents, DefaultMaxEvents)
	if err != nil {
		return Retention{}, err
	}
	return Retention{Days: days, MaxEvents: maxEvents}, nil
}

// SetRetention validates and stores the retention settings and applies them.
func (s *Service) SetRetention(ctx context.Context, r Retention) error {
	if r.Days < 1 || r.Days > 365 {
		return fault.New(fault.Invalid, "retentionDays must be a whole number of days from 1 to 365")
	}
	if r.MaxEvents < 1000 || r.MaxEvents > 10_000_000 {
		return fault.New(fault.Invalid, "maxEvents must be a whole number from 1000 to 10000000")
	}
	if err := s.store.SetSetting(ctx, settingRetentionDays, strconv.Itoa(r.Days)); err != nil {
		return err
	}
	if err := s.store.SetSetting(ctx, settingMaxEvents, strconv.Itoa(r.MaxEvents)); err != nil {
		return err
	}
	_, err := s.Prune(ctx)
	return err
}

// Prune applies the retention now and returns how many events it deleted.
func (s *Service) Prune(ctx context.Context) (int64, error) {
	r, err := s.Retention(ctx)
	if err != nil {
		return 0, err
	}
	return s.store.PruneActivity(ctx, s.now().AddDate(0, 0, -r.Days), r.MaxEvents)
}

func (s *Service) pruneNow(ctx context.Context) {
	n, err := s.Prune(ctx)
	switch {
	case err != nil && ctx.Err() == nil:
		s.log.Error("activity: retention not applied", "err", err)
	case n > 0:
		s.log.Info("activity: old events deleted", "count", n)
	}
}
