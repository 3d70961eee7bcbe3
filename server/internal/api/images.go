package api

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/images"
	"github.com/berth-dev/berth/server/internal/jobs"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// listImages answers env's images; without env the answer is [] (spec).
func (s *Server) listImages(c *gin.Context) error {
	if c.Query("env") == "" {
		return writeJSON(c, http.StatusOK, []any{})
	}
	list, err := s.images.List(c.Request.Context(), envOf(c))
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, list)
}

// pullImage starts a pull job: {jobId}, or the final payload with Accept:
// application/json.
func (s *Server) pullImage(c *gin.Context) error {
	var req pullInput
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	if req.Image == "" {
		return fault.New(fault.Invalid, "Image name is required")
	}
	if err := engine.CheckImageName(images.PullReference(req.Image)); err != nil {
		return fault.Wrap(fault.Invalid, "Invalid image reference", err).WithDetails(engine.Details(err))
	}
	scan := req.ScanAfterPull == nil || *req.ScanAfterPull
	env := envOf(c)
	noteAudit(c, "", req.Image)
	return s.runJob(c, func(ctx context.Context, emit jobs.Emit) (string, any, bool) {
		return s.images.Pull(ctx, env, req.Image, scan, emit)
	})
}

// pushImage validates a push (4xx for bad input) and starts its job.
func (s *Server) pushImage(c *gin.Context) error {
	var req pushInput
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	env := envOf(c)
	push, err := s.images.PreparePush(c.Request.Context(), env, req.ImageID, req.RegistryID, req.NewTag, req.ImageName)
	if err != nil {
		return err
	}
	noteAudit(c, req.ImageID, push.ImageName+" → "+push.Target)
	return s.runJob(c, func(ctx context.Context, emit jobs.Emit) (string, any, bool) {
		return s.images.Push(ctx, env, push, emit)
	})
}

func (s *Server) removeImage(c *gin.Context) error {
	force, err := queryBool(c, "force", false)
	if err != nil {
		return err
	}
	removed, err := s.images.Remove(c.Request.Context(), envOf(c), c.Param("id"), force)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, map[string]any{"success": true, "removed": removed})
}

func (s *Server) tagImage(c *gin.Context) error {
	var req tagInput
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	target, err := s.images.Tag(c.Request.Context(), envOf(c), c.Param("id"), req.Repo, req.Tag)
	if err != nil {
		return err
	}
	noteAudit(c, c.Param("id"), target)
	return writeJSON(c, http.StatusOK, map[string]any{"success": true, "tag": target})
}

func (s *Server) inspectImage(c *gin.Context) error {
	raw, err := s.images.Inspect(c.Request.Context(), envOf(c), c.Param("id"))
	if err != nil {
		return err
	}
	c.Header("Content-Type", "application/json")
	_, err = c.Writer.Write(raw)
	return err
}

func (s *Server) imageHistory(c *gin.Context) error {
	h, err := s.images.History(c.Request.Context(), envOf(c), c.Param("id"))
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, h)
}

// pruneAll tells whether the prune asked for removes every unused image,
// from the query's dangling (the reference's) and all, and the body.
func (r pruneImagesInput) pruneAll(c *gin.Context) (bool, error) {
	var asked []bool // every way the request says it
	if r.Dangling != nil {
		asked = append(asked, !*r.Dangling)
	}
	if r.All {
		asked = append(asked, true)
	}
	for _, q := range []struct {
		name string
		all  func(bool) bool
	}{{"dangling", func(b bool) bool { return !b }}, {"all", func(b bool) bool { return b }}} {
		if c.Query(q.name) == "" {
			continue
		}
		b, err := queryBool(c, q.name, false)
		if err != nil {
			return false, err
		}
		asked = append(asked, q.all(b))
	}
	for _, a := range asked[min(1, len(asked)):] {
		if a != asked[0] {
			return false, fault.Invalidf("dangling and all disagree: ask for dangling images only or for every unused image")
		}
	}
	return len(asked) > 0 && asked[0], nil
}

// pruneImages removes dangling images (the default) or every unused image:
// ?dangling=false as the reference asks, or Berth's ?all=true, {dangling:
// false} or {all: true}. Ways that disagree are refused.
func (s *Server) pruneImages(c *gin.Context) error {
	var req pruneImagesInput
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	all, err := req.pruneAll(c)
	if err != nil {
		return err
	}
	env := envOf(c)
	// COMPAT: a job ({jobId}, its final result event the answer below),
	// or with Accept: application/json the answer itself, an engine
	// failure then being the request's status as before.
	if wantsJSON(c) {
		rep, err := s.images.Prune(c.Request.Context(), env, all)
		if err != nil {
			return err
		}
		return writeJSON(c, http.StatusOK, pruneImagesAnswerOf(rep))
	}
	return s.runJob(c, func(ctx context.Context, _ jobs.Emit) (string, any, bool) {
		rep, err := s.images.Prune(ctx, env, all)
		if err != nil {
			_, body := errorResponse(err)
			return "result", pruneImagesFailed{Success: false, Error: body.Error, Details: body.Details}, true
		}
		return "result", pruneImagesAnswerOf(rep), false
	})
}

// pruneImagesAnswerOf is the answer of an image prune: Berth's {deleted,
// spaceReclaimed} and the reference's {result} (the engine's report in its
// own names).
func pruneImagesAnswerOf(rep engine.PruneReport) pruneImagesAnswer {
	out := pruneImagesAnswer{Success: true, Deleted: rep.Deleted, SpaceReclaimed: rep.SpaceReclaimed,
		Result: enginePruneReport{ImagesDeleted: []engineDeletedImage{}, SpaceReclaimed: rep.SpaceReclaimed}}
	if out.Deleted == nil {
		out.Deleted = []engine.RemovedImage{}
	}
	for _, d := range rep.Deleted {
		out.Result.ImagesDeleted = append(out.Result.ImagesDeleted, engineDeletedImage(d))
	}
	return out
}
