// Command bench measures what Berth adds to listing containers: for a host
// with -containers containers (200 by default), it compares the latency of
// Berth's GET /api/containers?all=true with that of the raw Engine API's
// GET /containers/json?all=1, measured in the same run over keep-alive
// connections, and prints the ratio of the medians (and of the p90s).
//
// The containers are created, not started, and labelled berth.bench=1; they
// are removed at the end, and on interrupt, unless -keep is given. Berth runs
// in-process, wired as "berth serve" wires it, behind an httptest server.
//
// It also times the dashboard over 10 environments, one of them hung and
// one dead (-dashboard-iterations; -only dashboard runs that alone), and,
// with the containers started, the list warm and cold and a stats pass
// against the raw engine's (-running, -cold-samples, -stats-rounds; -only
// running runs that alone).
//
// Issue 23's figures: the fleet load (-load-duration of -load-rate container
// lists per second and -load-clients event streams through a bin/berth whose
// engine calls are counted at a proxy, then the same load straight at the
// engine; -only load), start-to-ready with the engine stalled (SIGSTOP on
// the test environment's second dockerd; -stall-starts; -only startup), and
// -replica-agents simulated edge agents over -replicas bin/berth replicas on
// one PostgreSQL database (-only replicas; 5,000 agents by default,
// -replica-agents 0 skips it). A summary at the end puts each
// figure next to the goal.
//
// Run it with "make bench", which starts the test environment and exports
// .test-env (BERTH_TEST_IMAGE). It reports; it does not judge.
package main

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/berth-dev/berth/server/internal/apitest"
	"github.com/berth-dev/berth/server/internal/secret"
	"github.com/berth-dev/berth/shared/enginetest"
)

// config holds the command-line flags.
type config struct {
	containers  int
	iterations  int
	warmup      int
	image       string
	keep        bool
	pullRounds  int
	binary      string // the server binary whose start-up and idle memory are measured
	starts      int
	agentBin    string // the agent binary of the edge benchmarks
	keystrokes  int    // exec keystrokes timed per path
	edgeAgents  int    // simulated edge agents held against one Berth (0: skip)
	dashboard   int    // measured dashboard requests (0: skip)
	running     bool   // start the containers and measure lists and stats over them running
	cold        int    // cold list samples (each after containers.RestartTTL without a list)
	coldProfile string // -cold-cpuprofile: a CPU profile over the cold lists
	backupMiB   int    // -backup-mib: the backup benchmark's volume size
	stats       int    // stats passes through each path
	only        string // "dashboard", "running", "load", "startup", "replicas" or "edge": that benchmark alone
	load        loadConfig
	stalls      int // starts with the engine stalled, and as many with it answering (0: skip)
	replicas    int // bin/berth replicas of the replicas benchmark
	repAgents   int // simulated edge agents over the replicas (0: skip)
	repRamp     time.Duration
	repRefuse   bool
}

// goals collects the figures that issues 23's and 24's goals name, for
// the summary.
type goals struct {
	warm, cold, stats  float64 // Berth/raw ratios of medians (0: not measured)
	statsN             int
	stalled, answering time.Duration // start-to-ready, existing data directory
	load               loadFigures
	replicas           replicaFigures
	backup             backupFigures
}

