// Package engine provides access to the Docker engine of each environment: it
// builds one moby client per environment (socket, direct over HTTP or TLS),
// negotiates the API version eagerly, caches the connection, and isolates
// offline environments behind a circuit breaker so that one dead engine never
// slows requests for another.
//
// It is the only package that imports the Docker SDK; it translates the SDK's
// errors and types at its boundary.
package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/moby/moby/client"
	"golang.org/x/sync/singleflight"
)

// PingTimeout bounds a connection attempt (ping with version negotiation).
const PingTimeout = 3 * time.Second

// Busy engines: a ping that timed out on an engine that still accepts
// connections means the engine is busy, not offline. For busyFor after that,
// callers are told so at once instead of each waiting out a ping of its own;
// probeTimeout bounds the connection attempt that tells busy from offline.
const (
	busyFor      = 2 * time.Second
	probeTimeout = time.Second
)

// Breaker timings: after a failed connection the environment is reported
// offline without touching the network for a back-off that doubles from
// breakerMin to breakerMax.
const (
	breakerMin = 2 * time.Second
	breakerMax = 30 * time.Second
)

// Manager hands out one cached Client per environment.
type Manager struct {
	log    *slog.Logger
	now    func() time.Time
	agents Agents      // nil: agent environments are unsupported
	hawser HawserEdges // nil: hawser-edge environments are unsupported

	mu    sync.Mutex
	conns map[int64]*conn

	reached sync.Map // env id → *atomic.Int64: when its engine last answered, across connection rebuilds

	writeMu sync.Mutex
	onWrite []func(envID int64) // see OnWrite
}

// lastOKOf is the record of when env's engine last answered.
func (m *Manager) lastOKOf(envID int64) *atomic.Int64 {
	v, _ := m.reached.LoadOrStore(envID, new(atomic.Int64))
	return v.(*atomic.Int64)
}

// conn is the cached connection state of one environment.
type conn struct {
	stamp  time.Time // UpdatedAt of the environment the client was built from
	env    Endpoint
	agent  *agentLink  // set for agent environments
	hawser *hawserLink // set for Hawser environments

	mu        sync.Mutex // serializes connection attempts for this environment only
	cli       *client.Client
	raw       *rawAPI // reads Berth decodes itself, over the same transport
	ready     bool    // pinged and negotiated since the last failure
	failures  int
	openUntil time.Time // breaker: no attempt before this instant
	busyUntil time.Time // the last ping timed out on a reachable engine: callers are told "busy" until then
	lastErr   error
	lastOK    *atomic.Int64 // unix nanoseconds of the last call the engine answered (kept across rebuilds)

	execMu sync.Mutex
	execs  map[string]*agentExec // execs attached through an agent, by exec id

	imagesCounted atomic.Bool // the engine's image list counted each image's containers last time
	samples       sampleMemo  // the last one-shot CPU figures of each container
	oneShotBlind  atomic.Bool // the engine's one-shot stats lack the host's CPU figure

	df    singleflight.Group // concurrent disk usage reads share one engine call
	reads flights            // concurrent identical reads share engine calls
}

// release closes c's clients' idle connections.
func (c *conn) release() {
	c.cli.Close()
	if c.raw != nil && c.raw.close != nil {
		c.raw.close()
	}
}

// client is the Client of c.
func (c *conn) client(m *Manager) *Client {
	return &Client{cli: c.cli, conn: c, m: m, envID: c.env.ID, agent: c.agent, hawser: c.hawser}
}

// NewManager returns a Manager.
func NewManager(log *slog.Logger) *Manager {
	return &Manager{log: log, now: time.Now, conns: make(map[int64]*conn)}
}

// UseAgents makes agent environments reachable through a (Berth's agents
// service). Call it before the first Client.
func (m *Manager) UseAgents(a Agents) { m.agents = a }

