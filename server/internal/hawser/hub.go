// Package hawser provides the edge hub of Hawser, the reference's agent:
// agents dial GET /api/hawser/connect over WebSocket, authenticate in their
// hello with a token issued by Berth (stored as an Argon2id hash), and then
// carry Docker API requests as request/response/stream frames, terminals as
// exec_* frames, and push host metrics and container events. The hub is an
// engine.HawserEdges: the engine package's moby client runs over it
// unchanged.
package hawser

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
)

// Protocol timings (the reference's).
const (
	pingEvery    = 5 * time.Second
	silenceLimit = 90 * time.Second
	helloWait    = 10 * time.Second
	// DefaultAuthCooldown is how long a remote address that presented a
	// bad token is refused.
	DefaultAuthCooldown = 5 * time.Minute
	// DefaultReplaceLimit hellos may replace an environment's live
	// connection within DefaultReplaceWindow; more are refused and the live
	// connection kept. Two agents sharing one token would otherwise replace
	// each other in a loop (each reconnects when replaced), resetting the
	// environment's engine client and writing its agent facts every time.
	DefaultReplaceLimit  = 6
	DefaultReplaceWindow = time.Minute
	maxFrame             = 256 << 20
)

// Options configure a Hub.
type Options struct {
	Store   *store.Store
	Engines *engine.Manager
	Log     *slog.Logger
	// AuthCooldown: see DefaultAuthCooldown (tests shorten it).
	AuthCooldown time.Duration
	// PingEvery and SilenceLimit override the protocol timings (tests).
	PingEvery, SilenceLimit time.Duration
	// ReplaceLimit and ReplaceWindow: see DefaultReplaceLimit.
	ReplaceLimit  int
	ReplaceWindow time.Duration
}

// Hub holds the connected edge agents, one per environment.
type Hub struct {
	store   *store.Store
	engines *engine.Manager
	log     *slog.Logger
	now     func() time.Time

	cooldown      time.Duration
	ping          time.Duration
	silence       time.Duration
	replaceLimit  int
	replaceWindow time.Duration

	mu      sync.Mutex
	conns   map[int64]*agentConn
	refused map[string]time.Time // remote address → refused until
	metrics map[int64]engine.HostMetrics
	events  map[int64]int // container_event frames received, by environment
	// replaced: when hellos replaced each environment's live connection,
	// within the last replaceWindow.
	replaced map[int64][]time.Time
	relayRT  map[int64]http.RoundTripper // transports through other replicas, by environment

	replicas Replicas // nil: a single Berth
}

// NewHub returns a Hub.
func NewHub(o Options) *Hub {
	h := &Hub{store: o.Store, engines: o.Engines, log: o.Log, now: time.Now,
		cooldown: o.AuthCooldown, ping: o.PingEvery, silence: o.SilenceLimit,
		conns: map[int64]*agentConn{}, refused: map[string]time.Time{}, metrics: map[int64]engine.HostMetrics{},
		events: map[int64]int{}, replaced: map[int64][]time.Time{}, relayRT: map[int64]http.RoundTripper{},
		replaceLimit: o.ReplaceLimit, replaceWindow: o.ReplaceWindow}
	if h.replaceLimit <= 0 {
		h.replaceLimit = DefaultReplaceLimit
	}
	if h.replaceWindow <= 0 {
		h.replaceWindow = DefaultReplaceWindow
	}
	if h.cooldown <= 0 {
		h.cooldown = DefaultAuthCooldown
	}
	if h.ping <= 0 {
		h.ping = pingEvery
	}
	if h.silence <= 0 {
		h.silence = silenceLimit
	}
	return h
}

// errReplaced ends a connection whose environment's agent connected again.
var errReplaced = errors.New("replaced by a new connection of the environment's agent")

// Cooldown is how long remote must still wait after presenting a bad
// token (0: it may connect).
func (h *Hub) Cooldown(remote string) time.Duration {
	until, ok := h.refusedUntil(remote)
	if !ok {
		return 0
	}
	return until.Sub(h.now())
}

