package agents_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/hawser"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/enginetest"
)

// hawserToken is the answer of POST /api/hawser/tokens.
type hawserToken struct {
	Token, Message, ServerURL, Command string
	TokenID                            int64
}

// createHawserEdge creates a hawser-edge environment and its token.
func (h *berth) createHawserEdge(name string) (environment, hawserToken) {
	h.t.Helper()
	var e environment
	h.must(201, "POST", "/api/environments", map[string]any{"name": name, "connectionType": "hawser-edge"}, &e)
	return e, h.newHawserToken(e.ID)
}

func (h *berth) newHawserToken(env int64) hawserToken {
	h.t.Helper()
	var tok hawserToken
	h.must(200, "POST", "/api/hawser/tokens", map[string]any{"name": "agent", "environmentId": env}, &tok)
	return tok
}

// hawserEnvironments starts a Berth with one hawser-standard and one
// hawser-edge environment, both managing the second engine through the
// tests' Hawser agent.
func hawserEnvironments(t *testing.T) (h *berth, socket string, envs map[string]int64, edge *hawserEdgeAgent) {
	t.Helper()
	socket = engine2(t)
	h = startBerth(t, 0)
	t.Cleanup(func() { removeLabelled(t, socket, h.label) })
	envs = map[string]int64{}

	const token = "hawser-standard-token-0123456789"
	port, _ := hawserStandardAgent(t, socket, token)
	var e environment
	h.must(201, "POST", "/api/environments", map[string]any{"name": "hawser-std-" + h.label, "connectionType": "hawser-standard",
		"host": "127.0.0.1", "port": port, "hawserToken": token}, &e)
	envs["hawser-standard"] = e.ID

	ee, tok := h.createHawserEdge("hawser-edge-" + h.label)
	if len(tok.Token) != 43 || !strings.Contains(tok.Command, "--token "+tok.Token) ||
		!strings.HasSuffix(tok.ServerURL, "/api/hawser/connect") {
		t.Fatalf("token answer = %+v", tok)
	}
	a, err := hawserHello(t, h.url, socket, tok.Token)
	if err != nil {
		t.Fatal(err)
	}
	envs["hawser-edge"], edge = ee.ID, a
	h.waitConnected(ee.ID, true)
	return h, socket, envs, edge
}

func TestHawserAgentsManageTheRemoteEngine(t *testing.T) {
	h, socket, envs, edge := hawserEnvironments(t)
	for _, typ := range []string{"hawser-standard", "hawser-edge"} {
		env := envs[typ]
		t.Run(typ, func(t *testing.T) {
			t.Run("test and agent info", func(t *testing.T) { hawserTestAndInfo(t, h, env, typ) })
			t.Run("container lifecycle", func(t *testing.T) { containerLifecycle(t, h, socket, env) })
			t.Run("exec over the WebSocket", func(t *testing.T) { execRoundTrip(t, h, env) })
			t.Run("logs stream", func(t *testing.T) { logsStream(t, h, env) })
			t.Run("stats stream", func(t *testing.T) { statsStream(t, h, env) })
			t.Run("events", func(t *testing.T) { events(t, h, env) })
			t.Run("pull with credentials and push", func(t *testing.T) { pullAndPush(t, h, socket, env) })
			t.Run("compose deploy", func(t *testing.T) { hawserStack(t, h, socket, env) })
		})
	}
	t.Run("edge pushes and status", func(t *testing.T) {
		ctx := context.Background()
		st, err := h.b.Store.GetEnvironment(ctx, envs["hawser-edge"])
		if err != nil {
			t.Fatal(err)
		}
		c, err := h.b.Engines.Client(ctx, st.Endpoint())
		if err != nil {
			t.Fatal(err)
		}
		m, err := c.HostMetrics(ctx)
		// The pushed sample: 50 % over 2 cores is 25 %.
		if err != nil || m.CPUPercent != 25 || m.MemoryTotal != 8<<30 || m.MemoryUsed != 2<<30 || m.DiskTotal != 100<<30 {
			t.Errorf("host metrics = %+v, %v", m, err)
		}
		if s := h.b.Hawser.Status(t.Context(), envs["hawser-edge"]); !s.Connected || s.ContainerEvents < 1 || s.AgentName != "hawser edge (test)" {
			t.Errorf("hub status = %+v", s)
		}
		var cs struct {
			Status            string
			ActiveConnections int
			Connections       []struct {
				EnvironmentID int64
				AgentName     string
				Capabilities  []string
			}
		}
		h.must(200, "GET", "/api/hawser/connect", nil, &cs)
		if cs.Status != "ready" || cs.ActiveConnections != 1 || cs.Connections[0].EnvironmentID != envs["hawser-edge"] ||
			!slices.Contains(cs.Connections[0].Capabilities, "compose") {
			t.Errorf("connect status = %+v", cs)
		}
		var advice struct{ Status string }
		h.must(200, "POST", "/api/hawser/connect", nil, &advice)
		if advice.Status != "upgrade-required" {
			t.Errorf("POST connect = %+v", advice)
		}
		var toks []map[string]any
		h.must(200, "GET", "/api/hawser/tokens", nil, &toks)
		if len(toks) != 1 || len(toks[0]["tokenPrefix"].(string)) != 8 || toks[0]["isActive"] != true || toks[0]["token"] != nil {
			t.Errorf("tokens = %v", toks)
		}
		edge.mu.Lock()
		pings := edge.pings
		edge.mu.Unlock()
		if pings == 0 {
			// The hub pings every 5 s; the scenarios above take longer.
			t.Errorf("the agent was never pinged")
		}
	})
}

