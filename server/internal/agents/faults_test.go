package agents_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// listOK reports whether the container list of env answers through its agent
// (an offline environment lists as [] with 200, so a listed container proves it).
func listHas(t *testing.T, h *berth, env int64, id string) bool {
	t.Helper()
	var list []struct{ ID string }
	h.must(200, "GET", fmt.Sprintf("/api/containers?env=%d&all=true", env), nil, &list)
	for _, c := range list {
		if c.ID == id {
			return true
		}
	}
	return false
}

func TestEdgeAgentWithAWrongTokenIsRefused(t *testing.T) {
	socket := engine2(t)
	h := startBerth(t, 0)
	e, _ := h.createEdge("edge-" + h.label)
	a := edgeAgent(t, h, socket, "bae_not-the-token")
	waitFor(t, "the agent to log the refusal", func() bool { return strings.Contains(a.out.String(), "refused the edge token") })
	if got := h.environment(e.ID); got.AgentConnected == nil || *got.AgentConnected {
		t.Errorf("environment with a wrongly-tokened agent: connected %v", got.AgentConnected)
	}
	var res struct {
		Success bool
		Error   string
	}
	h.must(200, "POST", fmt.Sprintf("/api/environments/%d/test", e.ID), nil, &res)
	if res.Success || res.Error != "Edge agent not connected" {
		t.Errorf("test = %+v, want the spec's message", res)
	}
}

func TestStandardAgentWithAWrongTokenFailsItsTest(t *testing.T) {
	socket := engine2(t)
	h := startBerth(t, 0)
	_, port, cert := standardAgent(t, socket, "the-agents-token-abcdef")
	var e environment
	h.must(201, "POST", "/api/environments", map[string]any{"name": "std-" + h.label, "connectionType": "agent-standard",
		"host": "127.0.0.1", "port": port, "agentToken": "another-token", "tlsCa": cert}, &e)
	var res struct {
		Success bool
		Error   string
	}
	h.must(200, "POST", fmt.Sprintf("/api/environments/%d/test", e.ID), nil, &res)
	if res.Success || !strings.Contains(res.Error, "invalid agent token") {
		t.Errorf("test with a wrong token = %+v", res)
	}
}

// Testing unsaved settings (POST /api/environments/test) builds a connection
// from exactly those settings every time: a wrong token after a right one, or
// a second agent, is not answered by the first test's cached connection.
func TestStandardAgentUnsavedSettingsAreTestedAsGiven(t *testing.T) {
	socket := engine2(t)
	h := startBerth(t, 0)
	_, port, cert := standardAgent(t, socket, "the-agents-token-abcdef")
	settings := func(token string) map[string]any {
		return map[string]any{"connectionType": "agent-standard", "host": "127.0.0.1", "port": port,
			"agentToken": token, "tlsCa": cert}
	}
	var res struct {
		Success bool
		Error   string
	}
	h.must(200, "POST", "/api/environments/test", settings("the-agents-token-abcdef"), &res)
	if !res.Success {
		t.Fatalf("test with the right token = %+v", res)
	}
	res.Success, res.Error = false, ""
	h.must(200, "POST", "/api/environments/test", settings("another-token"), &res)
	if res.Success || !strings.Contains(res.Error, "invalid agent token") {
		t.Errorf("test with a wrong token after a right one = %+v", res)
	}
}

func TestEdgeAgentAbsentAnswersTheSpecsMessages(t *testing.T) {
	engine2(t)
	h := startBerth(t, 0)
	e, _ := h.createEdge("edge-" + h.label)
	var list []any
	h.must(200, "GET", fmt.Sprintf("/api/containers?env=%d", e.ID), nil, &list)
	if len(list) != 0 {
		t.Errorf("containers of an absent agent = %v, want []", list)
	}
	h.must(200, "GET", fmt.Sprintf("/api/images?env=%d", e.ID), nil, &list)
	if len(list) != 0 {
		t.Errorf("images of an absent agent = %v, want []", list)
	}
	for _, c := range []struct {
		path string
		body any
	}{
		{"/api/images/pull?env=%d", map[string]any{"image": "berth-test/none:1", "scanAfterPull": false}},
	} {
		var res map[string]any
		h.must(200, "POST", fmt.Sprintf(c.path, e.ID), c.body, &res, "Accept", "application/json")
		if res["status"] != "error" || res["error"] != "Edge agent not connected" {
			t.Errorf("%s = %v, want {status: error, error: Edge agent not connected}", c.path, res)
		}
	}
	status, body := h.do("POST", fmt.Sprintf("/api/containers/abc/start?env=%d", e.ID), nil)
	var eb struct{ Error, Details string }
	_ = json.Unmarshal(body, &eb)
	if status != 503 || eb.Error != "Failed to start container" || eb.Details != "Edge agent not connected" {
		t.Errorf("start through an absent agent: %d %s", status, body)
	}
}

