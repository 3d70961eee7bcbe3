// Package containers provides container operations on an environment's
// engine: listing, creation, the lifecycle, statistics, logs and exec
// sessions, with errors turned into the faults clients see.
package containers

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// Service runs container operations.
type Service struct {
	engines *engine.Manager
	store   *store.Store
	log     *slog.Logger
	now     func() time.Time

	restarts restartCache
	lists    ListCache // nil: every list reads the engine
}

// ListCache serves containers lists that are known to be current (the
// events package's Hub): read is called when it has none.
type ListCache interface {
	Containers(ctx context.Context, env store.Environment, all bool,
		read func(context.Context) ([]engine.Container, error)) ([]engine.Container, error)
}

// UseListCache makes List go through c. Call it before serving.
func (s *Service) UseListCache(c ListCache) *Service {
	s.lists = c
	return s
}

// New returns a Service.
func New(engines *engine.Manager, st *store.Store, log *slog.Logger) *Service {
	return &Service{
		engines:  engines,
		store:    st,
		log:      log,
		now:      time.Now,
		restarts: restartCache{entries: map[restartKey]restartEntry{}, refreshing: map[int64]bool{}, inflight: map[restartKey]chan struct{}{}},
	}
}

// client returns env's engine client, or a fault naming the operation.
func (s *Service) client(ctx context.Context, env store.Environment, op string) (*engine.Client, error) {
	c, err := s.engines.Client(ctx, env.Endpoint())
	if err != nil {
		return nil, opFault(op, err)
	}
	return c, nil
}

// opFault turns an engine error of operation op ("start container") into the
// fault clients see.
func opFault(op string, err error) error {
	details := engine.Details(err)
	switch {
	case errors.Is(err, engine.ErrNotFound):
		return fault.Wrap(fault.NotFound, "Container not found", err)
	case errors.Is(err, engine.ErrInvalid):
		return fault.Wrap(fault.Invalid, "Failed to "+op, err).WithDetails(strings.TrimPrefix(details, engine.ErrInvalid.Error()+": "))
	}
	return fault.Wrap(fault.Internal, "Failed to "+op, err).WithDetails(details)
}

// List returns the containers of env; all includes stopped ones. An offline
// environment lists as empty. The list cache (UseListCache) answers when it
// holds a current list.
func (s *Service) List(ctx context.Context, env store.Environment, all bool) ([]engine.Container, error) {
	c, err := s.engines.Client(ctx, env.Endpoint())
	if err != nil {
		if engine.IsOffline(err) || errors.Is(err, engine.ErrUnsupported) {
			return []engine.Container{}, nil
		}
		return nil, opFault("list containers", err)
	}
	read := func(ctx context.Context) ([]engine.Container, error) { return c.ListContainers(ctx, all) }
	var list []engine.Container
	if s.lists != nil {
		list, err = s.lists.Containers(ctx, env, all, read)
	} else {
		list, err = read(ctx)
	}
	if err != nil {
		if engine.IsOffline(err) {
			return []engine.Container{}, nil
		}
		return nil, opFault("list containers", err)
	}
	s.fillRestartCounts(ctx, env.ID, c, list)
	return list, nil
}

// Inspect returns the engine's inspection document of a container (id or name).
func (s *Service) Inspect(ctx context.Context, env store.Environment, id string) (json.RawMessage, error) {
	c, err := s.client(ctx, env, "inspect container")
	if err != nil {
		return nil, err
	}
	raw, _, err := c.InspectContainer(ctx, id)
	if err != nil {
		return nil, opFault("inspect container", err)
	}
	return raw, nil
}

// Action is a lifecycle operation on a container.
type Action string

// The lifecycle actions.
const (
	Start   Action = "start"
	Stop    Action = "stop"
	Restart Action = "restart"
	Pause   Action = "pause"
	Unpause Action = "unpause"
)