func hawserTestAndInfo(t *testing.T, h *berth, env int64, typ string) {
	var res struct {
		Success bool
		Error   string
		Info    struct {
			ServerVersion string
			Agent         struct {
				ID, Name, Version string
				Capabilities      []string
			}
		}
	}
	h.must(200, "POST", fmt.Sprintf("/api/environments/%d/test", env), nil, &res)
	wantID := map[string]string{"hawser-standard": "hawser-std-test", "hawser-edge": "hawser-edge-test"}[typ]
	if !res.Success || res.Info.ServerVersion == "" || res.Info.Agent.ID != wantID || res.Info.Agent.Version != "0.2.test" {
		t.Fatalf("test = %+v", res)
	}
	e := h.environment(env)
	if e.AgentID == nil || *e.AgentID != wantID || e.AgentToken != nil {
		t.Errorf("%s environment after test: %+v", typ, e)
	}
	if typ == "hawser-standard" && !e.HasAgentToken {
		t.Error("the standard agent's token is not kept")
	}
}

// hawserStack deploys a stack through the agent (compose runs on the
// agent's host), then deletes it.
func hawserStack(t *testing.T, h *berth, socket string, env int64) {
	name := fmt.Sprintf("hstk-%s-%d", h.label, env)
	compose := fmt.Sprintf(`services:
  web:
    image: %[1]s
    command: ["sleep", "3600"]
    environment:
      MODE: ${MODE}
    labels:
      %[2]s: %[3]s
`, enginetest.Image(), enginetest.Label, h.label)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var final map[string]any
	for ev := range h.stream(ctx, "POST", fmt.Sprintf("/api/stacks?env=%d", env), map[string]any{"name": name, "compose": compose,
		"envVars": []map[string]any{{"key": "MODE", "value": "through-hawser"}}}) {
		var d map[string]any
		if json.Unmarshal([]byte(ev.Data), &d) == nil {
			if _, ok := d["success"]; ok {
				final = d
			}
		}
	}
	if final == nil || final["success"] != true {
		t.Fatalf("deploy = %v", final)
	}
	running := false
	for _, id := range labelled(t, socket, h.label) {
		var c struct {
			Config struct {
				Env    []string
				Labels map[string]string
			}
			State struct{ Running bool }
		}
		engineGet(t, socket, "/containers/"+id+"/json", &c)
		if c.Config.Labels["com.docker.compose.project"] == name && c.Config.Labels["com.docker.compose.service"] == "web" {
			running = c.State.Running
			if !slices.Contains(c.Config.Env, "MODE=through-hawser") {
				t.Errorf("web's environment: %v", c.Config.Env)
			}
		}
	}
	if !running {
		t.Fatal("the stack's service is not running on the second engine")
	}
	h.must(200, "DELETE", fmt.Sprintf("/api/stacks/%s?env=%d&force=true", name, env), nil, nil)
	for _, id := range labelled(t, socket, h.label) {
		var c struct {
			Config struct{ Labels map[string]string }
		}
		engineGet(t, socket, "/containers/"+id+"/json", &c)
		if c.Config.Labels["com.docker.compose.project"] == name {
			t.Errorf("container %s of the deleted stack is still there", id)
		}
	}
}

func TestHawserStandardWithAWrongTokenFailsItsTest(t *testing.T) {
	socket := engine2(t)
	h := startBerth(t, 0)
	port, _ := hawserStandardAgent(t, socket, "the-right-token-0123456789abcdef")
	var e environment
	h.must(201, "POST", "/api/environments", map[string]any{"name": "hawser-wrong", "connectionType": "hawser-standard",
		"host": "127.0.0.1", "port": port, "hawserToken": "a-wrong-token-0123456789abcdefgh"}, &e)
	var res struct {
		Success bool
		Error   string
	}
	h.must(200, "POST", fmt.Sprintf("/api/environments/%d/test", e.ID), nil, &res)
	if res.Success {
		t.Fatal("a wrong token passed the test")
	}
	var list []any
	if status, body := h.do("GET", fmt.Sprintf("/api/containers?env=%d", e.ID), nil); status == 200 && json.Unmarshal(body, &list) == nil && len(list) > 0 {
		t.Fatalf("containers listed with a wrong token: %s", body)
	}
}

