package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	mrand "math/rand/v2"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// The replicas benchmark (issue 23): n simulated edge agents against
// several bin/berth replicas on one PostgreSQL database (REPLICA_HOST set,
// distinct ports), the agents dialling a TCP round-robin balancer as they
// would dial the load balancer of an install. It reports the time until
// all are connected, each replica's RSS holding them, and, after one
// replica is killed (SIGKILL), the time until every agent it held is
// connected again through the others.

// replicaFigures are the figures the final summary repeats.
type replicaFigures struct {
	measured  bool
	agents    int
	connected time.Duration
	rss       []int64
	moved     int
	back      time.Duration
	missing   int // agents never connected within connectLimit (then nothing after is measured)
	// backMissing: agents of the killed replica not back within connectLimit
	backMissing int
}

// balancer is a TCP round-robin load balancer: each connection goes to the
// next backend that accepts it.
type balancer struct {
	ln       net.Listener
	backends []string
	next     atomic.Uint64
	active   []atomic.Int64 // connections open to each backend
	// acceptErrs counts failed accepts (the last one's text in
	// lastAcceptErr); dialErrs the connections no backend accepted.
	acceptErrs    atomic.Int64
	lastAcceptErr atomic.Value
	dialErrs      atomic.Int64
	mu            sync.Mutex
	conns         map[net.Conn]struct{}
	wg            sync.WaitGroup
}

func newBalancer(backends []string) (*balancer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	b := &balancer{ln: ln, backends: backends, active: make([]atomic.Int64, len(backends)), conns: map[net.Conn]struct{}{}}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		for {
			c, err := ln.Accept()
			if errors.Is(err, net.ErrClosed) {
				return
			}
			if err != nil {
				// Out of file descriptors (EMFILE) during a connect
				// storm, say: count it and go on accepting (returning
				// here left every later agent dialing into a full
				// backlog, "i/o timeout", in the runs of 2026-11-28).
				b.acceptErrs.Add(1)
				b.lastAcceptErr.Store(err.Error())
				time.Sleep(10 * time.Millisecond)
				continue
			}
			b.wg.Add(1)
			go func() { defer b.wg.Done(); b.handle(c) }()
		}
	}()
	return b, nil
}

func (b *balancer) addr() string { return b.ln.Addr().String() }

func (b *balancer) track(c net.Conn, on bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if on {
		b.conns[c] = struct{}{}
	} else {
		delete(b.conns, c)
	}
}

// handle relays c to the next backend that accepts a connection, until
// either side closes.
func (b *balancer) handle(c net.Conn) {
	b.track(c, true)
	defer b.track(c, false)
	defer c.Close()
	first := b.next.Add(1)
	for i := range uint64(len(b.backends)) {
		k := int((first + i) % uint64(len(b.backends)))
		bc, err := net.DialTimeout("tcp", b.backends[k], 2*time.Second)
		if err != nil {
			b.dialErrs.Add(1)
			continue
		}
		b.track(bc, true)
		b.active[k].Add(1)
		done := make(chan struct{}, 2)
		// Copied through a small buffer, not spliced: io.Copy between TCP
		// connections splices through a pipe held for as long as the copy
		// waits, two more descriptors per direction and agent (the runs
		// of 2026-11-28 ran out of descriptors at ~3,300 agents that way).
		go func() { relayCopy(bc, c); done <- struct{}{} }()
		go func() { relayCopy(c, bc); done <- struct{}{} }()
		<-done
		c.Close()
		bc.Close()
		<-done
		b.active[k].Add(-1)
		b.track(bc, false)
		return
	}
}

// relayCopy copies src to dst until either ends, through a 4 KiB buffer.
func relayCopy(dst io.Writer, src io.Reader) {
	buf := make([]byte, 4<<10)
	// The wrappers hide ReadFrom/WriteTo, so that io.CopyBuffer does not
	// splice.
	_, _ = io.CopyBuffer(struct{ io.Writer }{dst}, struct{ io.Reader }{src}, buf)
}

// Close stops accepting and closes every relayed connection.
func (b *balancer) Close() {
	b.ln.Close()
	b.mu.Lock()
	for c := range b.conns {
		c.Close()
	}
	b.mu.Unlock()
	b.wg.Wait()
}