// Do runs a lifecycle action on a container (id or name).
func (s *Service) Do(ctx context.Context, env store.Environment, id string, a Action) error {
	op := string(a) + " container"
	c, err := s.client(ctx, env, op)
	if err != nil {
		return err
	}
	switch a {
	case Start:
		err = c.StartContainer(ctx, id)
	case Stop:
		err = c.StopContainer(ctx, id)
	case Restart:
		err = c.RestartContainer(ctx, id)
	case Pause:
		err = c.PauseContainer(ctx, id)
	case Unpause:
		err = c.UnpauseContainer(ctx, id)
	default:
		return fault.Invalidf("Unknown container action %q", a)
	}
	if err != nil {
		return opFault(op, err)
	}
	return nil
}

// signals are the signal names a kill takes (with or without "SIG").
var signals = map[string]bool{
	"HUP": true, "INT": true, "QUIT": true, "ILL": true, "TRAP": true, "ABRT": true, "BUS": true, "FPE": true,
	"KILL": true, "USR1": true, "SEGV": true, "USR2": true, "PIPE": true, "ALRM": true, "TERM": true,
	"STKFLT": true, "CHLD": true, "CONT": true, "STOP": true, "TSTP": true, "TTIN": true, "TTOU": true,
	"URG": true, "XCPU": true, "XFSZ": true, "VTALRM": true, "PROF": true, "WINCH": true, "IO": true,
	"PWR": true, "SYS": true,
}

// CheckSignal returns the signal a kill sends ("" is SIGKILL) in the form
// the engine takes, or an Invalid fault naming what is accepted.
func CheckSignal(sig string) (string, error) {
	sig = strings.ToUpper(strings.TrimSpace(sig))
	if sig == "" {
		return "SIGKILL", nil
	}
	if n, err := strconv.Atoi(sig); err == nil {
		if n >= 1 && n <= 64 {
			return sig, nil
		}
	} else if signals[strings.TrimPrefix(sig, "SIG")] {
		return "SIG" + strings.TrimPrefix(sig, "SIG"), nil
	}
	return "", fault.Invalidf("Unknown signal %q: give a name such as SIGKILL, SIGTERM or SIGHUP, or a number from 1 to 64", sig)
}

// Kill sends a signal (see CheckSignal) to a running container.
func (s *Service) Kill(ctx context.Context, env store.Environment, id, signal string) error {
	sig, err := CheckSignal(signal)
	if err != nil {
		return err
	}
	c, err := s.client(ctx, env, "kill container")
	if err != nil {
		return err
	}
	if err := c.KillContainer(ctx, id, sig); err != nil {
		return opFault("kill container", err)
	}
	return nil
}

// Remove deletes a container. A running (or paused, or restarting) container
// needs force. The container's auto-update configuration and pending update
// go with it.
func (s *Service) Remove(ctx context.Context, env store.Environment, id string, force bool) error {
	c, err := s.client(ctx, env, "remove container")
	if err != nil {
		return err
	}
	_, st, err := c.InspectContainer(ctx, id)
	if err != nil {
		return opFault("remove container", err)
	}
	if (st.Running || st.Paused || st.Restarting) && !force {
		return fault.New(fault.Invalid, "Container is running. Stop it first or use force=true to remove it")
	}
	if err := c.RemoveContainer(ctx, st.ID, force); err != nil {
		return opFault("remove container", err)
	}
	if _, err := s.store.DeleteAutoUpdate(ctx, &env.ID, st.Name); err != nil {
		// The container is gone; a stale configuration is reported, not hidden.
		return fault.Wrap(fault.Internal, "Container removed but its auto-update configuration could not be deleted", err)
	}
	if _, err := s.store.DeletePendingUpdate(ctx, env.ID, st.Name); err != nil {
		return fault.Wrap(fault.Internal, "Container removed but its pending update could not be deleted", err)
	}
	return nil
}

