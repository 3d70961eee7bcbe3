// Package api provides Berth's HTTP interface: the route table, request
// decoding and validation, the environment selector, JSON, Server-Sent Events
// and WebSocket helpers, and the one mapping from errors to statuses.
//
// It is the only package that knows HTTP; handlers call one domain function
// and encode its result.
package api

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"reflect"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/activity"
	"github.com/berth-dev/berth/server/internal/agents"
	"github.com/berth-dev/berth/server/internal/auth"
	"github.com/berth-dev/berth/server/internal/autoupdate"
	"github.com/berth-dev/berth/server/internal/backup"
	"github.com/berth-dev/berth/server/internal/backupjobs"
	"github.com/berth-dev/berth/server/internal/containers"
	"github.com/berth-dev/berth/server/internal/dashboard"
	"github.com/berth-dev/berth/server/internal/events"
	"github.com/berth-dev/berth/server/internal/gitops"
	"github.com/berth-dev/berth/server/internal/hawser"
	"github.com/berth-dev/berth/server/internal/helperimage"
	"github.com/berth-dev/berth/server/internal/images"
	"github.com/berth-dev/berth/server/internal/jobs"
	"github.com/berth-dev/berth/server/internal/license"
	"github.com/berth-dev/berth/server/internal/notify"
	"github.com/berth-dev/berth/server/internal/outbound"
	"github.com/berth-dev/berth/server/internal/replica"
	"github.com/berth-dev/berth/server/internal/scan"
	"github.com/berth-dev/berth/server/internal/schedule"
	"github.com/berth-dev/berth/server/internal/stacks"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/volumes"
	"github.com/berth-dev/berth/server/internal/webui"
	"github.com/berth-dev/berth/shared/engine"
)

// Server serves the API.
type Server struct {
	dataDir    string // DATA_DIR ("" for a Server that only describes the API)
	log        *slog.Logger
	store      *store.Store
	auth       *auth.Service
	license    *license.Manager
	engines    *engine.Manager
	agents     *agents.Service
	hawser     *hawser.Hub
	containers *containers.Service
	images     *images.Service
	scan       *scan.Service
	stacks     *stacks.Service
	git        *gitops.Service
	autoupdate *autoupdate.Service
	schedules  *schedule.Service
	local      *time.Location // zone of schedules whose environment has none
	jobs       *jobs.Registry
	events     *events.Hub
	activity   *activity.Service // the activity collector, run by the caller
	dashboard  *dashboard.Service
	notify     *notify.Service // notifications: dispatch, delivery, engine event watchers
	console    *webui.Console
	origins    []string
	now        func() time.Time
	sys        systemState // system, metrics and audit-stream state (routes_system.go sets it up)
	// volHelpers are the volume browse, export and clone helpers (routes_volumecontent.go).
	volHelpers *volumes.Helpers
	// helperImg is the image of Berth's helper containers (volume and
	// file helpers).
	helperImg *helperimage.Set
	// tpl is the app templates and config sets state (routes_templates.go sets it up).
	tpl templatesState
	// bounds are the trust-boundary defaults of the configuration.
	bounds Boundaries
	// outbound is the outbound policy in force (routes_outbound.go).
	outbound *outbound.Settings
	// hubIndex is where Docker Hub's searches and tag lists go ("": Docker
	// Hub; registry.UseHubIndex).
	hubIndex string
	// replicas finds the other replicas sharing the database (nil: a
	// single Berth, which forwards nothing).
	replicas replica.Locator
	// backup runs restic (nil: backups answer 503); backups are the
	// configurations' runs and the restores.
	backup  backup.Runner
	backups *backupjobs.Service
	node    string
}

