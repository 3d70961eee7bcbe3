package agents_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/berth-dev/berth/shared/enginetest"
)

// agentEnvironments starts a Berth with one agent-standard and one
// agent-edge environment, both managing the second engine through their own
// berth-agent process.
func agentEnvironments(t *testing.T) (h *berth, socket string, envs map[string]int64, agents map[string]*agent) {
	t.Helper()
	socket = engine2(t)
	h = startBerth(t, 0)
	t.Cleanup(func() { removeLabelled(t, socket, h.label) })
	envs, agents = map[string]int64{}, map[string]*agent{}

	const token = "standard-agent-token-0123456789"
	std, port, cert := standardAgent(t, socket, token)
	var e environment
	h.must(201, "POST", "/api/environments", map[string]any{"name": "standard-" + h.label, "connectionType": "agent-standard",
		"host": "127.0.0.1", "port": port, "protocol": "https", "agentToken": token, "tlsCa": cert}, &e)
	envs["agent-standard"], agents["agent-standard"] = e.ID, std

	edge, in := h.createEdge("edge-" + h.label)
	agents["agent-edge"] = edgeAgent(t, h, socket, in.Token)
	envs["agent-edge"] = edge.ID
	h.waitConnected(edge.ID, true)
	return h, socket, envs, agents
}

func TestAgentEnvironmentsManageTheRemoteEngine(t *testing.T) {
	h, socket, envs, agents := agentEnvironments(t)
	for _, typ := range []string{"agent-standard", "agent-edge"} {
		env := envs[typ]
		t.Run(typ, func(t *testing.T) {
			t.Run("test and status", func(t *testing.T) { testAndStatus(t, h, env, typ) })
			t.Run("container lifecycle", func(t *testing.T) { containerLifecycle(t, h, socket, env) })
			t.Run("exec over the WebSocket", func(t *testing.T) { execRoundTrip(t, h, env) })
			t.Run("logs stream", func(t *testing.T) { logsStream(t, h, env) })
			t.Run("stats stream", func(t *testing.T) { statsStream(t, h, env) })
			t.Run("events", func(t *testing.T) { events(t, h, env) })
			t.Run("pull with credentials and push", func(t *testing.T) { pullAndPush(t, h, socket, env) })
			t.Run("stack with a secret", func(t *testing.T) { stackWithSecret(t, h, socket, env, agents[typ]) })
		})
	}
}

func testAndStatus(t *testing.T, h *berth, env int64, typ string) {
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
	if !res.Success || res.Info.ServerVersion == "" || res.Info.Agent.ID == "" || res.Info.Agent.Version != "dev" ||
		!slices.Contains(res.Info.Agent.Capabilities, "exec") {
		t.Fatalf("test = %+v", res)
	}
	e := h.environment(env)
	if e.AgentConnected == nil || !*e.AgentConnected || e.AgentID == nil || *e.AgentID != res.Info.Agent.ID ||
		!slices.Contains(e.AgentCapabilities, "compose") || e.AgentLastSeen == nil {
		t.Errorf("%s environment after test: %+v", typ, e)
	}
	if e.AgentToken != nil {
		t.Error("an environment read returns the agent token")
	}
}

// createContainer creates a container through Berth, labelled for cleanup.
func createContainer(t *testing.T, h *berth, env int64, name string, start bool, cmd ...string) string {
	t.Helper()
	var out struct{ ID string }
	h.must(200, "POST", fmt.Sprintf("/api/containers?env=%d", env), map[string]any{"name": name, "image": enginetest.Image(),
		"command": cmd, "labels": map[string]string{enginetest.Label: h.label}, "startAfterCreate": start}, &out)
	if out.ID == "" {
		t.Fatal("no container id")
	}
	return out.ID
}

func containerState(t *testing.T, h *berth, env int64, id string) string {
	t.Helper()
	var in struct{ State struct{ Status string } }
	h.must(200, "GET", fmt.Sprintf("/api/containers/%s?env=%d", id, env), nil, &in)
	return in.State.Status
}