// Rename gives a container a new name.
func (s *Service) Rename(ctx context.Context, env store.Environment, id, name string) error {
	name = strings.TrimPrefix(strings.TrimSpace(name), "/")
	if name == "" {
		return fault.New(fault.Invalid, "Container name is required")
	}
	c, err := s.client(ctx, env, "rename container")
	if err != nil {
		return err
	}
	if err := c.RenameContainer(ctx, id, name); err != nil {
		if errors.Is(err, engine.ErrConflict) {
			return fault.Wrap(fault.Conflict, "A container with this name already exists", err)
		}
		return opFault("rename container", err)
	}
	return nil
}

// Top lists the processes of a running container.
func (s *Service) Top(ctx context.Context, env store.Environment, id string) (engine.Processes, error) {
	c, err := s.client(ctx, env, "list container processes")
	if err != nil {
		return engine.Processes{}, err
	}
	p, err := c.TopContainer(ctx, id)
	if err != nil {
		return engine.Processes{}, opFault("list container processes", err)
	}
	return p, nil
}

// restartCache remembers restart counts (which only an inspection tells) per
// container. A count changes only when the container starts (a restart by
// its policy adds one, a start by hand resets it), so an entry holds as long
// as the list shows the same state and the same start (or stop) time as the
// inspection did: a list then costs no inspection for it. Entries older
// than restartTTL are refreshed after the list is answered, in case a
// restart slipped within the list's time granularity.
type restartCache struct {
	mu         sync.Mutex
	entries    map[restartKey]restartEntry
	refreshing map[int64]bool // environments with a background refresh running
	// inflight: the inspection of a container running now, which every list
	// asking for the same container joins (closed when it ends).
	inflight map[restartKey]chan struct{}
}

type restartKey struct {
	env int64
	id  string
}

type restartEntry struct {
	state    string
	count    int
	started  time.Time // of the inspection (zero: never started)
	finished time.Time
	at       time.Time // when it was inspected
}

// Restart-count upkeep.
const (
	// RestartTTL is the age at which a cached restart count is refreshed
	// (after the list that found it so is answered).
	RestartTTL = 10 * time.Second
	// restartSyncMax bounds the inspections a list waits for: the
	// containers whose count is unknown or changed beyond these are
	// inspected after the list is answered (which shows their last known
	// count, 0 for a container never inspected).
	restartSyncMax = 8
	// restartSkew is the tolerance between Berth's clock and the engine's
	// when a list's status text is compared with an inspection's times.
	restartSkew = 3 * time.Second
	// restartWait bounds how long a list waits for the inspections it asked
	// for. An inspection of a container being stopped waits for the stop
	// (seconds); the list then answers with the last known count, and the
	// inspection, shared by every list that asks meanwhile, fills the entry
	// for the next list when it ends.
	restartWait = 150 * time.Millisecond
	// restartInspectTimeout bounds one shared inspection.
	restartInspectTimeout = 30 * time.Second
	// refreshConcurrency bounds parallel inspections of a background refresh.
	refreshConcurrency = 4
	// refreshDelay is how long a background refresh waits before its
	// first inspection: the list that started it is still being written
	// out, and the engine's and Berth's CPU go to that answer first.
	refreshDelay = 500 * time.Millisecond
)

// holds reports whether e still tells the restart count of ct as listed
// at now: same state, and the status text's time since the container's
// start (or stop) is what the inspection's times give.
func (e restartEntry) holds(ct engine.Container, now time.Time) bool {
	if e.state != ct.State {
		return false
	}
	switch ct.State {
	case "restarting":
		return false // its count is changing
	case "running", "paused":
		text, ok := strings.CutPrefix(ct.Status, "Up ")
		if !ok {
			return false
		}
		text, _, _ = strings.Cut(text, " (") // "(healthy)", "(Paused)"
		return sinceIs(text, e.started, now)
	case "exited":
		// "Exited (137) 2 minutes ago"
		_, text, ok := strings.Cut(ct.Status, ") ")
		if !ok {
			return false
		}
		text, ok = strings.CutSuffix(text, " ago")
		return ok && sinceIs(text, e.finished, now)
	}
	return true // created, dead, removing: no start since
}