// Serve serves an agent's WebSocket until it ends. remote is the client
// address (for the auth-failure cooldown).
func (h *Hub) Serve(reqCtx context.Context, ws *websocket.Conn, remote string) {
	ws.SetReadLimit(maxFrame)
	ctx := context.WithoutCancel(reqCtx)
	hctx, cancel := context.WithTimeout(ctx, helloWait)
	_, data, err := ws.Read(hctx)
	cancel()
	if err != nil {
		_ = ws.Close(websocket.StatusPolicyViolation, "hello expected")
		return
	}
	var hello helloFrame
	if json.Unmarshal(data, &hello) != nil || hello.Type != "hello" {
		h.refuse(ctx, ws, "", "Expected a hello message")
		return
	}
	env, tok, err := h.authenticate(ctx, hello.Token)
	if err != nil {
		h.refuseAuth(remote)
		h.refuse(ctx, ws, remote, err.Error())
		return
	}
	// On replicas the lease refuses another agent below: only the same
	// agent replaces its connection, which is no storm.
	if h.replicas == nil && !h.mayReplace(env.ID) {
		h.refuse(ctx, ws, remote, errStorm.Error())
		return
	}
	cctx, ccancel := context.WithCancelCause(ctx)
	c := &agentConn{hub: h, ws: ws, envID: env.ID, hello: hello, remote: remote, connectedAt: h.now().UTC(),
		ctx: cctx, cancel: ccancel, pending: map[string]chan json.RawMessage{}, execs: map[string]*session{}}
	c.lastSeen.Store(h.now().UnixNano())
	if h.replicas != nil {
		// One live agent per token across the replicas: the lease.
		release, err := h.replicas.HoldHawser(ctx, store.AgentLease{EnvironmentID: env.ID, AgentID: hello.AgentID,
			AgentName: hello.AgentName, AgentVersion: hello.Version, Capabilities: hello.Capabilities, Remote: remote,
			ConnectedAt: c.connectedAt}, c.close, h.tokenValid(hello.Token, env.ID))
		if err != nil {
			ccancel(err)
			h.refuse(ctx, ws, remote, err.Error())
			return
		}
		defer release()
	}
	if err := c.write(ctx, welcomeFrame{Type: "welcome", ServerID: "berth", Version: protocolVersion, EnvironmentID: env.ID}); err != nil {
		ccancel(err)
		return
	}
	h.register(c)
	_ = h.store.TouchHawserToken(ctx, tok.ID, h.now())
	h.seen(c, true)
	h.log.Info("hawser agent connected", "env", env.ID, "agent", hello.AgentName, "remote", remote)
	go c.keepAlive()
	err = c.readLoop()
	h.unregister(c, err)
	h.seen(c, false)
	h.log.Info("hawser agent disconnected", "env", env.ID, "reason", context.Cause(cctx))
}

// refuse tells the agent why and closes with 1008.
func (h *Hub) refuse(ctx context.Context, ws *websocket.Conn, remote, msg string) {
	b, _ := json.Marshal(errorFrame{Type: "error", Message: msg, Error: msg})
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_ = ws.Write(wctx, websocket.MessageText, b)
	// A close frame's reason holds at most 123 bytes (RFC 6455 5.5): the
	// error frame carries the whole message.
	_ = ws.Close(websocket.StatusPolicyViolation, truncate(msg, 120))
	if remote != "" {
		h.log.Warn("hawser agent refused", "remote", remote, "reason", msg)
	}
}

// errBadToken is the refusal of a hello whose token is unknown, revoked or
// expired.
//
//lint:ignore ST1005 the message agents show, as the reference words it
var errBadToken = errors.New("Invalid or expired token")

// authenticate maps a hello's token to its hawser-edge environment.
func (h *Hub) authenticate(ctx context.Context, token string) (store.Environment, store.HawserToken, error) {
	if len(token) < 16 {
		return store.Environment{}, store.HawserToken{}, errBadToken
	}
	toks, err := h.store.ActiveHawserTokensByPrefix(ctx, Prefix(token))
	if err != nil {
		return store.Environment{}, store.HawserToken{}, err
	}
	for _, t := range toks {
		ok, err := VerifyToken(token, t.Hash)
		if err != nil || !ok {
			continue
		}
		if t.ExpiresAt != nil && h.now().After(*t.ExpiresAt) {
			return store.Environment{}, store.HawserToken{}, errBadToken
		}
		env, err := h.store.GetEnvironment(ctx, t.EnvironmentID)
		if err != nil {
			return store.Environment{}, store.HawserToken{}, errBadToken
		}
		if env.ConnectionType != engine.HawserEdge {
			return store.Environment{}, store.HawserToken{}, errNotEdge
		}
		return env, t, nil
	}
	return store.Environment{}, store.HawserToken{}, errBadToken
}

// errNotEdge refuses a token whose environment is of another type.
//
//lint:ignore ST1005 a message the agent shows
var errNotEdge = errors.New("The token's environment is not a Hawser edge environment")

// errStorm refuses a hello that would replace its environment's live
// connection once too often.
//
//lint:ignore ST1005 a message the agent shows
var errStorm = errors.New("Another agent keeps connecting with this environment's token: the connected agent is kept; use one token per agent, or retry in a minute")

