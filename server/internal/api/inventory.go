package api

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"golang.org/x/sync/errgroup"

	"github.com/berth-dev/berth/server/internal/autoupdate"
	"github.com/berth-dev/berth/server/internal/changelog"
	"github.com/berth-dev/berth/server/internal/jobs"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// jobProgress is the autoupdate.Progress of an update check run as a job:
// its log lines are "log" events.
type jobProgress struct{ emit jobs.Emit }

func (p jobProgress) Logf(format string, args ...any) {
	p.emit("log", map[string]string{"message": fmt.Sprintf(format, args...)})
}
func (jobProgress) Detail(string, any)               {}
func (jobProgress) Clear(string)                     {}
func (jobProgress) Checkpoint(context.Context) error { return nil }

// checkUpdates checks the containers of the environment for newer images
// (the registry's manifest digest against the image's repo digests), as the
// environment's update-check schedule does: it records them as the pending
// updates and notifies updates_detected when it finds any. {jobId}, or the
// result with Accept: application/json.
func (s *Server) checkUpdates(c *gin.Context) error {
	env := envOf(c)
	noteAudit(c, strconv.FormatInt(env.ID, 10), env.Name)
	return s.runJob(c, func(ctx context.Context, emit jobs.Emit) (string, any, bool) {
		pending, problems, err := s.autoupdate.Check(ctx, env, jobProgress{emit})
		if err != nil {
			_, body := errorResponse(err)
			return "result", map[string]any{"success": false, "status": "error", "error": body.Error, "details": body.Details}, true
		}
		if problems == nil {
			problems = []autoupdate.CheckProblem{}
		}
		return "result", map[string]any{"success": true, "status": "complete", "pendingUpdates": convert(pending, toPendingJSON),
			"count": len(pending), "notChecked": problems}, false
	})
}

// batchUpdateRequest names the containers of a batch update, by id or name,
// in any of the fields clients use.
type batchUpdateRequest struct {
	ContainerIDs   []string `json:"containerIds"`
	Containers     []string `json:"containers"`
	ContainerNames []string `json:"containerNames"`
	IDs            []string `json:"ids"`
	// VulnerabilityCriteria, when set, replaces each container's own
	// auto-update criteria for this batch (never, any, critical_high,
	// critical, more_than_current).
	VulnerabilityCriteria string `json:"vulnerabilityCriteria"`
}

// refs returns the containers asked, trimmed and without duplicates, or
// the 400 of an empty or too large batch.
func (r batchUpdateRequest) refs() ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, list := range [][]string{r.ContainerIDs, r.Containers, r.ContainerNames, r.IDs} {
		for _, ref := range list {
			ref = strings.TrimPrefix(strings.TrimSpace(ref), "/")
			if ref == "" {
				return nil, fault.New(fault.Invalid, "Container ids must not be empty")
			}
			if !seen[ref] {
				seen[ref] = true
				out = append(out, ref)
			}
		}
	}
	switch {
	case len(out) == 0:
		return nil, fault.New(fault.Invalid, "containerIds is required")
	case len(out) > maxBatch:
		return nil, fault.Invalidf("At most %d containers per batch", maxBatch)
	}
	return out, nil
}

// batchJob is the job of a batch update: events start, log and result per
// container, then the final "complete" {success, results, summary}.
func (s *Server) batchJob(c *gin.Context) (jobs.Func, error) {
	var req batchUpdateRequest
	if err := bindJSON(c, &req); err != nil {
		return nil, err
	}
	refs, err := req.refs()
	if err != nil {
		return nil, err
	}
	criteria := ""
	if req.VulnerabilityCriteria != "" {
		if criteria, err = autoupdate.CheckCriteria(req.VulnerabilityCriteria); err != nil {
			return nil, err
		}
	}
	env := envOf(c)
	noteAudit(c, "", strings.Join(refs, ", "))
	return func(ctx context.Context, emit jobs.Emit) (string, any, bool) {
		rep := s.autoupdate.UpdateMany(ctx, env, refs, criteria, batchEvents{emit})
		return "complete", map[string]any{"success": rep.Summary.Failed == 0, "results": rep.Results, "summary": rep.Summary},
			rep.Summary.Failed == rep.Summary.Total
	}, nil
}

// batchEvents turns a batch update's progress into job events.
type batchEvents struct{ emit jobs.Emit }

func (b batchEvents) Start(i, total int, container string) {
	b.emit("start", map[string]any{"container": container, "index": i, "total": total})
}

func (b batchEvents) Log(container, line string) {
	b.emit("log", map[string]string{"container": container, "message": line})
}

func (b batchEvents) Done(i, total int, r autoupdate.BatchResult) {
	b.emit("result", map[string]any{"index": i, "total": total, "result": r})
}

