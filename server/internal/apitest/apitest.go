// Package apitest provides a Berth served in-process over real HTTP, wired as
// "berth serve" wires it, for integration tests and benchmarks.
package apitest

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/berth-dev/berth/server/internal/agents"
	"github.com/berth-dev/berth/server/internal/api"
	"github.com/berth-dev/berth/server/internal/auth"
	"github.com/berth-dev/berth/server/internal/backup"
	"github.com/berth-dev/berth/server/internal/environments"
	"github.com/berth-dev/berth/server/internal/events"
	"github.com/berth-dev/berth/server/internal/hawser"
	"github.com/berth-dev/berth/server/internal/helperimage/helperimagetest"
	"github.com/berth-dev/berth/server/internal/jobs"
	"github.com/berth-dev/berth/server/internal/license"
	"github.com/berth-dev/berth/server/internal/replica"
	"github.com/berth-dev/berth/server/internal/scan"
	"github.com/berth-dev/berth/server/internal/schedule"
	"github.com/berth-dev/berth/server/internal/secret"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/enginetest"
)

// Berth is a running in-process server.
type Berth struct {
	URL     string
	Store   *store.Store
	Auth    *auth.Service
	Engines *engine.Manager
	// Events is the server's engine events hub.
	Events *events.Hub
	Jobs   *jobs.Registry
	Agents *agents.Service
	// Hawser is the edge hub of the reference's agent.
	Hawser *hawser.Hub
	// Schedules is the scheduler, running until Close.
	Schedules *schedule.Service
	// AgentURL is the URL edge agents dial (http://127.0.0.1:<port>).
	AgentURL string
	// Replica is this server's replica registry (Options.ReplicaHost); nil
	// for a single Berth.
	Replica     *replica.Registry
	stopReplica func()
	agentPort   *agents.Listener
	srv         *httptest.Server

	stopJobs          context.CancelFunc
	stopSchedules     context.CancelFunc
	schedulesDone     chan struct{}
	stopNotifications func()
}

// Options configure a test Berth.
type Options struct {
	DBPath string // SQLite file, or a postgres:// URL (then DataDir is required)
	// DataDir is the data directory (default: DBPath's directory).
	DataDir string
	// Replica finds the other servers sharing a PostgreSQL database
	// (api.Deps.Replica; nil: a single Berth).
	Replica replica.Locator
	Box     *secret.Box
	Log     *slog.Logger
	// Auth keeps authentication enabled (the default of a real start); when
	// false the instance runs with authentication disabled (open access).
	Auth bool
	// Now replaces the clock of authentication (login limits, sessions).
	Now func() time.Time
	// DisableLocalLogin is DISABLE_LOCAL_LOGIN=true.
	DisableLocalLogin bool
	// Scan configures the scanners (tests point it at the scanners and
	// offline databases that scripts/test-env.sh prepares).
	Scan scan.Config
	// Addr is a fixed listen address (e.g. the host:port of a redirect URI
	// registered at an identity provider); empty: a free loopback port.
	Addr string
	// LicenseKeys are the keys trusted to sign licenses (tests inject their
	// own; nil trusts none, never every license).
	LicenseKeys []ed25519.PublicKey
	// AgentAddr is a fixed listen address of the edge agents' port (a
	// restarted Berth keeps it); empty: a free loopback port.
	AgentAddr string
	// AgentHeartbeat is the edge agents' heartbeat interval (default 10 s).
	AgentHeartbeat time.Duration
	// AgentConnectRate and AgentConnectBurst set the reconnect-storm guard
	// (zero: the defaults).
	AgentConnectRate  float64
	AgentConnectBurst int
	// Node names the server among those sharing its database (default: a
	// name of its own); UpdateGrace is the auto-update's health gate
	// (default autoupdate.DefaultGrace).
	Node        string
	UpdateGrace time.Duration
	// Boundaries are the trust-boundary defaults (TRUSTED_PROXIES,
	// EXTERNAL_STACK_ROOTS, OUTBOUND_ALLOW). When OutboundAllow is nil the
	// test server may reach private and loopback destinations: the test
	// services (git, registry, SMTP, the OpenID provider) are on loopback.
	Boundaries api.Boundaries
	// DockerHubIndex is where Docker Hub's searches and tag lists go (the
	// tests point it at the local registry); "": Docker Hub.
	DockerHubIndex string
	// ReplicaHost makes the server one replica of several sharing DBPath (a
	// postgres:// URL), as REPLICA_HOST does: its API and agent port listen
	// on this host (free ports unless Addr/AgentAddr say otherwise), and
	// ReplicaKey is the encryption key the replicas share (Box must be made
	// from it).
	ReplicaHost string
	ReplicaKey  []byte
	// Backup is the restic runner of the backup routes (api.Deps.Backup;
	// nil: backups unavailable).
	Backup backup.Runner
	// SelfArchive writes the archive of a backup configuration of type
	// berth (api.Deps.SelfArchive).
	SelfArchive func(ctx context.Context, includeGit bool, w io.Writer) error
}