// benchDatabase creates a database for the bench through the PostgreSQL
// admin URL and returns its URL and a function that drops it.
func benchDatabase(ctx context.Context, adminURL string) (string, func() error, error) {
	u, err := url.Parse(adminURL)
	if err != nil {
		return "", nil, fmt.Errorf("BERTH_TEST_POSTGRES_URL: %w", err)
	}
	admin, err := gorm.Open(postgres.Open(adminURL), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		return "", nil, fmt.Errorf("PostgreSQL: %w", err)
	}
	pool, err := admin.DB()
	if err != nil {
		return "", nil, err
	}
	rnd := make([]byte, 6)
	_, _ = rand.Read(rnd)
	name := "berth_bench_" + hex.EncodeToString(rnd)
	if err := admin.WithContext(ctx).Exec("CREATE DATABASE " + name).Error; err != nil {
		pool.Close()
		return "", nil, fmt.Errorf("create database %s: %w", name, err)
	}
	drop := func() error {
		defer pool.Close()
		dctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		var err error
		for range 20 {
			if err = admin.WithContext(dctx).Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)").Error; err == nil {
				return nil
			}
			time.Sleep(250 * time.Millisecond)
		}
		return fmt.Errorf("drop database %s: %w", name, err)
	}
	u.Path = "/" + name
	return u.String(), drop, nil
}

// leaseCounts counts the agent leases held by each replica (replica id →
// leases), read from the bench database.
func leaseCounts(ctx context.Context, dbURL string) (map[string]int, error) {
	db, err := gorm.Open(postgres.Open(dbURL), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		return nil, err
	}
	if pool, err := db.DB(); err == nil {
		defer pool.Close()
	}
	var rows []struct {
		ReplicaID string
		N         int
	}
	if err := db.WithContext(ctx).Raw("SELECT replica_id, count(*) AS n FROM agent_leases GROUP BY replica_id").Scan(&rows).Error; err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, r := range rows {
		out[r.ReplicaID] = r.N
	}
	return out, nil
}

