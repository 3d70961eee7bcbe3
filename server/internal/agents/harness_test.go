package agents_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/apitest"
	"github.com/berth-dev/berth/server/internal/store/storetest"
	"github.com/berth-dev/berth/shared/enginetest"
	"github.com/berth-dev/berth/shared/testwait"
)

// agentBin is the berth-agent binary the tests run (built once by TestMain,
// or BERTH_AGENT_BIN).
var agentBin string

func TestMain(m *testing.M) {
	code := func() int {
		if bin := os.Getenv("BERTH_AGENT_BIN"); bin != "" {
			agentBin = bin
			return m.Run()
		}
		dir, err := os.MkdirTemp("", "berth-agent-bin-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		agentBin = filepath.Join(dir, "berth-agent")
		cmd := exec.Command("go", "build", "-o", agentBin, "github.com/berth-dev/berth/agent/cmd/berth-agent")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "build berth-agent: %v\n%s", err, out)
			return 1
		}
		return m.Run()
	}()
	os.Exit(code)
}

// engine2 returns the socket of the second engine (the agents' remote host).
func engine2(t *testing.T) string {
	t.Helper()
	enginetest.Require(t)
	enginetest.RequireEnv(t, "second engine", "BERTH_TEST_ENGINE2_SOCKET")
	// Shared with the other tests that use it; a prune of every unused
	// image there (api's prune tests) waits for them.
	enginetest.ShareEngine2(t)
	return os.Getenv("BERTH_TEST_ENGINE2_SOCKET")
}

// engineGet reads a JSON answer of the raw Engine API at socket.
func engineGet(t *testing.T, socket, path string, out any) {
	t.Helper()
	c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", socket)
	}}}
	resp, err := c.Get("http://engine" + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("engine %s: %d %s", path, resp.StatusCode, b)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatal(err)
	}
}

// labelled returns the ids of the containers on socket labelled berth.test=label.
func labelled(t *testing.T, socket, label string) []string {
	t.Helper()
	var list []struct{ ID string }
	f := `{"label":["` + enginetest.Label + `=` + label + `"]}`
	engineGet(t, socket, "/containers/json?all=1&filters="+urlQuery(f), &list)
	ids := []string{}
	for _, c := range list {
		ids = append(ids, c.ID)
	}
	return ids
}

func urlQuery(s string) string {
	r := strings.NewReplacer("{", "%7B", "}", "%7D", "\"", "%22", "[", "%5B", "]", "%5D", ":", "%3A", "=", "%3D", ",", "%2C")
	return r.Replace(s)
}

// removeLabelled force-removes what a test created on socket.
func removeLabelled(t *testing.T, socket, label string) {
	t.Helper()
	old := os.Getenv("DOCKER_HOST")
	_ = old
	for _, args := range [][]string{
		{"ps", "-aq", "--filter", "label=" + enginetest.Label + "=" + label},
	} {
		cmd := exec.Command("docker", args...)
		cmd.Env = append(os.Environ(), "DOCKER_HOST=unix://"+socket)
		out, _ := cmd.Output()
		if ids := strings.Fields(string(out)); len(ids) > 0 {
			rm := exec.Command("docker", append([]string{"rm", "-f", "-v"}, ids...)...)
			rm.Env = cmd.Env
			_ = rm.Run()
		}
	}
	for _, kind := range []string{"network", "volume"} {
		cmd := exec.Command("docker", kind, "ls", "-q", "--filter", "label="+enginetest.Label+"="+label)
		cmd.Env = append(os.Environ(), "DOCKER_HOST=unix://"+socket)
		out, _ := cmd.Output()
		if ids := strings.Fields(string(out)); len(ids) > 0 {
			rm := exec.Command("docker", append([]string{kind, "rm"}, ids...)...)
			rm.Env = cmd.Env
			_ = rm.Run()
		}
	}
}