func TestRotatedTokenClosesTheOldConnection(t *testing.T) {
	socket := engine2(t)
	h := startBerth(t, 0)
	e, first := h.createEdge("edge-" + h.label)
	old := edgeAgent(t, h, socket, first.Token)
	h.waitConnected(e.ID, true)

	var second install
	h.must(200, "POST", fmt.Sprintf("/api/environments/%d/agent-token", e.ID), nil, &second)
	if second.Token == first.Token || !strings.Contains(second.Command, second.Token) || !strings.Contains(second.DockerRun, second.Token) {
		t.Fatalf("rotation answered %+v", second)
	}
	h.waitConnected(e.ID, false)
	waitFor(t, "the old agent to be told its token was rotated", func() bool { return strings.Contains(old.out.String(), "rotated") })
	// The old token is refused from now on; the new one connects.
	waitFor(t, "the old agent to be refused", func() bool { return strings.Contains(old.out.String(), "refused the edge token") })
	old.kill()
	edgeAgent(t, h, socket, second.Token)
	h.waitConnected(e.ID, true)
}

func TestSecondAgentWithAHealthyConnectionsTokenIsRefused(t *testing.T) {
	socket := engine2(t)
	h := startBerth(t, 0)
	e, in := h.createEdge("edge-" + h.label)
	first := edgeAgent(t, h, socket, in.Token)
	connected := h.waitConnected(e.ID, true)
	intruder := edgeAgent(t, h, socket, in.Token, "--name", "intruder")
	waitFor(t, "the second agent to be refused", func() bool {
		return strings.Contains(intruder.out.String(), "another agent is connected")
	})
	got := h.environment(e.ID)
	if got.AgentID == nil || *got.AgentID != *connected.AgentID || got.AgentStatus == nil || got.AgentStatus.LastError == nil ||
		!strings.Contains(*got.AgentStatus.LastError, "refused") {
		t.Errorf("environment after the second agent: %+v (status %+v)", got, got.AgentStatus)
	}
	if !strings.Contains(h.logs.String(), "second edge agent refused") {
		t.Error("Berth's log does not say it refused the second agent")
	}
	_ = first
}

func TestAgentKilledAndRestartedComesBackOnline(t *testing.T) {
	socket := engine2(t)
	h := startBerth(t, 0)
	e, in := h.createEdge("edge-" + h.label)
	a := edgeAgent(t, h, socket, in.Token)
	h.waitConnected(e.ID, true)
	id := createContainer(t, h, e.ID, "kill-"+h.label, false, "true")
	t.Cleanup(func() { removeLabelled(t, socket, h.label) })

	a.kill()
	h.waitConnected(e.ID, false)
	if listHas(t, h, e.ID, id) {
		t.Fatal("the container is listed while the agent is dead")
	}
	a.start()
	h.waitConnected(e.ID, true)
	waitFor(t, "operations to resume", func() bool { return listHas(t, h, e.ID, id) })
}

func TestBerthRestartedEveryAgentReconnects(t *testing.T) {
	socket := engine2(t)
	h := startBerth(t, 0)
	var ids []int64
	for i := range 3 {
		e, in := h.createEdge(fmt.Sprintf("edge-%d-%s", i, h.label))
		edgeAgent(t, h, socket, in.Token)
		ids = append(ids, e.ID)
	}
	for _, id := range ids {
		h.waitConnected(id, true)
	}
	h.restart()
	for _, id := range ids {
		h.waitConnected(id, true)
		var res struct{ Success bool }
		h.must(200, "POST", fmt.Sprintf("/api/environments/%d/test", id), nil, &res)
		if !res.Success {
			t.Errorf("environment %d after the restart: test failed", id)
		}
	}
}

func TestCutConnectionGoesOfflineWithinTheHeartbeatWindow(t *testing.T) {
	socket := engine2(t)
	h := startBerth(t, 300*time.Millisecond) // window: 3 × 300 ms
	e, in := h.createEdge("edge-" + h.label)
	p := newProxy(t, strings.TrimPrefix(h.b.AgentURL, "http://"))
	edgeAgentVia(t, h, socket, in.Token, "http://"+p.addr())
	h.waitConnected(e.ID, true)
	p.freeze() // packets stop, sockets stay open: only heartbeats can tell
	h.waitConnected(e.ID, false)
	if st := h.environment(e.ID).AgentStatus; st == nil || st.LastError == nil || !strings.Contains(*st.LastError, "heartbeat") {
		t.Errorf("status after the cut: %+v", st)
	}
}

