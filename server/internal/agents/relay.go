package agents

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"

	"github.com/berth-dev/berth/server/internal/replica"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/agentpb"
	"github.com/berth-dev/berth/shared/engine"
)

// Replicas (docs/scale.md): an edge agent holds one connection, to
// whichever replica the load balancer gave it. That replica holds the
// environment's lease (agent_leases), live while the replica's row is. An
// operation another replica receives is relayed to the holder over the
// holder's ReplicaService (on its agent port), authenticated by the token
// the replicas derive from their shared encryption key.

// errTakenOver ends a connection whose lease another replica claimed.
var errTakenOver = errors.New("the agent connected through another replica")

// relay is a replica's side of the leases and of the relay.
type relay struct {
	s    *Service
	reg  *replica.Registry
	leaf []byte // the agent port's certificate (DER) the other replicas present; nil: plaintext

	claimLocks [64]sync.Mutex // one claim at a time per environment (by id modulo)

	mu     sync.Mutex
	leases map[int64]store.HeldLease // live leases held by other replicas, as of the last reconcile
	conns  map[string]*relayConn     // replica id → connection to its relay
	hawser map[int64]*hawserHold     // Hawser edge agents connected here, by environment

	stop context.CancelFunc
	done chan struct{}
}

type relayConn struct {
	addr string
	cc   *grpc.ClientConn
}

func newRelay(s *Service, reg *replica.Registry, certFile string) (*relay, error) {
	r := &relay{s: s, reg: reg, leases: map[int64]store.HeldLease{}, conns: map[string]*relayConn{},
		hawser: map[int64]*hawserHold{}, done: make(chan struct{})}
	if certFile != "" {
		pemBytes, err := os.ReadFile(certFile)
		if err != nil {
			return nil, fmt.Errorf("relay certificate: %w", err)
		}
		b, _ := pem.Decode(pemBytes)
		if b == nil || b.Type != "CERTIFICATE" {
			return nil, fmt.Errorf("relay certificate: %s holds no PEM certificate", certFile)
		}
		r.leaf = b.Bytes
	}
	ctx, stop := context.WithCancel(context.Background())
	r.stop = stop
	go r.run(ctx)
	return r, nil
}

func (r *relay) close() {
	r.stop()
	<-r.done
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, c := range r.conns {
		c.cc.Close()
		delete(r.conns, id)
	}
}

func (r *relay) lockEnv(envID int64) func() {
	m := &r.claimLocks[uint64(envID)%uint64(len(r.claimLocks))]
	m.Lock()
	return m.Unlock
}

// claim claims c's environment's lease for this replica.
func (r *relay) claim(c *edgeConn, now time.Time) (store.HeldLease, bool, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.ctx), 5*time.Second)
	defer cancel()
	return r.s.store.ClaimAgentLease(ctx, store.AgentLease{EnvironmentID: c.envID, ReplicaID: r.reg.Self(),
		AgentID: c.hello.GetAgentId(), AgentName: c.hello.GetAgentName(), AgentVersion: c.hello.GetAgentVersion(),
		Capabilities: c.hello.GetCapabilities(), Remote: c.remote, ConnectedAt: c.connectedAt, ClaimedAt: r.reg.Now()})
}

// release gives up this replica's lease of envID (its agent disconnected).
func (r *relay) release(ctx context.Context, envID int64) {
	if err := r.s.store.ReleaseAgentLease(ctx, envID, r.reg.Self()); err != nil {
		r.s.log.Warn("release edge agent lease", "env", envID, "err", err)
	}
}

// drop removes envID's lease whichever replica holds it (the token was
// rotated): the holder finds its connection's token invalid at its next
// reconcile and ends it.
func (r *relay) drop(ctx context.Context, envID int64) {
	if err := r.s.store.DeleteAgentLease(ctx, envID); err != nil {
		r.s.log.Warn("drop edge agent lease", "env", envID, "err", err)
	}
	r.mu.Lock()
	delete(r.leases, envID)
	r.mu.Unlock()
}

