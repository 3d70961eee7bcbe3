package main

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"io"
	"log"
	"maps"
	"net"
	"net/http"
	"net/http/httputil"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/berth-dev/berth/shared/enginetest"
)

// The fleet load benchmark (issue 23): rate container lists per second and
// clients event streams held open, for a duration, through a bin/berth
// process whose local environment reaches the engine through a counting
// proxy (so that every engine call is counted exactly), then the same load
// straight at the engine. Meanwhile one container is stopped or started
// every churn, so that the engine has events to send and Berth's event-fed
// list cache is dropped as it would be on a live host.

// loadConfig is the shape of the load.
type loadConfig struct {
	duration time.Duration
	rate     int           // container lists per second
	clients  int           // event streams held open
	churn    time.Duration // one container stopped or started every churn (0: none)
	raw      bool          // also measure the same load straight at the engine
}

// countingProxy serves the Engine API on a unix socket of its own and
// forwards each request to the engine's socket, counting what passes.
type countingProxy struct {
	path     string
	srv      *http.Server
	requests atomic.Int64 // every request
	lists    atomic.Int64 // GET …/containers/json
	events   atomic.Int64 // GET …/events (streams opened)
	open     atomic.Int64 // event streams open now
	mu       sync.Mutex
	kinds    map[string]int64 // requests by method and path pattern (see requestKind)
}

// requestKind names a request by its method and path, without the API
// version and with the object of a collection replaced by {id}:
// "GET /containers/{id}/json".
func requestKind(method, path string) string {
	parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
	if len(parts) > 0 && strings.HasPrefix(parts[0], "v1.") {
		parts = parts[1:]
	}
	if len(parts) >= 2 && objectCollections[parts[0]] {
		switch {
		case len(parts) == 2 && (parts[1] == "json" || parts[1] == "create" || parts[1] == "prune" || parts[1] == "search"):
		case len(parts) == 2:
			parts = []string{parts[0], "{id}"}
		default: // an image name may hold slashes: the action is the last part
			parts = []string{parts[0], "{id}", parts[len(parts)-1]}
		}
	}
	return method + " /" + strings.Join(parts, "/")
}

// objectCollections are the Engine API paths whose second part names an object.
var objectCollections = map[string]bool{"containers": true, "images": true, "networks": true, "volumes": true, "exec": true,
	"plugins": true, "services": true, "tasks": true, "nodes": true, "secrets": true, "configs": true}

// byKind returns the requests counted so far by kind.
func (p *countingProxy) byKind() map[string]int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.kinds)
}

// proxyCounts is a reading of a countingProxy's counters.
type proxyCounts struct{ requests, lists, events int64 }

func (p *countingProxy) counts() proxyCounts {
	return proxyCounts{requests: p.requests.Load(), lists: p.lists.Load(), events: p.events.Load()}
}

func (c proxyCounts) sub(o proxyCounts) proxyCounts {
	return proxyCounts{requests: c.requests - o.requests, lists: c.lists - o.lists, events: c.events - o.events}
}

// startCountingProxy listens on the unix socket path and forwards to the
// engine's socket target. Streams (events, logs) are flushed as they come;
// upgraded connections (attach, exec) are relayed by the reverse proxy.
func startCountingProxy(path, target string) (*countingProxy, error) {
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", target)
		},
		MaxIdleConnsPerHost: 128,
		DisableCompression:  true,
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.Out.URL.Scheme, r.Out.URL.Host = "http", "docker"
		},
		Transport:     tr,
		FlushInterval: -1,
		ErrorLog:      log.New(io.Discard, "", 0),
	}
	p := &countingProxy{path: path, kinds: map[string]int64{}}
	p.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.requests.Add(1)
		kind := requestKind(r.Method, r.URL.Path)
		p.mu.Lock()
		p.kinds[kind]++
		p.mu.Unlock()
		if r.Method == http.MethodGet {
			switch {
			case strings.HasSuffix(r.URL.Path, "/containers/json"):
				p.lists.Add(1)
			case strings.HasSuffix(r.URL.Path, "/events"):
				p.events.Add(1)
				p.open.Add(1)
				defer p.open.Add(-1)
			}
		}
		rp.ServeHTTP(w, r)
	}), ErrorLog: log.New(io.Discard, "", 0)}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

func (p *countingProxy) Close() {
	_ = p.srv.Close()
	_ = os.Remove(p.path)
}

// loadResult is what one load phase measured.
type loadResult struct {
	name      string
	duration  time.Duration
	sent      int
	ok        []time.Duration // latency of each good answer, from its scheduled start
	errs      map[string]int  // failures by kind
	streams   int             // event streams opened
	streamErr map[string]int  // streams that failed to open or broke during the phase, by kind
	errEvents int64           // error events received on Berth's streams
	delivered int64           // events received on all streams
	cpu       map[string]time.Duration
}