func containerLifecycle(t *testing.T, h *berth, socket string, env int64) {
	name := fmt.Sprintf("life-%s-%d", h.label, env)
	id := createContainer(t, h, env, name, true, "sleep", "3600")
	if !slices.Contains(labelled(t, socket, h.label), id) {
		t.Fatal("the container is not on the second engine")
	}
	if slices.Contains(labelled(t, enginetest.Socket, h.label), id) {
		t.Fatal("the container is on the local engine")
	}
	var list []struct{ ID, Name string }
	h.must(200, "GET", fmt.Sprintf("/api/containers?env=%d&all=true", env), nil, &list)
	if !slices.ContainsFunc(list, func(c struct{ ID, Name string }) bool { return c.ID == id && c.Name == name }) {
		t.Fatalf("the list through the agent lacks %s", name)
	}
	for _, step := range []struct{ action, want string }{
		{"stop", "exited"}, {"start", "running"}, {"restart", "running"}, {"pause", "paused"}, {"unpause", "running"},
	} {
		h.must(200, "POST", fmt.Sprintf("/api/containers/%s/%s?env=%d", id, step.action, env), nil, nil)
		if got := containerState(t, h, env, id); got != step.want {
			t.Fatalf("after %s: state %q, want %q", step.action, got, step.want)
		}
	}
	h.must(200, "DELETE", fmt.Sprintf("/api/containers/%s?env=%d&force=true", id, env), nil, nil)
	if slices.Contains(labelled(t, socket, h.label), id) {
		t.Fatal("the container is still on the second engine after delete")
	}
}

func execRoundTrip(t *testing.T, h *berth, env int64) { execAcross(t, h, h, env) }

// execAcross creates a terminal session through h and attaches to it (the
// console's WebSocket) through attach (another replica, or h).
func execAcross(t *testing.T, h, attach *berth, env int64) {
	id := createContainer(t, h, env, fmt.Sprintf("exec-%s-%d", h.label, env), true, "sleep", "3600")
	var inst struct {
		ExecID         string
		ConnectionInfo struct{ Type string }
	}
	h.must(200, "POST", fmt.Sprintf("/api/containers/%s/exec?envId=%d", id, env), map[string]string{"shell": "/bin/sh"}, &inst)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(attach.url, "http")+
		fmt.Sprintf("/api/containers/exec/%s/attach?envId=%d", inst.ExecID, env), &websocket.DialOptions{HTTPHeader: attach.header})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	h.must(200, "POST", fmt.Sprintf("/api/containers/exec/%s/resize?envId=%d&h=33&w=101", inst.ExecID, env), nil, nil)
	if err := ws.Write(ctx, websocket.MessageText, []byte("stty size; echo round-$((40+2))-trip\n")); err != nil {
		t.Fatal(err)
	}
	var seen strings.Builder
	for !strings.Contains(seen.String(), "round-42-trip") || !strings.Contains(seen.String(), "33 101") {
		_, b, err := ws.Read(ctx)
		if err != nil {
			t.Fatalf("read: %v (so far %q)", err, seen.String())
		}
		seen.Write(b)
	}
	if err := ws.Write(ctx, websocket.MessageText, []byte("exit\n")); err != nil {
		t.Fatal(err)
	}
	for {
		if _, _, err := ws.Read(ctx); err != nil {
			if websocket.CloseStatus(err) != websocket.StatusNormalClosure {
				t.Fatalf("the session ended with %v, want a normal closure", err)
			}
			break
		}
	}
}

