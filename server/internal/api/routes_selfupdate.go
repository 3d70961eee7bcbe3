package api

import (
	"context"
	"net/http"
	"os"

	"github.com/gin-gonic/gin"

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
	"POST /api/self-update": {Summary: "Pull the new image and start the updater that replaces Berth's container with a copy on it (kept only once healthy, else the old one runs again); 400 when Berth does not run in a container",
		Request: selfUpdateInput{}, Response: selfUpdateStarted{}},
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
	out, err := selfupdate.CheckUpdate(c.Request.Context(), ec, self)
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
	if err := ec.PullImage(ctx, ref, nil, func(engine.Progress) {}); err != nil {
		return fault.Wrap(fault.Internal, "Failed to pull "+ref, err).WithDetails(engine.Details(err))
	}
	id, err := selfupdate.Launch(ctx, ec, self, ref)
	if err != nil {
		return err
	}
	noteAudit(c, id, ref)
	return writeJSON(c, http.StatusOK, selfUpdateStarted{Success: true, UpdaterID: id, NewImage: ref,
		Message: "The updater is replacing Berth's container; Berth restarts on the new image, or keeps running on the old one if the new one is not healthy"})
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