// run reconciles every replica.RenewEvery until ctx ends.
func (r *relay) run(ctx context.Context) {
	defer close(r.done)
	tick := time.NewTicker(replica.RenewEvery)
	defer tick.Stop()
	failing := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if !r.reg.Healthy() {
			// The others take this replica for dead and its agents'
			// leases for free: the agents go and connect to a live one.
			if n := r.s.edge.count(); n > 0 {
				r.s.log.Error("this replica's row is not renewed: its edge agents are told to connect to another replica", "agents", n)
				r.s.edge.disconnectAll("this replica lost its database: connect to another one")
			}
			if n := r.endHawser(errors.New("this replica lost its database: connect to another one")); n > 0 {
				r.s.log.Error("this replica's row is not renewed: its Hawser edge agents are told to connect to another replica", "agents", n)
			}
			continue
		}
		err := r.reconcile(ctx)
		switch {
		case err != nil && ctx.Err() == nil && !failing:
			r.s.log.Error("edge agent leases cannot be read", "err", err)
			failing = true
		case err == nil && failing:
			r.s.log.Info("edge agent leases are read again")
			failing = false
		}
	}
}

// reconcile compares the leases with this replica's connections: a
// connection whose lease another replica claimed ends (the agent connected
// through it); a connection whose lease is gone is claimed again, unless its
// token is no longer valid (rotated, environment deleted); a lease another
// replica claimed since the last pass resets the environment's breaker
// (worth trying at once); and the leases of the other replicas are kept for
// Status.
func (r *relay) reconcile(ctx context.Context) error {
	read := time.Now()
	leases, err := r.s.store.AgentLeases(ctx)
	if err != nil {
		return err
	}
	self, now := r.reg.Self(), r.reg.Now()
	byEnv := make(map[int64]store.HeldLease, len(leases))
	for _, l := range leases {
		byEnv[l.EnvironmentID] = l
	}
	r.s.edge.mu.Lock()
	conns := make([]*edgeConn, 0, len(r.s.edge.conns))
	for _, c := range r.s.edge.conns {
		conns = append(conns, c)
	}
	r.s.edge.mu.Unlock()
	for _, c := range conns {
		// A connection claimed after the leases were read is not in them.
		if c.ctx.Err() != nil || !c.claimedAt.Before(read) {
			continue
		}
		switch l, ok := byEnv[c.envID]; {
		case ok && l.ReplicaID == self:
		case ok:
			r.s.log.Info("edge agent connected through another replica: ending its connection here", "env", c.envID,
				"agent", c.hello.GetAgentId(), "holder", l.ReplicaID)
			c.cancel(errTakenOver)
		default:
			r.reclaim(ctx, c)
		}
	}
	r.reconcileHawser(ctx, read, byEnv)
	live := make(map[int64]store.HeldLease)
	holders := map[string]bool{}
	for id, l := range byEnv {
		if l.ReplicaID != self && l.Live(now) {
			live[id] = l
			holders[l.ReplicaID] = true
		}
	}
	r.mu.Lock()
	prev := r.leases
	r.leases = maps.Clone(live) // live is read below, unlocked; drop deletes from r.leases
	var stale []*grpc.ClientConn
	for id, c := range r.conns {
		if !holders[id] {
			stale = append(stale, c.cc)
			delete(r.conns, id)
		}
	}
	r.mu.Unlock()
	for _, cc := range stale {
		cc.Close()
	}
	if r.s.engines != nil {
		for id, l := range live {
			switch p, ok := prev[id]; {
			case ok && p.ReplicaID != l.ReplicaID && !r.isHawser(ctx, id):
				// Idle pipes through the replica that held it before go.
				r.s.engines.Forget(id)
			case ok && p.ReplicaID != l.ReplicaID:
				// A Hawser environment keeps no pipe (one relay stream per
				// request) but its client keeps the terminals created and
				// not yet attached: it stays.
				r.s.engines.Reset(id)
			case !ok || !p.ClaimedAt.Equal(l.ClaimedAt):
				r.s.engines.Reset(id) // the agent is back, elsewhere: worth trying at once
			}
		}
	}
	return nil
}