// batchUpdate updates the containers asked, one after the other, through
// the auto-update's recreate with its health-gated rollback, and answers
// {success, results, summary} when all are done. The work is a job: a client
// that leaves does not stop it.
func (s *Server) batchUpdate(c *gin.Context) error {
	fn, err := s.batchJob(c)
	if err != nil {
		return err
	}
	return writeResult(c, s.startJob(c, fn))
}

// batchUpdateStream is batchUpdate answered as an event stream of its
// progress (X-Job-Id names the job to follow again at /api/jobs/{jobId}).
func (s *Server) batchUpdateStream(c *gin.Context) error {
	fn, err := s.batchJob(c)
	if err != nil {
		return err
	}
	return s.streamJob(c, fn)
}

// socketCandidate is a path where a Docker-compatible engine socket is
// usually found, and what it is.
type socketCandidate struct {
	Path string `json:"path"`
	Kind string `json:"kind"` // docker | podman
}

// socketCandidates are the usual engine socket paths of a host: the
// system-wide Docker sockets, the rootless Docker one in the runtime
// directory of uid, Docker Desktop's in home, and Podman's system and
// rootless ones.
func socketCandidates(home string, uid int) []socketCandidate {
	runtimeDir := "/run/user/" + strconv.Itoa(uid)
	list := []socketCandidate{
		{engine.DefaultSocket, "docker"},
		{"/run/docker.sock", "docker"},
		{filepath.Join(runtimeDir, "docker.sock"), "docker"},
	}
	if home != "" {
		list = append(list, socketCandidate{filepath.Join(home, ".docker", "run", "docker.sock"), "docker"},
			socketCandidate{filepath.Join(home, ".docker", "desktop", "docker.sock"), "docker"})
	}
	return append(list, socketCandidate{"/run/podman/podman.sock", "podman"},
		socketCandidate{"/var/run/podman/podman.sock", "podman"},
		socketCandidate{filepath.Join(runtimeDir, "podman", "podman.sock"), "podman"})
}

// detectedSocket is a candidate socket as detect-socket reports it.
type detectedSocket struct {
	socketCandidate
	Exists        bool   `json:"exists"`
	Reachable     bool   `json:"reachable"` // it answered a ping
	ServerVersion string `json:"serverVersion,omitempty"`
	Error         string `json:"error,omitempty"`
}

// detectSocket reports which of the usual engine sockets exist on Berth's
// host and which answer: {sockets: [...], recommended}. recommended is the
// first that answered ("" when none did).
func (s *Server) detectSocket(c *gin.Context) error {
	home, _ := os.UserHomeDir()
	cands := socketCandidates(home, os.Getuid())
	out := make([]detectedSocket, len(cands))
	g, ctx := errgroup.WithContext(c.Request.Context())
	g.SetLimit(4)
	var mu sync.Mutex
	for i, cand := range cands {
		out[i].socketCandidate = cand
		fi, err := os.Stat(cand.Path)
		if err != nil || fi.Mode()&os.ModeSocket == 0 {
			continue
		}
		out[i].Exists = true
		g.Go(func() error {
			tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			info, err := s.engines.Test(tctx, engine.Endpoint{ConnectionType: engine.Socket, SocketPath: cand.Path})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				out[i].Error = engine.Details(err)
				return nil
			}
			out[i].Reachable, out[i].ServerVersion = true, info.ServerVersion
			return nil
		})
	}
	_ = g.Wait()
	recommended := ""
	for _, d := range out {
		if d.Reachable {
			recommended = d.Path
			break
		}
	}
	return writeJSON(c, http.StatusOK, map[string]any{"sockets": out, "recommended": recommended})
}

// getChangelog answers Berth's release notes: [{version, date, changes}],
// newest first.
func (s *Server) getChangelog(c *gin.Context) error {
	entries, err := changelog.Entries()
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, entries)
}

// dependencyJSON is one module linked into the binary.
type dependencyJSON struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Replace string `json:"replace,omitempty"`
}

// getDependencies answers the Go modules linked into the running binary
// (from its build information): {goVersion, main, dependencies}.
func (s *Server) getDependencies(c *gin.Context) error {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return fault.New(fault.Internal, "The binary carries no build information")
	}
	deps := make([]dependencyJSON, 0, len(bi.Deps))
	for _, d := range bi.Deps {
		j := dependencyJSON{Name: d.Path, Version: d.Version}
		if d.Replace != nil {
			j.Replace = d.Replace.Path
			if d.Replace.Version != "" {
				j.Version = d.Replace.Version
			}
		}
		deps = append(deps, j)
	}
	return writeJSON(c, http.StatusOK, map[string]any{"goVersion": bi.GoVersion, "main": bi.Main.Path, "dependencies": deps})
}
