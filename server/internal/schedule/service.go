// Package schedule provides Berth's schedules: the cron rule every schedule
// is validated with (exactly five fields in the spec's forms), the scheduler
// that runs them with robfig/cron in each environment's time zone, and the
// record of every run as an execution.
//
// Every Berth server sharing a database runs the same cron entries; which
// one runs a due schedule is decided by the database: the first server to
// insert the execution of that cron tick wins, and no schedule has two
// running executions (partial unique indexes, see store.AddExecution). A
// running execution is leased by its server, which renews the lease; an
// execution whose server stopped (crashed) is marked failed when that server
// starts again, or by any server once the lease ran out.
package schedule

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// Runner runs one kind of schedule. It reports progress on run; an error
// fails the execution with the error's message, run.Skip marks it skipped.
type Runner interface {
	Run(ctx context.Context, d Definition, run *Run) error
}

// RunnerFunc is a function as a Runner.
type RunnerFunc func(ctx context.Context, d Definition, run *Run) error

// Run calls f.
func (f RunnerFunc) Run(ctx context.Context, d Definition, run *Run) error { return f(ctx, d, run) }

// Options configure a Service.
type Options struct {
	Store *store.Store
	Log   *slog.Logger
	// Runners run the schedule types other than system_cleanup (which the
	// Service runs itself).
	Runners map[Type]Runner
	// Scanning reports whether an environment has vulnerability scanning.
	Scanning func(ctx context.Context, envID int64) bool
	// Node names this server among those sharing the database; it must stay
	// the same across restarts (host and port), so that a restarted server
	// recognises the runs it was holding when it stopped.
	Node string
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Lease is how long a running execution stays held without renewal
	// (default 2 minutes); the holder renews it every third of that.
	Lease time.Duration
	// Reconcile is how often the cron entries are re-read from the database,
	// to pick up changes made through another server (default 1 minute).
	Reconcile time.Duration
	// Local is the zone of schedules whose environment has none, and of the
	// system schedules (default time.Local).
	Local *time.Location
	// Recoverers put right what an interrupted run of their type left half
	// done (a container between the steps of its update), from the details
	// the run checkpointed. The scheduler calls them for each run it marks
	// failed because its server stopped, and adds what they did to the run.
	Recoverers map[Type]Recoverer
}

// A Recoverer puts right what the interrupted execution e left half done
// and tells what it did ("" when there was nothing to do).
type Recoverer func(ctx context.Context, e store.Execution) (string, error)

// Service is the scheduler.
type Service struct {
	store     *store.Store
	log       *slog.Logger
	runners   map[Type]Runner
	recover   map[Type]Recoverer
	scanning  func(ctx context.Context, envID int64) bool
	node      string
	now       func() time.Time
	lease     time.Duration
	reconcile time.Duration
	local     *time.Location

	cron *cron.Cron

	mu      sync.Mutex
	entries map[store.ScheduleKey]entry
	changes chan struct{}   // closed and replaced when an execution starts or ends here
	base    context.Context // parent of runs; Run sets it
	runs    sync.WaitGroup

	// Runs can start (a manual run, a webhook) before Recover has swept
	// this server's runs of its previous life: claimMu keeps a claim and
	// the sweep apart, and the sweep spares the executions in claimed.
	claimMu   sync.RWMutex
	claimedMu sync.Mutex
	claimed   []int64
	recovered atomic.Bool
}

// entry is a registered cron entry and the spec it was made from.
type entry struct {
	id   cron.EntryID
	spec string
}

// Defaults of Options.
const (
	DefaultLease     = 2 * time.Minute
	DefaultReconcile = time.Minute
)

