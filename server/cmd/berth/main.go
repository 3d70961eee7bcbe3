// Command berth is the Berth server: a web UI and JSON API that manage Docker
// engines. Subcommands: serve (default), admin, healthcheck, agent.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/berth-dev/berth/server/internal/agents"
	"github.com/berth-dev/berth/server/internal/api"
	"github.com/berth-dev/berth/server/internal/auth"
	"github.com/berth-dev/berth/server/internal/backup"
	"github.com/berth-dev/berth/server/internal/config"
	"github.com/berth-dev/berth/server/internal/environments"
	"github.com/berth-dev/berth/server/internal/hawser"
	"github.com/berth-dev/berth/server/internal/helperimage"
	"github.com/berth-dev/berth/server/internal/jobs"
	"github.com/berth-dev/berth/server/internal/license"
	"github.com/berth-dev/berth/server/internal/replica"
	"github.com/berth-dev/berth/server/internal/scan"
	"github.com/berth-dev/berth/server/internal/secret"
	"github.com/berth-dev/berth/server/internal/selfupdate"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/webui"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/version"
)

const usage = `usage: berth [serve] [flags]   start the server (default)
       berth admin <command>     recovery: create-user, reset-password, disable-auth, enable-auth;
                                 backup and restore of Berth itself
       berth healthcheck         exit 0 when the server of this HOST and PORT answers /api/health
       berth agent               (the remote agent is its own binary: berth-agent)
       berth version
       berth self-update-handover <container> <image>
                                 (run by the self-update's updater container) replace the container by a
                                 copy on image, kept only once healthy

Run "berth serve -h" for the server's flags.
`

// jobTimeout bounds one long operation (a pull of a large image over a slow
// link included).
const jobTimeout = time.Hour

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "berth:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		cfg, err := config.Load(args, getenv, stderr)
		if err != nil {
			return err
		}
		return serve(ctx, cfg, stderr)
	case "version":
		fmt.Fprintln(stderr, "berth", version.Version)
		return nil
	case "admin":
		return admin(ctx, args, getenv, stdin, stderr)
	case "healthcheck":
		return healthcheck(ctx, args, getenv, stderr)
	case selfupdate.Subcommand:
		return handOver(ctx, args, stderr)
	case "agent":
		return fmt.Errorf("%s: the remote agent is its own binary, berth-agent (see docs/agents.md)", cmd)
	case "help", "-h", "--help":
		fmt.Fprint(stderr, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", cmd)
}

// handOverDelay is how long the updater waits before stopping Berth.
const handOverDelay = 2 * time.Second

// handOver is the updater of a self-update: it replaces container args[0]
// (Berth's) by a copy on image args[1] through the engine socket, and
// prints each step.
func handOver(ctx context.Context, args []string, stderr io.Writer) error {
	if len(args) != 2 {
		return fmt.Errorf("usage: berth %s <container> <image>", selfupdate.Subcommand)
	}
	engines := engine.NewManager(slog.New(slog.NewTextHandler(stderr, nil)))
	defer engines.Close()
	c, err := engines.Client(ctx, engine.Endpoint{ConnectionType: engine.Socket})
	if err != nil {
		return err
	}
	// Berth answers the request that launched the updater (its stream's
	// last events) before it is stopped.
	fmt.Fprintln(stderr, "Handing over in", handOverDelay)
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(handOverDelay):
	}
	id, err := selfupdate.HandOver(ctx, c, args[0], args[1], selfupdate.DefaultGate, func(step string) { fmt.Fprintln(stderr, step) })
	if err != nil {
		return err
	}
	fmt.Fprintln(stderr, "Berth runs in container", id)
	return nil
}