func TestHawserEdgeAbsentAndTokenRotation(t *testing.T) {
	socket := engine2(t)
	h := startBerth(t, 0)
	e, old := h.createHawserEdge("hawser-rot-" + h.label)
	// Not connected: the spec's offline answers.
	status, body := h.do("GET", fmt.Sprintf("/api/containers/json?env=%d", e.ID), nil)
	if status == 200 {
		status, body = h.do("GET", fmt.Sprintf("/api/containers/%s/json?env=%d", "0123456789ab", e.ID), nil)
	}
	if status < 400 {
		t.Fatalf("a request with no agent: %d %s", status, body)
	}
	var res struct {
		Success bool
		Error   string
	}
	h.must(200, "POST", fmt.Sprintf("/api/environments/%d/test", e.ID), nil, &res)
	if res.Success || res.Error != engine.ErrAgentAbsent.Error() {
		t.Fatalf("test without an agent = %+v", res)
	}

	a, err := hawserHello(t, h.url, socket, old.Token)
	if err != nil {
		t.Fatal(err)
	}
	h.waitConnected(e.ID, true)
	var list []struct{ ID string }
	h.must(200, "GET", fmt.Sprintf("/api/containers?env=%d&all=true", e.ID), nil, &list)

	// A second agent with the same token replaces the first (one
	// connection per environment).
	b, err := hawserHello(t, h.url, socket, old.Token)
	if err != nil {
		t.Fatal(err)
	}
	if !a.ended(10 * time.Second) {
		t.Fatal("the first connection is still open after a second hello")
	}
	h.must(200, "GET", fmt.Sprintf("/api/containers?env=%d&all=true", e.ID), nil, &list)

	// Two agents sharing a token would replace each other in a loop: after
	// DefaultReplaceLimit replacements within a minute, a hello is refused
	// and the connected agent kept.
	for i := 1; i < hawser.DefaultReplaceLimit; i++ {
		next, err := hawserHello(t, h.url, socket, old.Token)
		if err != nil {
			t.Fatalf("replacement %d: %v", i+1, err)
		}
		if !b.ended(10 * time.Second) {
			t.Fatalf("replacement %d left the previous connection open", i+1)
		}
		b = next
	}
	if _, err := hawserHello(t, h.url, socket, old.Token); err == nil || !strings.Contains(err.Error(), "keeps connecting") {
		t.Fatalf("hello number %d within a minute: %v, want the storm refusal", hawser.DefaultReplaceLimit+2, err)
	}
	if b.ended(time.Second) {
		t.Fatal("the refused hello ended the connected agent")
	}
	h.must(200, "GET", fmt.Sprintf("/api/containers?env=%d&all=true", e.ID), nil, &list)

	// A new token closes the live connection; the new one works, the old
	// one is refused.
	fresh := h.newHawserToken(e.ID)
	if !b.ended(10 * time.Second) {
		t.Fatal("the connection is still open after its token was replaced")
	}
	c, err := hawserHello(t, h.url, socket, fresh.Token)
	if err != nil {
		t.Fatalf("the new token: %v", err)
	}
	h.waitConnected(e.ID, true)
	h.must(200, "GET", fmt.Sprintf("/api/containers?env=%d&all=true", e.ID), nil, &list)
	var toks []struct {
		ID       int64
		IsActive bool
	}
	h.must(200, "GET", "/api/hawser/tokens", nil, &toks)
	if len(toks) != 2 || !toks[0].IsActive || toks[1].IsActive {
		t.Fatalf("tokens after rotation = %+v", toks)
	}
	if _, err := hawserHello(t, h.url, socket, old.Token); err == nil || !strings.Contains(err.Error(), "Invalid") {
		t.Fatalf("the old token: %v, want a refusal", err)
	}
	// The refused address is on a cooldown: even a good token waits.
	if _, err := hawserHello(t, h.url, socket, fresh.Token); err == nil {
		t.Fatal("no cooldown after a refused token")
	}
	// Revoking the live token disconnects its agent.
	h.must(200, "DELETE", fmt.Sprintf("/api/hawser/tokens?id=%d", toks[0].ID), nil, nil)
	if !c.ended(10 * time.Second) {
		t.Fatal("the connection is still open after its token was revoked")
	}
	h.waitConnected(e.ID, false)
}