// Deps are what the Server needs.
type Deps struct {
	Log     *slog.Logger
	Store   *store.Store
	Auth    *auth.Service
	License *license.Manager
	Engines *engine.Manager
	// Agents is the agent protocol's server side (nil: agent environments
	// are stored but not reachable).
	Agents *agents.Service
	// Hawser is the edge hub of the reference's agent (nil: hawser-edge
	// environments are stored but not reachable).
	Hawser *hawser.Hub
	Jobs   *jobs.Registry
	Scan   scan.Config
	// DataDir holds stack files (stacks/<env>/<stack>/) and git clones (git/).
	DataDir string
	// AllowedOrigins are extra host patterns (e.g. "berth.example.com") whose
	// browsers may open WebSockets; the request's own host is always allowed.
	AllowedOrigins []string
	// Console is the web console served outside /api; nil serves the
	// embedded build.
	Console *webui.Console
	// Node names this server among those sharing the database (host and
	// port: stable across restarts); see schedule.Options.Node.
	Node string
	// Timezone is the zone of schedules whose environment has none (nil:
	// the process's local zone).
	Timezone *time.Location
	// UpdateGrace is how long a container recreated by an auto-update must
	// stay up before the old one is removed (0: autoupdate.DefaultGrace).
	UpdateGrace time.Duration
	// Boundaries are the trust-boundary defaults read from the environment
	// (TRUSTED_PROXIES, EXTERNAL_STACK_ROOTS, OUTBOUND_ALLOW); the admin
	// settings of docs/security.md override the last two.
	Boundaries Boundaries
	// HelperImage is the image Berth's helper containers run (nil: the
	// one embedded in the binary by the Makefile).
	HelperImage *helperimage.Set
	// DockerHubIndex is DOCKER_HUB_INDEX_URL: where Docker Hub's searches and
	// tag lists go ("": Docker Hub itself).
	DockerHubIndex string
	// Replica finds the other replicas sharing the database (REPLICA_HOST):
	// a follow-up request that misses here (a job another replica runs, an
	// OIDC sign-in another replica began) is forwarded to its replica. nil:
	// a single Berth.
	Replica replica.Locator
	// Backup runs restic in helper containers on the environments' engines
	// (nil: the backup routes that need restic answer 503).
	Backup backup.Runner
	// SelfArchive writes the archive of Berth itself that a backup
	// configuration of type berth sends to its destination (nil: such a
	// run fails).
	SelfArchive func(ctx context.Context, includeGit bool, w io.Writer) error
}

// Boundaries are the trust-boundary defaults of the configuration.
type Boundaries struct {
	TrustedProxies     []netip.Prefix // peers whose forwarding headers name the client
	ExternalStackRoots []string       // directories stack files may use outside DATA_DIR/stacks
	OutboundAllow      []string       // "private" and/or "loopback": what outbound requests may reach
}

