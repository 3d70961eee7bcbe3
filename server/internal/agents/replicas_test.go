package agents_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/berth-dev/berth/server/internal/apitest"
	"github.com/berth-dev/berth/server/internal/replica"
	"github.com/berth-dev/berth/server/internal/secret"
	"github.com/berth-dev/berth/server/internal/store/storetest"
	"github.com/berth-dev/berth/shared/agentpb"
	"github.com/berth-dev/berth/shared/enginetest"
)

// startReplica serves a Berth that is one replica of those sharing the
// PostgreSQL database at dbURL and the encryption key key.
func startReplica(t *testing.T, name, dbURL string, key []byte) *berth {
	t.Helper()
	enginetest.Require(t)
	box, err := secret.New(key)
	if err != nil {
		t.Fatal(err)
	}
	logs := &apitest.LockedBuffer{}
	o := apitest.Options{DBPath: dbURL, DataDir: t.TempDir(), Box: box, ReplicaHost: "127.0.0.1", ReplicaKey: key,
		Log: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})).With("replica", name)}
	h := &berth{t: t, http: &http.Client{Timeout: 120 * time.Second}, logs: logs, opts: o, label: randomLabel()}
	h.start()
	t.Cleanup(func() {
		if h.b != nil {
			h.b.Close()
		}
		if t.Failed() {
			t.Logf("%s log:\n%s", name, logs.String())
		}
	})
	return h
}

// stop stops a replica for good (its row and leases go with it).
func (h *berth) stop() {
	h.b.Close()
	h.b = nil
}

// balancer is a TCP load balancer in front of the replicas' agent ports: a
// connection goes to the first backend that accepts it.
type balancer struct {
	t        *testing.T
	ln       net.Listener
	mu       sync.Mutex
	backends []string
	clients  []net.Conn
	servers  []net.Conn
	cutting  bool
}

func newBalancer(t *testing.T, backends ...string) *balancer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &balancer{t: t, ln: ln, backends: backends}
	go b.serve()
	t.Cleanup(func() {
		ln.Close()
		b.mu.Lock()
		defer b.mu.Unlock()
		for _, c := range append(b.clients, b.servers...) {
			c.Close()
		}
	})
	return b
}

func (b *balancer) url() string { return "http://" + b.ln.Addr().String() }

func (b *balancer) setBackends(backends ...string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.backends = backends
}

func (b *balancer) serve() {
	for {
		c, err := b.ln.Accept()
		if err != nil {
			return
		}
		go b.forward(c)
	}
}

func (b *balancer) forward(c net.Conn) {
	b.mu.Lock()
	backends := slices.Clone(b.backends)
	b.mu.Unlock()
	var s net.Conn
	for _, addr := range backends {
		var err error
		if s, err = net.DialTimeout("tcp", addr, time.Second); err == nil {
			break
		}
	}
	if s == nil {
		c.Close()
		return
	}
	b.mu.Lock()
	b.clients, b.servers = append(b.clients, c), append(b.servers, s)
	b.mu.Unlock()
	go func() {
		_, _ = io.Copy(s, c)
		b.mu.Lock()
		keep := b.cutting
		b.mu.Unlock()
		if !keep {
			s.Close()
		}
	}()
	_, _ = io.Copy(c, s)
	c.Close()
}

// cutClients closes the agents' side of every connection and leaves the
// replicas' side open: to the replica the agent's connection is half-open
// (a NAT entry that vanished), until its heartbeat watchdog notices.
func (b *balancer) cutClients() {
	b.mu.Lock()
	b.cutting = true
	clients := b.clients
	b.clients = nil
	b.mu.Unlock()
	for _, c := range clients {
		c.Close()
	}
}

// connected returns how many edge agents hold a connection to h itself.
func (h *berth) connected() int { return h.b.Agents.Connected() }

// containerCount lists env's containers through h.
func (h *berth) containerCount(env int64) int {
	h.t.Helper()
	var list []struct{ ID string }
	h.must(200, "GET", fmt.Sprintf("/api/containers?env=%d&all=true", env), nil, &list)
	return len(list)
}

// rawConnect opens an EdgeService.Connect to addr with token as agent
// agentID and returns the answer to its hello (nil: welcomed).
func rawConnect(t *testing.T, addr, token, agentID string) error {
	t.Helper()
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ctx, cancel := context.WithTimeout(metadata.AppendToOutgoingContext(t.Context(), "authorization", "Bearer "+token), 30*time.Second)
	defer cancel()
	st, err := agentpb.NewEdgeServiceClient(cc).Connect(ctx)
	if err != nil {
		return err
	}
	if err := st.Send(&agentpb.ConnectRequest{Message: &agentpb.ConnectRequest_Hello{Hello: &agentpb.Hello{
		AgentId: agentID, AgentName: "intruder", AgentVersion: "dev"}}}); err != nil {
		return err
	}
	m, err := st.Recv()
	if err != nil {
		return err
	}
	if m.GetWelcome() == nil {
		return fmt.Errorf("first answer %v is not a welcome", m)
	}
	return nil
}