func randomLabel() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// berth is an in-process Berth with its HTTP client.
type berth struct {
	t     *testing.T
	b     *apitest.Berth
	url   string
	http  *http.Client
	logs  *apitest.LockedBuffer
	opts  apitest.Options
	label string
	// header goes with every request (a session cookie; none when
	// authentication is off).
	header http.Header
}

// in is h for the (sub)test t: its failures are t's.
func (h *berth) in(t *testing.T) *berth {
	c := *h
	c.t = t
	return &c
}

// startBerth serves a Berth (authentication off) whose edge agents' port is
// a free loopback port; heartbeat sets the edge heartbeat (0: default).
func startBerth(t *testing.T, heartbeat time.Duration) *berth {
	t.Helper()
	enginetest.Require(t)
	logs := &apitest.LockedBuffer{}
	o := apitest.Options{DBPath: filepath.Join(t.TempDir(), "berth.db"), Box: storetest.Box(t),
		Log: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})), AgentHeartbeat: heartbeat}
	h := &berth{t: t, http: &http.Client{Timeout: 120 * time.Second}, logs: logs, opts: o, label: randomLabel()}
	h.start()
	t.Cleanup(func() {
		if h.b != nil {
			h.b.Close()
		}
		if t.Failed() {
			t.Logf("berth log:\n%s", logs.String())
		}
	})
	return h
}

func (h *berth) start() {
	h.t.Helper()
	b, err := apitest.Start(context.Background(), h.opts)
	if err != nil {
		h.t.Fatal(err)
	}
	h.b, h.url = b, b.URL
	// A restart keeps the agent port (agents reconnect to it).
	h.opts.AgentAddr = strings.TrimPrefix(b.AgentURL, "http://")
}

// restart stops Berth and starts it again on the same database and ports.
func (h *berth) restart() {
	h.t.Helper()
	h.b.Close()
	h.b = nil
	h.opts.Addr = strings.TrimPrefix(h.url, "http://")
	h.start()
}

// do sends a request with an optional JSON body; it returns the status and body.
func (h *berth) do(method, path string, body any, headers ...string) (int, []byte) {
	h.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			h.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, h.url+path, rd)
	maps.Copy(req.Header, h.header)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := h.http.Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// must sends a request that must answer want and decodes its body into out.
func (h *berth) must(want int, method, path string, body, out any, headers ...string) {
	h.t.Helper()
	status, b := h.do(method, path, body, headers...)
	if status != want {
		h.t.Fatalf("%s %s: %d %s, want %d", method, path, status, b, want)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			h.t.Fatalf("%s %s: decode %s: %v", method, path, b, err)
		}
	}
}

type sseEvent = apitest.Event

// stream opens an SSE endpoint; the channel closes when the stream ends.
func (h *berth) stream(ctx context.Context, method, path string, body any) <-chan sseEvent {
	h.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequestWithContext(ctx, method, h.url+path, rd)
	maps.Copy(req.Header, h.header)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{}).Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		h.t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	h.t.Cleanup(func() { resp.Body.Close() })
	ch := apitest.Events(resp.Body, 256)
	return ch
}

// environment is the part of an environment object the tests read.
type environment struct {
	ID                int64    `json:"id"`
	ConnectionType    string   `json:"connectionType"`
	AgentConnected    *bool    `json:"agentConnected"`
	AgentID           *string  `json:"agentId"`
	AgentName         *string  `json:"agentName"`
	AgentVersion      *string  `json:"agentVersion"`
	AgentCapabilities []string `json:"agentCapabilities"`
	AgentLastSeen     *string  `json:"agentLastSeen"`
	HasAgentToken     bool     `json:"hasAgentToken"`
	AgentToken        *string  `json:"agentToken"`
	AgentStatus       *struct {
		Connected      bool       `json:"connected"`
		ConnectedSince *time.Time `json:"connectedSince"`
		LastSeen       *time.Time `json:"lastSeen"`
		LastError      *string    `json:"lastError"`
	} `json:"agentStatus"`
}

func (h *berth) environment(id int64) environment {
	h.t.Helper()
	var e environment
	h.must(200, "GET", fmt.Sprintf("/api/environments/%d", id), nil, &e)
	return e
}