func logsStream(t *testing.T, h *berth, env int64) {
	id := createContainer(t, h, env, fmt.Sprintf("logs-%s-%d", h.label, env), true,
		"sh", "-c", "i=0; while true; do i=$((i+1)); echo line-$i; sleep 0.2; done")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	events := h.stream(ctx, "GET", fmt.Sprintf("/api/containers/%s/logs/stream?env=%d&tail=0", id, env), nil)
	lines := 0
	for ev := range events {
		if ev.Name == "log" && strings.Contains(ev.Data, "line-") {
			lines++
			if lines == 3 {
				return
			}
		}
		if ev.Name == "error" {
			t.Fatalf("log stream error: %s", ev.Data)
		}
	}
	t.Fatalf("the log stream ended after %d lines", lines)
}

func statsStream(t *testing.T, h *berth, env int64) {
	id := createContainer(t, h, env, fmt.Sprintf("stats-%s-%d", h.label, env), true, "sleep", "3600")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var got map[string]any
	done := false
	for ev := range h.stream(ctx, "GET", fmt.Sprintf("/api/containers/stats/stream?env=%d", env), nil) {
		switch ev.Name {
		case "stat":
			var s map[string]any
			if err := json.Unmarshal([]byte(ev.Data), &s); err != nil {
				t.Fatal(err)
			}
			if s["id"] == id {
				got = s
			}
		case "done":
			done = true
		case "error":
			t.Fatalf("stats stream error: %s", ev.Data)
		}
	}
	if !done || got == nil {
		t.Fatalf("stats stream: done %v, our container's stat %v", done, got)
	}
	if ml, _ := got["memoryLimit"].(float64); ml <= 0 {
		t.Errorf("stat without a memory limit: %v", got)
	}
}

func events(t *testing.T, h *berth, env int64) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	evs := h.stream(ctx, "GET", fmt.Sprintf("/api/events?env=%d", env), nil)
	time.Sleep(300 * time.Millisecond) // let the subscription reach the engine
	id := createContainer(t, h, env, fmt.Sprintf("events-%s-%d", h.label, env), true, "sleep", "3600")
	for ev := range evs {
		if ev.Name == "container-start" && strings.Contains(ev.Data, id) {
			return
		}
	}
	t.Fatal("no container-start event for the container")
}

// registry is the test registry with credentials (scripts/test-env.sh).
func registry(t *testing.T) (host, user, password string) {
	t.Helper()
	enginetest.RequireEnv(t, "registry", "BERTH_TEST_REGISTRY", "BERTH_TEST_REGISTRY_USER", "BERTH_TEST_REGISTRY_PASSWORD")
	return os.Getenv("BERTH_TEST_REGISTRY"), os.Getenv("BERTH_TEST_REGISTRY_USER"), os.Getenv("BERTH_TEST_REGISTRY_PASSWORD")
}

// addRegistry configures the test registry in Berth and returns its id.
func addRegistry(t *testing.T, h *berth, host, user, password string) int64 {
	t.Helper()
	var reg struct{ ID int64 }
	status, b := h.do("POST", "/api/registries", map[string]any{"name": "reg-" + h.label, "url": host, "username": user, "password": password})
	if status == 201 {
		if err := json.Unmarshal(b, &reg); err != nil {
			t.Fatal(err)
		}
		return reg.ID
	}
	var list []struct {
		ID   int64
		Name string
	}
	h.must(200, "GET", "/api/registries", nil, &list)
	for _, r := range list {
		if r.Name == "reg-"+h.label {
			return r.ID
		}
	}
	t.Fatalf("create registry: %d %s", status, b)
	return 0
}