// New returns a Service; Run starts it.
func New(o Options) *Service {
	s := &Service{store: o.Store, log: o.Log, runners: o.Runners, recover: o.Recoverers, scanning: o.Scanning, node: o.Node, now: o.Now,
		lease: o.Lease, reconcile: o.Reconcile, local: o.Local, entries: map[store.ScheduleKey]entry{},
		base: context.Background(), changes: make(chan struct{})}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.lease <= 0 {
		s.lease = DefaultLease
	}
	if s.reconcile <= 0 {
		s.reconcile = DefaultReconcile
	}
	if s.local == nil {
		s.local = time.Local
	}
	// Entries carry their own zone (ParseCronIn); the cron's own location
	// only sets the clock its loop compares with, which is instant-based.
	s.cron = cron.New(cron.WithLocation(time.UTC), cron.WithLogger(cron.DiscardLogger))
	return s
}

// Node is this server's name among those sharing the database.
func (s *Service) Node() string { return s.node }

// Run marks the executions this server held when it last stopped as
// failed, registers every enabled schedule and runs them on their cron
// until ctx ends; then it waits for the runs in progress, which ctx's end
// cancels. It re-reads the schedules every Options.Reconcile.
func (s *Service) Run(ctx context.Context) error {
	s.mu.Lock()
	s.base = ctx
	s.mu.Unlock()
	if _, err := s.Recover(ctx); err != nil {
		return err
	}
	if err := s.Refresh(ctx); err != nil {
		s.log.Error("schedules not registered", "err", err)
	}
	s.cron.Start()
	t := time.NewTicker(s.reconcile)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			<-s.cron.Stop().Done()
			s.runs.Wait()
			return nil
		case <-t.C:
			if err := s.Refresh(ctx); err != nil && ctx.Err() == nil {
				s.log.Error("schedules not refreshed", "err", err)
			}
			// Runs of servers that stopped renewing their lease.
			failed, err := s.store.FailInterruptedExecutions(ctx, "", s.now().UTC(), msgLeaseLost)
			if err != nil && ctx.Err() == nil {
				s.log.Error("stale schedule runs not swept", "err", err)
			}
			if len(failed) > 0 {
				s.log.Warn("schedule runs whose server stopped marked failed", "count", len(failed))
				s.recoverAll(ctx, failed)
			}
		}
	}
}

// Recover marks failed the executions this server was running when it
// last stopped, and those of any server whose lease ran out, starts their
// recovery (Options.Recoverers) in the background and returns how many it
// marked. Run calls it first.
func (s *Service) Recover(ctx context.Context) (int64, error) {
	s.claimMu.Lock()
	s.claimedMu.Lock()
	mine := s.claimed
	s.claimedMu.Unlock()
	failed, err := s.store.FailInterruptedExecutions(ctx, s.node, s.now().UTC(), msgInterrupted, mine...)
	if err == nil {
		s.recovered.Store(true)
	}
	s.claimMu.Unlock()
	if len(failed) > 0 {
		s.log.Warn("schedule runs interrupted by the last stop marked failed", "count", len(failed))
		s.recoverAll(ctx, failed)
	}
	if err != nil {
		return int64(len(failed)), fmt.Errorf("schedule: %w", err)
	}
	return int64(len(failed)), nil
}

// recoverTimeout bounds the recovery of one interrupted run.
const recoverTimeout = 5 * time.Minute

// recoverAll runs the recoverer of each interrupted execution, in the
// background (Run waits for them as for runs), and adds what it did to the
// execution's error message and logs.
func (s *Service) recoverAll(ctx context.Context, failed []store.Execution) {
	for _, e := range failed {
		rec := s.recover[Type(e.ScheduleType)]
		if rec == nil {
			continue
		}
		s.runs.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, recoverTimeout)
			defer cancel()
			note, err := rec(ctx, e)
			if err != nil {
				note = "Recovery failed: " + errorMessage(err)
				s.log.Error("interrupted schedule run not recovered", "execution", e.ID, "type", e.ScheduleType,
					"entity", e.EntityName, "err", err)
			} else if note != "" {
				s.log.Warn("interrupted schedule run recovered", "execution", e.ID, "type", e.ScheduleType,
					"entity", e.EntityName, "did", note)
			}
			if note == "" {
				return
			}
			msg := note
			if e.ErrorMessage != nil {
				msg = *e.ErrorMessage + ". " + note
			}
			line := s.now().UTC().Format("2006-01-02T15:04:05Z") + " " + note
			if err := s.store.AnnotateExecution(context.WithoutCancel(ctx), e.ID, msg, line); err != nil {
				s.log.Error("recovery of an interrupted run not recorded", "execution", e.ID, "err", err)
			}
		})
	}
}