// boundaries are o.Boundaries with the tests' outbound default.
func (o Options) boundaries() api.Boundaries {
	b := o.Boundaries
	if b.OutboundAllow == nil {
		b.OutboundAllow = []string{"private", "loopback"}
	}
	return b
}

// FastArgon2 are cheap password-hash parameters for tests (recorded in each
// hash like the real ones).
var FastArgon2 = auth.Argon2Params{Memory: 1024, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32}

// Start serves a Berth with the real local engine (enginetest.Socket)
// bootstrapped as environment 1.
func Start(ctx context.Context, o Options) (*Berth, error) {
	// Berth's helper image, from this checkout: the tests need no `make`.
	helperImg, err := helperimagetest.Set()
	if err != nil {
		return nil, err
	}
	dataDir := o.DataDir
	if dataDir == "" {
		if strings.Contains(o.DBPath, "://") {
			return nil, errors.New("apitest: DataDir is required with a database URL")
		}
		dataDir = filepath.Dir(o.DBPath)
	}
	st, err := store.Open(ctx, o.DBPath, o.Box)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	host := "127.0.0.1"
	if o.ReplicaHost != "" {
		host = o.ReplicaHost
	}
	// A replica says where its API is before it serves: its listener is
	// made first.
	addr := o.Addr
	if addr == "" {
		addr = net.JoinHostPort(host, "0")
	}
	httpLn, err := net.Listen("tcp", addr)
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	engines := engine.NewManager(o.Log)
	agentAddr := o.AgentAddr
	if agentAddr == "" {
		agentAddr = net.JoinHostPort(host, "0")
	}
	agentLn, err := net.Listen("tcp", agentAddr)
	if err != nil {
		httpLn.Close()
		engines.Close()
		st.Close()
		return nil, fmt.Errorf("agent port %s: %w", agentAddr, err)
	}
	agentURL := "http://" + agentLn.Addr().String()
	var reg *replica.Registry
	stopReplica := func() {}
	if o.ReplicaHost != "" {
		reg, err = replica.New(st, replica.Config{HTTPURL: "http://" + httpLn.Addr().String(), RelayAddr: agentLn.Addr().String()},
			o.ReplicaKey, o.Log)
		if err == nil {
			err = reg.Renew(ctx)
		}
		if err != nil {
			httpLn.Close()
			agentLn.Close()
			engines.Close()
			st.Close()
			return nil, err
		}
		rctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			reg.Run(rctx)
		}()
		var once sync.Once
		stopReplica = func() { once.Do(func() { cancel(); <-done }) }
	}
	agentSvc, err := agents.New(agents.Options{Store: st, Engines: engines, Log: o.Log, Heartbeat: o.AgentHeartbeat,
		ConnectRate: o.AgentConnectRate, ConnectBurst: o.AgentConnectBurst,
		Install: agents.InstallConfig{PublicURL: agentURL, Image: "berth/agent:dev"}, Replicas: reg})
	if err != nil {
		stopReplica()
		httpLn.Close()
		agentLn.Close()
		engines.Close()
		st.Close()
		return nil, err
	}
	engines.UseAgents(agentSvc)
	hawserHub := hawser.NewHub(hawser.Options{Store: st, Engines: engines, Log: o.Log})
	engines.UseHawser(hawserHub)
	if reg != nil {
		hawserHub.UseReplicas(agentSvc)
		agentSvc.UseHawser(hawserHub)
	}
	agentPort, err := agentSvc.Listen("", "")
	if err != nil {
		stopReplica()
		httpLn.Close()
		agentLn.Close()
		engines.Close()
		st.Close()
		return nil, err
	}
	go agentPort.Serve(agentLn)
	closeAgents := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		agentPort.Stop(ctx)
		agentSvc.Close()
		hawserHub.Close()
		stopReplica()
		httpLn.Close()
	}
	if err := environments.Bootstrap(ctx, st, engines, enginetest.Socket, o.Log); err != nil {
		closeAgents()
		engines.Close()
		st.Close()
		return nil, fmt.Errorf("bootstrap local environment: %w", err)
	}
	lic, err := license.New(ctx, st, o.LicenseKeys, o.Now)
	if err != nil {
		closeAgents()
		engines.Close()
		st.Close()
		return nil, err
	}
	authSvc, err := auth.New(ctx, auth.Options{Store: st, Log: o.Log, DataDir: dataDir, Now: o.Now, Argon2: &FastArgon2,
		DisableLocalLogin: o.DisableLocalLogin, Edition: lic})
	if err == nil && !o.Auth {
		err = authSvc.SetEnabled(ctx, false)
	}
	if err == nil {
		_, err = authSvc.PrepareSetup(ctx)
	}
	if err != nil {
		closeAgents()
		engines.Close()
		st.Close()
		return nil, err
	}
	jctx, stopJobs := context.WithCancel(context.Background())
	jobReg := jobs.NewRegistry(jctx, time.Hour, o.Now)
	if o.Node == "" {
		o.Node = "apitest-" + agentLn.Addr().String()
	}
	if o.Replica == nil && reg != nil {
		o.Replica = reg
	}
	apiSrv := api.New(api.Deps{Log: o.Log, Store: st, Auth: authSvc, License: lic,
		Engines: engines, Agents: agentSvc, Hawser: hawserHub, Jobs: jobReg, Scan: o.Scan, DataDir: dataDir,
		Node: o.Node, UpdateGrace: o.UpdateGrace, Boundaries: o.boundaries(), HelperImage: helperImg,
		DockerHubIndex: o.DockerHubIndex, Replica: o.Replica, Backup: o.Backup, SelfArchive: o.SelfArchive})
	sctx, stopSchedules := context.WithCancel(context.Background())
	schedulesDone := make(chan struct{})
	activityDone := make(chan struct{}) // the activity collector runs and stops with the schedules
	go func() {
		defer close(activityDone)
		_ = apiSrv.Activity().Run(sctx)
	}()
	go func() {
		defer close(schedulesDone)
		_ = apiSrv.Schedules().Run(sctx)
		<-activityDone
	}()
	srv := httptest.NewUnstartedServer(apiSrv.Handler())
	srv.Listener.Close()
	srv.Listener = httpLn
	srv.Start()
	return &Berth{URL: srv.URL, Store: st, Auth: authSvc, Engines: engines, Jobs: jobReg, Agents: agentSvc, Hawser: hawserHub, AgentURL: agentURL,
		Replica: reg, stopReplica: stopReplica,
		Events: apiSrv.Events(), Schedules: apiSrv.Schedules(), agentPort: agentPort, srv: srv, stopJobs: stopJobs, stopSchedules: stopSchedules,
		schedulesDone: schedulesDone, stopNotifications: apiSrv.StopNotifications}, nil
}