func pullAndPush(t *testing.T, h *berth, socket string, env int64) {
	host, user, password := registry(t)
	regID := addRegistry(t, h, host, user, password)
	repo := fmt.Sprintf("berth-test/agent-push-%s-%d", h.label, env)
	local, remote := repo+":1", host+"/"+repo+":1"
	// Push: tag on the remote engine, push through the agent with the
	// registry's credentials.
	h.must(200, "POST", fmt.Sprintf("/api/images/%s/tag?env=%d", url.PathEscape(enginetest.Image()), env),
		map[string]string{"repo": repo, "tag": "1"}, nil)
	var pushed map[string]any
	h.must(200, "POST", fmt.Sprintf("/api/images/push?env=%d", env), map[string]any{"imageId": local, "registryId": regID},
		&pushed, "Accept", "application/json")
	if pushed["status"] != "complete" || pushed["targetTag"] != remote {
		t.Fatalf("push = %v", pushed)
	}
	// Pull it back after removing it from the remote engine.
	for _, ref := range []string{local, remote} {
		h.do("DELETE", fmt.Sprintf("/api/images/%s?env=%d&force=true", url.PathEscape(ref), env), nil)
	}
	var pulled map[string]any
	h.must(200, "POST", fmt.Sprintf("/api/images/pull?env=%d", env), map[string]any{"image": remote, "scanAfterPull": false},
		&pulled, "Accept", "application/json")
	if pulled["status"] != "complete" {
		t.Fatalf("pull = %v", pulled)
	}
	var img struct{ RepoTags []string }
	engineGet(t, socket, "/images/"+url.PathEscape(remote)+"/json", &img)
	if !slices.Contains(img.RepoTags, remote) {
		t.Errorf("the pulled image is not on the second engine: %v", img.RepoTags)
	}
	t.Cleanup(func() {
		cmd := exec.Command("docker", "rmi", "-f", remote, local)
		cmd.Env = append(os.Environ(), "DOCKER_HOST=unix://"+socket)
		_ = cmd.Run()
	})
}

func stackWithSecret(t *testing.T, h *berth, socket string, env int64, a *agent) {
	name := fmt.Sprintf("stk-%s-%d", h.label, env)
	secret := "s3cr3t-" + randomLabel()
	compose := fmt.Sprintf(`services:
  web:
    image: %[1]s
    command: ["sleep", "3600"]
    environment:
      API_KEY: ${API_KEY}
      MODE: ${MODE}
    labels:
      %[2]s: %[3]s
  worker:
    image: %[1]s
    command: ["sleep", "3600"]
    labels:
      %[2]s: %[3]s
`, enginetest.Image(), enginetest.Label, h.label)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var final map[string]any
	for ev := range h.stream(ctx, "POST", fmt.Sprintf("/api/stacks?env=%d", env), map[string]any{"name": name, "compose": compose,
		"envVars": []map[string]any{{"key": "API_KEY", "value": secret, "isSecret": true}, {"key": "MODE", "value": "plain"}}}) {
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
	ids := labelled(t, socket, h.label)
	var web map[string]any
	services := map[string]bool{}
	for _, id := range ids {
		var c struct {
			Config struct {
				Env    []string
				Labels map[string]string
			}
			State struct{ Running bool }
		}
		engineGet(t, socket, "/containers/"+id+"/json", &c)
		if c.Config.Labels["com.docker.compose.project"] != name {
			continue
		}
		services[c.Config.Labels["com.docker.compose.service"]] = c.State.Running
		if c.Config.Labels["com.docker.compose.service"] == "web" {
			web = map[string]any{"env": c.Config.Env}
		}
	}
	if !services["web"] || !services["worker"] {
		t.Fatalf("stack services running on the second engine: %v", services)
	}
	if env := fmt.Sprint(web["env"]); !strings.Contains(env, "API_KEY="+secret) || !strings.Contains(env, "MODE=plain") {
		t.Errorf("web's environment lacks its variables: %s", env)
	}
	// The secret never reaches the agent's disk.
	if hits := grepDir(t, a.dataDir, secret); len(hits) > 0 {
		t.Errorf("the secret was written on the agent's disk: %v", hits)
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

// grepDir reports the files under dir that contain s.
func grepDir(t *testing.T, dir, s string) []string {
	t.Helper()
	var hits []string
	_ = filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return nil
		}
		if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), s) {
			hits = append(hits, p)
		}
		return nil
	})
	return hits
}
