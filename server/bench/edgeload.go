package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/berth-dev/berth/shared/agentpb"
	"github.com/berth-dev/berth/shared/enginetest"
)

// The load benchmark: n simulated edge agents (each its own gRPC connection,
// hello and heartbeats like berth-agent, the same jittered back-off) held
// against one Berth process (bin/berth). It reports the time until all are
// connected, the server's RSS holding them, and the time until all are back
// after Berth restarts.

// edgeBenchHeartbeat is the heartbeat of the load benchmark (Berth's default).
const edgeBenchHeartbeat = 10 * time.Second

// berthProc is a bin/berth serve process on a data directory.
type berthProc struct {
	binary, dir     string
	port, agentPort int
	cmd             *exec.Cmd
	done            chan struct{}
	startedAt       time.Time
	readyIn         time.Duration // from start to the first 200 of /api/health
	// env is appended to the process's environment after the defaults
	// (a later value of a variable wins): DOCKER_SOCKET, DATABASE_URL, …
	env []string
	// stderr receives the process's log (nil: discarded).
	stderr io.Writer
}

func (b *berthProc) start(ctx context.Context) error {
	b.cmd = exec.Command(b.binary, "serve")
	b.cmd.Env = append(os.Environ(), "HOST=127.0.0.1", "PORT="+strconv.Itoa(b.port), "AGENT_PORT="+strconv.Itoa(b.agentPort),
		"DATA_DIR="+b.dir, "DATABASE_URL=", "DOCKER_SOCKET="+enginetest.Socket, "LOG_LEVEL=warn",
		"AGENT_HEARTBEAT="+edgeBenchHeartbeat.String())
	b.cmd.Env = append(b.cmd.Env, b.env...)
	b.cmd.Stdout, b.cmd.Stderr = io.Discard, io.Discard
	if b.stderr != nil {
		b.cmd.Stderr = b.stderr
	}
	b.startedAt = time.Now()
	if err := b.cmd.Start(); err != nil {
		return err
	}
	b.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) { _ = cmd.Wait(); close(done) }(b.cmd, b.done)
	hc := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if resp, err := hc.Get(b.url() + "/api/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				b.readyIn = time.Since(b.startedAt)
				return nil
			}
		}
		if time.Now().After(deadline) {
			return errors.New("berth did not answer /api/health within 60 s")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-b.done:
			return errors.New("berth exited at start")
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func (b *berthProc) stop() {
	if b.cmd == nil {
		return
	}
	_ = b.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-b.done:
	case <-time.After(20 * time.Second):
		_ = b.cmd.Process.Kill()
		<-b.done
	}
	b.cmd = nil
}

func (b *berthProc) url() string { return "http://127.0.0.1:" + strconv.Itoa(b.port) }

func (b *berthProc) post(ctx context.Context, path string, body, out any) error {
	data, _ := json.Marshal(body)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, b.url()+path, bytes.NewReader(data))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		return fmt.Errorf("POST %s: %d %s", path, resp.StatusCode, bytes.TrimSpace(raw))
	}
	return json.Unmarshal(raw, out)
}

// simAgent is one simulated edge agent.
type simAgent struct {
	token    string
	welcomed atomic.Int64 // Unix nanoseconds of the last welcome
	dropped  atomic.Int64 // Unix nanoseconds of the end of the last welcomed session
	// refuseOps: operations Berth asks for are opened and ended at once
	// (otherwise never opened: Berth's call waits out its deadline)
	refuseOps bool
	failures  atomic.Int64 // sessions that ended without a welcome
	lastErr   atomic.Pointer[string]
}

// fail records a session that ended without a welcome.
func (a *simAgent) fail(err error) bool {
	msg := "no welcome"
	if err != nil {
		st := status.Convert(err)
		msg = st.Code().String() + ": " + st.Message()
	}
	a.failures.Add(1)
	a.lastErr.Store(&msg)
	return false
}

// failureKinds counts the agents' failed sessions (all of them) by the last
// error of each agent that failed at least once.
func failureKinds(agents []*simAgent) (sessions int64, kinds map[string]int) {
	kinds = map[string]int{}
	for _, a := range agents {
		if n := a.failures.Load(); n > 0 {
			sessions += n
			if m := a.lastErr.Load(); m != nil {
				kinds[trimKind(*m)]++
			}
		}
	}
	return sessions, kinds
}

// run holds the agent's connection until ctx ends, reconnecting like
// berth-agent (full jitter, 1 s doubling to 60 s).
func (a *simAgent) run(ctx context.Context, target string, id int) {
	// The channel's reconnection back-off bounded like berth-agent's
	// (agent/internal/edge ConnectParams), not gRPC's default 120 s.
	cc, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithConnectParams(grpc.ConnectParams{MinConnectTimeout: 20 * time.Second,
			Backoff: backoff.Config{BaseDelay: time.Second, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 60 * time.Second}}))
	if err != nil {
		return
	}
	defer cc.Close()
	client := agentpb.NewEdgeServiceClient(cc)
	hello := &agentpb.Hello{AgentId: fmt.Sprintf("sim-%d", id), AgentName: fmt.Sprintf("sim-%d", id), AgentVersion: "bench",
		Capabilities: []string{"engine"}}
	attempt := 0
	for ctx.Err() == nil {
		if a.session(ctx, client, hello) {
			attempt = 0
		}
		bound := min(60*time.Second, time.Second<<min(attempt, 6))
		attempt++
		select {
		case <-ctx.Done():
		case <-time.After(max(time.Duration(rand.Float64()*float64(bound)), 100*time.Millisecond)):
		}
	}
}

