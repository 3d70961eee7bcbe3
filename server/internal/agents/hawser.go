package agents

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/berth-dev/berth/server/internal/hawser"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/agentpb"
	"github.com/berth-dev/berth/shared/engine"
)

// Hawser edge agents on replicas (docs/scale.md): a Hawser agent's
// WebSocket reaches one replica, which claims the environment's lease in
// agent_leases exactly as for a berth-agent. Another replica reaches the
// agent by opening a relay stream to the holder whose first input is an
// engine dial: the stream then carries the bytes of one HTTP/1.1 connection
// both ways, which the holder's hub serves into its Hawser transport.

// HawserHub is the Hawser edge hub as the relay serves it (hawser.Hub).
type HawserHub interface {
	// Holds reports whether envID's Hawser agent is connected here.
	Holds(envID int64) bool
	// ServeRelayed serves conn, an HTTP/1.1 connection relayed from
	// another replica, into envID's agent, until conn or ctx ends.
	ServeRelayed(ctx context.Context, envID int64, conn net.Conn) error
	// Held is what the hub knows of envID's agent connected here (its
	// last heartbeat, …), for the other replicas showing its status.
	Held(envID int64) (hawser.Held, bool)
}

// UseHawser makes this replica serve the Hawser edge agents connected to h
// to the other replicas. Call it before Listen.
func (s *Service) UseHawser(h HawserHub) { s.hawser = h }

// hawserHold is a Hawser edge agent's connection leased to this replica.
type hawserHold struct {
	lease     store.AgentLease
	claimedAt time.Time // local clock, after the claim committed
	end       func(cause error)
	valid     func(ctx context.Context) (bool, error)
}

// Hawser agents' refusals (the messages of the gRPC path's).
var (
	errHawserShared = errors.New("another agent is connected with this token; two agents cannot share one environment")
	//lint:ignore ST1005 the message agents show
	errHawserUnrecorded = errors.New("Berth cannot record the agent's connection now: retry later")
)

// HoldHawser claims the lease of l.EnvironmentID for a Hawser edge agent
// connecting to this replica (l: what the agent told in its hello). While it
// is held, the relay ends the connection with end when another replica
// claims the lease (the agent came back through it), and claims it again
// when it is gone, unless valid says the agent's token is no longer valid.
// Another agent connected here or to a live replica is refused with the
// gRPC path's message. release gives the lease up (the agent disconnected).
// A single Berth claims nothing.
func (s *Service) HoldHawser(ctx context.Context, l store.AgentLease, end func(error), valid func(context.Context) (bool, error)) (release func(), err error) {
	r := s.relay
	if r == nil {
		return func() {}, nil
	}
	envID := l.EnvironmentID
	unlock := r.lockEnv(envID)
	defer unlock()
	r.mu.Lock()
	cur := r.hawser[envID]
	r.mu.Unlock()
	if cur != nil && cur.lease.AgentID != l.AgentID {
		s.log.Warn("second Hawser edge agent refused", "env", envID, "agent", l.AgentID, "remote", l.Remote,
			"connected_agent", cur.lease.AgentID, "connected_remote", cur.lease.Remote)
		return nil, errHawserShared
	}
	l.ReplicaID, l.ClaimedAt = r.reg.Self(), r.reg.Now()
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	held, claimed, err := s.store.ClaimAgentLease(cctx, l)
	if err != nil {
		s.log.Error("claim Hawser edge agent lease", "env", envID, "agent", l.AgentID, "err", err)
		return nil, errHawserUnrecorded
	}
	if !claimed {
		s.log.Warn("second Hawser edge agent refused", "env", envID, "agent", l.AgentID, "remote", l.Remote,
			"connected_agent", held.AgentID, "connected_remote", held.Remote, "connected_replica", held.ReplicaID)
		return nil, errHawserShared
	}
	h := &hawserHold{lease: l, claimedAt: time.Now(), end: end, valid: valid}
	r.mu.Lock()
	old := r.hawser[envID]
	r.hawser[envID] = h
	delete(r.leases, envID)
	r.mu.Unlock()
	if old != nil {
		// The same agent came back here while its old connection lingers.
		old.end(errors.New("replaced by a new connection of the agent"))
	}
	return func() {
		unlock := r.lockEnv(envID)
		defer unlock()
		r.mu.Lock()
		current := r.hawser[envID] == h
		if current {
			delete(r.hawser, envID)
		}
		r.mu.Unlock()
		if current {
			rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			r.release(rctx, envID)
		}
	}, nil
}