func TestAgentKilledDuringAPullEndsItWithAnError(t *testing.T) {
	socket := engine2(t)
	host, user, password := registry(t)
	h := startBerth(t, 0)
	e, in := h.createEdge("edge-" + h.label)
	a := edgeAgent(t, h, socket, in.Token)
	h.waitConnected(e.ID, true)
	// The engine pulls through a proxy that stalls after the first bytes,
	// so the pull is surely running when the agent dies.
	slow := newProxy(t, host)
	slow.stallAfter(64 << 10)
	addRegistry(t, h, slow.addr(), user, password)
	var job struct{ JobID string }
	h.must(200, "POST", fmt.Sprintf("/api/images/pull?env=%d", e.ID), map[string]any{
		"image": slow.addr() + "/berth-test/bench-50mb:1", "scanAfterPull": false}, &job)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var final map[string]any
	killed := false
	for ev := range h.stream(ctx, "GET", "/api/jobs/"+job.JobID, nil) {
		var d map[string]any
		_ = json.Unmarshal([]byte(ev.Data), &d)
		if !killed && ev.Name == "progress" {
			a.kill()
			killed = true
		}
		if ev.Name == "result" {
			final = d
		}
	}
	if !killed || final == nil || final["status"] != "error" || !strings.Contains(fmt.Sprint(final["error"]), "Agent connection lost") {
		t.Fatalf("pull with the agent killed: killed %v, result %v", killed, final)
	}
}

func TestAgentKilledDuringAnExecEndsTheSession(t *testing.T) {
	socket := engine2(t)
	h := startBerth(t, 0)
	e, in := h.createEdge("edge-" + h.label)
	a := edgeAgent(t, h, socket, in.Token)
	h.waitConnected(e.ID, true)
	t.Cleanup(func() { removeLabelled(t, socket, h.label) })
	id := createContainer(t, h, e.ID, "exec-kill-"+h.label, true, "sleep", "3600")
	var inst struct{ ExecID string }
	h.must(200, "POST", fmt.Sprintf("/api/containers/%s/exec?envId=%d", id, e.ID), nil, &inst)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(h.url, "http")+
		fmt.Sprintf("/api/containers/exec/%s/attach?envId=%d", inst.ExecID, e.ID), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	if err := ws.Write(ctx, websocket.MessageText, []byte("echo ready-$((1+1))\n")); err != nil {
		t.Fatal(err)
	}
	var seen strings.Builder
	for !strings.Contains(seen.String(), "ready-2") {
		_, b, err := ws.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		seen.Write(b)
	}
	a.kill()
	for {
		_, _, err := ws.Read(ctx)
		if err == nil {
			continue
		}
		if ctx.Err() != nil {
			t.Fatal("the session hangs after the agent died")
		}
		if websocket.CloseStatus(err) == websocket.StatusNormalClosure {
			t.Errorf("the session ended normally, want an error closure: %v", err)
		}
		break
	}
}

// edgeAgentVia runs an edge agent that dials Berth at server (a proxy).
func edgeAgentVia(t *testing.T, h *berth, socket, token, server string) *agent {
	t.Helper()
	return runAgent(t, socket, "--server", server, "--token", token, "--name", "edge-via-proxy",
		"--reconnect-min", "100ms", "--reconnect-max", "1s")
}

// proxy is a TCP forwarder a test can freeze (stop moving bytes while
// keeping the connections open) or make stall after some bytes.
type proxy struct {
	t      *testing.T
	ln     net.Listener
	target string

	mu     sync.Mutex
	frozen bool
	stall  int64 // bytes forwarded towards the client before stalling (0: never)
	resume chan struct{}
}

func newProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{t: t, ln: ln, target: target, resume: make(chan struct{})}
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		select {
		case <-p.resume:
		default:
			close(p.resume)
		}
		p.mu.Unlock()
	})
	go p.accept()
	return p
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) freeze() {
	p.mu.Lock()
	p.frozen = true
	p.mu.Unlock()
}

func (p *proxy) stallAfter(n int64) {
	p.mu.Lock()
	p.stall = n
	p.mu.Unlock()
}

func (p *proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go func() {
			s, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				return
			}
			go p.pipe(s, c, false)
			p.pipe(c, s, true)
		}()
	}
}

// pipe copies src to dst until either ends; toClient says the direction
// the stall limit applies to.
func (p *proxy) pipe(dst, src net.Conn, toServer bool) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 16<<10)
	var sent int64
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			block := p.frozen || (!toServer && p.stall > 0 && sent+int64(n) > p.stall)
			p.mu.Unlock()
			if block {
				<-p.resume // hold the bytes; the connection stays open
				return
			}
			sent += int64(n)
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if err != io.EOF {
				return
			}
			return
		}
	}
}