// Client returns the engine client of env, connecting first when needed.
// While the environment's breaker is open it fails at once with ErrOffline.
func (m *Manager) Client(ctx context.Context, env Endpoint) (*Client, error) {
	c, err := m.conn(env)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ready {
		return c.client(m), nil
	}
	now := m.now()
	if now.Before(c.openUntil) {
		return nil, &OfflineError{EnvID: env.ID, Cause: c.lastErr}
	}
	if now.Before(c.busyUntil) {
		return nil, &BusyError{EnvID: env.ID, RetryAt: c.busyUntil}
	}
	pctx, cancel := context.WithTimeout(ctx, PingTimeout)
	defer cancel()
	if _, err := c.cli.Ping(pctx, client.PingOptions{NegotiateAPIVersion: true, ForceNegotiate: true}); err != nil {
		if ctx.Err() != nil {
			// The caller left (or ran out of time) first: that says nothing
			// about the engine, so the breaker stays as it is.
			return nil, ctx.Err()
		}
		if errors.Is(err, context.DeadlineExceeded) && m.reachable(ctx, c) {
			// The engine holds the connection but does not answer: busy.
			// Calling it offline would tell users they have nothing.
			c.busyUntil = m.now().Add(busyFor)
			m.log.Warn("engine busy", "env", env.ID, "err", err)
			return nil, &BusyError{EnvID: env.ID, RetryAt: c.busyUntil}
		}
		m.tripLocked(c, env.ID, err)
		return nil, &OfflineError{EnvID: env.ID, Cause: err}
	}
	c.ready, c.failures, c.lastErr, c.busyUntil = true, 0, nil, time.Time{}
	c.lastOK.Store(m.now().UnixNano())
	return c.client(m), nil
}

// conn returns the cached connection of env, rebuilding it when the
// environment changed since it was built.
func (m *Manager) conn(env Endpoint) (*conn, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.conns[env.ID]; ok && c.stamp.Equal(env.UpdatedAt) {
		return c, nil
	}
	cli, link, hawser, raw, err := m.newClient(env)
	if err != nil {
		return nil, err
	}
	if old, ok := m.conns[env.ID]; ok {
		go old.release() // in-flight requests finish on their own connections
	}
	c := &conn{stamp: env.UpdatedAt, env: env, agent: link, hawser: hawser, cli: cli, raw: raw, lastOK: m.lastOKOf(env.ID)}
	m.conns[env.ID] = c
	return c, nil
}

// tripLocked opens the breaker of c after a connection failure. c.mu is held.
func (m *Manager) tripLocked(c *conn, envID int64, err error) {
	backoff := breakerMin << min(c.failures, 8)
	backoff = min(backoff, breakerMax)
	c.ready = false
	c.failures++
	c.lastErr = err
	c.openUntil = m.now().Add(backoff)
	m.log.Warn("engine offline", "env", envID, "retry_in", backoff, "err", err)
}

// observe trips the breaker when err shows that the engine cannot be reached.
// A call that ended because its caller left or its deadline passed says
// nothing certain about the engine and leaves the breaker alone.
func (m *Manager) observe(c *conn, envID int64, err error) {
	if err == nil || !isConnectionError(err) && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
		c.lastOK.Store(m.now().UnixNano()) // the engine answered (an error of its own is an answer)
	}
	if err == nil || !isConnectionError(err) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ready {
		c.failures = 0
		m.tripLocked(c, envID, err)
	}
}