// sinceIs reports whether the engine would write the time from t to now
// as text (within restartSkew).
func sinceIs(text string, t, now time.Time) bool {
	if t.IsZero() {
		return false
	}
	d := now.Sub(t)
	for off := -restartSkew; off <= restartSkew; off += time.Second {
		if humanDuration(d+off) == text {
			return true
		}
	}
	return false
}

// humanDuration is the engine's text for a duration in a container's
// status (the engine's go-units HumanDuration).
func humanDuration(d time.Duration) string {
	if seconds := int(d.Seconds()); seconds < 1 {
		return "Less than a second"
	} else if seconds == 1 {
		return "1 second"
	} else if seconds < 60 {
		return strconv.Itoa(seconds) + " seconds"
	} else if minutes := int(d.Minutes()); minutes == 1 {
		return "About a minute"
	} else if minutes < 60 {
		return strconv.Itoa(minutes) + " minutes"
	} else if hours := int(d.Hours() + 0.5); hours == 1 {
		return "About an hour"
	} else if hours < 48 {
		return strconv.Itoa(hours) + " hours"
	} else if hours < 24*7*2 {
		return strconv.Itoa(hours/24) + " days"
	} else if hours < 24*30*2 {
		return strconv.Itoa(hours/24/7) + " weeks"
	} else if hours < 24*365*2 {
		return strconv.Itoa(hours/24/30) + " months"
	}
	return strconv.Itoa(int(d.Hours())/24/365) + " years"
}

// fillRestartCounts sets RestartCount on each listed container from the
// cache. Only containers whose entry no longer holds, or that have none and
// just (re)started, are inspected before the list answers, at most
// restartSyncMax of them (those whose count changed first), and the list
// waits at most restartWait for them (inspections are shared between
// concurrent lists, and one that takes longer fills the cache for the next
// list); the others
// (a container first seen long running shows 0 meanwhile) and the entries
// older than RestartTTL are inspected in the background afterwards. A
// container that was never started has no restarts and needs no
// inspection.
func (s *Service) fillRestartCounts(ctx context.Context, envID int64, c *engine.Client, list []engine.Container) {
	now := s.now()
	var (
		changed, unknown []int    // entry that no longer holds / no entry and just started
		aged             []string // entry that holds but is old
	)
	s.restarts.mu.Lock()
	seen := make(map[restartKey]bool, len(list))
	for i := range list {
		k := restartKey{envID, list[i].ID}
		seen[k] = true
		if list[i].State == "created" {
			continue
		}
		e, ok := s.restarts.entries[k]
		switch {
		case !ok && justStarted(list[i]):
			unknown = append(unknown, i)
		case !ok:
			aged = append(aged, list[i].ID) // long running: its count can wait for the refresh
		case !e.holds(list[i], now):
			list[i].RestartCount = e.count // the last known count, unless inspected now
			changed = append(changed, i)
		default:
			list[i].RestartCount = e.count
			if now.Sub(e.at) >= RestartTTL {
				aged = append(aged, list[i].ID)
			}
		}
	}
	for k := range s.restarts.entries { // forget removed containers
		if k.env == envID && !seen[k] {
			delete(s.restarts.entries, k)
		}
	}
	s.restarts.mu.Unlock()
	stale := append(changed, unknown...)
	if len(stale) > restartSyncMax {
		for _, i := range stale[restartSyncMax:] {
			aged = append(aged, list[i].ID)
		}
		stale = stale[:restartSyncMax]
	}
	if len(stale) > 0 {
		done := make([]<-chan struct{}, len(stale))
		for n, i := range stale {
			done[n] = s.inspectShared(envID, c, list[i].ID)
		}
		wait := time.NewTimer(restartWait)
	waiting:
		for _, ch := range done {
			select {
			case <-ch:
			case <-wait.C:
				break waiting
			case <-ctx.Done():
				break waiting
			}
		}
		wait.Stop()
		s.restarts.mu.Lock()
		for _, i := range stale {
			if e, ok := s.restarts.entries[restartKey{envID, list[i].ID}]; ok {
				list[i].RestartCount = e.count
			}
		}
		s.restarts.mu.Unlock()
	}
	if len(aged) > 0 {
		s.refreshRestarts(envID, c, aged)
	}
}

