package agents_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/berth-dev/berth/server/internal/containers"
	"github.com/berth-dev/berth/server/internal/servertest"
	"github.com/berth-dev/berth/server/internal/store/storetest"
	"github.com/berth-dev/berth/shared/enginetest"
)

// hawserShared is the refusal of a second agent with an environment's token
// (the gRPC path's message).
const hawserShared = "another agent is connected with this token; two agents cannot share one environment"

// hawserHeldBy reports whether h's hub holds env's Hawser agent connection.
func hawserHeldBy(h *berth, env int64) bool {
	_, ok := h.b.Hawser.Connections()[env]
	return ok
}

// TestHawserEdgeAgentServedFromAnyReplica runs three replicas of one
// PostgreSQL database with one Hawser edge agent (on the second engine)
// connected to A: a second agent with its token is refused whichever
// replica it reaches, operations through B reach the agent (list, inspect,
// logs follow, a terminal, its pushed host metrics, a pull), its last
// heartbeat through B and C follows its pings to A, A stopped → the agent reconnects to B and is served through B and
// C, the same agent coming back through C takes the lease over, and its
// token revoked through B ends its connection to C.
func TestHawserEdgeAgentServedFromAnyReplica(t *testing.T) {
	socket := engine2(t)
	dbURL := storetest.PostgresDatabase(t)
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	a := startReplica(t, "A", dbURL, key)
	b := startReplica(t, "B", dbURL, key)
	c := startReplica(t, "C", dbURL, key)
	t.Cleanup(func() {
		for _, h := range []*berth{a, b, c} {
			removeLabelled(t, socket, h.label)
		}
	})
	env, tok := a.createHawserEdge("hawser-replicas-" + a.label)
	const agentID = "hawser-replicas"
	first, err := hawserHelloAs(t, a.url, socket, tok.Token, agentID)
	if err != nil {
		t.Fatal(err)
	}
	a.waitConnected(env.ID, true)
	var id string
	top := t // agents that outlive the step that connects them

	t.Run("a second agent with the token is refused whichever replica it reaches", func(t *testing.T) {
		for _, h := range []*berth{b, c, a} {
			_, err := hawserHelloAs(t, h.url, socket, tok.Token, "another-hawser")
			if err == nil || err.Error() != hawserShared {
				t.Fatalf("second agent through %s: %v, want %q", h.url, err, hawserShared)
			}
		}
		if first.ended(0) || !hawserHeldBy(a, env.ID) {
			t.Fatal("the first agent lost its connection")
		}
	})

	t.Run("operations through another replica reach the agent", func(t *testing.T) {
		// B learns of the lease at its next reconcile.
		e := b.waitConnected(env.ID, true)
		if e.AgentID == nil || *e.AgentID != agentID {
			t.Fatalf("B's status of the agent: %+v", e)
		}
		// B lists the agent A holds among the connected Hawser agents.
		var conns struct {
			ActiveConnections int
			Connections       []struct {
				EnvironmentID int64
				AgentID       string
			}
		}
		b.must(200, "GET", "/api/hawser/connect", nil, &conns)
		if len(conns.Connections) != 1 || conns.ActiveConnections != 1 || conns.Connections[0].EnvironmentID != env.ID ||
			conns.Connections[0].AgentID != agentID {
			t.Fatalf("GET /api/hawser/connect through B = %+v, want the agent A holds", conns)
		}
		id = createContainer(t, b, env.ID, "hawser-relay-"+b.label, true, "sleep", "3600")
		if !slices.Contains(labelled(t, socket, b.label), id) {
			t.Fatal("the container B created is not on the agent's engine")
		}
		listShows(t, b, env.ID, id)
		if st := containerState(t, b, env.ID, id); st != "running" {
			t.Fatalf("inspect through B: state %q, want running", st)
		}
		logsStream(t, b, env.ID)
		execRoundTrip(t, b, env.ID)
		// The host metrics the agent pushed to A, read through B.
		st, err := b.b.Store.GetEnvironment(t.Context(), env.ID)
		if err != nil {
			t.Fatal(err)
		}
		ec, err := b.b.Engines.Client(t.Context(), st.Endpoint())
		if err != nil {
			t.Fatal(err)
		}
		if m, err := ec.HostMetrics(t.Context()); err != nil || m.CPUPercent != 25 || m.MemoryTotal != 8<<30 {
			t.Errorf("host metrics through B = %+v, %v; want the pushed sample (25 %%, 8 GiB)", m, err)
		}
		// A pull through B (its progress relayed), its job followed through C.
		regHost, regUser, regPassword := registry(t)
		repo, tag := fmt.Sprintf("%s/berth-test/hawser-replicas-%s", regHost, a.label), strconv.FormatInt(env.ID, 10)
		ref := repo + ":" + tag
		enginetest.Must(t, 201, "POST", "/images/"+url.PathEscape(enginetest.Image())+"/tag?repo="+url.QueryEscape(repo)+"&tag="+tag,
			nil, nil, nil)
		t.Cleanup(func() { enginetest.Do(t, "DELETE", "/images/"+url.PathEscape(ref), nil, nil) })
		enginetest.Push(t, ref, regUser, regPassword)
		t.Cleanup(func() { dockerAt(socket, "rmi", "-f", ref) })
		addRegistry(t, b, regHost, regUser, regPassword)
		pullAcross(t, b, c, socket, env.ID, ref)
		if !hawserHeldBy(a, env.ID) || hawserHeldBy(b, env.ID) {
			t.Fatal("the agent's connection moved")
		}
	})

	t.Run("the agent's last heartbeat through another replica is the holder's", func(t *testing.T) {
		// The lease says when the agent connected; B asks A, which holds
		// the agent, when it last heard from it: each ping of the agent
		// moves B's figure on, past the connection time.
		for i := range 2 {
			sent := time.Now()
			first.ping()
			var conn hawserConnection
			waitFor(t, fmt.Sprintf("B shows the agent's ping %d as its last heartbeat", i+1), func() bool {
				var ok bool
				conn, ok = hawserConnectionOf(t, b, env.ID)
				return ok && conn.LastHeartbeat != nil && !conn.LastHeartbeat.Before(sent)
			})
			if conn.ConnectedAt == nil || !conn.LastHeartbeat.After(*conn.ConnectedAt) {
				t.Fatalf("B's last heartbeat %v is not after the agent's connection %v", conn.LastHeartbeat, conn.ConnectedAt)
			}
			// What the agent's hello told A and its lease does not keep.
			if conn.DockerVersion != "test" || conn.Hostname == "" {
				t.Errorf("B's docker version and host name of the agent: %q, %q; want the hello's", conn.DockerVersion, conn.Hostname)
			}
		}
		sent := time.Now()
		first.ping()
		waitFor(t, "the environment through B and C shows the agent's last ping", func() bool {
			for _, h := range []*berth{b, c} {
				seen, err := time.Parse(time.RFC3339Nano, deref(h.environment(env.ID).AgentLastSeen))
				if err != nil || seen.Before(sent) {
					return false
				}
			}
			// The environments list asks A once for every agent it holds.
			var list []environment
			c.must(200, "GET", "/api/environments", nil, &list)
			for _, e := range list {
				if e.ID == env.ID {
					seen, err := time.Parse(time.RFC3339Nano, deref(e.AgentLastSeen))
					return err == nil && !seen.Before(sent)
				}
			}
			return false
		})
		// The container events the agent pushed to A.
		if st := b.b.Hawser.Status(t.Context(), env.ID); st.ContainerEvents < 1 || st.FromLease {
			t.Errorf("B's status of the agent: %+v, want A's count of its container events", st)
		}
	})

	t.Run("a terminal created through one replica is attached through another, once, by its creator", func(t *testing.T) {
		// Created through the holder, sized before the attach through C,
		// attached through B; then created through B, sized through A,
		// attached through C (neither holds the agent).
		hawserTerminalAcross(t, a, b, c, env.ID)
		hawserTerminalAcross(t, b, c, a, env.ID)
		// A standard Hawser agent's exec is its engine's: any replica
		// attaches it as for a direct engine.
		const token = "hawser-standard-replicas-0123456789"
		port, _ := hawserStandardAgent(t, socket, token)
		var std environment
		a.in(t).must(201, "POST", "/api/environments", map[string]any{"name": "hawser-std-" + a.label,
			"connectionType": "hawser-standard", "host": "127.0.0.1", "port": port, "hawserToken": token}, &std)
		execAcross(t, a, b, std.ID)
	})

	var onB *hawserEdgeAgent
	t.Run("the replica holding the agent stops: it reconnects to another and is served through it", func(t *testing.T) {
		if id == "" {
			t.Fatal("the operations step made no container: this step needs one")
		}
		stopped := time.Now()
		a.stop()
		if !first.ended(time.Minute) {
			t.Fatal("A stopped and the agent's WebSocket is still open")
		}
		ended := time.Now()
		// Hawser retries its WebSocket; the load balancer now gives it B.
		waitFor(t, "the agent reconnected through B", func() bool {
			var err error
			onB, err = hawserHelloAs(top, b.url, socket, tok.Token, agentID)
			return err == nil
		})
		waitFor(t, "the agent served through B and C", func() bool { return lists(b, env.ID, id) && lists(c, env.ID, id) })
		t.Logf("A stopped → its WebSocket closed after %v; → the agent served through B and C %v later",
			ended.Sub(stopped).Round(time.Millisecond), time.Since(ended).Round(time.Millisecond))
		if st := containerState(t, c, env.ID, id); st != "running" {
			t.Fatalf("inspect through C: state %q, want running", st)
		}
		execRoundTrip(t, c, env.ID)
	})

	t.Run("the same agent coming back through another replica takes the lease over", func(t *testing.T) {
		if onB == nil {
			t.Fatal("the agent did not reconnect through B in the step before: this step needs it")
		}
		// Its connection to B is still open (half-open, as far as B knows).
		onC, err := hawserHelloAs(top, c.url, socket, tok.Token, agentID)
		if err != nil {
			t.Fatalf("the same agent through C: %v", err)
		}
		if !onB.ended(time.Minute) {
			t.Fatal("B kept the agent's old connection")
		}
		waitFor(t, "the agent served through B from C", func() bool { return lists(b, env.ID, id) })
		if !hawserHeldBy(c, env.ID) || hawserHeldBy(b, env.ID) || onC.ended(0) {
			t.Fatal("the lease is not C's")
		}
		if st := containerState(t, b, env.ID, id); st != "running" {
			t.Fatalf("inspect through B: state %q, want running", st)
		}
		// B's status follows the lease at its next reconcile.
		if e := b.waitConnected(env.ID, true); e.AgentID == nil || *e.AgentID != agentID {
			t.Fatalf("B's status of the agent: %+v", e)
		}

		// The token revoked through B ends the agent's connection to C.
		b.must(200, "DELETE", fmt.Sprintf("/api/hawser/tokens?id=%d", tok.TokenID), nil, nil)
		if !onC.ended(time.Minute) {
			t.Fatal("the token was revoked through B and the agent is still connected to C")
		}
		b.waitConnected(env.ID, false)
	})
}