func (a *simAgent) session(ctx context.Context, client agentpb.EdgeServiceClient, hello *agentpb.Hello) bool {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ctxTok := metadata.AppendToOutgoingContext(sctx, "authorization", "Bearer "+a.token)
	st, err := client.Connect(ctxTok)
	if err != nil {
		return a.fail(err)
	}
	if err := st.Send(&agentpb.ConnectRequest{Message: &agentpb.ConnectRequest_Hello{Hello: hello}}); err != nil {
		return a.fail(err)
	}
	m, err := st.Recv()
	if err != nil || m.GetWelcome() == nil {
		return a.fail(err)
	}
	a.welcomed.Store(time.Now().UnixNano())
	go func() {
		t := time.NewTicker(edgeBenchHeartbeat)
		defer t.Stop()
		for {
			select {
			case <-sctx.Done():
				return
			case <-t.C:
				if st.Send(&agentpb.ConnectRequest{Message: &agentpb.ConnectRequest_Heartbeat{Heartbeat: &agentpb.Heartbeat{}}}) != nil {
					return
				}
			}
		}
	}()
	for {
		m, err := st.Recv()
		if err != nil {
			a.dropped.Store(time.Now().UnixNano())
			return true
		}
		if op := m.GetOpen(); op != nil && a.refuseOps {
			go a.refuse(ctxTok, client, op.GetOperationId())
		}
	}
}

// refuse opens the operation Berth asked for and ends it at once, without
// an answer: Berth's call fails now instead of waiting out its deadline.
func (a *simAgent) refuse(ctx context.Context, client agentpb.EdgeServiceClient, id string) {
	st, err := client.Serve(ctx)
	if err != nil {
		return
	}
	if st.Send(&agentpb.ServeRequest{OperationId: id}) != nil {
		return
	}
	_ = st.CloseSend()
	for {
		if _, err := st.Recv(); err != nil {
			return
		}
	}
}

// benchEdgeLoad runs the load benchmark with n simulated agents.
func benchEdgeLoad(ctx context.Context, binary string, n int, out io.Writer) error {
	dir, err := os.MkdirTemp("", "berth-bench-edge-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	data := filepath.Join(dir, "data")
	// Authentication off: the benchmark measures agents, not sign-in.
	dis := exec.CommandContext(ctx, binary, "admin", "disable-auth")
	dis.Env = append(os.Environ(), "DATA_DIR="+data, "DATABASE_URL=")
	if outb, err := dis.CombinedOutput(); err != nil {
		return fmt.Errorf("berth admin disable-auth: %v: %s", err, outb)
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	agentPort, err := freePort()
	if err != nil {
		return err
	}
	b := &berthProc{binary: binary, dir: data, port: port, agentPort: agentPort}
	if err := b.start(ctx); err != nil {
		return err
	}
	defer func() { b.stop() }()

	fmt.Fprintf(out, "\nedge agents: creating %d agent-edge environments and their tokens …\n", n)
	agents := make([]*simAgent, n)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for i := range n {
		g.Go(func() error {
			var env struct{ ID int64 }
			if err := b.post(gctx, "/api/environments", map[string]any{"name": fmt.Sprintf("sim-%d", i), "connectionType": "agent-edge"}, &env); err != nil {
				return err
			}
			var in struct{ Token string }
			if err := b.post(gctx, fmt.Sprintf("/api/environments/%d/agent-token", env.ID), nil, &in); err != nil {
				return err
			}
			agents[i] = &simAgent{token: in.Token}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	rssBefore, _ := statusBytes(b.cmd.Process.Pid, "VmRSS:")

	actx, stopAgents := context.WithCancel(ctx)
	defer stopAgents()
	target := "127.0.0.1:" + strconv.Itoa(agentPort)
	start := time.Now()
	for i, a := range agents {
		go a.run(actx, target, i)
	}
	if err := waitAll(ctx, agents, start, 5*time.Minute); err != nil {
		return err
	}
	connected := time.Since(start)
	time.Sleep(3 * time.Second) // settle: heartbeats flowing, nothing connecting
	rss, err := statusBytes(b.cmd.Process.Pid, "VmRSS:")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%d simulated edge agents connected in %.2f s; Berth RSS %.1f MB holding them (%.1f MB before they connected)\n",
		n, connected.Seconds(), float64(rss)/(1<<20), float64(rssBefore)/(1<<20))

	// Berth restarts: every agent comes back on its own back-off.
	stopping := time.Now()
	b.stop()
	fmt.Fprintf(out, "Berth stopped in %.2f s (SIGTERM to exit)\n", time.Since(stopping).Seconds())
	restart := time.Now()
	if err := b.start(ctx); err != nil {
		return err
	}
	if err := waitAll(ctx, agents, restart, 5*time.Minute); err != nil {
		return err
	}
	fmt.Fprintf(out, "after a restart of Berth, all %d agents were back %.2f s after the new process started (it answered /api/health after %.2f s; goal <= 30 s)\n",
		n, time.Since(restart).Seconds(), b.readyIn.Seconds())
	return nil
}

// waitAll waits until every agent was welcomed after since.
func waitAll(ctx context.Context, agents []*simAgent, since time.Time, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		missing := 0
		for _, a := range agents {
			if a.welcomed.Load() < since.UnixNano() {
				missing++
			}
		}
		if missing == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			_, kinds := failureKinds(agents)
			return fmt.Errorf("%d of %d agents still not connected after %v (last errors of agents that failed: %v)", missing, len(agents), limit, kinds)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}
