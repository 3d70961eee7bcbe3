// Package agents provides the server side of the agent protocol
// (proto/berth/agent/v1): the gRPC listener edge agents dial and the
// registry of their connections, the connections Berth opens to standard
// agents, edge tokens (generated, rotated, stored hashed) and the agents'
// status. Its Service is the engine package's Agents transport: every
// operation on an agent environment is a stream opened here.
package agents

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/berth-dev/berth/server/internal/replica"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
)

// Defaults of Options.
const (
	DefaultHeartbeat   = 10 * time.Second
	defaultOpenTimeout = 10 * time.Second
	// Storm guard: edge connections accepted per second across all agents,
	// and the burst allowed (a restart of Berth brings them all back).
	defaultConnectRate  = 200
	defaultConnectBurst = 200
	// An agent over the connect rate waits at most this long for its turn.
	maxConnectWait = 30 * time.Second
	// A connection is dead after this many heartbeat intervals of silence.
	missedHeartbeats = 3
	// An agent's last-seen time is written to the database at most this often.
	seenWriteInterval = time.Minute
)

// Options configure a Service.
type Options struct {
	Store   *store.Store
	Engines *engine.Manager // its breaker is reset when an edge agent connects
	Log     *slog.Logger
	// Heartbeat is the interval edge agents are told to send heartbeats at.
	Heartbeat time.Duration
	// OpenTimeout bounds how long an edge agent may take to open an
	// operation's stream after Berth asked for it.
	OpenTimeout time.Duration
	// ConnectRate and ConnectBurst bound accepted edge connections (the
	// reconnect-storm guard); zero takes the defaults.
	ConnectRate  float64
	ConnectBurst int
	// Install: what the install lines of a new edge token say.
	Install InstallConfig
	// Replicas: this Berth is one replica of several on one PostgreSQL
	// database (REPLICA_HOST): an edge agent's connection is leased to one
	// replica and the others relay to it. Nil: a single Berth.
	Replicas *replica.Registry
	// RelayCertFile is the agent port's certificate (AGENT_TLS_CERT): the
	// replicas share it, so the relay dials the others over TLS and expects
	// exactly this certificate. Empty: plaintext (a private network).
	RelayCertFile string
}

// Service runs both directions of the agent protocol.
type Service struct {
	store     *store.Store
	engines   *engine.Manager
	log       *slog.Logger
	heartbeat time.Duration
	openWait  time.Duration
	install   InstallConfig
	limiter   *rate.Limiter
	now       func() time.Time

	edge     edgeRegistry
	standard standardConns
	relay    *relay    // nil: a single Berth
	hawser   HawserHub // the Hawser edge hub whose agents the relay serves (nil: none)
	// onConnect is called with the environment of each edge agent that
	// connects here (OnEdgeConnect); nil: nothing is told.
	onConnect atomic.Pointer[func(envID int64)]

	statusMu sync.Mutex
	statuses map[int64]*liveStatus // live status per environment
}

// New returns a Service; with Options.Replicas it reconciles the agent
// leases with the other replicas until Close.
func New(o Options) (*Service, error) {
	if o.Heartbeat <= 0 {
		o.Heartbeat = DefaultHeartbeat
	}
	if o.OpenTimeout <= 0 {
		o.OpenTimeout = defaultOpenTimeout
	}
	if o.ConnectRate <= 0 {
		o.ConnectRate = defaultConnectRate
	}
	if o.ConnectBurst <= 0 {
		o.ConnectBurst = defaultConnectBurst
	}
	s := &Service{
		store: o.Store, engines: o.Engines, log: o.Log, heartbeat: o.Heartbeat, openWait: o.OpenTimeout,
		install: o.Install, limiter: rate.NewLimiter(rate.Limit(o.ConnectRate), o.ConnectBurst), now: time.Now,
		edge:     edgeRegistry{conns: map[int64]*edgeConn{}, pending: map[string]*pendingOp{}},
		standard: standardConns{conns: map[int64]*standardConn{}},
		statuses: map[int64]*liveStatus{},
	}
	if o.Replicas != nil {
		r, err := newRelay(s, o.Replicas, o.RelayCertFile)
		if err != nil {
			return nil, err
		}
		s.relay = r
	}
	return s, nil
}

// Away reports whether env is an edge environment whose agent is not
// connected to this Berth (another replica holds it, or it is not connected
// at all): nothing of it can be collected here now, and a background
// follower of it would only wait (and, on a replica, relay) for nothing.
func (s *Service) Away(env store.Environment) bool {
	return env.ConnectionType == engine.AgentEdge && !s.edge.live(env.ID)
}

// OnEdgeConnect makes f be called (in its own goroutine) with the
// environment of each edge agent that connects here.
func (s *Service) OnEdgeConnect(f func(envID int64)) { s.onConnect.Store(&f) }

// Operate opens one operation stream to env's agent (engine.Agents).
func (s *Service) Operate(ctx context.Context, env engine.Endpoint) (engine.AgentStream, error) {
	switch env.ConnectionType {
	case engine.AgentEdge:
		if s.relay != nil && !s.edge.live(env.ID) {
			// The agent may be connected to another replica.
			return s.relay.operate(ctx, env)
		}
		return s.operateEdge(ctx, env)
	case engine.AgentStandard:
		st, err := s.operateStandard(ctx, env)
		if env.ID != 0 { // unsaved settings under test have no status to keep
			s.standardResult(env.ID, err)
		}
		return st, err
	}
	return nil, errors.New("agents: not an agent environment")
}

// Forget drops what Berth holds for an environment that was deleted or
// whose connection settings changed: a standard agent's cached connection,
// an edge agent's connection.
func (s *Service) Forget(envID int64, reason string) {
	s.standard.forget(envID)
	s.edge.disconnect(envID, reason)
	s.statusMu.Lock()
	delete(s.statuses, envID)
	s.statusMu.Unlock()
}

// Close ends every agent connection (and, for a replica, the lease
// reconciliation and the relay's connections to the other replicas).
func (s *Service) Close() {
	s.standard.closeAll()
	s.edge.shutdown()
	if s.relay != nil {
		s.relay.close()
	}
}