// DropHawser removes envID's lease whichever replica holds it (its token
// was replaced or revoked, or the environment changed): the holder checks
// the agent's token at its next reconcile and ends the connection.
func (s *Service) DropHawser(ctx context.Context, envID int64) {
	if s.relay != nil {
		s.relay.drop(ctx, envID)
	}
}

// HawserElsewhere is envID's lease when another live replica holds its
// Hawser agent, as of the last reconcile.
func (s *Service) HawserElsewhere(envID int64) (store.AgentLease, bool) {
	if s.relay == nil {
		return store.AgentLease{}, false
	}
	l, ok := s.relay.remoteLease(envID)
	return l.AgentLease, ok
}

// DialHawser opens an HTTP/1.1 connection to envID's Hawser agent through
// the replica holding it. ctx bounds the dial only. No live holder is
// engine.ErrAgentAbsent.
func (s *Service) DialHawser(ctx context.Context, envID int64) (net.Conn, error) {
	if s.relay == nil {
		return nil, engine.ErrAgentAbsent
	}
	st, err := s.relay.open(ctx, true, envID,
		&agentpb.OperationInput{Input: &agentpb.OperationInput_EngineDial{EngineDial: &agentpb.EngineDial{}}})
	if err != nil {
		return nil, err
	}
	return newByteConn(func() ([]byte, error) {
		out, err := st.Recv()
		if err != nil {
			return nil, err
		}
		if e := out.GetError(); e != nil {
			return nil, fmt.Errorf("%w: %s", engine.ErrAgentLost, e.GetMessage())
		}
		return out.GetEngineData(), nil
	}, func(b []byte) error {
		return st.Send(&agentpb.OperationInput{Input: &agentpb.OperationInput_EngineData{EngineData: b}})
	}, st.Close), nil
}

// serveHawserRelay serves a relay stream whose first input is an engine
// dial on a Hawser edge environment held here.
func (s *Service) serveHawserRelay(stream agentpb.ReplicaService_RelayServer, envID int64) error {
	if s.hawser == nil || !s.hawser.Holds(envID) {
		return status.Error(codes.Unavailable, "the agent is not connected to this replica")
	}
	if err := stream.Send(&agentpb.RelayResponse{}); err != nil {
		return err
	}
	conn := newByteConn(func() ([]byte, error) {
		m, err := stream.Recv()
		if err != nil {
			return nil, err
		}
		if m.GetInput().GetCloseInput() != nil {
			return nil, io.EOF
		}
		return m.GetInput().GetEngineData(), nil
	}, func(b []byte) error {
		return stream.Send(&agentpb.RelayResponse{Output: &agentpb.OperationOutput{
			Output: &agentpb.OperationOutput_EngineData{EngineData: b}}})
	}, func() {})
	defer conn.Close()
	if err := s.hawser.ServeRelayed(stream.Context(), envID, conn); err != nil && stream.Context().Err() == nil {
		s.log.Debug("relayed Hawser connection", "env", envID, "err", err)
	}
	return nil
}

// reconcileHawser is reconcile for the Hawser agents held here: a lease
// another replica claimed ends the connection; a lease gone is claimed
// again while the agent's token is valid.
func (r *relay) reconcileHawser(ctx context.Context, read time.Time, byEnv map[int64]store.HeldLease) {
	r.mu.Lock()
	holds := make([]*hawserHold, 0, len(r.hawser))
	for _, h := range r.hawser {
		holds = append(holds, h)
	}
	r.mu.Unlock()
	self := r.reg.Self()
	for _, h := range holds {
		if !h.claimedAt.Before(read) {
			continue // claimed after the leases were read
		}
		envID := h.lease.EnvironmentID
		switch l, ok := byEnv[envID]; {
		case ok && l.ReplicaID == self:
		case ok:
			r.s.log.Info("Hawser edge agent connected through another replica: ending its connection here", "env", envID,
				"agent", h.lease.AgentID, "holder", l.ReplicaID)
			h.end(errTakenOver)
		default:
			r.reclaimHawser(ctx, h)
		}
	}
}

