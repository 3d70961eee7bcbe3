package agents

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/agentpb"
	"github.com/berth-dev/berth/shared/engine"
)

// edgeRegistry holds the connected edge agents (one per environment) and the
// operations Berth asked them to open.
type edgeRegistry struct {
	mu      sync.Mutex
	conns   map[int64]*edgeConn
	pending map[string]*pendingOp
	// closing: Berth is shutting down (shutdown); no agent is let in
	// again, so that an agent told to go does not come straight back over
	// its open connection and hold the stop up.
	closing bool
}

// errClosing refuses an agent connecting while Berth shuts down: it tries
// again on its back-off and reaches the next Berth (or another replica).
var errClosing = status.Error(codes.Unavailable, "Berth is shutting down: connect again in a moment")

// edgeConn is one edge agent's Connect stream.
type edgeConn struct {
	envID       int64
	tokenHash   string
	hello       *agentpb.Hello
	remote      string
	connectedAt time.Time
	lastSeen    atomic.Int64 // Unix nanoseconds of the last message
	// claimedAt: when this replica's lease of the environment was claimed
	// for the connection (local clock, after the claim committed); zero
	// for a single Berth.
	claimedAt   time.Time
	seenWritten atomic.Int64 // Unix nanoseconds of the last database write of lastSeen

	// The control stream's outgoing messages, sent by a goroutine that
	// runs only while there are some (drain): an idle agent costs no
	// sender goroutine (each is a stack of ~8 KB, at thousands of agents).
	outMu    sync.Mutex
	out      []*agentpb.ConnectResponse // queued, oldest first
	started  bool                       // the welcome was sent: queued messages may go
	draining bool                       // a drain goroutine runs
	stream   interface {
		Send(*agentpb.ConnectResponse) error
	}

	ctx    context.Context
	cancel context.CancelCauseFunc
}

// maxQueued is how many control messages may wait for an agent: one that
// leaves more unread (its stream's flow-control window full) is dead.
const maxQueued = 16

// pendingOp is an operation Berth asked an agent to open; the agent's Serve
// stream is handed over on ch.
type pendingOp struct {
	envID int64
	ch    chan *serveStream
}

// errRotated and friends end an edge connection (the agent sees the text).
var (
	errRotated = errors.New("the edge token was rotated: this connection's token is no longer valid")
	errSilent  = errors.New("no heartbeat within the heartbeat window")
)

func (r *edgeRegistry) get(envID int64) *edgeConn {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.conns[envID]
}

// live reports whether envID's agent holds a connection here.
func (r *edgeRegistry) live(envID int64) bool {
	c := r.get(envID)
	return c != nil && c.ctx.Err() == nil
}

// disconnect ends envID's connection, if any, with reason.
func (r *edgeRegistry) disconnect(envID int64, reason string) {
	r.mu.Lock()
	c := r.conns[envID]
	r.mu.Unlock()
	if c != nil {
		c.cancel(errors.New(reason))
	}
}

func (r *edgeRegistry) disconnectAll(reason string) {
	r.end(reason, false)
}

// shutdown ends every connection and lets no agent in again.
func (r *edgeRegistry) shutdown() {
	r.end("Berth is shutting down", true)
}

func (r *edgeRegistry) end(reason string, closing bool) {
	r.mu.Lock()
	r.closing = r.closing || closing
	conns := make([]*edgeConn, 0, len(r.conns))
	for _, c := range r.conns {
		conns = append(conns, c)
	}
	r.mu.Unlock()
	for _, c := range conns {
		c.cancel(errors.New(reason))
	}
}

// count returns how many edge agents are connected.
func (r *edgeRegistry) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.conns)
}

// healthy reports whether c has been heard from within the heartbeat window.
func (c *edgeConn) healthy(now time.Time, window time.Duration) bool {
	return c.ctx.Err() == nil && now.Sub(time.Unix(0, c.lastSeen.Load())) <= window
}

// edgeServer is the EdgeService Berth serves.
type edgeServer struct {
	agentpb.UnimplementedEdgeServiceServer
	s *Service
}

// bearer returns the token of a call's metadata.
func bearer(ctx context.Context) string {
	md, _ := metadata.FromIncomingContext(ctx)
	if v := md.Get("authorization"); len(v) > 0 {
		return strings.TrimPrefix(v[0], "Bearer ")
	}
	return ""
}

