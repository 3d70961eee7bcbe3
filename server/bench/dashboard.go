package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/berth-dev/berth/server/internal/apitest"
	"github.com/berth-dev/berth/shared/enginetest"
)

// dashboardEnvs is how many environments the dashboard benchmark shows: the
// local engine (environment 1), dashboardEnvs-3 more environments on the same
// engine, one whose engine accepts connections and never answers (hung) and
// one whose socket has nothing listening (dead).
const dashboardEnvs = 10

// benchDashboard times GET /api/dashboard/stats over dashboardEnvs
// environments (one hung, one dead) against the raw container list of the
// same engine, the time to the first and to the last environment of the
// progressive stream (GET /api/dashboard/stats/stream), and Berth's heap
// afterwards.
func benchDashboard(ctx context.Context, srv *apitest.Berth, token string, eng rawEngine, ver engineVersion, cfg config, iterations int, out io.Writer) error {
	hung, err := hangingEngine()
	if err != nil {
		return err
	}
	defer hung.Close()
	host, portText, _ := net.SplitHostPort(hung.Addr().String())
	port, _ := strconv.Atoi(portText)
	var created []int64
	defer func() {
		for _, id := range created {
			_ = apiDo(ctx, srv, token, http.MethodDelete, fmt.Sprintf("/api/environments/%d", id), nil, nil)
		}
	}()
	bodies := []map[string]any{
		{"name": "bench-hung", "connectionType": "direct", "host": host, "port": port},
		{"name": "bench-dead", "connectionType": "socket", "socketPath": "/nonexistent/berth-bench.sock"},
	}
	for i := range dashboardEnvs - 3 {
		bodies = append(bodies, map[string]any{"name": fmt.Sprintf("bench-live-%d", i), "connectionType": "socket",
			"socketPath": enginetest.Socket})
	}
	for _, b := range bodies {
		var env struct{ ID int64 }
		if err := apiDo(ctx, srv, token, http.MethodPost, "/api/environments", b, &env); err != nil {
			return fmt.Errorf("create environment %s: %w", b["name"], err)
		}
		created = append(created, env.ID)
	}

	dash := endpoint{name: "berth", url: srv.URL + "/api/dashboard/stats", client: srv.Client(), min: dashboardEnvs, bearer: token}
	raw := endpoint{name: "raw", url: "http://engine/containers/json?all=1", client: eng.client, min: cfg.containers}
	res, err := measure(ctx, []*endpoint{&dash, &raw}, 1, iterations)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\ndashboard (GET /api/dashboard/stats, %d environments: %d on the engine, 1 hung, 1 dead; limit 5 s each) against the raw container list:\n",
		dashboardEnvs, dashboardEnvs-2)
	c := cfg
	c.iterations, c.warmup = iterations, 1
	report(out, ver, c, res)

	first, all, n, err := streamTimes(ctx, srv, token)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "dashboard stream: first environment after %s ms, all %d after %s ms\n", ms(first), n, ms(all))
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	fmt.Fprintf(out, "heap in use after the dashboard runs: %.1f MB (Berth and the bench share the process)\n", float64(m.HeapInuse)/1e6)
	return nil
}

// streamTimes opens the dashboard stream and returns how long the first
// "stats" event and the pass's "done" took, and how many environments the
// pass sent.
func streamTimes(ctx context.Context, srv *apitest.Berth, token string) (first, all time.Duration, n int, err error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/api/dashboard/stats/stream", nil)
	if err != nil {
		return 0, 0, 0, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "text/event-stream")
	start := time.Now()
	resp, err := srv.Client().Do(req)
	if err != nil {
		return 0, 0, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, 0, 0, fmt.Errorf("dashboard stream: status %d", resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		switch strings.TrimSpace(sc.Text()) {
		case "event: stats":
			if n == 0 {
				first = time.Since(start)
			}
			n++
		case "event: done":
			return first, time.Since(start), n, nil
		}
	}
	return 0, 0, 0, fmt.Errorf("dashboard stream ended before its first pass did: %v", sc.Err())
}

// apiDo calls the API with the token and decodes a JSON answer into out.
func apiDo(ctx context.Context, srv *apitest.Berth, token, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, srv.URL+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := srv.Client().Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, bytes.TrimSpace(data))
	}
	if out != nil {
		return json.Unmarshal(data, out)
	}
	return nil
}

// hangingListener accepts connections and never answers (a hung engine);
// Close closes it and every connection it accepted.
type hangingListener struct {
	net.Listener
	mu    sync.Mutex
	conns []net.Conn
	done  chan struct{}
}

func hangingEngine() (*hangingListener, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	h := &hangingListener{Listener: ln, done: make(chan struct{})}
	go func() {
		defer close(h.done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			h.mu.Lock()
			h.conns = append(h.conns, c)
			h.mu.Unlock()
		}
	}()
	return h, nil
}

func (h *hangingListener) Close() error {
	err := h.Listener.Close()
	<-h.done
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, c := range h.conns {
		c.Close()
	}
	return err
}