func serve(ctx context.Context, cfg config.Config, stderr io.Writer) error {
	started := time.Now()
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	st, key, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	// A replica of several (REPLICA_HOST) has a row the others see it live
	// by, written before it serves; it is renewed until Berth stops, then
	// deleted with the agent leases the replica holds.
	var replicas *replica.Registry
	stopReplica := func() {}
	if cfg.Replicated() {
		if replicas, err = replica.New(st, replica.Config{HTTPURL: cfg.ReplicaHTTPURL(), RelayAddr: cfg.ReplicaRelayAddr()}, key, log); err != nil {
			return err
		}
		if err := replicas.Renew(ctx); err != nil {
			return fmt.Errorf("replica: %w", err)
		}
		rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		done := make(chan struct{})
		go func() {
			defer close(done)
			replicas.Run(rctx)
		}()
		var once sync.Once
		stopReplica = func() { once.Do(func() { cancel(); <-done }) }
		defer stopReplica()
		log.Info("replica of a multi-replica install", "replica", replicas.Self(), "http", cfg.ReplicaHTTPURL(), "relay", cfg.ReplicaRelayAddr())
	}
	engines := engine.NewManager(log)
	engine.RouteComposeLogs(log)
	defer engines.Close()
	agentSvc, err := agents.New(agents.Options{Store: st, Engines: engines, Log: log, Heartbeat: cfg.AgentHeartbeat,
		Install: agents.InstallConfig{PublicURL: cfg.AgentPublicURL, Port: cfg.AgentPort, TLS: cfg.AgentTLSCert != "",
			Image: cfg.AgentImage}, Replicas: replicas, RelayCertFile: cfg.AgentTLSCert})
	if err != nil {
		return err
	}
	engines.UseAgents(agentSvc)
	defer agentSvc.Close()
	hawserHub := hawser.NewHub(hawser.Options{Store: st, Engines: engines, Log: log})
	engines.UseHawser(hawserHub)
	if replicas != nil {
		// Hawser edge agents are leased and relayed as berth-agents are.
		hawserHub.UseReplicas(agentSvc)
		agentSvc.UseHawser(hawserHub)
	}
	defer hawserHub.Close()
	// Start-up never waits on an engine: on the first start the local
	// engine is asked (and its environment created) while Berth already
	// serves; later starts ask it nothing.
	go func() {
		if err := environments.Bootstrap(ctx, st, engines, cfg.LocalSocket, log); err != nil && ctx.Err() == nil {
			log.Error("the local environment could not be set up", "err", err)
		}
	}()
	extraKeys, err := extraLicenseKeys(os.Getenv)
	if err != nil {
		return err
	}
	lic, err := license.New(ctx, st, append(license.VendorKeys(), extraKeys...), nil)
	if err != nil {
		return err
	}
	authSvc, err := auth.New(ctx, auth.Options{Store: st, Log: log, DataDir: cfg.DataDir,
		DisableLocalLogin: cfg.DisableLocalLogin, Edition: lic})
	if err != nil {
		return err
	}
	if err := announceSetup(ctx, authSvc, log, stderr, cfg.Port); err != nil {
		return err
	}

	console, err := consoleOf(cfg.WebDir, log)
	if err != nil {
		return err
	}

	// Long operations (pulls, pushes, scans) outlive their requests, not Berth.
	jobReg := jobs.NewRegistry(ctx, jobTimeout, nil)
	defer jobReg.Wait()
	// Follow-up requests (jobs, OIDC callbacks) find the replica that holds
	// them; a single Berth has none (a nil *Registry is not a nil Locator).
	var locator replica.Locator
	if replicas != nil {
		locator = replicas
	}
	apiSrv := api.New(api.Deps{Log: log, Store: st, Auth: authSvc, License: lic, Engines: engines, Agents: agentSvc, Hawser: hawserHub, Jobs: jobReg,
		Scan: scan.Config{GrypePath: cfg.GrypePath, TrivyPath: cfg.TrivyPath, GrypeDBDir: cfg.GrypeDBDir,
			TrivyCacheDir: cfg.TrivyCacheDir, Offline: cfg.ScannerOffline}, DataDir: cfg.DataDir,
		Console: console, Node: nodeName(cfg), UpdateGrace: cfg.AutoUpdateGrace, DockerHubIndex: cfg.DockerHubIndexURL,
		Boundaries: api.Boundaries{TrustedProxies: cfg.TrustedProxies, ExternalStackRoots: cfg.ExternalStackRoots,
			OutboundAllow: cfg.OutboundAllow}, Replica: locator,
		// Backups run restic next to the data, in helpers made of this
		// host's restic (BERTH_RESTIC) and berth-helper.
		Backup:      backup.New(backup.Config{Restic: cfg.ResticPath, Helper: helperimage.Embedded(), Log: log}),
		SelfArchive: selfArchive(cfg, log)})
	defer apiSrv.StopNotifications() // the notifier runs from api.New until Berth stops
	// Volume browse helpers kept for a while are removed.
	defer apiSrv.CloseVolumeHelpers()
	// Schedules run until Berth stops; then runs in progress are cancelled
	// (an auto-update puts the old container back) and waited for.
	schedCtx, stopSchedules := context.WithCancel(ctx)
	schedDone := make(chan struct{})
	// The activity collector (engine events, metrics) runs and stops with them.
	activityDone := make(chan struct{})
	go func() {
		defer close(activityDone)
		if err := apiSrv.Activity().Run(schedCtx); err != nil {
			log.Error("the activity collector stopped", "err", err)
		}
	}()
	// Stacks a deploy interrupted by the last stop left half done are put
	// right, in the background (start-up never waits on an engine); runs
	// later than this start are not touched.
	repairDone := make(chan struct{})
	go func() {
		defer close(repairDone)
		apiSrv.RepairStacks(schedCtx, started)
	}()
	go func() {
		defer close(schedDone)
		if err := apiSrv.Schedules().Run(schedCtx); err != nil {
			log.Error("the scheduler stopped", "err", err)
		}
		<-activityDone
		<-repairDone
	}()
	defer func() {
		stopSchedules()
		<-schedDone
	}()
	srv := &http.Server{
		Addr:              cfg.Addr(),
		Handler:           apiSrv.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       120 * time.Second,
		// Requests derive from ctx, so that streams end when Berth stops.
		BaseContext: func(net.Listener) context.Context { return ctx },
	}
	errc := make(chan error, 2)
	var agentPort *agents.Listener
	if cfg.AgentPort != 0 {
		if agentPort, err = agentSvc.Listen(cfg.AgentTLSCert, cfg.AgentTLSKey); err != nil {
			return err
		}
		ln, err := net.Listen("tcp", cfg.AgentAddr())
		switch {
		case err == nil:
			go func() { errc <- agentPort.Serve(ln) }()
			log.Info("edge agents' port listening", "addr", cfg.AgentAddr(), "tls", cfg.AgentTLSCert != "")
		case cfg.AgentPortSet || cfg.Replicated():
			// A replica's relay is on the agent port: the others need it.
			return fmt.Errorf("agent port: %w", err)
		default:
			// The default port is taken (another Berth on this host, say):
			// Berth serves on, without edge agents, and says so.
			log.Error("edge agents cannot connect: the default agent port is taken; set AGENT_PORT", "addr", cfg.AgentAddr(), "err", err)
			agentPort = nil
		}
	}
	go func() { errc <- srv.ListenAndServe() }()
	log.Info("berth listening", "addr", cfg.Addr(), "data_dir", cfg.DataDir, "database", st.Dialect(), "version", version.Version)

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if agentPort != nil {
		// Edge agents are told to go; they reconnect to the next Berth.
		agentPort.Stop(sctx)
	}
	// The replica's row and leases go: its agents may connect to the
	// others at once.
	stopReplica()
	// Streams (events, logs, terminals) end when their requests' contexts do.
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// nodeName names this server among the Berth servers sharing its database:
// host and port, the same after a restart (see schedule.Options.Node).
func nodeName(cfg config.Config) string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "berth"
	}
	return fmt.Sprintf("%s:%d", host, cfg.Port)
}