// relayInfo calls ReplicaService.Relay at addr with token for env and asks
// the agent's info; it returns the agent id, or the call's error.
func relayInfo(t *testing.T, addr, token string, env int64) (string, error) {
	t.Helper()
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ctx := t.Context()
	if token != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	st, err := agentpb.NewReplicaServiceClient(cc).Relay(ctx)
	if err != nil {
		return "", err
	}
	if err := st.Send(&agentpb.RelayRequest{EnvironmentId: env, Input: &agentpb.OperationInput{
		Input: &agentpb.OperationInput_Info{Info: &agentpb.InfoRequest{}}}}); err != nil && !errors.Is(err, io.EOF) {
		return "", err
	} // io.EOF: the call ended; Recv says how
	for {
		m, err := st.Recv()
		if err != nil {
			return "", err
		}
		if info := m.GetOutput().GetInfo(); info != nil {
			return info.GetAgentId(), nil
		}
	}
}

// heldStatus calls ReplicaService.AgentStatus at addr with token for envs.
func heldStatus(t *testing.T, addr, token string, envs ...int64) ([]*agentpb.HeldAgentStatus, error) {
	t.Helper()
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ctx := t.Context()
	if token != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	res, err := agentpb.NewReplicaServiceClient(cc).AgentStatus(ctx, &agentpb.AgentStatusRequest{EnvironmentIds: envs})
	return res.GetAgents(), err
}

