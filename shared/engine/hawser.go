package engine

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/compose-spec/compose-go/v2/types"
)

// Hawser is the reference's agent. Berth accepts it beside its own agents so
// that hosts migrate without reinstalling anything: hawser-standard is the
// Docker API behind a URL guarded by the X-Hawser-Token header, hawser-edge
// an agent that dialled Berth over WebSocket (the server's hawser package).
const (
	HawserStandard = "hawser-standard"
	HawserEdge     = "hawser-edge"
)

// HawserTokenHeader carries a standard Hawser agent's token.
const HawserTokenHeader = "X-Hawser-Token"

// HawserDefaultPort is where a standard Hawser agent listens by default.
const HawserDefaultPort = 2376

// IsHawser reports whether connType is one of Hawser's.
func IsHawser(connType string) bool { return connType == HawserStandard || connType == HawserEdge }

// HawserEdges reaches the Hawser agents that dialled Berth (the server's
// hawser hub provides it; Manager.UseHawser installs it).
type HawserEdges interface {
	// Transport tunnels Docker API requests to envID's agent as request
	// frames. While no agent is connected a request fails with an error
	// wrapping ErrAgentAbsent.
	Transport(envID int64) http.RoundTripper
	// Exec opens a terminal session (exec_* frames) on envID's agent.
	Exec(ctx context.Context, envID int64, s HawserExec) (HawserSession, error)
	// Resize sends exec_resize for a session opened through any replica
	// (the agent knows its sessions by exec id).
	Resize(ctx context.Context, envID int64, execID string, cols, rows int) error
	// HostMetrics is the host usage the agent pushed last (false: none yet).
	HostMetrics(envID int64) (HostMetrics, bool)
	// Agent is what the connected agent told in its hello (false: none is
	// connected).
	Agent(envID int64) (AgentInfo, bool)
}

// HawserExec is what an exec_start frame asks for.
type HawserExec struct {
	ExecID      string
	ContainerID string
	Cmd         string
	User        string
	Cols, Rows  int
}

// HawserSession is a terminal session on an edge Hawser agent: reads return
// the output (io.EOF once the agent ended it), writes are exec_input frames.
type HawserSession interface {
	io.ReadWriteCloser
	Resize(cols, rows int) error
	// Done is closed when the agent ended the session.
	Done() <-chan struct{}
}

// UseHawser makes hawser-edge environments reachable through h. Call it
// before the first Client.
func (m *Manager) UseHawser(h HawserEdges) { m.hawser = h }

// hawserLink is how a Client of a Hawser environment reaches the agent's
// own endpoints (/_hawser/info, /_hawser/compose) and its terminals.
type hawserLink struct {
	env   Endpoint
	http  *http.Client
	base  string      // scheme://host of the agent (a placeholder for edge)
	edges HawserEdges // edge only

	mu    sync.Mutex
	execs map[string]*hawserExec // execs created and not yet ended, by id
}

// hawserExec is an exec of an edge agent: created here, run by exec_start.
type hawserExec struct {
	containerID string
	spec        ExecSpec
	rows, cols  int // the terminal size asked for before the session started
	session     HawserSession
	recorded    time.Time
}

// hawserExecUnstartedTTL is how long an exec recorded and never started here
// is kept (one created here and attached through another replica): longer
// than any attach window.
const hawserExecUnstartedTTL = 10 * time.Minute

// pruneLocked drops the execs whose session ended and those never started
// here that are older than hawserExecUnstartedTTL. h.mu is held.
func (h *hawserLink) pruneLocked(now time.Time) {
	for id, x := range h.execs {
		if (x.session != nil && isDone(x.session)) || (x.session == nil && now.Sub(x.recorded) > hawserExecUnstartedTTL) {
			delete(h.execs, id)
		}
	}
}