// authenticate finds the edge environment whose token the call carries.
func (s *Service) authenticate(ctx context.Context) (store.Environment, string, error) {
	tok := bearer(ctx)
	if tok == "" {
		return store.Environment{}, "", status.Error(codes.Unauthenticated, "an edge token is required")
	}
	hash := HashToken(tok)
	env, err := s.store.EnvironmentByAgentTokenHash(ctx, hash)
	if errors.Is(err, store.ErrNotFound) || (err == nil && env.ConnectionType != engine.AgentEdge) {
		return store.Environment{}, "", status.Error(codes.Unauthenticated, "invalid edge token")
	}
	if err != nil {
		s.log.Error("edge agent authentication", "err", err)
		return store.Environment{}, "", status.Error(codes.Internal, "cannot check the token now")
	}
	return env, hash, nil
}

// Connect holds one edge agent's control stream.
func (e *edgeServer) Connect(stream agentpb.EdgeService_ConnectServer) error {
	s := e.s
	ctx := stream.Context()
	remote := ""
	if p, ok := peer.FromContext(ctx); ok {
		remote = p.Addr.String()
	}
	// Storm guard: a burst of reconnects (Berth restarted, a network came
	// back) is let in at a bounded rate. An agent over the rate waits its
	// turn here rather than going back to its back-off (which would spread
	// the storm over minutes); beyond maxConnectWait it is told to retry.
	r := s.limiter.Reserve()
	if d := r.Delay(); d > maxConnectWait {
		r.Cancel()
		return status.Error(codes.ResourceExhausted, "too many agents connecting at once: retry later")
	} else if d > 0 {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			r.Cancel()
			return ctx.Err()
		}
	}
	env, hash, err := s.authenticate(ctx)
	if err != nil {
		s.log.Warn("edge agent refused", "remote", remote, "err", status.Convert(err).Message())
		return err
	}
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	hello := first.GetHello()
	if hello == nil {
		return status.Error(codes.InvalidArgument, "the first message must be hello")
	}
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	c := &edgeConn{envID: env.ID, tokenHash: hash, hello: hello, remote: remote, connectedAt: s.now(),
		stream: stream, ctx: cctx, cancel: cancel}
	c.lastSeen.Store(s.now().UnixNano())
	if err := s.register(c); err != nil {
		return err
	}
	defer s.unregister(c)

	if err := stream.Send(&agentpb.ConnectResponse{Message: &agentpb.ConnectResponse_Welcome{Welcome: &agentpb.Welcome{
		EnvironmentId: env.ID, HeartbeatIntervalMs: s.heartbeat.Milliseconds()}}}); err != nil {
		return err
	}
	// Acknowledgements and requests to open operations queued until now
	// (an operation asked for during the registration) go after the
	// welcome.
	c.start()
	// Receiver: heartbeats.
	go func() {
		for {
			m, err := stream.Recv()
			if err != nil {
				cancel(err)
				return
			}
			now := s.now()
			c.lastSeen.Store(now.UnixNano())
			if hb := m.GetHeartbeat(); hb != nil {
				c.send(&agentpb.ConnectResponse{Message: &agentpb.ConnectResponse_HeartbeatAck{
					HeartbeatAck: &agentpb.HeartbeatAck{SentUnixMs: now.UnixMilli()}}})
				s.touch(c, now)
			}
		}
	}()
	// Watchdog: a connection silent for the heartbeat window is dead, even
	// when TCP has not noticed (a cut cable, a frozen NAT entry).
	window := missedHeartbeats * s.heartbeat
	tick := time.NewTicker(s.heartbeat / 2)
	defer tick.Stop()
	for {
		select {
		case <-cctx.Done():
			cause := context.Cause(cctx)
			switch {
			case errors.Is(cause, errRotated):
				return status.Error(codes.Unauthenticated, cause.Error())
			case errors.Is(cause, io.EOF), errors.Is(cause, context.Canceled):
				return nil
			}
			return status.Error(codes.Unavailable, cause.Error())
		case now := <-tick.C:
			if !c.healthy(now, window) {
				s.lose(c, errSilent)
			}
		}
	}
}