// TestReplicasShareEdgeAgents runs two replicas of one PostgreSQL database
// with one edge agent (on the second engine) behind a load balancer:
// operations through the replica without the agent are relayed, its last
// seen there is the holder's (asked of it, the replicas' token required), one agent
// per token whichever replica it dials, the agent coming back through the
// other replica moves its lease there, and a replica that stops hands its
// agent over.
func TestReplicasShareEdgeAgents(t *testing.T) {
	socket := engine2(t)
	dbURL := storetest.PostgresDatabase(t)
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	a := startReplica(t, "A", dbURL, key)
	b := startReplica(t, "B", dbURL, key)
	t.Cleanup(func() { removeLabelled(t, socket, a.label); removeLabelled(t, socket, b.label) })
	agentAddr := func(h *berth) string { return strings.TrimPrefix(h.b.AgentURL, "http://") }
	lb := newBalancer(t, agentAddr(a), agentAddr(b))

	edge, in := a.createEdge("edge-" + a.label)
	ag := runAgent(t, socket, "--server", lb.url(), "--token", in.Token, "--name", "edge-replicas",
		"--reconnect-min", "100ms", "--reconnect-max", "1s")
	e := a.waitConnected(edge.ID, true)
	agentID := *e.AgentID
	if a.connected() != 1 || b.connected() != 0 {
		t.Fatalf("connections: A %d, B %d; want the agent on A", a.connected(), b.connected())
	}

	t.Run("an operation through the other replica is relayed", func(t *testing.T) {
		// B learns of the lease at its next reconcile.
		e := b.waitConnected(edge.ID, true)
		if e.AgentID == nil || *e.AgentID != agentID {
			t.Fatalf("B's status of the agent: %+v", e)
		}
		id := createContainer(t, b, edge.ID, "relay-"+b.label, false, "true")
		if !slices.Contains(labelled(t, socket, b.label), id) {
			t.Fatal("the container B created is not on the agent's engine")
		}
		var list []struct{ ID string }
		b.must(200, "GET", fmt.Sprintf("/api/containers?env=%d&all=true", edge.ID), nil, &list)
		if !slices.ContainsFunc(list, func(c struct{ ID string }) bool { return c.ID == id }) {
			t.Fatalf("B's container list through the relay misses %s: %v", id, list)
		}
		execRoundTrip(t, b, edge.ID)
		if a.connected() != 1 || b.connected() != 0 {
			t.Fatalf("connections: A %d, B %d; the agent moved", a.connected(), b.connected())
		}
	})

	t.Run("the agent's last seen through the other replica is the holder's", func(t *testing.T) {
		// The lease says when the agent connected; B asks A, which holds
		// it, when it last heard from it (its heartbeats are A's alone).
		lastSeen := func(h *berth) (seen, since time.Time) {
			st := h.in(t).environment(edge.ID).AgentStatus
			if st == nil || st.LastSeen == nil || st.ConnectedSince == nil {
				return time.Time{}, time.Time{}
			}
			return *st.LastSeen, *st.ConnectedSince
		}
		first, _ := lastSeen(a)
		var onA, onB, since time.Time
		waitFor(t, "B's last seen of the agent is A's, after the agent's next heartbeat", func() bool {
			before, _ := lastSeen(a)
			onB, since = lastSeen(b)
			onA, _ = lastSeen(a)
			return before.Equal(onA) && onB.Equal(onA) && onA.After(first)
		})
		if !onB.After(since) {
			t.Fatalf("B's last seen %v is not after the agent's connection %v", onB, since)
		}
		e := b.environment(edge.ID)
		if seen, err := time.Parse(time.RFC3339Nano, deref(e.AgentLastSeen)); err != nil || seen.Before(onA) {
			t.Errorf("B's agentLastSeen %q, want A's last seen %v or later", deref(e.AgentLastSeen), onA)
		}
		// One code path with Hawser agents: B's in-process figure agrees.
		if st := b.b.Agents.Status(t.Context(), edge.ID, "agent-edge"); st.LastSeenFromLease || st.LastSeen == nil || st.LastSeen.Before(onA) {
			t.Errorf("B's status: %+v, want A's last seen (%v) or later", st, onA)
		}
	})

	t.Run("the relay wants the replicas' token", func(t *testing.T) {
		for _, tok := range []string{"", "wrong", replica.DeriveToken([]byte("another key of thirty-two bytes!"))} {
			if _, err := relayInfo(t, agentAddr(a), tok, edge.ID); status.Code(err) != codes.Unauthenticated {
				t.Errorf("relay with token %q: %v, want Unauthenticated", tok, err)
			}
		}
		id, err := relayInfo(t, agentAddr(a), replica.DeriveToken(key), edge.ID)
		if err != nil || id != agentID {
			t.Fatalf("relay with the token: %q, %v; want agent %s", id, err, agentID)
		}
		// B does not hold the agent: it does not pretend to.
		if _, err := relayInfo(t, agentAddr(b), replica.DeriveToken(key), edge.ID); status.Code(err) != codes.Unavailable {
			t.Errorf("relay to the replica without the agent: %v, want Unavailable", err)
		}
		// The agents' status is the replicas' too.
		for _, tok := range []string{"", "wrong"} {
			if _, err := heldStatus(t, agentAddr(a), tok, edge.ID); status.Code(err) != codes.Unauthenticated {
				t.Errorf("agent status with token %q: %v, want Unauthenticated", tok, err)
			}
		}
		if got, err := heldStatus(t, agentAddr(a), replica.DeriveToken(key), edge.ID, edge.ID+1000); err != nil ||
			len(got) != 1 || got[0].GetEnvironmentId() != edge.ID || got[0].GetLastSeenUnixNano() == 0 {
			t.Errorf("agent status from A: %v, %v; want its agent's alone", got, err)
		}
		if got, err := heldStatus(t, agentAddr(b), replica.DeriveToken(key), edge.ID); err != nil || len(got) != 0 {
			t.Errorf("agent status from B, which does not hold the agent: %v, %v; want none", got, err)
		}
	})

	t.Run("a second agent is refused whichever replica it dials", func(t *testing.T) {
		for _, h := range []*berth{b, a} {
			if err := rawConnect(t, agentAddr(h), in.Token, "another-agent"); status.Code(err) != codes.AlreadyExists {
				t.Fatalf("second agent at %s: %v, want AlreadyExists", h.b.AgentURL, err)
			}
		}
		st := b.environment(edge.ID).AgentStatus
		if st == nil || !st.Connected || st.LastError == nil || !strings.Contains(*st.LastError, "another-agent") {
			t.Fatalf("B's status after the refusal: %+v", st)
		}
		if a.connected() != 1 {
			t.Fatal("the first agent lost its connection")
		}
	})

	t.Run("the agent coming back through the other replica moves there", func(t *testing.T) {
		// The agent's connection to A is cut on its side only (A still
		// holds it, half-open); it reconnects, now through B.
		lb.setBackends(agentAddr(b), agentAddr(a))
		lb.cutClients()
		waitFor(t, "the agent on B and A's stale connection ended", func() bool {
			return b.connected() == 1 && a.connected() == 0
		})
		// Both serve it: B from its own connection (its pipes through A
		// went), A through B.
		for _, h := range []*berth{b, a} {
			if n := h.containerCount(edge.ID); n == 0 {
				t.Fatalf("%s lists no container on the agent's engine", h.b.AgentURL)
			}
		}
		execRoundTrip(t, a, edge.ID)
		e := a.waitConnected(edge.ID, true)
		if e.AgentID == nil || *e.AgentID != agentID {
			t.Fatalf("A's status of the agent: %+v", e)
		}
	})

	t.Run("a replica that stops hands its agent over", func(t *testing.T) {
		b.stop()
		waitFor(t, "the agent back on A", func() bool { return a.connected() == 1 })
		if n := a.containerCount(edge.ID); n == 0 {
			t.Fatal("A lists no container on the agent's engine")
		}
		var leases int
		if err := a.b.Store.DB().QueryRow("SELECT count(*) FROM agent_leases WHERE replica_id = $1", a.b.Replica.Self()).Scan(&leases); err != nil || leases != 1 {
			t.Fatalf("A's leases: %d, %v", leases, err)
		}
	})
	if t.Failed() {
		t.Logf("agent output:\n%s", ag.out.String())
	}
}