// do sends one request to the agent with the token of a standard agent.
func (h *hawserLink) do(ctx context.Context, method, path string, body any, out any) (int, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, h.base+path, rd)
	if err != nil {
		return 0, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if h.env.ConnectionType == HawserStandard && h.env.AgentToken != "" {
		req.Header.Set(HawserTokenHeader, h.env.AgentToken)
	}
	res, err := h.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, 16<<20))
	if err != nil {
		return res.StatusCode, err
	}
	if res.StatusCode == http.StatusUnauthorized || res.StatusCode == http.StatusForbidden {
		return res.StatusCode, &Error{Kind: ErrUnauthorized, Msg: "The Hawser agent refused the token", err: errors.New(res.Status)}
	}
	if out != nil && len(b) > 0 {
		if err := json.Unmarshal(b, out); err != nil && res.StatusCode < 300 {
			return res.StatusCode, fmt.Errorf("engine: the Hawser agent answered %s: %w", path, err)
		}
	}
	return res.StatusCode, nil
}

// hawserInfo is GET /_hawser/info.
type hawserInfo struct {
	AgentID       string `json:"agentId"`
	AgentName     string `json:"agentName"`
	DockerVersion string `json:"dockerVersion"`
	HawserVersion string `json:"hawserVersion"`
	Mode          string `json:"mode"`
	Uptime        int64  `json:"uptime"`
}

// hawserAgentInfo asks a Hawser agent about itself (GET /_hawser/info) and
// its engine about its facts.
func (c *Client) hawserAgentInfo(ctx context.Context) (AgentInfo, Info, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if c.hawser.edges != nil {
		// An edge agent told about itself in its hello.
		a, ok := c.hawser.edges.Agent(c.envID)
		if !ok {
			return AgentInfo{}, Info{}, &OfflineError{EnvID: c.envID, Cause: ErrAgentAbsent}
		}
		info, err := c.Info(ctx)
		return a, info, err
	}
	var hi hawserInfo
	code, err := c.hawser.do(ctx, http.MethodGet, "/_hawser/info", nil, &hi)
	if err != nil {
		return AgentInfo{}, Info{}, c.fail(err)
	}
	if code >= 300 {
		return AgentInfo{}, Info{}, fmt.Errorf("engine: the Hawser agent answered /_hawser/info with %d", code)
	}
	caps := []string{"exec", "compose"}
	info, err := c.Info(ctx)
	if err != nil {
		return AgentInfo{}, Info{}, err
	}
	return AgentInfo{ID: hi.AgentID, Name: hi.AgentName, Version: hi.HawserVersion, Capabilities: caps}, info, nil
}

// HawserHealth is GET /_hawser/health of a standard agent (nil: healthy).
func (c *Client) HawserHealth(ctx context.Context) error {
	if c.hawser == nil {
		return unsupported("Hawser health on a " + c.conn.env.ConnectionType + " environment")
	}
	ctx, cancel := context.WithTimeout(ctx, PingTimeout)
	defer cancel()
	code, err := c.hawser.do(ctx, http.MethodGet, "/_hawser/health", nil, nil)
	if err != nil {
		return c.fail(err)
	}
	if code >= 300 {
		return &Error{Kind: ErrOffline, Msg: fmt.Sprintf("The Hawser agent is not healthy (%d)", code), err: errors.New("unhealthy")}
	}
	return nil
}

// hawserCompose is the body of POST /_hawser/compose (COMPAT, section Hawser).
type hawserCompose struct {
	Operation       string            `json:"operation"`
	ProjectName     string            `json:"projectName"`
	ComposeFile     string            `json:"composeFile"`
	ComposeFileName string            `json:"composeFileName,omitempty"`
	EnvVars         map[string]string `json:"envVars"`
	Files           map[string]string `json:"files"`
	ForceRecreate   bool              `json:"forceRecreate"`
	RemoveVolumes   bool              `json:"removeVolumes"`
	Build           bool              `json:"build"`
	NoBuildCache    bool              `json:"noBuildCache"`
	PullPolicy      string            `json:"pullPolicy,omitempty"`
	Registries      []hawserRegistry  `json:"registries"`
	ServiceName     string            `json:"serviceName,omitempty"`
}