// Messages of interrupted executions.
const (
	msgInterrupted = "Interrupted: Berth stopped while this run was in progress"
	msgLeaseLost   = "Interrupted: the Berth server running it stopped responding"
)

// Refresh registers the enabled schedules with the cron and unregisters the
// others; it is called after every change of a schedule's configuration.
func (s *Service) Refresh(ctx context.Context) error {
	defs, err := s.Definitions(ctx)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	want := map[store.ScheduleKey]bool{}
	for _, d := range defs {
		if !d.Enabled {
			continue
		}
		k := d.Key()
		spec := d.Cron + "|" + d.Timezone
		if cur, ok := s.entries[k]; ok && cur.spec == spec {
			want[k] = true
			continue
		}
		sched, err := ParseCronIn(d.Cron, d.Location(s.local))
		if err != nil {
			s.log.Warn("schedule with an invalid cron expression not registered", "schedule", describe(d), "cron", d.Cron)
			continue
		}
		if cur, ok := s.entries[k]; ok {
			s.cron.Remove(cur.id)
		}
		id := s.cron.Schedule(sched, cron.FuncJob(func() { s.fire(k) }))
		s.entries[k] = entry{id: id, spec: spec}
		want[k] = true
	}
	for k, e := range s.entries {
		if !want[k] {
			s.cron.Remove(e.id)
			delete(s.entries, k)
		}
	}
	return nil
}

// changed refreshes the cron after a change made through this server.
func (s *Service) refreshSoon(ctx context.Context) {
	if err := s.Refresh(ctx); err != nil {
		s.log.Error("schedules not refreshed", "err", err)
	}
}

// baseCtx is the parent context of runs.
func (s *Service) baseCtx() context.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.base
}

// fire is what the cron calls when schedule k is due.
func (s *Service) fire(k store.ScheduleKey) {
	ctx := s.baseCtx()
	if ctx.Err() != nil {
		return
	}
	tick := s.now().UTC().Truncate(time.Minute)
	d, err := s.Definition(ctx, Type(k.Type), k.ID)
	if err != nil {
		s.log.Warn("due schedule not found", "type", k.Type, "id", k.ID, "err", err)
		return
	}
	if !d.Enabled {
		return
	}
	if _, _, err := s.RunDue(ctx, d, tick); err != nil {
		s.log.Error("due schedule not run", "schedule", describe(d), "err", err)
	}
}

// RunDue runs d for its cron tick unless another server already claimed
// that tick. When a run of d is still in progress, the tick is recorded as
// skipped instead. claimed tells whether this server runs it; done closes
// when that run has finished (nil otherwise).
func (s *Service) RunDue(ctx context.Context, d Definition, tick time.Time) (e store.Execution, done <-chan struct{}, err error) {
	tick = tick.UTC()
	e = s.newExecution(d, TriggerCron, &tick)
	err = s.claim(ctx, &e)
	switch {
	case err == nil:
		return e, s.start(e, d), nil
	case !errors.Is(err, store.ErrConflict):
		return store.Execution{}, nil, err
	}
	// Either the tick is taken (another server runs it) or a run is still
	// in progress: recording a skipped execution of the tick tells which.
	at := s.now().UTC()
	reason := "Skipped: the previous run of this schedule is still in progress"
	skip := s.newExecution(d, TriggerCron, &tick)
	skip.Status, skip.CompletedAt, skip.LeaseUntil, skip.ErrorMessage = store.ExecutionSkipped, &at, nil, &reason
	skip.Details = `{"reason":"previous run still in progress"}`
	switch err := s.store.AddExecution(ctx, &skip); {
	case err == nil:
		s.log.Info("due schedule skipped: still running", "schedule", describe(d))
		return skip, nil, nil
	case errors.Is(err, store.ErrConflict):
		s.log.Debug("due schedule run by another server", "schedule", describe(d), "tick", tick)
		return store.Execution{}, nil, nil
	default:
		return store.Execution{}, nil, err
	}
}