// announceSetup prints the one-time setup token while no user exists, so
// that whoever started Berth (and only they) can create the first admin.
func announceSetup(ctx context.Context, a *auth.Service, log *slog.Logger, stderr io.Writer, port int) error {
	enabled, err := a.Enabled(ctx)
	if err != nil || !enabled {
		return err
	}
	tok, err := a.PrepareSetup(ctx)
	if err != nil || tok == "" {
		return err
	}
	log.Warn("no user exists yet: create the first admin with the one-time setup token",
		"setup_token", tok, "file", a.SetupTokenPath())
	fmt.Fprintf(stderr, "\n  First start: create the admin account with the one-time setup token\n"+
		"    %s\n  (also in %s), e.g.\n"+
		"    curl -X POST http://localhost:%d/api/users -H 'X-Setup-Token: %s' \\\n"+
		"         -H 'Content-Type: application/json' -d '{\"username\":\"admin\",\"password\":\"<at least 8 characters>\"}'\n\n",
		tok, a.SetupTokenPath(), port, tok)
	return nil
}

// openStore opens the database of cfg with the data directory's encryption
// key (generated on first use), and returns the key.
func openStore(ctx context.Context, cfg config.Config) (*store.Store, []byte, error) {
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("data directory: %w", err)
	}
	key, err := secret.LoadKey(cfg.DataDir, cfg.EncryptionKey)
	if err != nil {
		return nil, nil, err
	}
	box, err := secret.New(key)
	if err != nil {
		return nil, nil, err
	}
	st, err := store.Open(ctx, cfg.DatabaseURL, box)
	if err != nil {
		return nil, nil, fmt.Errorf("open database: %w", err)
	}
	return st, key, nil
}

// consoleOf returns the web console read from dir (WEB_DIR: a `vite build`
// output, for working on the console without rebuilding berth), or nil for
// the embedded build.
func consoleOf(dir string, log *slog.Logger) (*webui.Console, error) {
	if dir == "" {
		return nil, nil
	}
	if _, err := os.Stat(filepath.Join(dir, "index.html")); err != nil {
		return nil, fmt.Errorf("WEB_DIR: %w", err)
	}
	log.Info("serving the web console from a directory", "dir", dir)
	return webui.FromFS(os.DirFS(dir)), nil
}