// reclaim claims again the lease of a connection whose lease is gone (a
// replica swept it, or the token was rotated on another replica: then the
// connection ends).
func (r *relay) reclaim(ctx context.Context, c *edgeConn) {
	env, err := r.s.store.EnvironmentByAgentTokenHash(ctx, c.tokenHash)
	switch {
	case errors.Is(err, store.ErrNotFound) || (err == nil && env.ID != c.envID):
		r.s.lose(c, errRotated)
		return
	case err != nil:
		return // the next pass tries again
	}
	unlock := r.lockEnv(c.envID)
	defer unlock()
	held, claimed, err := r.claim(c, r.reg.Now())
	switch {
	case err != nil:
		r.s.log.Warn("claim edge agent lease again", "env", c.envID, "err", err)
	case !claimed:
		r.s.log.Info("edge agent connected through another replica: ending its connection here", "env", c.envID,
			"agent", c.hello.GetAgentId(), "holder", held.ReplicaID)
		c.cancel(errTakenOver)
	}
}

// remoteLease is envID's lease when another replica holds it live, as of
// the last reconcile.
func (r *relay) remoteLease(envID int64) (store.HeldLease, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	l, ok := r.leases[envID]
	return l, ok
}

// HeldElsewhere reports whether env's edge agent is connected to another
// live replica, as of the last reconcile (false for a single Berth).
func (s *Service) HeldElsewhere(envID int64) bool {
	if s.relay == nil {
		return false
	}
	_, ok := s.relay.remoteLease(envID)
	return ok
}

// conn returns the cached connection to a replica's relay.
func (r *relay) conn(rep store.Replica) (*grpc.ClientConn, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.conns[rep.ID]; ok && c.addr == rep.RelayAddr {
		return c.cc, nil
	}
	creds := insecure.NewCredentials()
	if r.leaf != nil {
		creds = credentials.NewTLS(relayTLS(r.leaf))
	}
	cc, err := grpc.NewClient(rep.RelayAddr, grpc.WithTransportCredentials(creds),
		grpc.WithPerRPCCredentials(replicaToken(r.reg.Token())),
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: 30 * time.Second, Timeout: 10 * time.Second}))
	if err != nil {
		return nil, err
	}
	if old, ok := r.conns[rep.ID]; ok {
		go old.cc.Close()
	}
	r.conns[rep.ID] = &relayConn{addr: rep.RelayAddr, cc: cc}
	return cc, nil
}

// relayTLS is the TLS configuration a replica dials another's relay with:
// the replicas share the agent port's certificate (leaf, DER), so the peer
// must present exactly it, whatever name it is reached by.
func relayTLS(leaf []byte) *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12,
		InsecureSkipVerify: true, //nolint:gosec // verified below
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			if len(raw) == 0 || !bytes.Equal(raw[0], leaf) {
				return errors.New("the replica does not present the agent port's certificate")
			}
			return nil
		}}
}

// replicaToken sends the replicas' token with every relay call (over TLS or,
// on a private network, plaintext).
type replicaToken string

func (t replicaToken) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(t)}, nil
}

func (replicaToken) RequireTransportSecurity() bool { return false }

// operate opens an operation on env's edge agent through the replica that
// holds its connection. No live lease elsewhere, an unreachable holder, or
// a holder without the agent is engine.ErrAgentAbsent (the agent is gone).
func (r *relay) operate(ctx context.Context, env engine.Endpoint) (engine.AgentStream, error) {
	st, err := r.open(ctx, false, env.ID, nil)
	if err != nil {
		return nil, err
	}
	return st, nil
}