// justStarted reports whether ct is restarting or started within the last
// minute: then its restart count may just have changed.
func justStarted(ct engine.Container) bool {
	if ct.State == "restarting" {
		return true
	}
	text, ok := strings.CutPrefix(ct.Status, "Up ")
	if !ok {
		return false
	}
	text, _, _ = strings.Cut(text, " (")
	return text == "Less than a second" || strings.HasSuffix(text, " second") || strings.HasSuffix(text, " seconds")
}

// inspectRestarts inspects container id and caches its restart count.
func (s *Service) inspectRestarts(ctx context.Context, envID int64, c *engine.Client, id string) (engine.ContainerState, error) {
	at := s.now()
	_, st, err := c.InspectContainer(ctx, id)
	if err != nil {
		return st, err // the list still answers; the count stays as it was
	}
	s.restarts.mu.Lock()
	s.restarts.entries[restartKey{envID, id}] = restartEntry{state: st.Status, count: st.RestartCount,
		started: st.StartedAt, finished: st.FinishedAt, at: at}
	s.restarts.mu.Unlock()
	return st, nil
}

// inspectShared starts an inspection of container id of env, or joins the
// one running, and returns a channel closed when it ends. It runs on its own
// deadline, not a caller's: a list that stops waiting leaves it to finish
// and fill the entry. Concurrent lists of a busy engine (a container being
// stopped makes its inspection wait) so cost one inspection, not one each.
func (s *Service) inspectShared(envID int64, c *engine.Client, id string) <-chan struct{} {
	k := restartKey{envID, id}
	s.restarts.mu.Lock()
	if ch, ok := s.restarts.inflight[k]; ok {
		s.restarts.mu.Unlock()
		return ch
	}
	ch := make(chan struct{})
	s.restarts.inflight[k] = ch
	s.restarts.mu.Unlock()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), restartInspectTimeout)
		_, _ = s.inspectRestarts(ctx, envID, c, id)
		cancel()
		s.restarts.mu.Lock()
		delete(s.restarts.inflight, k)
		s.restarts.mu.Unlock()
		close(ch)
	}()
	return ch
}

// refreshRestarts inspects ids of env in the background, unless a refresh
// of env is already running (the next list asks again for what it left).
func (s *Service) refreshRestarts(envID int64, c *engine.Client, ids []string) {
	s.restarts.mu.Lock()
	if s.restarts.refreshing[envID] {
		s.restarts.mu.Unlock()
		return
	}
	s.restarts.refreshing[envID] = true
	s.restarts.mu.Unlock()
	go func() {
		defer func() {
			s.restarts.mu.Lock()
			delete(s.restarts.refreshing, envID)
			s.restarts.mu.Unlock()
		}()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		select {
		case <-time.After(refreshDelay):
		case <-ctx.Done():
			return
		}
		fanOut(ctx, ids, refreshConcurrency, func(ctx context.Context, id string) {
			_, _ = s.inspectRestarts(ctx, envID, c, id)
		})
	}()
}

// ID returns the full id of container id (an id, a prefix or a name).
func (s *Service) ID(ctx context.Context, env store.Environment, id string) (string, error) {
	c, err := s.client(ctx, env, "inspect container")
	if err != nil {
		return "", err
	}
	_, st, err := c.InspectContainer(ctx, id)
	if err != nil {
		return "", opFault("inspect container", err)
	}
	return st.ID, nil
}