// register makes c its environment's connection. A healthy connection of
// another agent keeps its place: the newcomer is refused, loudly, so that
// two hosts sharing a token never silently take turns. A replica also
// claims the environment's lease: another agent connected to a live replica
// refuses the newcomer the same way.
func (s *Service) register(c *edgeConn) error {
	now := s.now()
	if s.relay != nil {
		// One claim at a time per environment on this replica: the local
		// check and the lease agree.
		unlock := s.relay.lockEnv(c.envID)
		defer unlock()
	}
	s.edge.mu.Lock()
	if s.edge.closing {
		s.edge.mu.Unlock()
		return errClosing
	}
	old := s.edge.conns[c.envID]
	if old != nil && old.hello.GetAgentId() != c.hello.GetAgentId() && old.healthy(now, missedHeartbeats*s.heartbeat) {
		s.edge.mu.Unlock()
		return s.refuse(c, now, old.hello.GetAgentId(), old.hello.GetAgentName(), old.remote, "")
	}
	if s.relay == nil {
		s.edge.conns[c.envID] = c
	}
	s.edge.mu.Unlock()
	if s.relay != nil {
		held, claimed, err := s.relay.claim(c, now)
		if err != nil {
			s.log.Error("claim edge agent lease", "env", c.envID, "agent", c.hello.GetAgentId(), "err", err)
			return status.Error(codes.Unavailable, "Berth cannot record the agent's connection now: retry later")
		}
		if !claimed {
			return s.refuse(c, now, held.AgentID, held.AgentName, held.Remote, held.ReplicaID)
		}
		c.claimedAt = time.Now()
		s.edge.mu.Lock()
		if s.edge.closing {
			s.edge.mu.Unlock()
			rctx, cancel := context.WithTimeout(context.WithoutCancel(c.ctx), 5*time.Second)
			s.relay.release(rctx, c.envID)
			cancel()
			return errClosing
		}
		old = s.edge.conns[c.envID]
		s.edge.conns[c.envID] = c
		s.edge.mu.Unlock()
	}
	if old != nil {
		// The same agent coming back (its old connection half-open), or a
		// dead connection: the newcomer replaces it.
		old.cancel(errors.New("replaced by a new connection of the agent"))
	}
	if f := s.onConnect.Load(); f != nil {
		go (*f)(c.envID)
	}
	s.log.Info("edge agent connected", "env", c.envID, "agent", c.hello.GetAgentId(), "name", c.hello.GetAgentName(),
		"version", c.hello.GetAgentVersion(), "remote", c.remote)
	s.setStatus(c.envID, func(st *liveStatus) { st.lastError = "" })
	c.seenWritten.Store(now.UnixNano())
	wctx, cancel := context.WithTimeout(context.WithoutCancel(c.ctx), 5*time.Second)
	defer cancel()
	if err := s.store.SetAgentSeen(wctx, c.envID, store.AgentSeen{ID: c.hello.GetAgentId(), Name: c.hello.GetAgentName(),
		Version: c.hello.GetAgentVersion(), Capabilities: c.hello.GetCapabilities(), LastSeen: now}); err != nil {
		s.log.Warn("record edge agent", "env", c.envID, "err", err)
	}
	switch {
	case s.engines == nil:
	case s.relay != nil:
		// Idle pipes may go through the replica that held the agent
		// before (to its stale connection): they go, and the environment
		// is worth trying at once.
		s.engines.Forget(c.envID)
	default:
		s.engines.Reset(c.envID) // the environment is worth trying at once
	}
	return nil
}

// refuse answers a second agent presenting the token of an environment
// whose agent is connected and healthy (here, or through replica
// replicaID), and says so in the environment's status.
func (s *Service) refuse(c *edgeConn, now time.Time, agentID, agentName, remote, replicaID string) error {
	through := ""
	if replicaID != "" {
		through = " through replica " + replicaID
	}
	msg := fmt.Sprintf("agent %q (%s, from %s) presented the token of environment %d, whose agent %q (%s, from %s) is connected and healthy%s: refused",
		c.hello.GetAgentId(), c.hello.GetAgentName(), c.remote, c.envID, agentID, agentName, remote, through)
	s.log.Warn("second edge agent refused", "env", c.envID, "agent", c.hello.GetAgentId(), "remote", c.remote,
		"connected_agent", agentID, "connected_remote", remote, "connected_replica", replicaID)
	s.setStatus(c.envID, func(st *liveStatus) { st.lastError, st.lastErrorAt = msg, now })
	return status.Error(codes.AlreadyExists, "another agent is connected with this token; two agents cannot share one environment")
}

// unregister removes c (unless a newer connection replaced it) and records
// when its agent was last seen.
func (s *Service) unregister(c *edgeConn) {
	wctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	unlock := func() {}
	if s.relay != nil {
		// Not between another connection's claim and its registration:
		// the lease released below would be the newcomer's.
		unlock = s.relay.lockEnv(c.envID)
	}
	s.edge.mu.Lock()
	current := s.edge.conns[c.envID] == c
	if current {
		delete(s.edge.conns, c.envID)
	}
	s.edge.mu.Unlock()
	if current && s.relay != nil {
		s.relay.release(wctx, c.envID)
	}
	unlock()
	cause := context.Cause(c.ctx)
	s.log.Info("edge agent disconnected", "env", c.envID, "agent", c.hello.GetAgentId(), "remote", c.remote, "reason", cause)
	if !current {
		return
	}
	if err := s.store.TouchAgent(wctx, c.envID, time.Unix(0, c.lastSeen.Load())); err != nil && !errors.Is(err, store.ErrNotFound) {
		s.log.Warn("record edge agent", "env", c.envID, "err", err)
	}
	if s.engines != nil {
		s.engines.Forget(c.envID) // its pipes went with it
	}
}

