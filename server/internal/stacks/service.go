// Package stacks provides compose stacks: their files on disk (written
// atomically), their variables (non-secret ones in the env file, secret ones
// sealed in the database and injected only into the compose run), and the
// operations deploy, update, start, stop, restart, down and delete, run in
// process through the compose library against any environment. Stacks come
// from Berth itself (internal), from a git repository (git), or are compose
// projects found running on an engine (external), which can be adopted.
package stacks

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// Registries gives the credentials of the configured registries, which
// deploys pull images with (never credentials of a request or of Berth's own
// process).
type Registries interface {
	PullCredentials(ctx context.Context) ([]engine.Credentials, error)
}

// Service runs stack operations.
type Service struct {
	store      *store.Store
	engines    *engine.Manager
	registries Registries // nil: anonymous pulls
	notifier   Notifier   // nil: outcomes are not reported
	dataDir    string
	log        *slog.Logger
	// defaultRoots are the external stack roots while an admin has saved
	// none (see UseDefaultRoots).
	defaultRoots []string

	mu    sync.Mutex
	locks map[string]*sync.Mutex // one per environment and stack name
	// replicaID is this replica's id when several share the database
	// (UseReplica): a stack's lock is then also taken in the database.
	replicaID string
}

// UseReplica makes every operation on a stack also hold the stack's lock
// in the database, as replica replicaID of an install whose replicas share
// it (docs/scale.md), and returns s: two replicas never run one stack's
// operations at once, and a replica starting never repairs a stack whose
// update another is running.
func (s *Service) UseReplica(replicaID string) *Service {
	s.replicaID = replicaID
	return s
}

// New returns a Service keeping stack files under dataDir/stacks and git
// clones under dataDir/git, pulling with the credentials of registries.
func New(st *store.Store, engines *engine.Manager, registries Registries, dataDir string, log *slog.Logger) *Service {
	return &Service{store: st, engines: engines, registries: registries, dataDir: dataDir, log: log, locks: map[string]*sync.Mutex{}}
}

// CloneDir is where the repository of the git stack with stack id stackID
// is cloned.
func (s *Service) CloneDir(stackID int64) string {
	return absPath(filepath.Join(s.dataDir, "git", fmt.Sprintf("stack-%d", stackID)))
}

// stackLockPoll is how often an operation waiting for a stack's lock held
// by another replica asks again.
const stackLockPoll = 200 * time.Millisecond

// lock serializes operations on one stack: two deploys of the same stack
// never interleave their file writes or compose runs. With replicas
// (UseReplica) the stack's lock in the database is taken too, waiting
// while another replica's operation holds it. It fails only when ctx ends
// first or the database cannot be asked.
func (s *Service) lock(ctx context.Context, envID int64, name string) (func(), error) {
	key := fmt.Sprintf("%d/%s", envID, name)
	s.mu.Lock()
	l, ok := s.locks[key]
	if !ok {
		l = &sync.Mutex{}
		s.locks[key] = l
	}
	s.mu.Unlock()
	l.Lock()
	if s.replicaID == "" {
		return l.Unlock, nil
	}
	holder := rand.Text()
	logged := false
	for {
		claimed, heldBy, err := s.store.ClaimStackLock(ctx, envID, name, s.replicaID, holder, time.Now())
		if err != nil {
			l.Unlock()
			return nil, err
		}
		if claimed {
			return func() {
				rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
				defer cancel()
				if err := s.store.ReleaseStackLock(rctx, envID, name, holder); err != nil {
					// The lock stays until this replica stops.
					s.log.Warn("stacks: lock not released", "env", envID, "stack", name, "err", err)
				}
				l.Unlock()
			}, nil
		}
		if !logged {
			s.log.Info("stacks: waiting for another replica's operation on the stack", "env", envID, "stack", name,
				"replica", heldBy)
			logged = true
		}
		select {
		case <-ctx.Done():
			l.Unlock()
			return nil, fmt.Errorf("stack '%s' is busy with an operation of another Berth replica: %w", name, ctx.Err())
		case <-time.After(stackLockPoll):
		}
	}
}

func notFound(name string) error {
	return fault.New(fault.NotFound, fmt.Sprintf("Stack '%s' not found", name))
}

// get returns the record of a stack, or the 404 naming it.
func (s *Service) get(ctx context.Context, env store.Environment, name string) (store.Stack, error) {
	st, err := s.store.GetStack(ctx, env.ID, name)
	if errors.Is(err, store.ErrNotFound) {
		return store.Stack{}, notFound(name)
	}
	return st, err
}

// client returns env's engine, or the fault of operation op.
func (s *Service) client(ctx context.Context, env store.Environment, op string) (*engine.Client, error) {
	c, err := s.engines.Client(ctx, env.Endpoint())
	if err != nil {
		return nil, opFault(op, err)
	}
	return c, nil
}

// opFault is the 500 of a failed stack operation op ("deploy stack 'web'"),
// with the engine's or compose's message as details.
func opFault(op string, err error) error {
	if _, ok := fault.As(err); ok {
		return err
	}
	return fault.Wrap(fault.Internal, "Failed to "+op, err).WithDetails(engine.Details(err))
}

// Message is the client-facing text of an operation's error (the details
// of a fault when it has them).
func Message(err error) string {
	if f, ok := fault.As(err); ok {
		if f.Details != "" {
			return f.Message + ": " + f.Details
		}
		return f.Message
	}
	return err.Error()
}
