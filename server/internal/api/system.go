package api

import (
	"context"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/jobs"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/system"
	"github.com/berth-dev/berth/shared/fault"
	"github.com/berth-dev/berth/shared/version"
)

// systemState is the state of the system area: when this server started,
// the engine-wide operations, the Prometheus collectors, and the signal
// that wakes audit streams. Its zero value waits for setup, which the route
// table's systemRoutes does once, when the server's handler is built.
type systemState struct {
	once    sync.Once
	started time.Time
	ops     *system.Service
	metrics *metrics
	audit   auditSignal
}

// setup fills the state once.
func (st *systemState) setup(s *Server) {
	st.once.Do(func() {
		st.started = time.Now()
		st.ops = system.New(s.engines)
		st.metrics = newMetrics()
	})
}

// auditSignal wakes every audit stream of this server when an entry is
// written. Its zero value is ready.
type auditSignal struct {
	mu sync.Mutex
	ch chan struct{}
}

// wait returns a channel closed at the next write.
func (a *auditSignal) wait() <-chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ch == nil {
		a.ch = make(chan struct{})
	}
	return a.ch
}

// written wakes the streams waiting.
func (a *auditSignal) written() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ch != nil {
		close(a.ch)
		a.ch = nil
	}
}

// getSystem answers Berth's own facts: version, database, uptime and counts.
func (s *Server) getSystem(c *gin.Context) error {
	ctx := c.Request.Context()
	counts, err := s.store.Counts(ctx)
	if err != nil {
		return err
	}
	now := time.Now()
	out := map[string]any{
		"version":       version.Version,
		"goVersion":     runtime.Version(),
		"os":            runtime.GOOS,
		"architecture":  runtime.GOARCH,
		"database":      s.store.Dialect(),
		"startedAt":     s.sys.started.UTC(),
		"uptimeSeconds": int64(now.Sub(s.sys.started).Seconds()),
		"counts":        counts,
		"jobs":          s.jobs.Counts(),
		"enterprise":    s.license.Enterprise(),
	}
	if s.agents != nil {
		out["agentsConnected"] = s.agents.Connected()
	} else {
		out["agentsConnected"] = 0
	}
	out["docker"], out["host"] = nil, nil
	if v := c.Query("env"); v != "" {
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil || id <= 0 {
			return fault.New(fault.Invalid, "Invalid environment ID: env must be a positive integer")
		}
		env, err := s.environmentFor(c, id, "environments:view")
		if err != nil {
			return err
		}
		s.environmentFacts(ctx, env, out)
	}
	return writeJSON(c, http.StatusOK, out)
}

// environmentFacts adds to out the facts of env's engine the reference's
// GET /api/system?env= answers: docker, host and stats (docker and host
// stay null when the engine cannot be reached, as the reference's do).
func (s *Server) environmentFacts(ctx context.Context, env store.Environment, out map[string]any) {
	out["environmentId"] = env.ID
	info, err := s.sys.ops.Host(ctx, env)
	if err != nil {
		s.log.Debug("system facts: engine unreachable", "environment", env.Name, "err", err)
		out["stats"] = map[string]any{"containers": map[string]int{"total": 0, "running": 0, "stopped": 0},
			"images": 0, "volumes": 0, "networks": 0}
		return
	}
	ep := env.Endpoint()
	out["docker"] = map[string]any{"version": info.ServerVersion, "apiVersion": info.APIVersion, "os": info.OS,
		"arch": info.Arch, "kernelVersion": info.KernelVersion, "serverVersion": info.ServerVersion,
		"connection": map[string]any{"type": env.ConnectionType, "socketPath": ep.SocketPath, "host": ep.Host, "port": ep.Port}}
	out["host"] = map[string]any{"name": info.Name, "cpus": info.CPUs, "memory": info.MemTotal, "storageDriver": info.StorageDriver}
	volumes, networks := 0, 0
	if cl, err := s.engines.Client(ctx, ep); err == nil {
		if v, err := cl.ListVolumes(ctx); err == nil {
			volumes = len(v)
		}
		if n, err := cl.ListNetworks(ctx); err == nil {
			networks = len(n)
		}
	}
	out["stats"] = map[string]any{
		"containers": map[string]int{"total": info.Containers, "running": info.Running, "stopped": info.Containers - info.Running},
		"images":     info.Images, "volumes": volumes, "networks": networks}
}

// databaseHealth pings the database and answers how long it took.
func (s *Server) databaseHealth(c *gin.Context) error {
	ctx, cancel := context.WithTimeout(c.Request.Context(), 5*time.Second)
	defer cancel()
	start := time.Now()
	err := s.store.DB().PingContext(ctx)
	latency := time.Since(start)
	if err == nil {
		var one int
		err = s.store.DB().QueryRowContext(ctx, "SELECT 1").Scan(&one)
		latency = time.Since(start)
	}
	out := map[string]any{"dialect": s.store.Dialect(), "latencyMs": float64(latency.Microseconds()) / 1000}
	if err != nil {
		s.log.Warn("database health", "err", err)
		out["status"], out["healthy"], out["error"] = "error", false, "Database unreachable"
		return writeJSON(c, http.StatusServiceUnavailable, out)
	}
	out["status"], out["healthy"] = "ok", true
	return writeJSON(c, http.StatusOK, out)
}