// TestHawserEdgeAgentSurvivesItsReplicaKilled runs two Berth processes
// (replicas) on one PostgreSQL database with a Hawser edge agent connected
// to the first; the second shows the agent's last ping to the first, and
// the lease's figures, after its deadline, while the first is stopped
// (SIGSTOP); the first is killed (SIGKILL, its lease left in the
// database): the agent reconnects to the second, which takes the lease
// over at once (same agent), and is served through it; another agent with
// the token is still refused.
func TestHawserEdgeAgentSurvivesItsReplicaKilled(t *testing.T) {
	socket := engine2(t)
	dbURL := storetest.PostgresDatabase(t)
	bin := servertest.Build(t)
	label := randomLabel()
	t.Cleanup(func() { removeLabelled(t, socket, label) })
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	dataDir := t.TempDir()
	common := []string{"DATABASE_URL=" + dbURL, "ENCRYPTION_KEY=" + hex.EncodeToString(key), "REPLICA_HOST=127.0.0.1",
		"DATA_DIR=" + dataDir, "DOCKER_SOCKET=/nonexistent", "LOG_LEVEL=debug"}
	procs := startReplicaProcs(t, bin, 2, dataDir, common, func(int) string { return label })
	holder, other := procs[0], procs[1]
	env, tok := holder.createHawserEdge("hawser-killed-" + label)
	const agentID = "hawser-killed"
	agent, err := hawserHelloAs(t, holder.url, socket, tok.Token, agentID)
	if err != nil {
		t.Fatal(err)
	}
	other.waitConnected(env.ID, true)
	id := createContainer(t, other.berth, env.ID, "hawser-killed-"+label, true, "sleep", "3600")

	// Through the other replica, the agent's last heartbeat is the one its
	// holder saw...
	sent := time.Now()
	agent.ping()
	waitFor(t, "the other replica shows the agent's ping as its last heartbeat", func() bool {
		conn, ok := hawserConnectionOf(t, other.berth, env.ID)
		return ok && conn.LastHeartbeat != nil && !conn.LastHeartbeat.Before(sent)
	})
	// ...and while the holder does not answer (stopped: its row and lease
	// still live, its relay port accepting and never answering), the
	// other replica shows the lease's figures after its short deadline,
	// without waiting for the holder (a hang would outlast this client's
	// timeout).
	if err := syscall.Kill(holder.proc.Pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(holder.proc.Pid, syscall.SIGCONT) })
	quick := *other.berth
	quick.http = &http.Client{Timeout: 30 * time.Second}
	asked := time.Now()
	conn, ok := hawserConnectionOf(t, &quick, env.ID)
	if !ok || conn.LastHeartbeat == nil || conn.ConnectedAt == nil || !conn.LastHeartbeat.Equal(*conn.ConnectedAt) {
		t.Fatalf("the holder stopped: the other replica lists %+v (listed %v), want the lease's figures (last heartbeat = connection time)", conn, ok)
	}
	t.Logf("the holder stopped: the other replica answered with the lease's figures in %v", time.Since(asked).Round(time.Millisecond))

	killed := time.Now()
	holder.proc.Kill(t)
	if !agent.ended(time.Minute) {
		t.Fatal("the holder was killed and the agent's WebSocket is still open")
	}
	// Hawser retries its WebSocket; the load balancer gives it the survivor.
	waitFor(t, "the agent reconnected to the survivor", func() bool {
		var err error
		agent, err = hawserHelloAs(t, other.url, socket, tok.Token, agentID)
		return err == nil
	})
	waitFor(t, "the agent served through the survivor", func() bool { return lists(other.berth, env.ID, id) })
	t.Logf("the Hawser agent served through the survivor %v after its replica was killed", time.Since(killed).Round(time.Millisecond))
	execRoundTrip(t, other.berth, env.ID)
	if _, err := hawserHelloAs(t, other.url, socket, tok.Token, "another-hawser"); err == nil || err.Error() != hawserShared {
		t.Fatalf("second agent after the kill: %v, want %q", err, hawserShared)
	}
	if agent.ended(0) {
		t.Fatal("the agent lost its connection to the survivor")
	}
}