func main() {
	if backends := os.Getenv(balancerEnv); backends != "" {
		os.Exit(balancerMain(backends)) // the replicas benchmark's balancer (lbproc.go)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg, err := parseFlags(os.Args[1:])
	if err == nil {
		err = run(ctx, cfg, os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.IntVar(&cfg.containers, "containers", 200, "number of containers to create")
	fs.IntVar(&cfg.iterations, "iterations", 60, "measured requests to each endpoint")
	fs.IntVar(&cfg.warmup, "warmup", 5, "unmeasured requests to each endpoint first")
	fs.StringVar(&cfg.image, "image", enginetest.Image(), "image of the containers (default $BERTH_TEST_IMAGE)")
	fs.BoolVar(&cfg.keep, "keep", false, "keep the containers afterwards")
	fs.IntVar(&cfg.pullRounds, "pull-rounds", 5, "pulls of the ~50 MB image through each path (0: skip)")
	fs.StringVar(&cfg.binary, "binary", "bin/berth", "server binary for the start-up and idle-memory measurement")
	fs.IntVar(&cfg.starts, "starts", 5, "starts of the server binary to measure (0: skip)")
	fs.StringVar(&cfg.agentBin, "agent-binary", "bin/berth-agent", "agent binary for the edge list and exec benchmarks (empty: skip them)")
	fs.IntVar(&cfg.keystrokes, "keystrokes", 200, "exec keystrokes timed through the socket and through an edge agent")
	fs.IntVar(&cfg.edgeAgents, "edge-agents", 1000, "simulated edge agents held against one Berth process (0: skip)")
	fs.IntVar(&cfg.dashboard, "dashboard-iterations", 10, "measured dashboard requests over 10 environments, one hung and one dead (0: skip)")
	fs.BoolVar(&cfg.running, "running", true, "start the containers, then time the list warm and cold and a stats pass over them against the raw engine")
	fs.StringVar(&cfg.coldProfile, "cold-cpuprofile", "", "write a CPU profile of the bench process (Berth runs in it) taken over the cold container lists only")
	fs.IntVar(&cfg.cold, "cold-samples", 5, "cold container lists timed (each waits for Berth's cached facts to expire first)")
	fs.IntVar(&cfg.stats, "stats-rounds", 5, "stats passes over the running containers through each path (0: skip); the first Berth pass is reported apart, the median of the others is the figure")
	fs.StringVar(&cfg.only, "only", "", `run one benchmark alone: "dashboard", "running", "load", "startup", "replicas", "edge" (-edge-agents against one Berth) or "backup"`)
	fs.DurationVar(&cfg.load.duration, "load-duration", 60*time.Second, "duration of the fleet load through Berth, and again straight at the engine (0: skip)")
	fs.IntVar(&cfg.load.rate, "load-rate", 50, "container lists per second of the fleet load")
	fs.IntVar(&cfg.load.clients, "load-clients", 200, "event streams held open during the fleet load")
	fs.BoolVar(&cfg.load.raw, "load-raw", true, "after the fleet load through Berth, run it straight at the engine for comparison")
	fs.DurationVar(&cfg.load.churn, "load-churn", time.Second, "during the fleet load, one container is stopped or started this often (0: none)")
	fs.IntVar(&cfg.stalls, "stall-starts", 3, "starts of the server binary with its engine stalled (SIGSTOP on the second test dockerd), and as many with it answering (0: skip)")
	fs.IntVar(&cfg.replicas, "replicas", 3, "bin/berth replicas on one PostgreSQL database for the replicas benchmark")
	fs.BoolVar(&cfg.repRefuse, "replica-refuse-ops", true, "the simulated agents over the replicas end each operation Berth opens at once (false: never open it, as in run 2 of 2026-11-28)")
	fs.DurationVar(&cfg.repRamp, "replica-ramp", 5*time.Second, "the simulated agents over the replicas start at random moments of this span")
	fs.IntVar(&cfg.backupMiB, "backup-mib", 1024, "MiB of random data in the volume of the backup benchmark (0: skip)")
	fs.IntVar(&cfg.repAgents, "replica-agents", 5000, "simulated edge agents over the replicas, through a round-robin balancer (0: skip)")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if cfg.containers < 1 || cfg.iterations < 1 || cfg.warmup < 0 || cfg.starts < 0 {
		return config{}, errors.New("-containers and -iterations must be positive, -warmup and -starts not negative")
	}
	if cfg.load.duration > 0 && (cfg.load.rate < 1 || cfg.load.clients < 0) {
		return config{}, errors.New("-load-rate must be positive, -load-clients not negative")
	}
	if cfg.repAgents > 0 && cfg.replicas < 2 {
		return config{}, errors.New("-replicas must be at least 2")
	}
	switch cfg.only {
	case "", "dashboard", "running", "load", "startup", "replicas", "edge", "backup":
	default:
		return config{}, fmt.Errorf("-only %q: want dashboard, running, load, startup, replicas, edge or backup", cfg.only)
	}
	return cfg, nil
}

func run(ctx context.Context, cfg config, out io.Writer) (err error) {
	eng := rawEngine{client: enginetest.HTTPClient()}
	ver, err := eng.version(ctx)
	if err != nil {
		return fmt.Errorf("engine at %s: %w", enginetest.Socket, err)
	}
	fmt.Fprintf(out, "engine %s (API %s), %d CPUs seen by the bench\n", ver.Version, ver.APIVersion, runtime.NumCPU())
	var g goals
	switch cfg.only {
	case "startup":
		g.stalled, g.answering, err = benchStalledStartup(ctx, cfg.binary, max(cfg.stalls, 1), out)
		if err == nil {
			printGoals(out, cfg, &g)
		}
		return err
	case "edge":
		return benchEdgeLoad(ctx, cfg.binary, max(cfg.edgeAgents, 1), out)
	case "backup":
		g.backup, err = benchBackup(ctx, cfg.image, max(cfg.backupMiB, 1), out)
		if err == nil {
			printGoals(out, cfg, &g)
		}
		return err
	case "replicas":
		g.replicas, err = benchReplicas(ctx, cfg.binary, cfg.replicas, max(cfg.repAgents, 1), cfg.repRamp, cfg.repRefuse, out)
		if err == nil {
			printGoals(out, cfg, &g)
		}
		return err
	}
	if err := eng.removeBenchContainers(ctx); err != nil {
		return fmt.Errorf("remove leftovers: %w", err)
	}
	if !cfg.keep {
		defer func() {
			// The run's context may be cancelled (SIGINT): clean up regardless.
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
			defer cancel()
			if cerr := eng.removeBenchContainers(cctx); cerr != nil {
				err = errors.Join(err, fmt.Errorf("cleanup: %w", cerr))
			}
		}()
	}
	fmt.Fprintf(out, "creating %d containers from %s …\n", cfg.containers, cfg.image)
	if err := eng.createContainers(ctx, cfg.image, cfg.containers); err != nil {
		return err
	}
	if cfg.only == "load" {
		if err := eng.startBench(ctx, out); err != nil {
			return err
		}
		if g.load, err = benchLoad(ctx, cfg.binary, eng, cfg.image, cfg.containers, cfg.load, out); err != nil {
			return err
		}
		printGoals(out, cfg, &g)
		return nil
	}

	srv, token, stopBerth, err := startBerth(ctx)
	if err != nil {
		return err
	}
	defer stopBerth()

	switch cfg.only {
	case "dashboard":
		return benchDashboard(ctx, srv, token, eng, ver, cfg, max(cfg.dashboard, 1), out)
	case "running":
		if err := benchRunning(ctx, srv, token, eng, cfg, &g, out); err != nil {
			return err
		}
		printGoals(out, cfg, &g)
		return nil
	}

	berth := endpoint{name: "berth", url: srv.URL + "/api/containers?all=true&env=1", client: srv.Client(), min: cfg.containers, bearer: token}
	raw := endpoint{name: "raw", url: "http://engine/containers/json?all=1", client: eng.client, min: cfg.containers}
	zipped := berth
	zipped.name, zipped.gzip = "gzip", true
	res, err := measure(ctx, []*endpoint{&berth, &raw, &zipped}, cfg.warmup, cfg.iterations)
	if err != nil {
		return err
	}
	report(out, ver, cfg, res)
	plain, gz, err := wireSizes(ctx, berth.url, token)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "list size: %.1f KB plain, %.1f KB gzipped (%.1fx smaller)\n", float64(plain)/1e3, float64(gz)/1e3, float64(plain)/float64(gz))
	if cfg.starts > 0 {
		if err := benchStartup(ctx, cfg.binary, cfg.starts, out); err != nil {
			return fmt.Errorf("start-up: %w", err)
		}
	}
	if cfg.stalls > 0 {
		if g.stalled, g.answering, err = benchStalledStartup(ctx, cfg.binary, cfg.stalls, out); err != nil {
			return fmt.Errorf("start-up with the engine stalled: %w", err)
		}
	}

	// The stack list: Berth lists every container (the raw request) and
	// groups it by compose project with Berth's own stack records.
	stacks := endpoint{name: "berth", url: srv.URL + "/api/stacks?env=1", client: srv.Client(), min: cfg.containers / stackSize, bearer: token}
	res, err = measure(ctx, []*endpoint{&stacks, &raw}, cfg.warmup, cfg.iterations)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nstack list (GET /api/stacks, %d stacks of %d containers) against the raw container list:\n", cfg.containers/stackSize, stackSize)
	report(out, ver, cfg, res)
	if cfg.dashboard > 0 {
		if err := benchDashboard(ctx, srv, token, eng, ver, cfg, cfg.dashboard, out); err != nil {
			return fmt.Errorf("dashboard: %w", err)
		}
	}
	if cfg.agentBin != "" {
		edgeEnv, stopAgent, err := startEdgeAgent(ctx, srv, token, cfg.agentBin)
		if err != nil {
			return fmt.Errorf("edge agent: %w", err)
		}
		err = benchAgentList(ctx, srv, token, edgeEnv, cfg, out)
		if err == nil && cfg.keystrokes > 0 {
			fmt.Fprintln(out)
			err = benchExecKeystroke(ctx, srv, token, edgeEnv, cfg.image, cfg.keystrokes, out)
		}
		stopAgent()
		if err != nil {
			return err
		}
	}
	if cfg.edgeAgents > 0 {
		if err := benchEdgeLoad(ctx, cfg.binary, cfg.edgeAgents, out); err != nil {
			return fmt.Errorf("edge agents load: %w", err)
		}
	}
	if cfg.running {
		// Late: the containers stay running until the cleanup.
		if err := benchRunning(ctx, srv, token, eng, cfg, &g, out); err != nil {
			return fmt.Errorf("running containers: %w", err)
		}
	}
	if pb, ok := pullBenchFromEnv(); ok && cfg.pullRounds > 0 {
		if err := pb.run(ctx, eng, srv, token, cfg.pullRounds, out); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(out, "\npull benchmark skipped: BERTH_TEST_BENCH_IMAGE / BERTH_TEST_REGISTRY unset (run scripts/test-env.sh)")
	}
	if cfg.load.duration > 0 {
		// The in-process Berth stops first: the load measures a bin/berth alone.
		stopBerth()
		if !cfg.running {
			if err := eng.startBench(ctx, out); err != nil {
				return err
			}
		}
		if g.load, err = benchLoad(ctx, cfg.binary, eng, cfg.image, cfg.containers, cfg.load, out); err != nil {
			return fmt.Errorf("fleet load: %w", err)
		}
	}
	if cfg.backupMiB > 0 {
		if g.backup, err = benchBackup(ctx, cfg.image, cfg.backupMiB, out); err != nil {
			return fmt.Errorf("backup: %w", err)
		}
	}
	if cfg.repAgents > 0 {
		if g.replicas, err = benchReplicas(ctx, cfg.binary, cfg.replicas, cfg.repAgents, cfg.repRamp, cfg.repRefuse, out); err != nil {
			return fmt.Errorf("replicas: %w", err)
		}
	}
	printGoals(out, cfg, &g)
	return nil
}

// startBerth starts Berth in-process, as "berth serve" wires it, with a
// throw-away SQLite database and authentication on (the default), creates
// the first admin and an API token for it, and returns the server, the token
// and a function that stops it. Bootstrap registers the local engine as
// environment 1.
func startBerth(ctx context.Context) (*apitest.Berth, string, func(), error) {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	dir, err := os.MkdirTemp("", "berth-bench-")
	if err != nil {
		return nil, "", nil, err
	}
	key := make([]byte, 32)
	rand.Read(key)
	box, err := secret.New(key)
	if err != nil {
		os.RemoveAll(dir)
		return nil, "", nil, err
	}
	b, err := apitest.Start(ctx, apitest.Options{DBPath: filepath.Join(dir, "berth.db"), Box: box, Log: log, Auth: true})
	if err != nil {
		os.RemoveAll(dir)
		return nil, "", nil, err
	}
	stop := sync.OnceFunc(func() { b.Close(); os.RemoveAll(dir) })
	token, err := b.AdminToken(ctx)
	if err != nil {
		stop()
		return nil, "", nil, err
	}
	return b, token, stop, nil
}