// waitFor polls cond until it holds, failing with what after a minute.
var waitFor = testwait.Until

// waitConnected waits until env's edge agent is connected (or not).
func (h *berth) waitConnected(id int64, want bool) environment {
	h.t.Helper()
	var e environment
	waitFor(h.t, fmt.Sprintf("environment %d agentConnected=%v", id, want), func() bool {
		e = h.environment(id)
		return e.AgentConnected != nil && *e.AgentConnected == want
	})
	return e
}

// install is the answer of POST /api/environments/{id}/agent-token.
type install struct {
	Token, Command, DockerRun, ServerURL string
}

// createEdge creates an agent-edge environment and its token.
func (h *berth) createEdge(name string) (environment, install) {
	h.t.Helper()
	var e environment
	h.must(201, "POST", "/api/environments", map[string]any{"name": name, "connectionType": "agent-edge"}, &e)
	var in install
	h.must(200, "POST", fmt.Sprintf("/api/environments/%d/agent-token", e.ID), nil, &in)
	return e, in
}

// agent is a berth-agent process.
type agent struct {
	t       *testing.T
	args    []string
	env     []string
	dataDir string
	cmd     *exec.Cmd
	out     *apitest.LockedBuffer
	done    chan struct{}
}

// runAgent starts berth-agent with args against the engine at socket.
func runAgent(t *testing.T, socket string, args ...string) *agent {
	t.Helper()
	a := &agent{t: t, args: args, dataDir: t.TempDir(), out: &apitest.LockedBuffer{}}
	a.env = append(os.Environ(), "DOCKER_SOCKET="+socket, "BERTH_AGENT_DATA_DIR="+a.dataDir, "LOG_LEVEL=debug",
		"BERTH_TOKEN=", "BERTH_SERVER=", "BERTH_AGENT_LISTEN=")
	a.start()
	t.Cleanup(func() {
		a.kill()
		if t.Failed() {
			t.Logf("agent output:\n%s", a.out.String())
		}
	})
	return a
}

func (a *agent) start() {
	a.t.Helper()
	a.cmd = exec.Command(agentBin, a.args...)
	a.cmd.Env = a.env
	a.cmd.Stdout, a.cmd.Stderr = a.out, a.out
	if err := a.cmd.Start(); err != nil {
		a.t.Fatal(err)
	}
	a.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) {
		_ = cmd.Wait()
		close(done)
	}(a.cmd, a.done)
}

// kill ends the agent at once (SIGKILL) and waits for it.
func (a *agent) kill() {
	if a.cmd == nil {
		return
	}
	_ = a.cmd.Process.Signal(syscall.SIGKILL)
	<-a.done
	a.cmd = nil
}

// edgeAgent runs an edge agent with token against socket.
func edgeAgent(t *testing.T, h *berth, socket, token string, extra ...string) *agent {
	t.Helper()
	return edgeAgentTo(t, h.b.AgentURL, socket, token, extra...)
}

// edgeAgentTo runs an edge agent with token against socket that dials server.
func edgeAgentTo(t *testing.T, server, socket, token string, extra ...string) *agent {
	t.Helper()
	args := append([]string{"--server", server, "--token", token, "--name", "edge-test",
		"--reconnect-min", "100ms", "--reconnect-max", "1s"}, extra...)
	return runAgent(t, socket, args...)
}

// standardAgent runs a standard agent on a free loopback port and returns
// it with the port and its self-signed certificate (PEM).
func standardAgent(t *testing.T, socket, token string) (*agent, int, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	a := runAgent(t, socket, "--listen", "127.0.0.1:"+strconv.Itoa(port), "--token", token, "--name", "standard-test")
	certFile := filepath.Join(a.dataDir, "tls", "agent.crt")
	var cert []byte
	waitFor(t, "the standard agent's certificate", func() bool {
		cert, err = os.ReadFile(certFile)
		return err == nil && strings.Contains(a.out.String(), "listening")
	})
	return a, port, string(cert)
}
