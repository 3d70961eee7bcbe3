package api

import (
	"context"
	"net/http"
	"os"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/jobs"
	"github.com/berth-dev/berth/server/internal/selfupdate"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// selfUpdateRoutes update Berth's own container (administrators only):
// check for a newer image, start the updater that hands over to it, follow
// the updater.
func (s *Server) selfUpdateRoutes() []route {
	return []route{
		{"GET", "/api/self-update/check", "settings:edit", NoEnv, "", false, s.checkSelfUpdate},
		{"POST", "/api/self-update", "settings:edit", NoEnv, "system.self_update", false, s.startSelfUpdate},
		{"GET", "/api/self-update/progress", "settings:edit", NoEnv, "", false, s.selfUpdateProgress},
	}
}

// selfUpdateOps document them.
var selfUpdateOps = map[string]apiOp{
	"GET /api/self-update/check": {Summary: "Is a newer image of Berth's own container in its registry (digest of the same reference)? 400 when Berth does not run in a container",
		Response: selfupdate.Check{}},
	"POST /api/self-update": {Summary: "Pull the new image and start the updater that replaces Berth's container with a copy on it (kept only once healthy, else the old one runs again); 400 when Berth does not run in a container or its engine socket is missing or read-only. An event stream (step {step,status,message}, log {message}, then launched or error; the job's id in X-Job-Id), or with Accept: application/json the final event",
		Request: selfUpdateInput{}, Response: selfUpdateStarted{}, Content: mediaSSE, AlsoJSON: true},
	"GET /api/self-update/progress": {Summary: "The updater's output and, once it ended, its exit code (0: the new container took over)",
		Response: selfupdate.Progress{}, Query: []queryParam{{"id", "string", "the updater's container id (from POST /api/self-update)"}}},
}

// selfUpdateInput names the image to update to.
type selfUpdateInput struct {
	NewImage string `json:"newImage"` // absent: the reference Berth's container runs (a newer image under the same tag)
}

// selfUpdateStarted answers POST /api/self-update.
type selfUpdateStarted struct {
	Success   bool   `json:"success"`
	UpdaterID string `json:"updaterId"`
	NewImage  string `json:"newImage"`
	Message   string `json:"message"`
}

// ownContainer is the id of the container Berth runs in, or the refusal.
func ownContainer() (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", selfupdate.ErrNotInContainer
	}
	defer f.Close()
	if id := selfupdate.Detect(f); id != "" {
		return id, nil
	}
	return "", selfupdate.ErrNotInContainer
}

// localEngine is the engine on Berth's own host (its socket).
func (s *Server) localEngine(ctx context.Context) (*engine.Client, error) {
	c, err := s.engines.Client(ctx, engine.Endpoint{ConnectionType: engine.Socket})
	if err != nil {
		return nil, fault.Wrap(fault.Invalid, "The engine socket of Berth's host cannot be reached: self-update needs it", err)
	}
	return c, nil
}

func (s *Server) checkSelfUpdate(c *gin.Context) error {
	if !callerIsAdmin(c) {
		return errAdminOnly
	}
	self, err := ownContainer()
	if err != nil {
		return err
	}
	ec, err := s.localEngine(c.Request.Context())
	if err != nil {
		return err
	}
	out, err := selfupdate.CheckUpdate(c.Request.Context(), ec, self, s.images.CredentialsFor)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, out)
}

func (s *Server) startSelfUpdate(c *gin.Context) error {
	var req selfUpdateInput
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	if !callerIsAdmin(c) {
		return errAdminOnly
	}
	self, err := ownContainer()
	if err != nil {
		return err
	}
	ctx := c.Request.Context()
	ec, err := s.localEngine(ctx)
	if err != nil {
		return err
	}
	// What can be known before anything is pulled is refused as a 4xx, as
	// the reference does; the rest is reported by the stream's steps.
	if err := selfupdate.Preflight(ctx, ec, self); err != nil {
		return err
	}
	ref := req.NewImage
	if ref == "" {
		cfg, err := ec.InspectConfig(ctx, self)
		if err != nil {
			return err
		}
		ref = cfg.Image
	}
	if err := engine.CheckImageName(ref); err != nil {
		return err
	}
	noteAudit(c, self, ref)
	return s.streamJob(c, func(ctx context.Context, emit jobs.Emit) (string, any, bool) {
		return runSelfUpdate(ctx, ec, self, ref, s.images.CredentialsFor, emit)
	})
}