// Client returns a keep-alive client for the server.
func (b *Berth) Client() *http.Client { return b.srv.Client() }

// Close stops the server (ending open streams) and closes the store.
func (b *Berth) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// The Hawser agents' WebSockets first (hijacked: the server does not
	// close them), so that the streams relayed to them end at once.
	b.Hawser.Close()
	b.agentPort.Stop(ctx)
	b.Agents.Close()
	b.stopReplica() // its row and leases go: its agents may connect elsewhere at once
	b.srv.CloseClientConnections()
	b.srv.Close()
	b.stopSchedules()
	<-b.schedulesDone
	b.stopJobs()
	b.Jobs.Wait()
	b.stopNotifications() // before the store closes: its deliveries claim messages from it
	b.Events.Close()      // the engine event streams (they outlive their last subscriber a while)
	b.Engines.Close()
	b.Store.Close()
}

// AdminToken creates the first admin (with the setup token) and returns an
// API token of theirs.
func (b *Berth) AdminToken(ctx context.Context) (string, error) {
	tok, err := b.Auth.PrepareSetup(ctx)
	if err != nil {
		return "", err
	}
	const password = "bench-admin-password"
	u, err := b.Auth.CreateFirstAdmin(ctx, tok, auth.UserSpec{Username: "admin", Password: password})
	if err != nil {
		return "", err
	}
	t, err := b.Auth.CreateToken(ctx, u, "bench", password, nil)
	if err != nil {
		return "", err
	}
	return t.Token, nil
}