// mayReplace reports whether a hello for envID may connect: always when no
// agent is connected; when one is, at most replaceLimit times a window (it
// counts the replacement).
func (h *Hub) mayReplace(envID int64) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.conns[envID] == nil {
		return true
	}
	now := h.now()
	recent := h.replaced[envID][:0]
	for _, at := range h.replaced[envID] {
		if now.Sub(at) < h.replaceWindow {
			recent = append(recent, at)
		}
	}
	if len(recent) >= h.replaceLimit {
		h.replaced[envID] = recent
		return false
	}
	h.replaced[envID] = append(recent, now)
	return true
}

func (h *Hub) refusedUntil(remote string) (time.Time, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	until, ok := h.refused[remote]
	if ok && h.now().After(until) {
		delete(h.refused, remote)
		return time.Time{}, false
	}
	return until, ok
}

func (h *Hub) refuseAuth(remote string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.refused[remote] = h.now().Add(h.cooldown)
}

// register makes c its environment's connection, ending the previous one.
func (h *Hub) register(c *agentConn) {
	h.mu.Lock()
	old := h.conns[c.envID]
	h.conns[c.envID] = c
	h.mu.Unlock()
	if old != nil {
		old.close(errReplaced)
	}
	if h.engines != nil {
		h.engines.Reset(c.envID)
	}
}

func (h *Hub) unregister(c *agentConn, err error) {
	c.close(err)
	h.mu.Lock()
	if h.conns[c.envID] == c {
		delete(h.conns, c.envID)
	}
	h.mu.Unlock()
}

// seen records the agent's facts on its environment.
func (h *Hub) seen(c *agentConn, connected bool) {
	caps := c.hello.Capabilities
	if caps == nil {
		caps = []string{}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := h.store.SetAgentSeen(ctx, c.envID, store.AgentSeen{ID: c.hello.AgentID, Name: c.hello.AgentName,
		Version: c.hello.Version, Capabilities: caps, LastSeen: time.Unix(0, c.lastSeen.Load())})
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		h.log.Warn("hawser: record agent", "env", c.envID, "connected", connected, "err", err)
	}
}

func (h *Hub) get(envID int64) *agentConn {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.conns[envID]
	if c == nil || c.ctx.Err() != nil {
		return nil
	}
	return c
}

// Disconnect closes envID's agent connection (its token was replaced or
// revoked, or the environment changed or went).
func (h *Hub) Disconnect(envID int64, reason string) {
	h.mu.Lock()
	c := h.conns[envID]
	delete(h.conns, envID)
	delete(h.replaced, envID)
	h.mu.Unlock()
	if c != nil {
		c.close(errors.New(reason))
	}
	if h.replicas != nil {
		// The agent may be connected to another replica: its holder checks
		// the token at its next pass.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		h.replicas.DropHawser(ctx, envID)
	}
}

// Close ends every connection.
func (h *Hub) Close() {
	h.mu.Lock()
	conns := h.conns
	h.conns = map[int64]*agentConn{}
	h.mu.Unlock()
	for _, c := range conns {
		//lint:ignore ST1005 a message the agent shows
		c.close(errors.New("Berth is shutting down"))
	}
}

// HostMetrics is the host usage envID's agent pushed last (engine.HawserEdges).
func (h *Hub) HostMetrics(envID int64) (engine.HostMetrics, bool) {
	if h.get(envID) == nil {
		if _, ok := h.elsewhere(envID); ok {
			return h.relayedMetrics(envID) // the agent pushes them to its holder
		}
	}
	return h.pushedMetrics(envID)
}

func (h *Hub) pushedMetrics(envID int64) (engine.HostMetrics, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	m, ok := h.metrics[envID]
	return m, ok
}

// Agent is what envID's connected agent told in its hello (engine.HawserEdges).
func (h *Hub) Agent(envID int64) (engine.AgentInfo, bool) {
	c := h.get(envID)
	if c == nil {
		if l, ok := h.elsewhere(envID); ok {
			st := leaseStatus(l, 0)
			return engine.AgentInfo{ID: st.AgentID, Name: st.AgentName, Version: st.AgentVersion, Capabilities: st.Capabilities}, true
		}
		return engine.AgentInfo{}, false
	}
	caps := c.hello.Capabilities
	if caps == nil {
		caps = []string{}
	}
	return engine.AgentInfo{ID: c.hello.AgentID, Name: c.hello.AgentName, Version: c.hello.Version, Capabilities: caps}, true
}