// getHost answers the facts of the environment's engine and host.
func (s *Server) getHost(c *gin.Context) error {
	env := envOf(c)
	info, err := s.sys.ops.Host(c.Request.Context(), env)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, map[string]any{
		"environmentId": env.ID, "environment": env.Name,
		"name": info.Name, "hostname": info.Name, "os": info.OS, "kernelVersion": info.KernelVersion,
		"architecture": info.Arch, "cpus": info.CPUs, "memTotal": info.MemTotal, "memoryTotal": info.MemTotal,
		"dockerVersion": info.ServerVersion, "serverVersion": info.ServerVersion, "apiVersion": info.APIVersion,
		"containers": info.Containers, "containersRunning": info.Running, "containersPaused": info.Paused,
		"containersStopped": info.Stopped, "images": info.Images, "cgroupVersion": info.CgroupVersion,
		"osType": info.OSType, "storageDriver": info.StorageDriver, "dockerRootDir": info.DockerRootDir,
		"systemTime": info.SystemTime, "loggingDriver": info.LoggingDriver, "cgroupDriver": info.CgroupDriver,
	})
}

// getDisk answers the environment's engine disk usage.
func (s *Server) getDisk(c *gin.Context) error {
	du, err := s.sys.ops.Disk(c.Request.Context(), envOf(c))
	if err != nil {
		return err
	}
	total := du.Images.Size + du.Containers.Size + du.Volumes.Size + du.BuildCache.Size
	return writeJSON(c, http.StatusOK, map[string]any{"images": du.Images, "containers": du.Containers,
		"volumes": du.Volumes, "buildCache": du.BuildCache, "totalSize": total})
}

// containerSizes answers the writable-layer and root file system sizes of
// every container of the environment.
func (s *Server) containerSizes(c *gin.Context) error {
	list, err := s.sys.ops.Sizes(c.Request.Context(), envOf(c))
	if err != nil {
		return err
	}
	type item struct {
		ID         string `json:"id"`
		Name       string `json:"name"`
		SizeRw     int64  `json:"SizeRw"`
		SizeRootFs int64  `json:"SizeRootFs"`
		SizeRwC    int64  `json:"sizeRw"`
		SizeRootC  int64  `json:"sizeRootFs"`
	}
	out := make([]item, 0, len(list))
	for _, x := range list {
		out = append(out, item{x.ID, x.Name, x.SizeRw, x.SizeRootFs, x.SizeRw, x.SizeRootFs})
	}
	return writeJSON(c, http.StatusOK, out)
}

// prunePerms are the permissions each prune needs on the environment (the
// route table checks the first).
var prunePerms = map[system.Kind][]string{
	system.Containers: {"containers:remove"},
	system.Networks:   {"networks:remove"},
	system.Volumes:    {"volumes:remove"},
	system.All:        {"images:remove", "containers:remove", "networks:remove", "volumes:remove"},
}

// prune removes the unused objects of one kind ({kind} of the path) from the
// environment: body or query labels (key or key=value, all must match)
// narrow it; a prune of everything takes volumes (boolean, default false).
// With Accept: application/json the answer is the report; otherwise
// {jobId}, the report being the job's result.
func (s *Server) prune(kind system.Kind) handler {
	return func(c *gin.Context) error {
		var req pruneInput
		if err := bindJSON(c, &req); err != nil {
			return err
		}
		labels := append(req.Labels, c.QueryArray("label")...)
		volumes, err := queryBool(c, "volumes", req.Volumes)
		if err != nil {
			return err
		}
		if err := system.ValidLabels(labels); err != nil {
			return err
		}
		env := envOf(c)
		if ident := identityOf(c); ident != nil {
			for _, p := range prunePerms[kind] {
				if err := denial(ident.Access.Check(p, &env.ID)); err != nil {
					return err
				}
			}
		}
		run := func(ctx context.Context) (any, error) {
			rep, err := s.sys.ops.Prune(ctx, env, kind, labels, volumes)
			if err != nil {
				return nil, err
			}
			if kind != system.All {
				deleted := rep.Deleted
				if deleted == nil {
					deleted = []string{}
				}
				return map[string]any{"success": true, "deleted": deleted, "spaceReclaimed": rep.SpaceReclaimed}, nil
			}
			out := map[string]any{"success": true, "containers": rep.Containers, "networks": rep.Networks,
				"images": rep.Images, "spaceReclaimed": rep.SpaceReclaimed}
			if rep.Volumes != nil {
				out["volumes"] = rep.Volumes
			}
			return out, nil
		}
		if wantsJSON(c) {
			out, err := run(c.Request.Context())
			if err != nil {
				return err
			}
			return writeJSON(c, http.StatusOK, out)
		}
		return s.runJob(c, func(ctx context.Context, _ jobs.Emit) (string, any, bool) {
			out, err := run(ctx)
			if err != nil {
				_, body := errorResponse(err)
				return "result", map[string]any{"success": false, "status": "error", "error": body.Error, "details": body.Details}, true
			}
			return "result", out, false
		})
	}
}