// New returns a Server.
func New(d Deps) *Server {
	if gin.IsDebugging() {
		gin.SetMode(gin.ReleaseMode) // no route dump or debug warnings on the console
	}
	scanner := scan.New(d.Engines, d.Store, d.Log, d.Scan)
	helperImg := d.HelperImage
	if helperImg == nil {
		helperImg = helperimage.Embedded()
	}
	imgs := images.New(d.Engines, d.Store, d.Log, scanner)
	stk := stacks.New(d.Store, d.Engines, imgs, d.DataDir, d.Log).UseDefaultRoots(d.Boundaries.ExternalStackRoots)
	git := gitops.New(d.Store, stk, d.Log)
	// Requests made on a user's behalf follow the admin's outbound policy,
	// OUTBOUND_ALLOW until one is saved.
	ob := outbound.NewSettings(d.Store, outbound.PolicyOf(d.Boundaries.OutboundAllow))
	git.UseOutbound(ob)
	if v := reflect.ValueOf(d.Replica); v.Kind() == reflect.Pointer && v.IsNil() {
		d.Replica = nil // a nil *Registry given as the interface: a single Berth
	}
	if d.Replica != nil {
		stk.UseReplica(d.Replica.Self()) // one operation per stack across the replicas
	}
	if d.Auth != nil {
		d.Auth.UseOutbound(ob)
		if d.Replica != nil {
			d.Auth.UseStateTag(d.Replica.Self()) // the OIDC callback finds its replica (oidcCallback)
		}
	}
	if d.Console == nil {
		d.Console = webui.New()
	}
	if d.Timezone == nil {
		d.Timezone = time.Local
	}
	backups := backupjobs.New(backupjobs.Options{Store: d.Store, Engines: d.Engines, Runner: d.Backup, Log: d.Log,
		Node: d.Node, Single: d.Replica == nil, StackDir: stk.Dir, PathPolicy: stk.Policy, Repo: backupRepo(d.Store), Instance: backupInstance(d.Store),
		RecordStack: restoredStack(d.Store, stk), SelfArchive: d.SelfArchive})
	au := autoupdate.New(autoupdate.Options{Engines: d.Engines, Store: d.Store, Images: imgs, Scan: scanner, Log: d.Log,
		Grace: d.UpdateGrace})
	sched := schedule.New(schedule.Options{Store: d.Store, Log: d.Log, Node: d.Node, Local: d.Timezone, Scanning: scanner.Enabled,
		Runners: map[schedule.Type]schedule.Runner{
			schedule.ContainerUpdate: schedule.RunnerFunc(au.RunContainerUpdate),
			schedule.GitStackSync:    schedule.RunnerFunc(git.RunSync),
			schedule.EnvUpdateCheck:  schedule.RunnerFunc(au.RunUpdateCheck),
			schedule.ImagePrune:      schedule.RunnerFunc(imgs.RunPrune),
			schedule.Backup:          schedule.RunnerFunc(backups.RunSchedule),
			schedule.BackupCheck:     schedule.RunnerFunc(backups.RunMaintenance),
			schedule.BackupPrune:     schedule.RunnerFunc(backups.RunMaintenance),
		},
		// A container caught in the middle of its update when Berth stopped
		// is put right (rolled back, or its proven update completed).
		Recoverers: map[schedule.Type]schedule.Recoverer{
			schedule.ContainerUpdate: au.Recover,
			schedule.EnvUpdateCheck:  au.Recover,
		}})
	au.UseSchedulesChanged(sched.Changed) // an orphaned auto-update removed by its run
	git.UseRecorder(sched)                // webhook deploys are git_stack_sync executions
	// One engine event stream per environment, shared by the SSE clients of
	// /api/events, the activity collector, the notifier and the containers
	// list cache.
	hub := events.NewHub(d.Engines, d.Log, events.HubOptions{})
	var elsewhere func(int64) bool
	if d.Agents != nil {
		elsewhere = d.Agents.HeldElsewhere
	}
	aopts := activity.Options{Store: d.Store, Engines: d.Engines, Events: hub, Log: d.Log, Elsewhere: elsewhere}
	if d.Agents != nil {
		aopts.Away = d.Agents.Away // edge environments whose agent is not connected here
	}
	if d.Replica != nil {
		aopts.Replica = d.Replica.Self() // the metrics rounds it claims name it
	}
	act := activity.New(aopts)
	if d.Agents != nil {
		d.Agents.OnEdgeConnect(func(int64) { act.Poke() })
	}
	nopts := notify.Options{Store: d.Store, Engines: d.Engines, Events: hub, Log: d.Log,
		Node: d.Node, Outbound: ob}
	if d.License != nil {
		nopts.License = d.License // license_expiring
	}
	notifier := notify.New(nopts)
	notifier.Start()
	au.UseNotifier(notifier) // outcomes worth a notification
	git.UseNotifier(notifier)
	scanner.UseNotifier(notifier)
	stk.UseNotifier(notifier)
	imgs.UseNotifier(notifier)
	backups.UseNotifier(notifier)
	return &Server{
		backup:     d.Backup,
		backups:    backups,
		node:       d.Node,
		bounds:     d.Boundaries,
		hubIndex:   d.DockerHubIndex,
		replicas:   d.Replica,
		outbound:   ob,
		dataDir:    d.DataDir,
		log:        d.Log,
		store:      d.Store,
		auth:       d.Auth,
		license:    d.License,
		engines:    d.Engines,
		agents:     d.Agents,
		hawser:     d.Hawser,
		containers: containers.New(d.Engines, d.Store, d.Log).UseListCache(hub),
		images:     imgs,
		scan:       scanner,
		stacks:     stk,
		git:        git,
		autoupdate: au,
		schedules:  sched,
		local:      d.Timezone,
		jobs:       d.Jobs,
		events:     hub,
		notify:     notifier,
		activity:   act,
		dashboard:  dashboard.New(d.Store, d.Engines, stk, scanner, d.Log).UseActivity(act),
		console:    d.Console,
		origins:    d.AllowedOrigins,
		now:        time.Now,
		volHelpers: volumes.NewHelpers(d.Engines, helperImg, d.Log, d.Node, 0),
		helperImg:  helperImg,
	}
}

// Schedules returns the scheduler, which the caller runs (schedule.Service.Run)
// for as long as the server serves.
func (s *Server) Schedules() *schedule.Service { return s.schedules }

// RepairStacks puts right the stacks a deploy interrupted by Berth's last
// stop left half done (see stacks.Service.RepairInterrupted), and first
// starts again the containers a backup interrupted by it had stopped
// (backupjobs.Service.RecoverInterrupted); the caller
// runs it once at start, in the background, with the time Berth started.
func (s *Server) RepairStacks(ctx context.Context, since time.Time) {
	s.backups.RecoverInterrupted(ctx, since)
	s.stacks.RepairInterrupted(ctx, since)
}

// handler is an endpoint that returns its error instead of writing it; the
// route table wraps it (see run).
type handler func(c *gin.Context) error

// Handler returns the HTTP handler serving every route.
func (s *Server) Handler() http.Handler { return s.engine(s.routes()) }