type hawserRegistry struct {
	URL      string `json:"url"`
	Username string `json:"username"`
	Password string `json:"password"`
}

// hawserComposeResult is the agent's answer.
type hawserComposeResult struct {
	Success bool   `json:"success"`
	Output  string `json:"output"`
	Error   string `json:"error"`
}

// composeOnHawser runs one compose operation on the Hawser agent's host: the
// project goes as one compose file (the specification's JSON form, which is
// YAML too, variables applied) that the agent writes under its stacks
// directory and runs compose on.
func (c *Client) composeOnHawser(ctx context.Context, op, name string, p *types.Project,
	configure func(*hawserCompose), progress ComposeProgress) error {
	defer c.m.wrote(c.envID) // see OnWrite
	body := hawserCompose{Operation: op, ProjectName: name, ComposeFileName: "compose.yaml",
		EnvVars: map[string]string{}, Files: map[string]string{}, Registries: []hawserRegistry{}}
	if p != nil {
		q, err := p.WithServicesEnvironmentResolved(true)
		if err != nil {
			return fmt.Errorf("compose: %w", err)
		}
		relativize(q, p.WorkingDir)
		b, err := q.MarshalJSON(types.WithSecretContent)
		if err != nil {
			return fmt.Errorf("compose: %w", err)
		}
		body.ComposeFile = string(b)
	}
	if configure != nil {
		configure(&body)
	}
	ctx, cancel := context.WithTimeout(ctx, composeTimeout)
	defer cancel()
	var res hawserComposeResult
	code, err := c.hawser.do(ctx, http.MethodPost, "/_hawser/compose", body, &res)
	if err != nil {
		return c.fail(err)
	}
	if progress != nil {
		for line := range strings.SplitSeq(strings.TrimSpace(res.Output), "\n") {
			if line != "" {
				progress(line)
			}
		}
	}
	if code >= 300 || !res.Success {
		msg := strings.TrimSpace(res.Error)
		if msg == "" {
			msg = fmt.Sprintf("the Hawser agent answered %d", code)
		}
		return &Error{Msg: "compose " + op + " on the Hawser agent failed: " + msg, err: errors.New(msg)}
	}
	return nil
}

// hawserCredentials is the compose body's form of registry credentials.
func hawserCredentials(auths []Credentials) []hawserRegistry {
	out := make([]hawserRegistry, 0, len(auths))
	for _, a := range auths {
		out = append(out, hawserRegistry{URL: a.ServerAddress, Username: a.Username, Password: a.Password})
	}
	return out
}

// createHawserExec records an exec of an edge agent: the agent creates the
// engine's exec itself when the session starts (exec_start).
func (c *Client) createHawserExec(containerID string, spec ExecSpec) (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	id := hex.EncodeToString(b)
	h := c.hawser
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.execs == nil {
		h.execs = map[string]*hawserExec{}
	}
	now := time.Now()
	h.pruneLocked(now)
	h.execs[id] = &hawserExec{containerID: containerID, spec: spec, rows: 30, cols: 120, recorded: now}
	return id, nil
}

// PendingExec is what starting a terminal session created through another
// replica needs (store.ExecSession keeps it).
type PendingExec struct {
	ContainerID string
	Spec        ExecSpec
	Rows, Cols  int // 0: the default size
}

// PendingExec returns what starting execID elsewhere needs: for a Hawser
// edge agent's exec, recorded here and opened at attach time (false: the
// engine keeps the exec itself, any replica starts it).
func (c *Client) PendingExec(execID string) (PendingExec, bool) {
	if c.hawser == nil || c.hawser.edges == nil {
		return PendingExec{}, false
	}
	h := c.hawser
	h.mu.Lock()
	defer h.mu.Unlock()
	e := h.execs[execID]
	if e == nil {
		return PendingExec{}, false
	}
	return PendingExec{ContainerID: e.containerID, Spec: e.spec, Rows: e.rows, Cols: e.cols}, true
}

