// Package backupjobs provides backup configurations at work: what a
// configuration backs up on its environment (a container's volumes and
// binds, a stack's volumes and directory, or Berth itself: the archive of
// berth admin backup, streamed to restic), a run of it (pre hook, optional
// stop of the containers, restic backup through backup.Runner, retention,
// post hook, the run's record, audit entry and notification), the
// scheduler's runner of backup configurations, and restores (preview, in
// place or to a new location).
package backupjobs

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"

	"github.com/berth-dev/berth/server/internal/backup"
	"github.com/berth-dev/berth/server/internal/hostpath"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// Notifier receives the outcomes of backups (notify.Service).
type Notifier interface {
	Emit(envID int64, eventType, title, message string)
}

// Options configure a Service.
type Options struct {
	Store   *store.Store
	Engines *engine.Manager
	Runner  backup.Runner // nil: backups are unavailable
	// Repo returns a destination's repository (secrets opened) and the
	// environment whose engine runs its destination-level operations.
	Repo func(ctx context.Context, destID int64) (backup.Repo, int64, error)
	// Instance returns this install's backup instance id.
	Instance func(ctx context.Context) (string, error)
	// StackDir returns the directory on Berth's host holding a stack's files.
	StackDir func(ctx context.Context, env store.Environment, name string) (string, error)
	// PathPolicy confines the host paths of Berth's host that a restore to
	// a new location writes (the stacks' policy: DATA_DIR/stacks/<env> and
	// the stack roots an admin allowed); nil refuses them.
	PathPolicy func(ctx context.Context, envID int64) (hostpath.Policy, error)
	// RecordStack records the stack directory dir that a restore to the new
	// name wrote on env as a Berth stack, with the secrets of the stack
	// from of environment fromEnv when it still exists; nil records none.
	RecordStack func(ctx context.Context, env store.Environment, name, dir string, fromEnv int64, from string) error
	// SelfArchive writes the archive of Berth itself (selfbackup.Write with
	// the server's data directory, database and key) to w, git checkouts
	// and mirrors included when includeGit: what a configuration of type
	// berth backs up. nil: such a run fails.
	SelfArchive func(ctx context.Context, includeGit bool, w io.Writer) error
	Notify      Notifier
	Log         *slog.Logger
	Node        string
	// Single: this is the only Berth on its database (no replicas), so every
	// run left running when it starts was interrupted, whatever node
	// (host:port) ran it; with replicas, only this node's own.
	Single bool
}

// Service runs backups and restores.
type Service struct {
	o Options

	mu       sync.Mutex
	running  map[int64]context.CancelFunc // configuration id → its run's cancel
	restores map[string]restoring         // snapshot id → its restore
}

// New returns a Service.
func New(o Options) *Service {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return &Service{o: o, running: map[int64]context.CancelFunc{}, restores: map[string]restoring{}}
}

var errUnavailable = fault.New(fault.Unavailable, "Backups are not available on this server (no restic runner)")

// Tags of the snapshots Berth makes.
const (
	TagInstance = "berth:instance="
	TagConfig   = "berth:config="
	TagType     = "berth:type="
	TagTarget   = "berth:target="
	TagEnv      = "berth:env="
	// TagStackDir names the path of a snapshot that is its stack's
	// directory on Berth's host (whatever host the engine is on).
	TagStackDir = "berth:stackdir="
)

// ConfigTag is the tag of the snapshots of configuration id.
func ConfigTag(id int64) string { return fmt.Sprintf("%s%d", TagConfig, id) }

// tagValue returns the value of the tag with prefix among tags.
func tagValue(tags []string, prefix string) string {
	for _, t := range tags {
		if v, ok := strings.CutPrefix(t, prefix); ok {
			return v
		}
	}
	return ""
}

// Running reports whether configuration id has a run in progress here.
func (s *Service) Running(id int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.running[id]
	return ok
}

// Stop cancels configuration id's run in progress here; stopped tells
// whether there was one.
func (s *Service) Stop(id int64) bool {
	s.mu.Lock()
	cancel, ok := s.running[id]
	s.mu.Unlock()
	if ok {
		cancel()
	}
	return ok
}

// StopRestore cancels the restore of snapshot (every restore when ""),
// of environment envID only when not 0, and only those whose environment
// may allows (nil: any); it tells whether there was one.
func (s *Service) StopRestore(snapshot string, envID int64, may func(envID int64) bool) bool {
	s.mu.Lock()
	var cancels []context.CancelFunc
	for id, r := range s.restores {
		if (snapshot == "" || id == snapshot || strings.HasPrefix(id, snapshot)) && (envID == 0 || r.envID == envID) &&
			(may == nil || may(r.envID)) {
			cancels = append(cancels, r.cancel)
		}
	}
	s.mu.Unlock()
	for _, c := range cancels {
		c()
	}
	return len(cancels) > 0
}

// restoring is a restore under way: how to stop it, and the environment it
// writes to.
type restoring struct {
	cancel context.CancelFunc
	envID  int64
}

// where returns where restic runs for environment envID.
func (s *Service) where(ctx context.Context, envID int64) (backup.Where, store.Environment, error) {
	env, err := s.o.Store.GetEnvironment(ctx, envID)
	if err != nil {
		return backup.Where{}, store.Environment{}, fmt.Errorf("environment %d: %w", envID, err)
	}
	c, err := s.o.Engines.Client(ctx, env.Endpoint())
	if err != nil {
		return backup.Where{}, env, err
	}
	return backup.Where{EnvID: env.ID, Client: c, Owner: s.o.Node}, env, nil
}

// CheckDestination refuses a destination a configuration of environment
// envID cannot use: a local-path repository lives on its own
// environment's host.
func (s *Service) CheckDestination(ctx context.Context, destID, envID int64) error {
	if s.o.Repo == nil {
		return errUnavailable
	}
	r, destEnv, err := s.o.Repo(ctx, destID)
	if err != nil {
		return err
	}
	if r.Type == backup.TypeLocal && destEnv != envID {
		return fault.Invalidf("A local repository is on the host of environment %d: only configurations of that environment can use it", destEnv)
	}
	return nil
}

// UseNotifier makes runs report their outcome (backup_success, backup_failed).
func (s *Service) UseNotifier(n Notifier) { s.o.Notify = n }