// open opens a relay stream to envID's holder with first as its first
// input. detach: ctx bounds the opening only, not the stream (which lives
// until closed).
func (r *relay) open(ctx context.Context, detach bool, envID int64, first *agentpb.OperationInput) (*relayStream, error) {
	l, err := r.s.store.AgentLease(ctx, envID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, engine.ErrAgentAbsent
	case err != nil:
		return nil, err
	case l.ReplicaID == r.reg.Self() || !l.Live(r.reg.Now()):
		return nil, engine.ErrAgentAbsent
	}
	cc, err := r.conn(l.Holder)
	if err != nil {
		return nil, fmt.Errorf("%w: replica %s: %v", engine.ErrAgentAbsent, l.ReplicaID, err)
	}
	parent, stopOpen := ctx, func() bool { return true }
	if detach {
		parent = context.WithoutCancel(ctx)
	}
	sctx, cancel := context.WithCancel(parent)
	if detach {
		stopOpen = context.AfterFunc(ctx, cancel)
	}
	st, err := agentpb.NewReplicaServiceClient(cc).Relay(sctx)
	if err == nil {
		err = st.Send(&agentpb.RelayRequest{EnvironmentId: envID, Input: first})
	}
	if err == nil {
		_, err = st.Recv() // the holder's answer: the agent opened the operation
	}
	if err == nil && !stopOpen() {
		err = ctx.Err() // ctx ended as the stream opened
	}
	if err != nil {
		cancel()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		st, _ := status.FromError(err)
		switch st.Code() {
		case codes.Unavailable, codes.Canceled:
			return nil, fmt.Errorf("%w: through replica %s: %s", engine.ErrAgentAbsent, l.ReplicaID, st.Message())
		case codes.Aborted:
			return nil, fmt.Errorf("%w: through replica %s: %s", engine.ErrAgentLost, l.ReplicaID, st.Message())
		}
		return nil, fmt.Errorf("relay through replica %s: %w", l.ReplicaID, err)
	}
	return &relayStream{st: st, cancel: cancel}, nil
}

// relayStream is an operation relayed through another replica (engine.AgentStream).
type relayStream struct {
	st     agentpb.ReplicaService_RelayClient
	sendMu sync.Mutex
	cancel context.CancelFunc
}

func (r *relayStream) Send(in *agentpb.OperationInput) error {
	r.sendMu.Lock()
	defer r.sendMu.Unlock()
	return r.st.Send(&agentpb.RelayRequest{Input: in})
}

func (r *relayStream) Recv() (*agentpb.OperationOutput, error) {
	for {
		m, err := r.st.Recv()
		if err != nil {
			return nil, err
		}
		if out := m.GetOutput(); out != nil {
			return out, nil
		}
	}
}

func (r *relayStream) Close() { r.cancel() }

// replicaServer is the ReplicaService a replica serves the others.
type replicaServer struct {
	agentpb.UnimplementedReplicaServiceServer
	s *Service
}

// Relay opens an operation on an edge agent connected to this replica and
// pipes it both ways.
func (rs *replicaServer) Relay(stream agentpb.ReplicaService_RelayServer) error {
	s := rs.s
	ctx := stream.Context()
	if s.relay == nil || !s.relay.reg.ValidToken(bearer(ctx)) {
		return status.Error(codes.Unauthenticated, "invalid replica token")
	}
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	envID := first.GetEnvironmentId()
	if envID == 0 {
		return status.Error(codes.InvalidArgument, "the first message must name the environment")
	}
	if first.GetInput().GetEngineDial() != nil && s.hawser != nil && !s.edge.live(envID) && s.hawser.Holds(envID) {
		// A Hawser edge agent connected here: the stream is one HTTP
		// connection into its transport.
		return s.serveHawserRelay(stream, envID)
	}
	op, err := s.operateEdge(ctx, engine.Endpoint{ID: envID, ConnectionType: engine.AgentEdge})
	switch {
	case errors.Is(err, engine.ErrAgentAbsent):
		return status.Error(codes.Unavailable, "the agent is not connected to this replica")
	case errors.Is(err, engine.ErrAgentLost):
		return status.Error(codes.Aborted, err.Error())
	case err != nil:
		return status.FromContextError(err).Err()
	}
	defer op.Close()
	if in := first.GetInput(); in != nil {
		if err := op.Send(in); err != nil {
			return status.Error(codes.Aborted, err.Error())
		}
	}
	if err := stream.Send(&agentpb.RelayResponse{}); err != nil {
		return err
	}
	go func() {
		for {
			m, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				return // no more input; the outputs go on
			}
			if err != nil {
				op.Close()
				return
			}
			if in := m.GetInput(); in != nil {
				if err := op.Send(in); err != nil {
					op.Close()
					return
				}
			}
		}
	}()
	for {
		out, err := op.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return status.FromContextError(ctx.Err()).Err()
			}
			return err
		}
		if err := stream.Send(&agentpb.RelayResponse{Output: out}); err != nil {
			return err
		}
	}
}