// lose ends c for cause (no heartbeat within the window, a rotated token),
// recording why in the environment's status first: the agent shows as gone
// as soon as c ends, and a status read in between must not find it gone
// without a reason.
func (s *Service) lose(c *edgeConn, cause error) {
	if s.edge.get(c.envID) == c {
		s.setStatus(c.envID, func(st *liveStatus) { st.lastError, st.lastErrorAt = "Disconnected: "+cause.Error(), s.now() })
	}
	c.cancel(cause)
}

// touch writes the agent's last-seen time, at most every seenWriteInterval.
func (s *Service) touch(c *edgeConn, now time.Time) {
	last := time.Unix(0, c.seenWritten.Load())
	if now.Sub(last) < seenWriteInterval || !c.seenWritten.CompareAndSwap(last.UnixNano(), now.UnixNano()) {
		return
	}
	go func() {
		wctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.store.TouchAgent(wctx, c.envID, now); err != nil && !errors.Is(err, store.ErrNotFound) {
			s.log.Warn("record edge agent", "env", c.envID, "err", err)
		}
	}()
}

// operateEdge asks env's edge agent to open an operation stream and waits
// for it.
func (s *Service) operateEdge(ctx context.Context, env engine.Endpoint) (engine.AgentStream, error) {
	c := s.edge.get(env.ID)
	if c == nil || c.ctx.Err() != nil {
		return nil, engine.ErrAgentAbsent
	}
	id, err := randomID()
	if err != nil {
		return nil, err
	}
	p := &pendingOp{envID: env.ID, ch: make(chan *serveStream, 1)}
	s.edge.mu.Lock()
	s.edge.pending[id] = p
	s.edge.mu.Unlock()
	defer func() {
		s.edge.mu.Lock()
		delete(s.edge.pending, id)
		s.edge.mu.Unlock()
	}()
	if !c.send(&agentpb.ConnectResponse{Message: &agentpb.ConnectResponse_Open{Open: &agentpb.OpenOperation{OperationId: id}}}) {
		return nil, engine.ErrAgentAbsent
	}
	timer := time.NewTimer(s.openWait)
	defer timer.Stop()
	select {
	case st := <-p.ch:
		st.stopWith(ctx)
		return st, nil
	case <-c.ctx.Done():
		return nil, engine.ErrAgentAbsent
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-timer.C:
		return nil, fmt.Errorf("%w: the agent did not open the operation within %v", engine.ErrAgentLost, s.openWait)
	}
}

func randomID() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// Serve is one operation stream an edge agent opened because Berth asked.
func (e *edgeServer) Serve(stream agentpb.EdgeService_ServeServer) error {
	s := e.s
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	id := first.GetOperationId()
	s.edge.mu.Lock()
	p := s.edge.pending[id]
	delete(s.edge.pending, id)
	var c *edgeConn
	if p != nil {
		c = s.edge.conns[p.envID]
	}
	s.edge.mu.Unlock()
	if p == nil || c == nil {
		return status.Error(codes.NotFound, "no such operation (it may have timed out)")
	}
	// The stream must carry the token of the connection that was asked.
	if subtle.ConstantTimeCompare([]byte(HashToken(bearer(stream.Context()))), []byte(c.tokenHash)) != 1 {
		return status.Error(codes.Unauthenticated, "invalid edge token")
	}
	st := &serveStream{st: stream, done: make(chan struct{})}
	p.ch <- st
	select {
	case <-st.done:
		return nil
	case <-stream.Context().Done():
		return stream.Context().Err()
	case <-c.ctx.Done():
		return status.Error(codes.Unavailable, "the agent's connection ended")
	}
}

// serveStream is Berth's side of an edge operation stream (engine.AgentStream).
type serveStream struct {
	st     agentpb.EdgeService_ServeServer
	sendMu sync.Mutex
	once   sync.Once
	done   chan struct{}
}

// stopWith closes the stream when ctx ends.
func (s *serveStream) stopWith(ctx context.Context) {
	stop := context.AfterFunc(ctx, s.Close)
	go func() {
		<-s.done
		stop()
	}()
}

func (s *serveStream) Send(in *agentpb.OperationInput) error {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	select {
	case <-s.done:
		return io.ErrClosedPipe
	default:
	}
	return s.st.Send(&agentpb.ServeResponse{Input: in})
}

func (s *serveStream) Recv() (*agentpb.OperationOutput, error) {
	for {
		m, err := s.st.Recv()
		if err != nil {
			return nil, err
		}
		if out := m.GetOutput(); out != nil {
			return out, nil
		}
	}
}

// Close ends the operation: the Serve call returns, and the agent sees the
// stream end.
func (s *serveStream) Close() { s.once.Do(func() { close(s.done) }) }