// hawserConnection is an agent as GET /api/hawser/connect lists it.
type hawserConnection struct {
	EnvironmentID int64      `json:"environmentId"`
	AgentID       string     `json:"agentId"`
	DockerVersion string     `json:"dockerVersion"`
	Hostname      string     `json:"hostname"`
	ConnectedAt   *time.Time `json:"connectedAt"`
	LastHeartbeat *time.Time `json:"lastHeartbeat"`
}

// hawserConnectionOf returns env's Hawser agent as h lists it among the
// connected agents.
func hawserConnectionOf(t *testing.T, h *berth, env int64) (hawserConnection, bool) {
	t.Helper()
	var conns struct{ Connections []hawserConnection }
	h.in(t).must(200, "GET", "/api/hawser/connect", nil, &conns)
	for _, c := range conns.Connections {
		if c.EnvironmentID == env {
			return c, true
		}
	}
	return hawserConnection{}, false
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// hawserTerminalAcross creates a terminal session on a Hawser edge
// environment through create, sizes it through other before the attach,
// and attaches it (the console's WebSocket) through attach: the command's
// output comes back at the size asked, a resize through create after the
// attach reaches it, another user is refused without using it up, and a
// second attach through other is refused.
func hawserTerminalAcross(t *testing.T, create, attach, other *berth, env int64) {
	t.Helper()
	id := createContainer(t, create, env, fmt.Sprintf("term-%s-%s-%d", create.label, attach.label, env), true, "sleep", "3600")
	var inst struct{ ExecID string }
	create.in(t).must(200, "POST", fmt.Sprintf("/api/containers/%s/exec?envId=%d", id, env), map[string]string{"shell": "/bin/sh"}, &inst)
	other.in(t).must(200, "POST", fmt.Sprintf("/api/containers/exec/%s/resize?envId=%d&h=33&w=101", inst.ExecID, env), nil, nil)

	// Another user, through the replica that attaches: refused (the same
	// check as the route's, with authentication on), and not used up.
	st, err := attach.b.Store.GetEnvironment(t.Context(), env)
	if err != nil {
		t.Fatal(err)
	}
	svc := containers.New(attach.b.Engines, attach.b.Store, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if s, err := svc.AttachExec(t.Context(), st, inst.ExecID, containers.ExecCaller{UserID: 424242}); err == nil {
		s.Close()
		t.Fatal("another user attached the session")
	} else if !strings.Contains(err.Error(), "belongs to another user") {
		t.Fatalf("another user's attach: %v, want the session refused as another user's", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	wsURL := func(h *berth) string {
		return "ws" + strings.TrimPrefix(h.url, "http") + fmt.Sprintf("/api/containers/exec/%s/attach?envId=%d", inst.ExecID, env)
	}
	ws, _, err := websocket.Dial(ctx, wsURL(attach), &websocket.DialOptions{HTTPHeader: attach.header})
	if err != nil {
		t.Fatalf("attach through another replica than the creator: %v", err)
	}
	defer ws.CloseNow()
	read := func(want ...string) {
		t.Helper()
		var seen strings.Builder
		for !allIn(seen.String(), want) {
			_, b, err := ws.Read(ctx)
			if err != nil {
				t.Fatalf("read: %v (so far %q, want %q)", err, seen.String(), want)
			}
			seen.Write(b)
		}
	}
	if err := ws.Write(ctx, websocket.MessageText, []byte("stty size; echo round-$((40+2))-trip\n")); err != nil {
		t.Fatal(err)
	}
	read("round-42-trip", "33 101")

	if _, res, err := websocket.Dial(ctx, wsURL(other), &websocket.DialOptions{HTTPHeader: other.header}); err == nil {
		t.Fatal("a second attach through another replica succeeded")
	} else if res == nil || res.StatusCode != http.StatusConflict {
		t.Fatalf("second attach: %v, want 409", err)
	}

	create.in(t).must(200, "POST", fmt.Sprintf("/api/containers/exec/%s/resize?envId=%d&h=44&w=77", inst.ExecID, env), nil, nil)
	if err := ws.Write(ctx, websocket.MessageText, []byte("stty size; echo resized-$((40+3))\n")); err != nil {
		t.Fatal(err)
	}
	read("resized-43", "44 77")
	if err := ws.Write(ctx, websocket.MessageText, []byte("exit\n")); err != nil {
		t.Fatal(err)
	}
	for {
		if _, _, err := ws.Read(ctx); err != nil {
			if websocket.CloseStatus(err) != websocket.StatusNormalClosure {
				t.Fatalf("the session ended with %v, want a normal closure", err)
			}
			return
		}
	}
}

func allIn(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