// AdoptExec records execID, created through another replica, so that
// StartExec opens it here; a size in p replaces the one recorded. A no-op
// but for a Hawser edge agent's exec not started yet.
func (c *Client) AdoptExec(execID string, p PendingExec) {
	if c.hawser == nil || c.hawser.edges == nil || p.ContainerID == "" {
		return
	}
	h := c.hawser
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.execs == nil {
		h.execs = map[string]*hawserExec{}
	}
	e := h.execs[execID]
	if e == nil {
		now := time.Now()
		h.pruneLocked(now)
		e = &hawserExec{containerID: p.ContainerID, spec: p.Spec, rows: 30, cols: 120, recorded: now}
		h.execs[execID] = e
	}
	if e.session == nil && p.Rows > 0 && p.Cols > 0 {
		e.rows, e.cols = p.Rows, p.Cols
	}
}

// hawserExecOf returns an exec recorded by createHawserExec.
func (h *hawserLink) hawserExecOf(id string) *hawserExec {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.execs[id]
}

// startHawserExec opens the exec's terminal session on the agent.
func (c *Client) startHawserExec(ctx context.Context, execID string) (*ExecStream, error) {
	h := c.hawser
	e := h.hawserExecOf(execID)
	if e == nil {
		return nil, &Error{Kind: ErrNotFound, Msg: "No such exec instance: " + execID, err: errors.New("no such exec")}
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	h.mu.Lock()
	rows, cols := e.rows, e.cols
	h.mu.Unlock()
	s, err := h.edges.Exec(ctx, h.env.ID, HawserExec{ExecID: execID, ContainerID: e.containerID,
		Cmd: strings.Join(e.spec.Cmd, " "), User: e.spec.User, Cols: cols, Rows: rows})
	if err != nil {
		return nil, c.fail(err)
	}
	h.mu.Lock()
	e.session = s
	h.mu.Unlock()
	go func() {
		<-s.Done()
		// Inspect still answers for a while after the end; the next exec
		// of the environment drops the ended ones.
		h.mu.Lock()
		defer h.mu.Unlock()
		for id, x := range h.execs {
			if x.session != nil && id != execID && isDone(x.session) {
				delete(h.execs, id)
			}
		}
	}()
	return &ExecStream{rw: hawserExecIO{s}}, nil
}

func isDone(s HawserSession) bool {
	select {
	case <-s.Done():
		return true
	default:
		return false
	}
}

// hawserExecIO is a terminal session as an attached exec.
type hawserExecIO struct{ HawserSession }

// CloseWrite: a terminal session has no half-close; input simply ends.
func (hawserExecIO) CloseWrite() error { return nil }

// inspectHawserExec answers the state of an edge agent's exec: running until
// the agent ended the session (its exit code is not reported).
func (h *hawserLink) inspectHawserExec(id string) (ExecState, bool) {
	e := h.hawserExecOf(id)
	if e == nil {
		return ExecState{}, false
	}
	h.mu.Lock()
	s := e.session
	h.mu.Unlock()
	return ExecState{ContainerID: e.containerID, Running: s != nil && !isDone(s)}, true
}

// resizeHawserExec resizes an edge agent's terminal session: one started
// here directly; any other (attached through another replica, or not
// recorded here) by an exec_resize to the agent, which knows its sessions
// by id. The size of one recorded here and not started is kept for the
// start.
func (c *Client) resizeHawserExec(ctx context.Context, id string, rows, cols uint) error {
	h := c.hawser
	if e := h.hawserExecOf(id); e != nil {
		h.mu.Lock()
		s := e.session
		if s == nil {
			e.rows, e.cols = int(rows), int(cols)
		}
		h.mu.Unlock()
		if s != nil {
			return s.Resize(int(cols), int(rows))
		}
	}
	if err := h.edges.Resize(ctx, h.env.ID, id, int(cols), int(rows)); err != nil {
		return c.fail(err)
	}
	return nil
}
