package agents_test

// A Hawser agent (the reference's agent) written from its protocol facts
// (COMPAT.md, section Hawser), for the tests: the real one is not served by
// the module proxy here. Standard mode is a reverse proxy to the engine's
// socket guarded by X-Hawser-Token, plus /_hawser/health, /_hawser/info and
// /_hawser/compose; edge mode dials Berth's /api/hawser/connect and answers
// its frames. Both run compose the way the agent does: the pushed compose
// file written under its stacks directory, then compose run on its engine.

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"

	"github.com/berth-dev/berth/shared/engine"
)

// socketClient is an HTTP client of the engine at socket.
func socketClient(socket string) *http.Client {
	return &http.Client{Transport: &http.Transport{DisableCompression: true,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", socket)
		}}}
}

// engineOf is Berth's engine client of the agent's own engine (the test
// agent's stand-in for the Docker SDK the real agent uses).
func engineOf(t *testing.T, socket string) *engine.Client {
	t.Helper()
	m := engine.NewManager(slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(m.Close)
	c, err := m.Client(context.Background(), engine.Endpoint{ID: 1, ConnectionType: engine.Socket, SocketPath: socket})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// hawserComposeOp is the body of POST /_hawser/compose.
type hawserComposeOp struct {
	Operation       string            `json:"operation"`
	ProjectName     string            `json:"projectName"`
	ComposeFile     string            `json:"composeFile"`
	ComposeFileName string            `json:"composeFileName"`
	EnvVars         map[string]string `json:"envVars"`
	Files           map[string]string `json:"files"`
	ForceRecreate   bool              `json:"forceRecreate"`
	RemoveVolumes   bool              `json:"removeVolumes"`
	Registries      []struct {
		URL, Username, Password string
	} `json:"registries"`
}

type hawserComposeResult struct {
	Success bool   `json:"success"`
	Output  string `json:"output"`
	Error   string `json:"error,omitempty"`
}

// runCompose runs a compose operation as the agent does.
func runCompose(ctx context.Context, eng *engine.Client, stacksDir string, body []byte) hawserComposeResult {
	var op hawserComposeOp
	if err := json.Unmarshal(body, &op); err != nil {
		return hawserComposeResult{Error: err.Error()}
	}
	dir := filepath.Join(stacksDir, op.ProjectName)
	name := op.ComposeFileName
	if name == "" {
		name = "docker-compose.yml"
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return hawserComposeResult{Error: err.Error()}
	}
	for rel, content := range op.Files {
		if err := os.WriteFile(filepath.Join(dir, filepath.Clean("/"+rel)), []byte(content), 0o600); err != nil {
			return hawserComposeResult{Error: err.Error()}
		}
	}
	var p *types.Project
	if op.ComposeFile != "" {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(op.ComposeFile), 0o600); err != nil {
			return hawserComposeResult{Error: err.Error()}
		}
		var err error
		p, err = loader.LoadWithContext(ctx, types.ConfigDetails{WorkingDir: dir,
			ConfigFiles: []types.ConfigFile{{Filename: path, Content: []byte(op.ComposeFile)}}, Environment: op.EnvVars},
			func(o *loader.Options) { o.SetProjectName(op.ProjectName, true); o.ResolvePaths = true })
		if err != nil {
			return hawserComposeResult{Error: err.Error()}
		}
		p.ComposeFiles = []string{path}
		engine.LabelProject(p)
	}
	var out strings.Builder
	progress := func(line string) { out.WriteString(line + "\n") }
	var err error
	switch op.Operation {
	case "up":
		if p == nil {
			return hawserComposeResult{Error: "up needs a compose file"}
		}
		err = eng.ComposeUp(ctx, p, engine.UpOptions{Force: op.ForceRecreate}, nil, progress)
	case "down":
		err = eng.ComposeDown(ctx, op.ProjectName, p, op.RemoveVolumes, progress)
	case "stop":
		err = eng.ComposeStop(ctx, op.ProjectName, p, progress)
	case "start":
		err = eng.ComposeStart(ctx, op.ProjectName, p, progress)
	case "restart":
		err = eng.ComposeRestart(ctx, op.ProjectName, p, progress)
	default:
		err = fmt.Errorf("unknown operation %q", op.Operation)
	}
	if err != nil {
		return hawserComposeResult{Output: out.String(), Error: err.Error()}
	}
	return hawserComposeResult{Success: true, Output: out.String()}
}

// hawserStandardAgent serves a standard-mode test agent for the engine at
// socket with token; it returns its port and the stacks directory.
func hawserStandardAgent(t *testing.T, socket, token string) (int, string) {
	t.Helper()
	eng := engineOf(t, socket)
	stacks := t.TempDir()
	target, _ := url.Parse("http://docker")
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.Transport = socketClient(socket).Transport
	proxy.FlushInterval = -1
	started := time.Now()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/_hawser/health" {
			_ = json.NewEncoder(w).Encode(map[string]string{"status": "healthy"})
			return
		}
		got := r.Header.Get("X-Hawser-Token")
		if got == "" {
			got = r.URL.Query().Get("token")
		}
		if subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1 {
			http.Error(w, `{"error":"Unauthorized"}`, http.StatusUnauthorized)
			return
		}
		switch r.URL.Path {
		case "/_hawser/info":
			_ = json.NewEncoder(w).Encode(map[string]any{"agentId": "hawser-std-test", "agentName": "hawser standard (test)",
				"dockerVersion": "test", "hawserVersion": "0.2.test", "mode": "standard", "uptime": int(time.Since(started).Seconds())})
		case "/_hawser/compose":
			b, _ := io.ReadAll(r.Body)
			res := runCompose(r.Context(), eng, stacks, b)
			if !res.Success {
				w.WriteHeader(http.StatusInternalServerError)
			}
			_ = json.NewEncoder(w).Encode(res)
		default:
			proxy.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(func() {
		// Berth's streams (the activity collector's events) end with it.
		srv.CloseClientConnections()
		srv.Close()
	})
	port, _ := strconv.Atoi(srv.URL[strings.LastIndex(srv.URL, ":")+1:])
	return port, stacks
}

// hawserEdgeAgent is an edge-mode test agent.
type hawserEdgeAgent struct {
	t      *testing.T
	socket string
	eng    *engine.Client
	http   *http.Client
	stacks string

	ws      *websocket.Conn
	writeMu sync.Mutex
	ctx     context.Context
	cancel  context.CancelFunc
	done    chan struct{} // closed when the connection ended
	endErr  error

	mu      sync.Mutex
	streams map[string]context.CancelFunc
	execs   map[string]*engine.ExecStream
	execIDs map[string]string // session id → the engine's exec id
	pings   int
}

// hawserHello connects an edge agent with token; it returns the agent, or the
// hub's refusal (its error frame's message).
func hawserHello(t *testing.T, berthURL, socket, token string) (*hawserEdgeAgent, error) {
	t.Helper()
	return hawserHelloAs(t, berthURL, socket, token, "hawser-edge-test")
}

// hawserHelloAs is hawserHello for the agent whose id is agentID.
func hawserHelloAs(t *testing.T, berthURL, socket, token, agentID string) (*hawserEdgeAgent, error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(berthURL, "http")+"/api/hawser/connect", nil)
	if err != nil {
		cancel()
		return nil, err
	}
	ws.SetReadLimit(256 << 20)
	a := &hawserEdgeAgent{t: t, socket: socket, eng: engineOf(t, socket), http: socketClient(socket), stacks: t.TempDir(),
		ws: ws, ctx: ctx, cancel: cancel, done: make(chan struct{}), streams: map[string]context.CancelFunc{},
		execs: map[string]*engine.ExecStream{}, execIDs: map[string]string{}}
	t.Cleanup(a.close)
	host, _ := os.Hostname()
	a.send(map[string]any{"type": "hello", "version": "0.2.test", "protocol": "1.0", "agentId": agentID,
		"agentName": "hawser edge (test)", "token": token, "dockerVersion": "test", "hostname": host,
		"capabilities": []string{"exec", "metrics", "events", "compose"}})
	rctx, rcancel := context.WithTimeout(ctx, 30*time.Second)
	defer rcancel()
	_, data, err := ws.Read(rctx)
	if err != nil {
		return nil, fmt.Errorf("waiting for welcome: %w", err)
	}
	var f struct {
		Type, Message, Error string
		EnvironmentID        int64 `json:"environmentId"`
	}
	_ = json.Unmarshal(data, &f)
	if f.Type == "error" {
		// The hub closes with 1008 after its error.
		_, _, rerr := ws.Read(rctx)
		if websocket.CloseStatus(rerr) != websocket.StatusPolicyViolation {
			t.Errorf("after the refusal: %v, want a close with 1008", rerr)
		}
		return nil, errors.New(f.Message)
	}
	if f.Type != "welcome" {
		return nil, fmt.Errorf("first frame %s, want welcome", data)
	}
	go a.run()
	// Pushes: one host sample and one container event.
	a.send(map[string]any{"type": "metrics", "timestamp": time.Now().Unix(), "metrics": map[string]any{
		"cpuUsage": 50.0, "cpuCores": 2, "memoryTotal": 8 << 30, "memoryUsed": 2 << 30, "memoryFree": 6 << 30,
		"diskTotal": 100 << 30, "diskUsed": 40 << 30, "diskFree": 60 << 30, "networkRxBytes": 1, "networkTxBytes": 2, "uptime": 100}})
	a.send(map[string]any{"type": "container_event", "event": map[string]any{"containerId": "0123456789ab",
		"containerName": "pushed", "image": "busybox", "action": "start", "actorAttributes": map[string]string{"name": "pushed"},
		"timestamp": time.Now().UTC().Format(time.RFC3339Nano)}})
	return a, nil
}