// Online reports whether env's engine answered its last connection attempt;
// known is false when Berth never tried.
func (m *Manager) Online(envID int64) (online, known bool) {
	m.mu.Lock()
	c, ok := m.conns[envID]
	m.mu.Unlock()
	if !ok {
		return false, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ready, c.ready || c.lastErr != nil || !c.busyUntil.IsZero()
}

// Health is what Berth knows of an environment's connection.
type Health struct {
	Known     bool      // Berth tried to reach it since it started
	Online    bool      // the last attempt succeeded and no call failed to connect since
	LastError error     // why it is offline
	LastOK    time.Time // when the engine last answered (zero: never since Berth started)
	RetryAt   time.Time // offline: when Berth tries again at the earliest
}

// Health reports env's connection state without reaching out to it.
func (m *Manager) Health(envID int64) Health {
	var h Health
	if ns := m.lastOKOf(envID).Load(); ns != 0 {
		h.LastOK = time.Unix(0, ns)
	}
	m.mu.Lock()
	c, ok := m.conns[envID]
	m.mu.Unlock()
	if !ok {
		return h
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	h.Known, h.Online, h.LastError, h.RetryAt = c.ready || c.lastErr != nil || !c.busyUntil.IsZero(), c.ready, c.lastErr, c.openUntil
	return h
}

// Reset forgets the breaker state of an environment, so that the next call
// tries at once: an edge agent that (re)connected is worth trying now.
func (m *Manager) Reset(envID int64) {
	m.mu.Lock()
	c, ok := m.conns[envID]
	m.mu.Unlock()
	if !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.openUntil = time.Time{}
	if !c.ready {
		c.failures = 0
	}
}

// Forget drops the cached connection of an environment (after delete or update).
func (m *Manager) Forget(envID int64) {
	m.mu.Lock()
	c, ok := m.conns[envID]
	delete(m.conns, envID)
	m.mu.Unlock()
	if ok {
		c.release()
	}
}

// Close closes every cached connection.
func (m *Manager) Close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for id, c := range m.conns {
		c.release()
		delete(m.conns, id)
	}
}

// Test connects to env with a fresh, uncached client and returns the engine's
// facts. It never touches the breaker.
func (m *Manager) Test(ctx context.Context, env Endpoint) (Info, error) {
	_, info, err := m.TestAgent(ctx, env)
	return info, err
}

// TestAgent is Test for every environment, plus, for an agent environment,
// what its agent tells about itself (the zero AgentInfo for others).
func (m *Manager) TestAgent(ctx context.Context, env Endpoint) (AgentInfo, Info, error) {
	cli, link, hawser, raw, err := m.newClient(env)
	if err != nil {
		return AgentInfo{}, Info{}, err
	}
	cn := &conn{cli: cli, env: env, agent: link, hawser: hawser, raw: raw, lastOK: new(atomic.Int64)}
	defer cn.release()
	c := &Client{cli: cli, conn: cn, m: m, envID: env.ID, agent: link, hawser: hawser}
	if hawser != nil {
		pctx, cancel := context.WithTimeout(ctx, PingTimeout)
		defer cancel()
		if _, err := cli.Ping(pctx, client.PingOptions{NegotiateAPIVersion: true}); err != nil {
			return AgentInfo{}, Info{}, &OfflineError{EnvID: env.ID, Cause: err}
		}
		return c.hawserAgentInfo(ctx)
	}
	if link != nil {
		// One operation tells both the agent's and its engine's facts.
		return c.AgentInfo(ctx)
	}
	pctx, cancel := context.WithTimeout(ctx, PingTimeout)
	defer cancel()
	if _, err := cli.Ping(pctx, client.PingOptions{NegotiateAPIVersion: true}); err != nil {
		return AgentInfo{}, Info{}, &OfflineError{EnvID: env.ID, Cause: err}
	}
	info, err := c.Info(ctx)
	return AgentInfo{}, info, err
}

// reachable reports whether c's engine (for an agent environment: the agent
// and, through it, its engine socket) accepts a connection within
// probeTimeout. Hawser edge environments have no such probe: false.
func (m *Manager) reachable(ctx context.Context, c *conn) bool {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	var (
		nc  net.Conn
		err error
	)
	d := net.Dialer{}
	switch c.env.ConnectionType {
	case "", Socket:
		path := c.env.SocketPath
		if path == "" {
			path = DefaultSocket
		}
		nc, err = d.DialContext(ctx, "unix", path)
	case Direct, HawserStandard:
		nc, err = d.DialContext(ctx, "tcp", hostPort(c.env))
	case AgentStandard, AgentEdge:
		if c.agent == nil {
			return false
		}
		nc, err = c.agent.dialEngine(ctx)
	default:
		return false
	}
	if err != nil {
		return false
	}
	nc.Close()
	return true
}

// BusyError reports an environment whose engine accepts connections but did
// not answer in time: it is there, and may answer again soon.
type BusyError struct {
	EnvID   int64
	RetryAt time.Time // when asking again is worth it
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("environment %d is busy: its engine accepted the connection but did not answer within %s", e.EnvID, PingTimeout)
}

// Is makes errors.Is(err, ErrBusy) true for every BusyError.
func (e *BusyError) Is(target error) bool { return target == ErrBusy }

// RetryAfter is how many whole seconds (at least 1) a client should wait
// before asking again when err says an engine is busy.
func RetryAfter(err error) (int, bool) {
	var b *BusyError
	if !errors.As(err, &b) {
		return 0, false
	}
	secs := int(time.Until(b.RetryAt).Round(time.Second) / time.Second)
	return max(secs, 1), true
}

// OfflineError reports an environment whose engine cannot be reached.
type OfflineError struct {
	EnvID int64
	Cause error
}

func (e *OfflineError) Error() string {
	if e.Cause == nil {
		return fmt.Sprintf("environment %d is offline", e.EnvID)
	}
	return fmt.Sprintf("environment %d is offline: %v", e.EnvID, e.Cause)
}

func (e *OfflineError) Unwrap() error { return e.Cause }

// Is makes errors.Is(err, ErrOffline) true for every OfflineError.
func (e *OfflineError) Is(target error) bool { return target == ErrOffline }

// IsOffline reports whether err means the engine cannot be reached.
func IsOffline(err error) bool { return errors.Is(err, ErrOffline) }