// benchReplicas runs the replicas benchmark with n simulated agents over
// replicas bin/berth processes.
func benchReplicas(ctx context.Context, binary string, replicas, n int, ramp time.Duration, refuseOps bool, out io.Writer) (fig replicaFigures, err error) {
	adminURL := os.Getenv("BERTH_TEST_POSTGRES_URL")
	if adminURL == "" {
		fmt.Fprintln(out, "\nreplicas benchmark skipped: BERTH_TEST_POSTGRES_URL unset (run scripts/test-env.sh)")
		return fig, nil
	}
	if _, err := os.Stat(binary); err != nil {
		return fig, fmt.Errorf("server binary %s: %w (run make build)", binary, err)
	}
	dbURL, drop, err := benchDatabase(ctx, adminURL)
	if err != nil {
		return fig, err
	}
	defer func() { err = errors.Join(err, drop()) }()
	dir, err := os.MkdirTemp("", "berth-bench-replicas-")
	if err != nil {
		return fig, err
	}
	defer func() {
		if err != nil {
			err = fmt.Errorf("%w (the replicas' logs are kept in %s)", err, dir)
			return
		}
		os.RemoveAll(dir)
	}()
	keyb := make([]byte, 32)
	_, _ = rand.Read(keyb)
	shared := []string{"DATABASE_URL=" + dbURL, "ENCRYPTION_KEY=" + hex.EncodeToString(keyb), "REPLICA_HOST=127.0.0.1"}

	// Authentication off (the benchmark measures agents, not sign-in); this
	// also migrates the database before the replicas start together.
	dis := exec.CommandContext(ctx, binary, "admin", "disable-auth")
	dis.Env = append(os.Environ(), append([]string{"DATA_DIR=" + filepath.Join(dir, "admin")}, shared...)...)
	if outb, err := dis.CombinedOutput(); err != nil {
		return fig, fmt.Errorf("berth admin disable-auth: %v: %s", err, outb)
	}

	procs := make([]*berthProc, replicas)
	agentAddrs := make([]string, replicas)
	defer func() {
		for _, p := range procs {
			if p != nil {
				p.stop()
			}
		}
	}()
	for i := range procs {
		port, err := freePort()
		if err != nil {
			return fig, err
		}
		agentPort, err := freePort()
		if err != nil {
			return fig, err
		}
		logf, err := os.Create(filepath.Join(dir, fmt.Sprintf("replica-%d.log", i)))
		if err != nil {
			return fig, err
		}
		defer logf.Close()
		p := &berthProc{binary: binary, dir: filepath.Join(dir, fmt.Sprintf("replica-%d", i)), port: port, agentPort: agentPort,
			env: shared, stderr: logf}
		if err := p.start(ctx); err != nil {
			return fig, fmt.Errorf("replica %d: %w (its log: %s)", i, err, tail(logf.Name()))
		}
		procs[i] = p
		agentAddrs[i] = "127.0.0.1:" + strconv.Itoa(agentPort)
	}
	lb, err := startBalancer(agentAddrs) // in a process of its own (lbproc.go)
	if err != nil {
		return fig, err
	}
	defer lb.Close()

	fmt.Fprintf(out, "\nreplicas: %d bin/berth on one PostgreSQL database, REPLICA_HOST=127.0.0.1; creating %d agent-edge environments and their tokens …\n", replicas, n)
	agents := make([]*simAgent, n)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(12)
	for i := range n {
		g.Go(func() error {
			p := procs[i%replicas] // spread the writes over the replicas
			var env struct{ ID int64 }
			if err := p.post(gctx, "/api/environments", map[string]any{"name": fmt.Sprintf("sim-%d", i), "connectionType": "agent-edge"}, &env); err != nil {
				return err
			}
			var in struct{ Token string }
			if err := p.post(gctx, fmt.Sprintf("/api/environments/%d/agent-token", env.ID), nil, &in); err != nil {
				return err
			}
			agents[i] = &simAgent{token: in.Token, refuseOps: refuseOps}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return fig, err
	}
	if refuseOps {
		fmt.Fprintln(out, "  (the simulated agents end every operation Berth opens at once, unanswered)")
	} else {
		fmt.Fprintln(out, "  (the simulated agents never open the operations Berth asks for: each waits out its deadline)")
	}
	rssBefore := make([]int64, replicas)
	for i, p := range procs {
		rssBefore[i], _ = statusBytes(p.cmd.Process.Pid, "VmRSS:")
	}

	actx, stopAgents := context.WithCancel(ctx)
	var running sync.WaitGroup
	defer func() { stopAgents(); running.Wait() }()
	pg := sampleConnections(actx, adminURL, dbURL)
	start := time.Now()
	for i, a := range agents {
		running.Add(1)
		// Each agent starts at a random moment of the ramp, as agents
		// installed or restarted together do not all dial at one instant.
		delay := time.Duration(mrand.Int64N(int64(ramp) + 1))
		go func() {
			defer running.Done()
			select {
			case <-actx.Done():
				return
			case <-time.After(delay):
			}
			a.run(actx, lb.addr(), i)
		}()
	}
	fig.measured, fig.agents = true, n
	if err := waitAll(ctx, agents, start, connectLimit); err != nil {
		if ctx.Err() != nil {
			return fig, err
		}
		// A figure, not a failure of the bench: say how far it got.
		fig.missing = countMissing(agents, start)
		fmt.Fprintf(out, "NOT ALL CONNECTED: %d of %d simulated edge agents (started over %v) still not connected %v after the start\n",
			fig.missing, n, ramp, connectLimit)
		printFailures(out, agents)
		lb.print(out)
		active := lb.active()
		for i, p := range procs {
			rss, _ := statusBytes(p.cmd.Process.Pid, "VmRSS:")
			fig.rss = append(fig.rss, rss)
			fmt.Fprintf(out, "  replica %d: %d agent connections, RSS %.1f MB (%.1f MB before the agents connected)\n",
				i, active[i], float64(rss)/(1<<20), float64(rssBefore[i])/(1<<20))
		}
		printLeases(ctx, out, dbURL)
		fmt.Fprintf(out, "  PostgreSQL connections of the bench database: at most %d (the server's max_connections: %s); the kill is not measured\n",
			pg.max.Load(), pg.limit)
		return fig, nil
	}
	fig.connected = time.Since(start)
	time.Sleep(3 * time.Second) // settle: heartbeats flowing, nothing connecting
	fig.rss = make([]int64, replicas)
	held := make([]int64, replicas)
	for i, p := range procs {
		if fig.rss[i], err = statusBytes(p.cmd.Process.Pid, "VmRSS:"); err != nil {
			return fig, err
		}
	}
	copy(held, lb.active())
	fmt.Fprintf(out, "%d simulated edge agents (started over %v) connected through the balancer in %.2f s\n", n, ramp, fig.connected.Seconds())
	fmt.Fprintf(out, "  PostgreSQL connections of the bench database so far: at most %d (the server's max_connections: %s)\n", pg.max.Load(), pg.limit)
	printFailures(out, agents)
	lb.print(out)
	for i := range procs {
		fmt.Fprintf(out, "  replica %d: %d agent connections, RSS %.1f MB (%.1f MB before the agents connected)\n",
			i, held[i], float64(fig.rss[i])/(1<<20), float64(rssBefore[i])/(1<<20))
	}
	printLeases(ctx, out, dbURL)

	// Kill the replica holding the most agents; every agent it held comes
	// back through the others (the balancer skips the dead one).
	victim := 0
	for i := range held {
		if held[i] > held[victim] {
			victim = i
		}
	}
	killed := time.Now()
	if err := procs[victim].cmd.Process.Kill(); err != nil {
		return fig, err
	}
	<-procs[victim].done
	procs[victim].cmd = nil
	time.Sleep(500 * time.Millisecond) // the dead replica's connections are closed by now
	var moved []*simAgent
	for _, a := range agents {
		if a.dropped.Load() >= killed.UnixNano() {
			moved = append(moved, a)
		}
	}
	fig.moved = len(moved)
	if err := waitAll(ctx, moved, killed, connectLimit); err != nil {
		if ctx.Err() != nil {
			return fig, err
		}
		fig.backMissing = countMissing(moved, killed)
		fmt.Fprintf(out, "replica %d killed (SIGKILL) holding %d agents: NOT ALL BACK: %d of %d still not connected %v after the kill\n",
			victim, held[victim], fig.backMissing, len(moved), connectLimit)
		printFailures(out, moved)
		return fig, nil
	}
	fig.back = lastWelcome(moved).Sub(killed)
	others := 0
	for _, a := range agents {
		if a.welcomed.Load() >= killed.UnixNano() {
			others++
		}
	}
	fmt.Fprintf(out, "replica %d killed (SIGKILL) holding %d agents: all %d connected again through the others %.2f s after the kill (%d agents reconnected in all)\n",
		victim, held[victim], len(moved), fig.back.Seconds(), others)
	printFailures(out, moved)
	time.Sleep(2 * time.Second)
	now := lb.active()
	for i := range procs {
		if i != victim {
			fmt.Fprintf(out, "  replica %d: %d agent connections now\n", i, now[i])
		}
	}
	printLeases(ctx, out, dbURL)
	fmt.Fprintf(out, "  PostgreSQL connections of the bench database: at most %d during the run\n", pg.max.Load())
	return fig, nil
}

// connectLimit is how long the replicas benchmark waits for agents to
// connect (at first, and after the kill).
const connectLimit = 5 * time.Minute

// countMissing counts the agents not welcomed since since.
func countMissing(agents []*simAgent, since time.Time) int {
	n := 0
	for _, a := range agents {
		if a.welcomed.Load() < since.UnixNano() {
			n++
		}
	}
	return n
}

// pgSampler follows how many connections the bench database has.
type pgSampler struct {
	max   atomic.Int64
	limit string // the server's max_connections
}

// sampleConnections counts the connections to the database of dbURL every
// 200 ms (through the admin URL) until ctx ends, keeping the highest count.
func sampleConnections(ctx context.Context, adminURL, dbURL string) *pgSampler {
	s := &pgSampler{limit: "?"}
	u, err := url.Parse(dbURL)
	if err != nil {
		return s
	}
	name := strings.TrimPrefix(u.Path, "/")
	db, err := gorm.Open(postgres.Open(adminURL), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		return s
	}
	pool, err := db.DB()
	if err != nil {
		return s
	}
	pool.SetMaxOpenConns(1)
	_ = db.WithContext(ctx).Raw("SHOW max_connections").Scan(&s.limit).Error
	go func() {
		defer pool.Close()
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			var n int64
			if db.WithContext(ctx).Raw("SELECT count(*) FROM pg_stat_activity WHERE datname = ?", name).Scan(&n).Error == nil && n > s.max.Load() {
				s.max.Store(n)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// printFailures prints the agents' failed sessions so far, if any.
func printFailures(out io.Writer, agents []*simAgent) {
	n, kinds := failureKinds(agents)
	if n == 0 {
		return
	}
	fmt.Fprintf(out, "  %d sessions of these agents ended without a welcome so far; last error of each agent concerned:\n", n)
	for _, k := range sortedKeys(kinds) {
		fmt.Fprintf(out, "    %d× %s\n", kinds[k], k)
	}
}

// lastWelcome is the latest welcome among agents.
func lastWelcome(agents []*simAgent) time.Time {
	var last int64
	for _, a := range agents {
		last = max(last, a.welcomed.Load())
	}
	return time.Unix(0, last)
}

// printLeases prints how many agent leases each replica holds.
func printLeases(ctx context.Context, out io.Writer, dbURL string) {
	counts, err := leaseCounts(ctx, dbURL)
	switch {
	case err != nil:
		fmt.Fprintf(out, "  agent leases: cannot read: %v\n", err)
	case len(counts) == 0:
		fmt.Fprintln(out, "  agent leases: none (this build claims no leases)")
	default:
		parts := make([]string, 0, len(counts))
		total := 0
		for _, id := range slices.Sorted(maps.Keys(counts)) {
			parts = append(parts, fmt.Sprintf("%.8s… %d", id, counts[id]))
			total += counts[id]
		}
		fmt.Fprintf(out, "  agent leases: %d (by replica: %s)\n", total, strings.Join(parts, ", "))
	}
}

// tail is the end of a log file, for an error message.
func tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return strings.TrimSpace(string(b))
}