// claim records the running execution e of this server; until Recover has
// swept, it is remembered as one of this server's own runs.
func (s *Service) claim(ctx context.Context, e *store.Execution) error {
	s.claimMu.RLock()
	defer s.claimMu.RUnlock()
	if err := s.store.AddExecution(ctx, e); err != nil {
		return err
	}
	if !s.recovered.Load() {
		s.claimedMu.Lock()
		s.claimed = append(s.claimed, e.ID)
		s.claimedMu.Unlock()
	}
	return nil
}

// Triggers of executions.
const (
	TriggerCron    = "cron"
	TriggerManual  = "manual"
	TriggerWebhook = "webhook"
)

var errAlreadyRunning = fault.New(fault.Conflict, "Schedule is already running")

// Trigger runs the schedule (t, id) now, by trigger (manual or webhook),
// whether or not it is enabled. done closes when the run has finished.
func (s *Service) Trigger(ctx context.Context, t Type, id int64, trigger string) (e store.Execution, done <-chan struct{}, err error) {
	d, err := s.Definition(ctx, t, id)
	if err != nil {
		return store.Execution{}, nil, err
	}
	e = s.newExecution(d, trigger, nil)
	if err := s.claim(ctx, &e); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return store.Execution{}, nil, errAlreadyRunning
		}
		return store.Execution{}, nil, err
	}
	return e, s.start(e, d), nil
}

// Record runs fn now as an execution of the schedule (t, id) triggered by
// trigger — work done outside the schedule's own runner that belongs in its
// history, such as a webhook's deploy of a git stack — and returns the
// execution as recorded. A run of the schedule still in progress is
// "Schedule is already running" (a conflict).
func (s *Service) Record(ctx context.Context, t Type, id int64, trigger string, fn RunnerFunc) (store.Execution, error) {
	d, err := s.Definition(ctx, t, id)
	if err != nil {
		return store.Execution{}, err
	}
	e := s.newExecution(d, trigger, nil)
	if err := s.claim(ctx, &e); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return store.Execution{}, errAlreadyRunning
		}
		return store.Execution{}, err
	}
	// The work belongs to the server, not to the caller: it goes on if
	// the caller leaves (a webhook sender gives up after seconds).
	s.runs.Add(1)
	defer s.runs.Done()
	s.executeWith(s.baseCtx(), e, d, fn)
	return s.store.GetExecution(context.WithoutCancel(ctx), e.ID)
}

func (s *Service) newExecution(d Definition, trigger string, tick *time.Time) store.Execution {
	now := s.now().UTC()
	lease := now.Add(s.lease)
	return store.Execution{ScheduleType: string(d.Type), ScheduleID: d.ID, EnvironmentID: d.EnvironmentID,
		EntityName: d.EntityName, TriggeredBy: trigger, ScheduledFor: tick, TriggeredAt: now, StartedAt: &now,
		Status: store.ExecutionRunning, Node: s.node, LeaseUntil: &lease}
}

// Info is a schedule as the schedules list shows it.
type Info struct {
	Definition
	NextRun          *time.Time // nil when disabled; in the schedule's zone
	LastExecution    *store.Execution
	RecentExecutions []store.Execution // newest first, at most RecentLimit
}

// RecentLimit is how many recent executions a schedule lists.
const RecentLimit = 5