func (a *hawserEdgeAgent) close() {
	a.cancel()
	_ = a.ws.CloseNow()
}

func (a *hawserEdgeAgent) send(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		a.t.Error(err)
		return
	}
	a.writeMu.Lock()
	defer a.writeMu.Unlock()
	_ = a.ws.Write(a.ctx, websocket.MessageText, b)
}

// ping sends the hub a ping, as Hawser does every heartbeat interval.
func (a *hawserEdgeAgent) ping() {
	a.send(map[string]any{"type": "ping", "timestamp": time.Now().UnixMilli()})
}

// ended reports whether the hub closed the connection (within wait).
func (a *hawserEdgeAgent) ended(wait time.Duration) bool {
	select {
	case <-a.done:
		return true
	case <-time.After(wait):
		return false
	}
}

func (a *hawserEdgeAgent) run() {
	defer close(a.done)
	for {
		_, data, err := a.ws.Read(a.ctx)
		if err != nil {
			a.endErr = err
			a.cancel()
			return
		}
		var f struct {
			Type      string            `json:"type"`
			RequestID string            `json:"requestId"`
			Method    string            `json:"method"`
			Path      string            `json:"path"`
			Headers   map[string]string `json:"headers"`
			Body      json.RawMessage   `json:"body"`
			IsBinary  bool              `json:"isBinary"`
			Streaming bool              `json:"streaming"`
			ExecID    string            `json:"execId"`
			Container string            `json:"containerId"`
			Cmd       string            `json:"cmd"`
			User      string            `json:"user"`
			Cols      int               `json:"cols"`
			Rows      int               `json:"rows"`
			Data      string            `json:"data"`
			Reason    string            `json:"reason"`
		}
		if json.Unmarshal(data, &f) != nil {
			continue
		}
		switch f.Type {
		case "ping":
			a.mu.Lock()
			a.pings++
			a.mu.Unlock()
			a.send(map[string]any{"type": "pong", "timestamp": time.Now().Unix()})
		case "request":
			go a.request(f.RequestID, f.Method, f.Path, f.Headers, f.Body, f.IsBinary, f.Streaming)
		case "stream_end":
			a.mu.Lock()
			if cancel := a.streams[f.RequestID]; cancel != nil {
				cancel()
			}
			a.mu.Unlock()
		case "exec_start":
			go a.execStart(f.ExecID, f.Container, f.Cmd, f.User, f.Cols, f.Rows)
		case "exec_input":
			b, _ := base64.StdEncoding.DecodeString(f.Data)
			a.mu.Lock()
			s := a.execs[f.ExecID]
			a.mu.Unlock()
			if s != nil {
				_, _ = s.Write(b)
			}
		case "exec_resize":
			a.mu.Lock()
			id := a.execIDs[f.ExecID]
			a.mu.Unlock()
			if id != "" {
				_ = a.eng.ResizeExec(a.ctx, id, uint(f.Rows), uint(f.Cols))
			}
		case "exec_end":
			a.mu.Lock()
			s := a.execs[f.ExecID]
			a.mu.Unlock()
			if s != nil {
				_ = s.Close()
			}
		}
	}
}