func (r *loadResult) errors() int {
	n := 0
	for _, c := range r.errs {
		n += c
	}
	return n
}

// loadTarget is where a phase sends its load.
type loadTarget struct {
	name    string
	list    endpoint
	events  string // URL of an event stream
	stream  *http.Client
	berth   bool           // streams are Berth's SSE (wait for "connected"), else the engine's JSON lines
	cpuPIDs map[string]int // processes whose CPU time the phase reports
}

// runLoadPhase opens cfg.clients event streams, then sends cfg.rate lists
// per second for cfg.duration (open loop: a request starts on its schedule
// whether or not the earlier ones were answered; its latency counts from
// its scheduled start), and returns what it measured.
func runLoadPhase(ctx context.Context, t loadTarget, cfg loadConfig) (*loadResult, error) {
	res := &loadResult{name: t.name, errs: map[string]int{}, streamErr: map[string]int{}, cpu: map[string]time.Duration{}}
	var mu sync.Mutex
	streamFail := func(kind string) {
		mu.Lock()
		res.streamErr[trimKind(kind)]++
		mu.Unlock()
	}

	sctx, stopStreams := context.WithCancel(ctx)
	defer stopStreams()
	var (
		opened  sync.WaitGroup // each stream until it is open (or failed)
		streams sync.WaitGroup // each stream until it ends
		openN   atomic.Int64
		phase   atomic.Bool // the measured phase is running: a stream ending now broke
	)
	sem := make(chan struct{}, 32) // streams opening at once
	for range cfg.clients {
		opened.Add(1)
		streams.Add(1)
		go func() {
			defer streams.Done()
			once := sync.OnceFunc(opened.Done)
			defer once()
			sem <- struct{}{}
			req, _ := http.NewRequestWithContext(sctx, http.MethodGet, t.events, nil)
			resp, err := t.stream.Do(req)
			if err != nil {
				<-sem
				streamFail("open: " + err.Error())
				return
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				<-sem
				streamFail("open: status " + strconv.Itoa(resp.StatusCode))
				return
			}
			br := bufio.NewReader(resp.Body)
			if t.berth {
				// Open once Berth said connected.
				for {
					line, err := br.ReadString('\n')
					if err != nil {
						<-sem
						streamFail("before connected: " + err.Error())
						return
					}
					if strings.TrimSpace(line) == "event: connected" {
						break
					}
				}
			}
			<-sem
			openN.Add(1)
			once()
			for {
				line, err := br.ReadString('\n')
				if err != nil {
					if phase.Load() && sctx.Err() == nil {
						streamFail("broke: " + err.Error())
					}
					return
				}
				switch {
				case t.berth && strings.HasPrefix(line, "event: error"):
					atomic.AddInt64(&res.errEvents, 1)
				case t.berth && strings.HasPrefix(line, "event: "):
					atomic.AddInt64(&res.delivered, 1)
				case !t.berth && strings.HasPrefix(line, "{"):
					atomic.AddInt64(&res.delivered, 1)
				}
			}
		}()
	}
	opened.Wait()
	res.streams = int(openN.Load())
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	cpu0 := cpuTimes(t.cpuPIDs)
	phase.Store(true)
	interval := time.Second / time.Duration(cfg.rate)
	total := int(cfg.duration / interval)
	var lists sync.WaitGroup
	start := time.Now()
	for i := range total {
		at := start.Add(time.Duration(i) * interval)
		if d := time.Until(at); d > 0 {
			select {
			case <-ctx.Done():
				lists.Wait()
				return nil, ctx.Err()
			case <-time.After(d):
			}
		}
		lists.Add(1)
		go func() {
			defer lists.Done()
			_, _, err := t.list.get(ctx)
			d := time.Since(at)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				res.errs[trimKind(strings.TrimPrefix(err.Error(), t.list.name+": "))]++
				return
			}
			res.ok = append(res.ok, d)
		}()
	}
	lists.Wait()
	res.duration = time.Since(start)
	res.sent = total
	phase.Store(false)
	cpu1 := cpuTimes(t.cpuPIDs)
	for name, c := range cpu1 {
		res.cpu[name] = c - cpu0[name]
	}
	stopStreams()
	streams.Wait()
	return res, ctx.Err()
}

// trimKind shortens an error message to a kind worth counting.
func trimKind(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 100 {
		s = s[:100] + "…"
	}
	return s
}

// cpuTimes reads the CPU time (user + system) each process of pids used so far.
func cpuTimes(pids map[string]int) map[string]time.Duration {
	out := map[string]time.Duration{}
	for name, pid := range pids {
		if d, err := processCPU(pid); err == nil {
			out[name] = d
		}
	}
	return out
}