// Status is the live state of an environment's edge agent.
type Status struct {
	Connected     bool       `json:"connected"`
	ConnectedAt   *time.Time `json:"connectedAt"`
	LastHeartbeat *time.Time `json:"lastHeartbeat"`
	AgentID       string     `json:"agentId"`
	AgentName     string     `json:"agentName"`
	AgentVersion  string     `json:"agentVersion"`
	DockerVersion string     `json:"dockerVersion"`
	Hostname      string     `json:"hostname"`
	Capabilities  []string   `json:"capabilities"`
	RemoteAddress string     `json:"remoteAddress,omitempty"`
	// ContainerEvents counts the container_event frames the agent pushed.
	ContainerEvents int `json:"containerEvents"`
	// FromLease: another replica holds the agent and did not answer in
	// time; LastHeartbeat is its lease's connection time (docs/scale.md).
	FromLease bool `json:"-"`
}

// Status returns envID's agent state (Connected false when none is).
func (h *Hub) Status(ctx context.Context, envID int64) Status {
	return h.Statuses(ctx, []int64{envID})[envID]
}

// Statuses returns the agent state of each of envIDs. The agents other
// replicas hold are asked of their holders, each holder once, for their
// last heartbeat and what else their lease does not say; a holder that
// does not answer in time leaves the lease's figures (FromLease).
func (h *Hub) Statuses(ctx context.Context, envIDs []int64) map[int64]Status {
	out := make(map[int64]Status, len(envIDs))
	leases := map[int64]store.AgentLease{}
	var away []int64
	for _, id := range envIDs {
		if c := h.get(id); c != nil {
			out[id] = c.status(h.eventCount(id))
			continue
		}
		if l, ok := h.elsewhere(id); ok {
			leases[id] = l
			away = append(away, id)
			continue
		}
		out[id] = Status{Capabilities: []string{}, ContainerEvents: h.eventCount(id)}
	}
	if len(away) == 0 {
		return out
	}
	held := h.replicas.HawserHeld(ctx, away)
	for _, id := range away {
		st := leaseStatus(leases[id], h.eventCount(id))
		if x, ok := held[id]; ok {
			seen := x.LastHeartbeat.UTC()
			st.LastHeartbeat, st.DockerVersion, st.Hostname, st.ContainerEvents = &seen, x.DockerVersion, x.Hostname, x.ContainerEvents
		} else {
			st.FromLease = true
		}
		out[id] = st
	}
	return out
}

// Held is what the replica holding an agent's connection knows of it live
// and the agent's lease does not say.
type Held struct {
	LastHeartbeat   time.Time
	DockerVersion   string
	Hostname        string
	ContainerEvents int
}

// Held is what this hub knows of envID's agent when it is connected here
// (another replica asks it, through Replicas.HawserHeld).
func (h *Hub) Held(envID int64) (Held, bool) {
	c := h.get(envID)
	if c == nil {
		return Held{}, false
	}
	return Held{LastHeartbeat: time.Unix(0, c.lastSeen.Load()).UTC(), DockerVersion: c.hello.DockerVersion,
		Hostname: c.hello.Hostname, ContainerEvents: h.eventCount(envID)}, true
}

func (h *Hub) eventCount(envID int64) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.events[envID]
}

// elsewhere is envID's lease when another replica holds its agent.
func (h *Hub) elsewhere(envID int64) (store.AgentLease, bool) {
	if h.replicas == nil {
		return store.AgentLease{}, false
	}
	return h.replicas.HawserElsewhere(envID)
}

// Connections returns the state of every connected agent, by environment.
func (h *Hub) Connections() map[int64]Status {
	h.mu.Lock()
	conns := make([]*agentConn, 0, len(h.conns))
	for _, c := range h.conns {
		conns = append(conns, c)
	}
	h.mu.Unlock()
	out := map[int64]Status{}
	for _, c := range conns {
		if c.ctx.Err() == nil {
			out[c.envID] = c.status(0)
		}
	}
	return out
}

func (c *agentConn) status(events int) Status {
	at, seen := c.connectedAt, time.Unix(0, c.lastSeen.Load()).UTC()
	caps := c.hello.Capabilities
	if caps == nil {
		caps = []string{}
	}
	return Status{Connected: true, ConnectedAt: &at, LastHeartbeat: &seen, AgentID: c.hello.AgentID,
		AgentName: c.hello.AgentName, AgentVersion: c.hello.Version, DockerVersion: c.hello.DockerVersion,
		Hostname: c.hello.Hostname, Capabilities: caps, RemoteAddress: c.remote, ContainerEvents: events}
}