// selfUpdateStep is a step event of POST /api/self-update (the reference's
// steps: pulling_image, building_config, pulling_updater,
// creating_container, launching_updater; status active or completed).
type selfUpdateStep struct {
	Step    string `json:"step"`
	Status  string `json:"status"`
	Message string `json:"message"`
}

// selfUpdateLog is a log event: one line of what is happening.
type selfUpdateLog struct {
	Message string `json:"message"`
}

// selfUpdateFailed is the final error event: the step that failed and why.
type selfUpdateFailed struct {
	Success bool   `json:"success"`
	Step    string `json:"step"`
	Message string `json:"message"`
	Error   string `json:"error"`
}

// runSelfUpdate pulls ref and starts the updater, as events: step and log,
// then launched (selfUpdateStarted) or error (selfUpdateFailed).
func runSelfUpdate(ctx context.Context, ec *engine.Client, self, ref string, creds selfupdate.Credentials, emit jobs.Emit) (string, any, bool) {
	step := func(name, status, msg string) { emit("step", selfUpdateStep{Step: name, Status: status, Message: msg}) }
	logf := func(msg string) { emit("log", selfUpdateLog{Message: msg}) }
	fail := func(name string, err error) (string, any, bool) {
		msg := err.Error()
		if d := engine.Details(err); d != "" && !strings.Contains(msg, d) {
			msg += ": " + d
		}
		return "error", selfUpdateFailed{Step: name, Message: msg, Error: msg}, true
	}

	step("pulling_image", "active", "Pulling "+ref+"...")
	auth, err := creds(ctx, ref)
	if err != nil {
		return fail("pulling_image", err)
	}
	last := map[string]string{}
	if err := ec.PullImage(ctx, ref, auth, func(p engine.Progress) {
		// One line per layer and status, not per byte count.
		if p.Status == "" || last[p.ID] == p.Status {
			return
		}
		last[p.ID] = p.Status
		if p.ID != "" {
			logf(p.ID + ": " + p.Status)
		} else {
			logf(p.Status)
		}
	}); err != nil {
		return fail("pulling_image", fault.Wrap(fault.Internal, "Failed to pull "+ref, err))
	}
	step("pulling_image", "completed", "Image pulled")

	step("building_config", "active", "Reading Berth's container settings...")
	if err := selfupdate.Preflight(ctx, ec, self); err != nil {
		return fail("building_config", err)
	}
	step("building_config", "completed", "The updater copies every setting of Berth's container onto the new image")
	step("pulling_updater", "completed", "The updater runs on the new image itself: nothing more to pull")

	step("creating_container", "active", "Creating the updater...")
	id, err := selfupdate.Launch(ctx, ec, self, ref)
	if err != nil {
		return fail("creating_container", err)
	}
	step("creating_container", "completed", "Updater created")
	logf("Updater started: " + id[:min(12, len(id))])
	step("launching_updater", "completed", "Updater launched: Berth stops shortly and comes back on the new image")
	return "launched", selfUpdateStarted{Success: true, UpdaterID: id, NewImage: ref,
		Message: "The updater is replacing Berth's container; Berth restarts on the new image, or keeps running on the old one if the new one is not healthy"}, false
}

func (s *Server) selfUpdateProgress(c *gin.Context) error {
	if !callerIsAdmin(c) {
		return errAdminOnly
	}
	id := c.Query("id")
	if id == "" {
		return fault.New(fault.Invalid, "Container ID is required")
	}
	ec, err := s.localEngine(c.Request.Context())
	if err != nil {
		return err
	}
	p, err := selfupdate.Follow(c.Request.Context(), ec, id)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, p)
}