// List returns every schedule with its next run and recent executions:
// the others by name, then the system schedules.
func (s *Service) List(ctx context.Context) ([]Info, error) {
	defs, err := s.Definitions(ctx)
	if err != nil {
		return nil, err
	}
	recent, err := s.store.RecentExecutions(ctx, RecentLimit)
	if err != nil {
		return nil, err
	}
	now := s.now()
	out := make([]Info, 0, len(defs))
	for _, d := range defs {
		in := Info{Definition: d, RecentExecutions: recent[d.Key()]}
		if in.RecentExecutions == nil {
			in.RecentExecutions = []store.Execution{}
		}
		if len(in.RecentExecutions) > 0 {
			last := in.RecentExecutions[0]
			in.LastExecution = &last
		}
		in.NextRun = s.NextRun(d, now)
		out = append(out, in)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].IsSystem != out[j].IsSystem {
			return !out[i].IsSystem
		}
		if out[i].IsSystem {
			return out[i].ID < out[j].ID
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// NextRun is d's first activation after now in its zone, or nil when d is
// disabled.
func (s *Service) NextRun(d Definition, now time.Time) *time.Time {
	if !d.Enabled {
		return nil
	}
	sched, err := ParseCronIn(d.Cron, d.Location(s.local))
	if err != nil {
		return nil
	}
	next := sched.Next(now).In(d.Location(s.local))
	if next.IsZero() {
		return nil
	}
	return &next
}

// Toggle switches a schedule on or off and returns its new state. System
// schedules are switched with ToggleSystem.
func (s *Service) Toggle(ctx context.Context, t Type, id int64) (bool, error) {
	d, err := s.Definition(ctx, t, id)
	if err != nil {
		return false, err
	}
	on := !d.Enabled
	switch t {
	case ContainerUpdate:
		err = s.store.SetAutoUpdateEnabled(ctx, id, on)
	case GitStackSync:
		err = s.store.SetGitStackAutoUpdate(ctx, id, on)
	case EnvUpdateCheck, ImagePrune:
		var es store.EnvSchedule
		if es, err = s.store.GetEnvSchedule(ctx, id, string(t)); err == nil {
			es.Enabled = on
			err = s.store.SaveEnvSchedule(ctx, &es)
		}
	case SystemCleanup:
		return s.ToggleSystem(ctx, id)
	case Backup:
		err = s.store.SetBackupConfigEnabled(ctx, id, on)
	case BackupCheck, BackupPrune:
		err = s.setPolicy(ctx, id, MaintenanceTask(t)+"Enabled", on)
	}
	if err != nil {
		return false, notFound(err)
	}
	s.refreshSoon(ctx)
	return on, nil
}

var errSystemDelete = fault.New(fault.Invalid, "System schedules cannot be deleted")

// Delete removes a schedule: a container's auto-update configuration, a
// git stack's auto-sync (the stack stays), an environment's update check or
// image prune. System schedules cannot be deleted. Executions are kept.
func (s *Service) Delete(ctx context.Context, t Type, id int64) error {
	if t == SystemCleanup {
		return errSystemDelete
	}
	if _, err := s.Definition(ctx, t, id); err != nil {
		return err
	}
	var err error
	switch t {
	case ContainerUpdate:
		err = s.store.DeleteAutoUpdateByID(ctx, id)
	case GitStackSync:
		err = s.store.DeleteGitStackSchedule(ctx, id)
	case EnvUpdateCheck, ImagePrune:
		err = s.store.DeleteEnvSchedule(ctx, id, string(t))
	case Backup: // the configuration stays, for manual runs
		err = s.store.ClearBackupConfigSchedule(ctx, id)
	case BackupCheck, BackupPrune: // the destination stays
		err = s.setPolicy(ctx, id, MaintenanceTask(t)+"Schedule", nil)
	}
	if err != nil {
		return notFound(err)
	}
	s.refreshSoon(ctx)
	return nil
}

// Executions returns a channel that is closed when an execution of this
// server next starts or ends (executions of other servers sharing the
// database are not announced: readers poll for those as well).
func (s *Service) Executions() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changes
}

// announce wakes the readers of Executions.
func (s *Service) announce() {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.changes)
	s.changes = make(chan struct{})
}

// Changed tells the scheduler that a schedule's configuration changed
// (through another package): its cron entries are refreshed.
func (s *Service) Changed(ctx context.Context) { s.refreshSoon(ctx) }