// engine registers routes (the route table, or in tests a copy with stub
// handlers) on a gin.Engine. Every route runs admission, then, for audited
// changes, the audit recorder, then its handler; request logging and panic
// recovery wrap them all.
func (s *Server) engine(routes []route) *gin.Engine {
	e := gin.New()
	// A path answers exactly or not at all: no redirects to a neighbouring
	// path. A known path asked with a method it does not serve (OPTIONS
	// included) answers 405 with the Allow header gin fills in.
	e.RedirectTrailingSlash = false
	e.RedirectFixedPath = false
	e.HandleMethodNotAllowed = true
	// Match on the escaped path, as net/http does, so that an escaped slash
	// (%2F) stays inside its path parameter, which reaches handlers unescaped.
	e.UseEscapedPath = true
	e.UnescapePathValues = true
	// Compression is outermost, so that it also sees the 500 the recovery in
	// logRequests writes after a panic.
	e.Use(securityHeaders, compressJSON, s.logRequests)
	for _, rt := range routes {
		chain := s.chain(rt)
		e.Handle(rt.Method, ginPath(rt.Path), chain...)
		if rt.Method == http.MethodGet { // a GET route answers HEAD too (net/http's rule)
			e.Handle(http.MethodHead, ginPath(rt.Path), chain...)
		}
	}
	// Any other path is the web console's: its files, or index.html for the
	// console's own routes. They are public (the console signs in through
	// the API) and need no admission.
	console := gin.WrapH(s.console)
	e.GET("/", console)
	e.HEAD("/", console)
	e.NoRoute(append(gin.HandlersChain{s.consoleUnlessAPI}, s.chain(route{Perm: Public, h: s.notFound})...)...)
	e.NoMethod(s.chain(route{Perm: Public, h: s.methodNotAllowed})...)
	return e
}

// ginPath writes a route table path ("/api/containers/{id}/logs") in gin's
// syntax ("/api/containers/:id/logs").
func ginPath(p string) string {
	parts := strings.Split(p, "/")
	for i, part := range parts {
		if strings.HasPrefix(part, "{") && strings.HasSuffix(part, "}") {
			parts[i] = ":" + strings.TrimSuffix(strings.TrimPrefix(part, "{"), "}")
		}
	}
	return strings.Join(parts, "/")
}

// chain is the gin handler chain of one route: admission (sign-in,
// environment, permission), the audit recorder when the route changes
// something worth a line, and the handler.
func (s *Server) chain(rt route) gin.HandlersChain {
	chain := gin.HandlersChain{s.admit(rt)}
	if rt.Audit != "" && rt.Audit != Quiet {
		chain = append(chain, s.auditAfter(rt))
	}
	return append(chain, s.run(rt.h))
}

// run calls h and answers its error, if any, unless h already started its
// response (streams report errors in-band). The error is also kept on the
// gin context, so that the audit recorder sees the route failed.
func (s *Server) run(h handler) gin.HandlerFunc {
	return func(c *gin.Context) {
		if err := h(c); err != nil {
			_ = c.Error(err)
			s.fail(c, err)
		}
	}
}

// fail answers err with THE mapping of errors.go, or, when the response has
// already started, only logs it.
func (s *Server) fail(c *gin.Context, err error) {
	if c.Writer.Written() {
		if !isClientGone(err) {
			s.log.Warn("error after response started", "method", c.Request.Method, "path", c.Request.URL.Path, "err", err)
		}
		return
	}
	s.writeError(c, err)
}

// consoleUnlessAPI lets unknown paths under /api/ through to the JSON 404;
// the web console answers GET and HEAD of any other path, and any other
// method there gets net/http's plain 404.
func (s *Server) consoleUnlessAPI(c *gin.Context) {
	p := c.Request.URL.Path
	if p == "/api" || strings.HasPrefix(p, "/api/") {
		return
	}
	if m := c.Request.Method; m == http.MethodGet || m == http.MethodHead {
		s.console.ServeHTTP(c.Writer, c.Request)
	} else {
		http.NotFound(c.Writer, c.Request)
	}
	c.Abort()
}

func (s *Server) notFound(c *gin.Context) error {
	return writeJSON(c, http.StatusNotFound, errorBody{Error: "Not found"})
}

// methodNotAllowed answers a known path asked with another method; gin has
// set the Allow header by then.
func (s *Server) methodNotAllowed(c *gin.Context) error {
	return writeJSON(c, http.StatusMethodNotAllowed, errorBody{Error: "Method not allowed"})
}

func (s *Server) health(c *gin.Context) error {
	return writeJSON(c, http.StatusOK, map[string]any{"status": "ok", "timestamp": s.now().UTC().Format(time.RFC3339Nano)})
}