// processCPU is utime + stime of /proc/<pid>/stat (clock ticks of 10 ms).
func processCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command", pid)
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3 (state): utime is field 14, stime 15
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: short", pid)
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: %v %v", pid, err1, err2)
	}
	return time.Duration(u+st) * 10 * time.Millisecond, nil
}

// pidFile reads a process id from a pid file.
func pidFile(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

// loadFigures are the load benchmark's figures the final summary repeats.
type loadFigures struct {
	errors          int // list errors
	streamErrors    int // event streams that failed to open or broke, and error events on them
	p50, p99        time.Duration
	engineListsPerS float64
	coalescing      float64
	rawP50, rawP99  time.Duration
	rawErrors       int
	engineStreams   int64
	measured        bool
}

// benchLoad runs the fleet load through a bin/berth process (its local
// environment behind a counting proxy), then straight at the engine.
func benchLoad(ctx context.Context, binary string, eng rawEngine, image string, min int, cfg loadConfig, out io.Writer) (loadFigures, error) {
	var fig loadFigures
	if _, err := os.Stat(binary); err != nil {
		return fig, fmt.Errorf("server binary %s: %w (run make build)", binary, err)
	}
	dir, err := os.MkdirTemp("", "berth-bench-load-")
	if err != nil {
		return fig, err
	}
	defer os.RemoveAll(dir)
	proxy, err := startCountingProxy(filepath.Join(dir, "engine.sock"), enginetest.Socket)
	if err != nil {
		return fig, fmt.Errorf("counting proxy: %w", err)
	}
	defer proxy.Close()

	// The churn: one container of its own, stopped and started in turn.
	if cfg.churn > 0 {
		id, err := eng.runDetached(ctx, image, "berth-bench-churn", []string{"sleep", "3600"})
		if err != nil {
			return fig, err
		}
		cctx, stopChurn := context.WithCancel(ctx)
		churned := make(chan struct{})
		defer func() { stopChurn(); <-churned }()
		go func() {
			defer close(churned)
			t := time.NewTicker(cfg.churn)
			defer t.Stop()
			running := true
			for {
				select {
				case <-cctx.Done():
					return
				case <-t.C:
				}
				action := "/stop?t=0"
				if !running {
					action = "/start"
				}
				if err := eng.do(cctx, http.MethodPost, "/containers/"+id+action, nil, http.StatusNoContent, nil); err == nil {
					running = !running
				}
			}
		}()
	}

	data := filepath.Join(dir, "data")
	dis := exec.CommandContext(ctx, binary, "admin", "disable-auth")
	dis.Env = append(os.Environ(), "DATA_DIR="+data, "DATABASE_URL=")
	if outb, err := dis.CombinedOutput(); err != nil {
		return fig, fmt.Errorf("berth admin disable-auth: %v: %s", err, outb)
	}
	port, err := freePort()
	if err != nil {
		return fig, err
	}
	b := &berthProc{binary: binary, dir: data, port: port, agentPort: 0,
		env: []string{"DOCKER_SOCKET=" + proxy.path, "AGENT_PORT=0"}}
	if err := b.start(ctx); err != nil {
		return fig, err
	}
	defer b.stop()

	listClient := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256, DisableCompression: true}}
	streamClient := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8, DisableCompression: true}}
	defer listClient.CloseIdleConnections()
	defer streamClient.CloseIdleConnections()
	berthList := endpoint{name: "berth", url: b.url() + "/api/containers?all=true&env=1", client: listClient, min: min}
	// Warm up: the first lists open the environment's engine client and stream.
	for range 5 {
		if _, _, err := berthList.get(ctx); err != nil {
			return fig, err
		}
	}
	pids := map[string]int{"berth": b.cmd.Process.Pid}
	if pid, err := pidFile("/var/run/docker.pid"); err == nil {
		pids["engine"] = pid
	}
	churn := "no churn"
	if cfg.churn > 0 {
		churn = fmt.Sprintf("one container stopped or started every %v", cfg.churn)
	}
	fmt.Fprintf(out, "\nfleet load: %d container lists/s and %d event streams for %v, %d+ containers listed, %s:\n",
		cfg.rate, cfg.clients, cfg.duration, min, churn)

	before, kindsBefore := proxy.counts(), proxy.byKind()
	br, err := runLoadPhase(ctx, loadTarget{name: "berth", list: berthList, events: b.url() + "/api/events?env=1", stream: streamClient,
		berth: true, cpuPIDs: pids}, cfg)
	if err != nil {
		return fig, err
	}
	calls := proxy.counts().sub(before)
	kinds := proxy.byKind()
	for k, n := range kindsBefore {
		if kinds[k] -= n; kinds[k] == 0 {
			delete(kinds, k)
		}
	}
	openStreams, allStreams := proxy.open.Load(), proxy.events.Load()
	b.stop()

	rawClient := enginetest.HTTPClient()
	rawClient.Transport.(*http.Transport).MaxIdleConnsPerHost = 256
	rawStreams := enginetest.HTTPClient()
	defer rawClient.CloseIdleConnections()
	defer rawStreams.CloseIdleConnections()
	delete(pids, "berth")
	rawList := endpoint{name: "raw", url: "http://engine/containers/json?all=1", client: rawClient, min: min}
	rr := &loadResult{name: "raw (not measured: -load-raw=false)"}
	if cfg.raw {
		if rr, err = runLoadPhase(ctx, loadTarget{name: "raw", list: rawList, events: "http://engine/events", stream: rawStreams, cpuPIDs: pids}, cfg); err != nil {
			return fig, err
		}
	}

	secs := br.duration.Seconds()
	fig.measured = true
	fig.errors = br.errors()
	fig.streamErrors = sumCounts(br.streamErr) + int(br.errEvents)
	fig.p50, fig.p99 = pct(br.ok, 50), pct(br.ok, 99)
	fig.rawP50, fig.rawP99 = pct(rr.ok, 50), pct(rr.ok, 99)
	fig.rawErrors = rr.errors()
	fig.engineListsPerS = float64(calls.lists) / secs
	fig.engineStreams = allStreams
	if calls.lists > 0 {
		fig.coalescing = float64(len(br.ok)) / float64(calls.lists)
	}
	phases := []*loadResult{br}
	if cfg.raw {
		phases = append(phases, rr)
	}
	for _, r := range phases {
		what := "through Berth (bin/berth, local environment behind the counting proxy)"
		if r == rr {
			what = "straight at the engine (GET /containers/json?all=1, GET /events)"
		}
		fmt.Fprintf(out, "  %s:\n", what)
		fmt.Fprintf(out, "    lists: %d sent, %d answered, %d errors; latency p50 %s ms, p99 %s ms, max %s ms\n",
			r.sent, len(r.ok), r.errors(), ms(pct(r.ok, 50)), ms(pct(r.ok, 99)), ms(pct(r.ok, 100)))
		for _, k := range sortedKeys(r.errs) {
			fmt.Fprintf(out, "      %d× %s\n", r.errs[k], k)
		}
		fmt.Fprintf(out, "    event streams: %d of %d open, %d failed or broke, %d events delivered", r.streams, cfg.clients, sumCounts(r.streamErr), r.delivered)
		if r.berth() {
			fmt.Fprintf(out, ", %d error events", r.errEvents)
		}
		fmt.Fprintln(out)
		for _, k := range sortedKeys(r.streamErr) {
			fmt.Fprintf(out, "      %d× %s\n", r.streamErr[k], k)
		}
		for _, name := range sortedKeys(r.cpu) {
			fmt.Fprintf(out, "    %s CPU: %.1f s (%.0f %% of one core)\n", name, r.cpu[name].Seconds(), 100*r.cpu[name].Seconds()/r.duration.Seconds())
		}
	}
	fmt.Fprintf(out, "  engine calls during the Berth phase (counted at the proxy): %d container lists (%.2f/s; goal <= 10/s), %d requests in all (%.2f/s); engine event streams: %d open at its end, %d opened since Berth started\n",
		calls.lists, fig.engineListsPerS, calls.requests, float64(calls.requests)/secs, openStreams, allStreams)
	fmt.Fprintf(out, "  engine requests of the Berth phase by kind:")
	for _, k := range slices.SortedFunc(maps.Keys(kinds), func(a, b string) int { return cmp.Compare(kinds[b], kinds[a]) }) {
		fmt.Fprintf(out, " %s %d;", k, kinds[k])
	}
	fmt.Fprintln(out)
	fmt.Fprintf(out, "  coalescing ratio: %d Berth lists answered / %d engine list calls = %.1f\n", len(br.ok), calls.lists, fig.coalescing)
	fmt.Fprintf(out, "  Berth against the raw engine under the same load: p50 %.2fx, p99 %.2fx (goal: 0 errors, p99 <= 250 ms)\n",
		ratio(fig.p50, fig.rawP50), ratio(fig.p99, fig.rawP99))
	return fig, nil
}

func (r *loadResult) berth() bool { return r.name == "berth" }

// pct is the p-th percentile of samples (0 when there are none).
func pct(samples []time.Duration, p float64) time.Duration {
	if len(samples) == 0 {
		return 0
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	return percentile(s, p)
}

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func sumCounts(m map[string]int) int {
	n := 0
	for _, c := range m {
		n += c
	}
	return n
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
