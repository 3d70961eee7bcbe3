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

	execs    execRegistry
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
		execs:    execRegistry{sessions: map[string]*execSession{}},
		restarts: restartCache{entries: map[restartKey]restartEntry{}},
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
// container, keyed by its state so that a state change refreshes it.
type restartCache struct {
	mu      sync.Mutex
	entries map[restartKey]restartEntry
}

type restartKey struct {
	env int64
	id  string
}

type restartEntry struct {
	state string
	count int
	at    time.Time
}

// restartTTL bounds how stale a cached restart count can be.
const restartTTL = 10 * time.Second

// fillRestartCounts sets RestartCount on each listed container, inspecting
// (with bounded concurrency) only those whose cached count may be stale. A
// container that was never started has no restarts and needs no inspection.
func (s *Service) fillRestartCounts(ctx context.Context, envID int64, c *engine.Client, list []engine.Container) {
	now := s.now()
	var stale []int
	s.restarts.mu.Lock()
	seen := make(map[restartKey]bool, len(list))
	for i := range list {
		k := restartKey{envID, list[i].ID}
		seen[k] = true
		if list[i].State == "created" {
			continue
		}
		e, ok := s.restarts.entries[k]
		if ok && e.state == list[i].State && now.Sub(e.at) < restartTTL {
			list[i].RestartCount = e.count
			continue
		}
		stale = append(stale, i)
	}
	for k := range s.restarts.entries { // forget removed containers
		if k.env == envID && !seen[k] {
			delete(s.restarts.entries, k)
		}
	}
	s.restarts.mu.Unlock()
	if len(stale) == 0 {
		return
	}
	ictx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	fanOut(ictx, stale, inspectConcurrency, func(ctx context.Context, i int) {
		_, st, err := c.InspectContainer(ctx, list[i].ID)
		if err != nil {
			return // the list still answers; the count stays 0
		}
		list[i].RestartCount = st.RestartCount
		s.restarts.mu.Lock()
		s.restarts.entries[restartKey{envID, list[i].ID}] = restartEntry{state: list[i].State, count: st.RestartCount, at: now}
		s.restarts.mu.Unlock()
	})
}

// inspectConcurrency bounds parallel inspections while listing.
const inspectConcurrency = 8

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
