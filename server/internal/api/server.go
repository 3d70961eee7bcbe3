// Package api provides Berth's HTTP interface: the route table, request
// decoding and validation, the environment selector, JSON, Server-Sent Events
// and WebSocket helpers, and the one mapping from errors to statuses.
//
// It is the only package that knows HTTP; handlers call one domain function
// and encode its result.
package api

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/berth-dev/berth/server/internal/auth"
	"github.com/berth-dev/berth/server/internal/containers"
	"github.com/berth-dev/berth/server/internal/events"
	"github.com/berth-dev/berth/server/internal/gitops"
	"github.com/berth-dev/berth/server/internal/images"
	"github.com/berth-dev/berth/server/internal/jobs"
	"github.com/berth-dev/berth/server/internal/license"
	"github.com/berth-dev/berth/server/internal/scan"
	"github.com/berth-dev/berth/server/internal/stacks"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
)

// Server serves the API.
type Server struct {
	log        *slog.Logger
	store      *store.Store
	auth       *auth.Service
	license    *license.Manager
	engines    *engine.Manager
	containers *containers.Service
	images     *images.Service
	scan       *scan.Service
	stacks     *stacks.Service
	git        *gitops.Service
	jobs       *jobs.Registry
	events     *events.Relay
	origins    []string
	now        func() time.Time
}

// Deps are what the Server needs.
type Deps struct {
	Log     *slog.Logger
	Store   *store.Store
	Auth    *auth.Service
	License *license.Manager
	Engines *engine.Manager
	Jobs    *jobs.Registry
	Scan    scan.Config
	// DataDir holds stack files (stacks/<env>/<stack>/) and git clones (git/).
	DataDir string
	// AllowedOrigins are extra host patterns (e.g. "berth.example.com") whose
	// browsers may open WebSockets; the request's own host is always allowed.
	AllowedOrigins []string
}

// New returns a Server.
func New(d Deps) *Server {
	scanner := scan.New(d.Engines, d.Store, d.Log, d.Scan)
	imgs := images.New(d.Engines, d.Store, d.Log, scanner)
	stk := stacks.New(d.Store, d.Engines, imgs, d.DataDir, d.Log)
	return &Server{
		log:        d.Log,
		store:      d.Store,
		auth:       d.Auth,
		license:    d.License,
		engines:    d.Engines,
		containers: containers.New(d.Engines, d.Store, d.Log),
		images:     imgs,
		scan:       scanner,
		stacks:     stk,
		git:        gitops.New(d.Store, stk, d.Log),
		jobs:       d.Jobs,
		events:     events.NewRelay(d.Engines, d.Log),
		origins:    d.AllowedOrigins,
		now:        time.Now,
	}
}

// handler is an endpoint that returns its error instead of writing it.
type handler func(w http.ResponseWriter, r *http.Request) error

// Handler returns the HTTP handler serving every route.
func (s *Server) Handler() http.Handler { return s.mux(s.routes()) }

// mux serves routes (the route table, or in tests a copy with stub handlers).
func (s *Server) mux(routes []route) http.Handler {
	mux := http.NewServeMux()
	for _, rt := range routes {
		mux.Handle(rt.Method+" "+rt.Path, s.serve(rt))
	}
	mux.Handle("/api/", s.serve(route{Perm: Public, h: s.notFound}))
	mux.Handle("GET /{$}", s.serve(route{Perm: Public, h: s.index}))
	return s.logRequests(mux)
}

// serve admits a request to its route (sign-in, environment, permission),
// runs the handler, writes its error, if any, unless the handler already
// started its response (streams report errors in-band), and audits a
// successful change.
func (s *Server) serve(rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, err := s.admitted(r, rt)
		if err == nil {
			err = rt.h(w, req)
		}
		rec, _ := w.(*statusRecorder)
		if err == nil {
			if rec != nil && rec.status < 400 {
				s.recordAudit(req, rt)
			}
			return
		}
		if rec != nil && rec.written {
			if !isClientGone(err) {
				s.log.Warn("error after response started", "method", r.Method, "path", r.URL.Path, "err", err)
			}
			return
		}
		s.writeError(w, r, err)
	})
}

func (s *Server) notFound(w http.ResponseWriter, r *http.Request) error {
	return writeJSON(w, http.StatusNotFound, errorBody{Error: "Not found"})
}

// index answers the root until the web UI is embedded.
func (s *Server) index(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, err := w.Write([]byte(`<!doctype html><meta charset="utf-8"><title>Berth</title>` +
		`<h1>Berth</h1><p>The API is served under <code>/api</code>; see <a href="/api/health">/api/health</a>.</p>`))
	return err
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) error {
	return writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "timestamp": s.now().UTC().Format(time.RFC3339Nano)})
}