// request answers one request frame from the engine.
func (a *hawserEdgeAgent) request(id, method, path string, headers map[string]string, body json.RawMessage, binary, streaming bool) {
	if path == "/_hawser/compose" {
		ctx, cancel := context.WithTimeout(a.ctx, 300*time.Second)
		defer cancel()
		res := runCompose(ctx, a.eng, a.stacks, body)
		b, _ := json.Marshal(res)
		code := http.StatusOK
		if !res.Success {
			code = http.StatusInternalServerError
		}
		a.send(map[string]any{"type": "response", "requestId": id, "statusCode": code, "body": string(b)})
		return
	}
	ctx, cancel := context.WithCancel(a.ctx)
	defer cancel()
	var rd io.Reader
	if len(body) > 0 && !streaming {
		if binary {
			var s string
			_ = json.Unmarshal(body, &s)
			b, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				a.send(map[string]any{"type": "error", "requestId": id, "error": err.Error(), "code": "DECODE_ERROR"})
				return
			}
			rd = bytes.NewReader(b)
		} else {
			rd = bytes.NewReader(body)
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://docker"+path, rd)
	if err != nil {
		a.send(map[string]any{"type": "error", "requestId": id, "error": err.Error(), "code": "DOCKER_ERROR"})
		return
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	if streaming {
		a.mu.Lock()
		a.streams[id] = cancel
		a.mu.Unlock()
		defer func() {
			a.mu.Lock()
			delete(a.streams, id)
			a.mu.Unlock()
			a.send(map[string]any{"type": "stream_end", "requestId": id, "reason": "completed"})
		}()
	}
	resp, err := a.http.Do(req)
	if err != nil {
		a.send(map[string]any{"type": "error", "requestId": id, "error": err.Error(), "code": "DOCKER_ERROR"})
		return
	}
	defer resp.Body.Close()
	if streaming {
		buf := make([]byte, 32<<10)
		for {
			n, err := resp.Body.Read(buf)
			if n > 0 {
				a.send(map[string]any{"type": "stream", "requestId": id, "data": append([]byte(nil), buf[:n]...)})
			}
			if err != nil {
				return
			}
		}
	}
	b, _ := io.ReadAll(resp.Body)
	h := map[string]string{}
	for k, v := range resp.Header {
		h[k] = v[0]
	}
	out := map[string]any{"type": "response", "requestId": id, "statusCode": resp.StatusCode, "headers": h}
	if isBinaryBody(h["Content-Type"], b) {
		out["body"], out["isBinary"] = base64.StdEncoding.EncodeToString(b), true
	} else {
		out["body"] = string(b)
	}
	a.send(out)
}

// isBinaryBody is the agent's rule: binary content types or control bytes.
func isBinaryBody(ct string, b []byte) bool {
	for _, s := range []string{"octet-stream", "raw-stream", "tar", "gzip"} {
		if strings.Contains(ct, s) {
			return true
		}
	}
	for _, c := range b {
		if c < 0x09 || (c > 0x0D && c < 0x20) || c == 0x7F {
			return true
		}
	}
	return false
}

// execStart runs a terminal session as the agent does: an exec with a TTY.
func (a *hawserEdgeAgent) execStart(id, container, cmd, user string, cols, rows int) {
	execID, err := a.eng.CreateExec(a.ctx, container, engine.ExecSpec{Cmd: []string{cmd}, User: user, Tty: true})
	if err != nil {
		a.send(map[string]any{"type": "error", "requestId": id, "error": err.Error(), "code": "EXEC_CREATE_ERROR"})
		return
	}
	s, err := a.eng.StartExec(a.ctx, execID, true)
	if err != nil {
		a.send(map[string]any{"type": "error", "requestId": id, "error": err.Error(), "code": "EXEC_START_ERROR"})
		return
	}
	a.mu.Lock()
	a.execs[id], a.execIDs[id] = s, execID
	a.mu.Unlock()
	if cols > 0 && rows > 0 {
		_ = a.eng.ResizeExec(a.ctx, execID, uint(rows), uint(cols))
	}
	a.send(map[string]any{"type": "exec_ready", "execId": id})
	buf := make([]byte, 32<<10)
	for {
		n, err := s.Read(buf)
		if n > 0 {
			a.send(map[string]any{"type": "exec_output", "execId": id, "data": base64.StdEncoding.EncodeToString(buf[:n])})
		}
		if err != nil {
			break
		}
	}
	a.mu.Lock()
	delete(a.execs, id)
	a.mu.Unlock()
	a.send(map[string]any{"type": "exec_end", "execId": id, "reason": "container_exit"})
}
