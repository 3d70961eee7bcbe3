package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/coder/websocket"

	"github.com/berth-dev/berth/server/internal/apitest"
	"github.com/berth-dev/berth/shared/enginetest"
)

// The agent benchmarks: the container list through an edge agent against
// the same list through the socket, and an exec keystroke's round trip
// through each. The edge agent is the real bin/berth-agent, dialling the
// in-process Berth and managing the same local engine as environment 1.

// api sends a request to the in-process Berth and decodes a JSON answer.
func api(ctx context.Context, srv *apitest.Berth, token, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, srv.URL+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, bytes.TrimSpace(b))
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

// startEdgeAgent creates an edge environment, runs bin/berth-agent for it
// against the local engine, and waits until it is connected. stop ends the agent.
func startEdgeAgent(ctx context.Context, srv *apitest.Berth, token, agentBin string) (envID int64, stop func(), err error) {
	var env struct{ ID int64 }
	if err := api(ctx, srv, token, "POST", "/api/environments", map[string]any{"name": "bench-edge", "connectionType": "agent-edge"}, &env); err != nil {
		return 0, nil, err
	}
	var in struct{ Token string }
	if err := api(ctx, srv, token, "POST", fmt.Sprintf("/api/environments/%d/agent-token", env.ID), nil, &in); err != nil {
		return 0, nil, err
	}
	dir, err := os.MkdirTemp("", "berth-bench-agent-")
	if err != nil {
		return 0, nil, err
	}
	cmd := exec.Command(agentBin, "--server", srv.AgentURL, "--token", in.Token, "--name", "bench")
	cmd.Env = append(os.Environ(), "DOCKER_SOCKET="+enginetest.Socket, "BERTH_AGENT_DATA_DIR="+dir, "LOG_LEVEL=warn")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return 0, nil, fmt.Errorf("start %s (make agent): %w", agentBin, err)
	}
	stop = func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		os.RemoveAll(dir)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var e struct{ AgentConnected bool }
		if err := api(ctx, srv, token, "GET", fmt.Sprintf("/api/environments/%d", env.ID), nil, &e); err == nil && e.AgentConnected {
			return env.ID, stop, nil
		}
		if time.Now().After(deadline) {
			stop()
			return 0, nil, errors.New("the edge agent did not connect within 30 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// benchAgentList compares the container list through the edge agent with
// the list through the socket (both the same engine and containers).
func benchAgentList(ctx context.Context, srv *apitest.Berth, token string, edgeEnv int64, cfg config, out io.Writer) error {
	socket := endpoint{name: "socket", url: srv.URL + "/api/containers?all=true&env=1", client: srv.Client(), min: cfg.containers, bearer: token}
	edge := endpoint{name: "edge", url: fmt.Sprintf("%s/api/containers?all=true&env=%d", srv.URL, edgeEnv), client: srv.Client(),
		min: cfg.containers, bearer: token}
	res, err := measure(ctx, []*endpoint{&edge, &socket}, cfg.warmup, cfg.iterations)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\ncontainer list through an edge agent (bin/berth-agent, same engine) against the socket environment:\n")
	fmt.Fprintf(out, "%-6s %8s %10s %10s %10s\n", "", "listed", "median ms", "p10 ms", "p90 ms")
	sums := make([]summary, len(res))
	for i, r := range res {
		sums[i] = summarize(r.samples)
		fmt.Fprintf(out, "%-6s %8d %10s %10s %10s\n", r.name, r.listed, ms(sums[i].median), ms(sums[i].p10), ms(sums[i].p90))
	}
	fmt.Fprintf(out, "edge/socket ratio: %.2fx (p90 %.2fx; goal <= 1.2x)\n",
		float64(sums[0].median)/float64(sums[1].median), float64(sums[0].p90)/float64(sums[1].p90))
	return nil
}

// benchExecKeystroke measures a keystroke's round trip through an exec
// terminal over the WebSocket (a byte typed into `cat` on a TTY comes back
// as the echo) through the socket and through the edge agent.
func benchExecKeystroke(ctx context.Context, srv *apitest.Berth, token string, edgeEnv int64, image string, rounds int, out io.Writer) error {
	eng := rawEngine{client: enginetest.HTTPClient()}
	id, err := eng.runDetached(ctx, image, "bench-exec", []string{"sleep", "3600"})
	if err != nil {
		return err
	}
	medians := map[string]time.Duration{}
	for _, env := range []struct {
		name string
		id   int64
	}{{"socket", 1}, {"edge", edgeEnv}} {
		samples, err := keystrokes(ctx, srv, token, env.id, id, rounds)
		if err != nil {
			return fmt.Errorf("%s: %w", env.name, err)
		}
		s := summarize(samples)
		medians[env.name] = s.median
		fmt.Fprintf(out, "exec keystroke round trip via %-6s median %s ms, p90 %s ms (%d keystrokes)\n", env.name, ms(s.median), ms(s.p90), rounds)
	}
	fmt.Fprintf(out, "edge overhead per keystroke: %s ms (goal <= 2 ms)\n", ms(medians["edge"]-medians["socket"]))
	return nil
}

// keystrokes opens an exec terminal running cat in container id and times
// rounds single-byte round trips.
func keystrokes(ctx context.Context, srv *apitest.Berth, token string, env int64, id string, rounds int) ([]time.Duration, error) {
	var inst struct{ ExecID string }
	if err := api(ctx, srv, token, "POST", fmt.Sprintf("/api/containers/%s/exec?envId=%d", id, env), map[string]string{"shell": "cat"}, &inst); err != nil {
		return nil, err
	}
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+fmt.Sprintf("/api/containers/exec/%s/attach?envId=%d", inst.ExecID, env),
		&websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + token}}})
	if err != nil {
		return nil, err
	}
	defer ws.CloseNow()
	samples := make([]time.Duration, 0, rounds)
	for i := range rounds + 5 {
		c := []byte{byte('a' + i%26)}
		start := time.Now()
		if err := ws.Write(ctx, websocket.MessageText, c); err != nil {
			return nil, err
		}
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		for {
			_, b, err := ws.Read(rctx)
			if err != nil {
				cancel()
				return nil, err
			}
			if bytes.Contains(b, c) {
				break
			}
		}
		cancel()
		if i >= 5 { // the first few warm up
			samples = append(samples, time.Since(start))
		}
	}
	return samples, nil
}

// runDetached creates and starts a container (labelled like the bench
// containers, so that it is removed with them) and returns its id.
func (e rawEngine) runDetached(ctx context.Context, image, name string, cmd []string) (string, error) {
	var created struct {
		ID string `json:"Id"`
	}
	body := map[string]any{"Image": image, "Cmd": cmd, "Tty": false, "Labels": map[string]string{benchLabel: "1"}}
	if err := e.do(ctx, http.MethodPost, "/containers/create?name="+name, body, http.StatusCreated, &created); err != nil {
		return "", fmt.Errorf("create %s: %w", name, err)
	}
	if err := e.do(ctx, http.MethodPost, "/containers/"+created.ID+"/start", nil, http.StatusNoContent, nil); err != nil {
		return "", fmt.Errorf("start %s: %w", name, err)
	}
	return created.ID, nil
}