func (r *relay) reclaimHawser(ctx context.Context, h *hawserHold) {
	envID := h.lease.EnvironmentID
	ok, err := h.valid(ctx)
	switch {
	case err != nil:
		return // the next pass tries again
	case !ok:
		h.end(errRotated)
		return
	}
	unlock := r.lockEnv(envID)
	defer unlock()
	r.mu.Lock()
	current := r.hawser[envID] == h
	r.mu.Unlock()
	if !current {
		return
	}
	l := h.lease
	l.ClaimedAt = r.reg.Now()
	held, claimed, err := r.s.store.ClaimAgentLease(ctx, l)
	switch {
	case err != nil:
		r.s.log.Warn("claim Hawser edge agent lease again", "env", envID, "err", err)
	case !claimed:
		r.s.log.Info("Hawser edge agent connected through another replica: ending its connection here", "env", envID,
			"agent", h.lease.AgentID, "holder", held.ReplicaID)
		h.end(errTakenOver)
	}
}

// isHawser reports whether envID is a Hawser edge environment (asked
// when its lease moved between two other replicas, which is rare).
func (r *relay) isHawser(ctx context.Context, envID int64) bool {
	if r.s.hawser == nil {
		return false
	}
	env, err := r.s.store.GetEnvironment(ctx, envID)
	return err == nil && env.ConnectionType == engine.HawserEdge
}

// endHawser ends every Hawser agent connection held here (this replica
// lost its database).
func (r *relay) endHawser(cause error) int {
	r.mu.Lock()
	holds := make([]*hawserHold, 0, len(r.hawser))
	for _, h := range r.hawser {
		holds = append(holds, h)
	}
	r.mu.Unlock()
	for _, h := range holds {
		h.end(cause)
	}
	return len(holds)
}

// byteConn is a net.Conn over a relay stream that carries bytes: recv
// returns the next received bytes (nil to skip a message, io.EOF at the
// end), send sends some, stop ends the stream. Deadlines are accepted and
// ignored: the stream's context bounds it.
type byteConn struct {
	send func([]byte) error
	stop func()

	sendMu  sync.Mutex
	data    chan []byte
	ended   chan struct{} // closed when recv failed; err says how
	err     error
	pending []byte

	closeOnce sync.Once
	closed    chan struct{}
}

// relayChunk is the largest message a byteConn sends.
const relayChunk = 32 << 10

func newByteConn(recv func() ([]byte, error), send func([]byte) error, stop func()) *byteConn {
	c := &byteConn{send: send, stop: stop, data: make(chan []byte, 16), ended: make(chan struct{}), closed: make(chan struct{})}
	go func() {
		defer close(c.ended)
		for {
			b, err := recv()
			if err != nil {
				c.err = err
				if status.Code(err) == codes.OK || errors.Is(err, io.EOF) {
					c.err = io.EOF
				}
				return
			}
			if len(b) == 0 {
				continue
			}
			select {
			case c.data <- b:
			case <-c.closed:
				c.err = net.ErrClosed
				return
			}
		}
	}()
	return c
}

func (c *byteConn) Read(p []byte) (int, error) {
	if len(c.pending) == 0 {
		select {
		case b := <-c.data:
			c.pending = b
		case <-c.closed:
			return 0, net.ErrClosed
		case <-c.ended:
			select {
			case b := <-c.data:
				c.pending = b
			default:
				return 0, c.err
			}
		}
	}
	n := copy(p, c.pending)
	c.pending = c.pending[n:]
	return n, nil
}

func (c *byteConn) Write(p []byte) (int, error) {
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	select {
	case <-c.closed:
		return 0, net.ErrClosed
	default:
	}
	written := 0
	for len(p) > 0 {
		n := min(len(p), relayChunk)
		if err := c.send(append([]byte(nil), p[:n]...)); err != nil {
			return written, fmt.Errorf("%w: relay: %v", engine.ErrAgentLost, err)
		}
		written += n
		p = p[n:]
	}
	return written, nil
}

func (c *byteConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		c.stop()
	})
	return nil
}

func (c *byteConn) LocalAddr() net.Addr              { return relayAddr{} }
func (c *byteConn) RemoteAddr() net.Addr             { return relayAddr{} }
func (c *byteConn) SetDeadline(time.Time) error      { return nil }
func (c *byteConn) SetReadDeadline(time.Time) error  { return nil }
func (c *byteConn) SetWriteDeadline(time.Time) error { return nil }

// relayAddr is the address of both ends of a relayed connection.
type relayAddr struct{}

func (relayAddr) Network() string { return "berth-relay" }
func (relayAddr) String() string  { return "berth-relay" }
