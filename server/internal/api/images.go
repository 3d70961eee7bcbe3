package api

import (
	"context"
	"net/http"

	"github.com/berth-dev/berth/server/internal/jobs"
	"github.com/berth-dev/berth/shared/fault"
)

// listImages answers env's images; without env the answer is [] (spec).
func (s *Server) listImages(w http.ResponseWriter, r *http.Request) error {
	if r.URL.Query().Get("env") == "" {
		return writeJSON(w, http.StatusOK, []any{})
	}
	list, err := s.images.List(r.Context(), envOf(r))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, list)
}

// pullImage starts a pull job: {jobId}, or the final payload with Accept:
// application/json.
func (s *Server) pullImage(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Image         string `json:"image"`
		ScanAfterPull *bool  `json:"scanAfterPull"`
	}
	if err := decode(w, r, &req); err != nil {
		return err
	}
	if req.Image == "" {
		return fault.New(fault.Invalid, "Image name is required")
	}
	scan := req.ScanAfterPull == nil || *req.ScanAfterPull
	env := envOf(r)
	noteAudit(r, "", req.Image)
	return s.runJob(w, r, func(ctx context.Context, emit jobs.Emit) (string, any, bool) {
		return s.images.Pull(ctx, env, req.Image, scan, emit)
	})
}

// pushImage validates a push (4xx for bad input) and starts its job.
func (s *Server) pushImage(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		ImageID    string `json:"imageId"`
		RegistryID int64  `json:"registryId"`
		ImageName  string `json:"imageName"`
		NewTag     string `json:"newTag"`
	}
	if err := decode(w, r, &req); err != nil {
		return err
	}
	env := envOf(r)
	push, err := s.images.PreparePush(r.Context(), env, req.ImageID, req.RegistryID, req.NewTag, req.ImageName)
	if err != nil {
		return err
	}
	noteAudit(r, req.ImageID, push.ImageName+" → "+push.Target)
	return s.runJob(w, r, func(ctx context.Context, emit jobs.Emit) (string, any, bool) {
		return s.images.Push(ctx, env, push, emit)
	})
}

func (s *Server) removeImage(w http.ResponseWriter, r *http.Request) error {
	force, err := queryBool(r, "force", false)
	if err != nil {
		return err
	}
	removed, err := s.images.Remove(r.Context(), envOf(r), r.PathValue("id"), force)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, map[string]any{"success": true, "removed": removed})
}

func (s *Server) tagImage(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Repo string `json:"repo"`
		Tag  string `json:"tag"`
	}
	if err := decode(w, r, &req); err != nil {
		return err
	}
	target, err := s.images.Tag(r.Context(), envOf(r), r.PathValue("id"), req.Repo, req.Tag)
	if err != nil {
		return err
	}
	noteAudit(r, r.PathValue("id"), target)
	return writeJSON(w, http.StatusOK, map[string]any{"success": true, "tag": target})
}

func (s *Server) imageHistory(w http.ResponseWriter, r *http.Request) error {
	h, err := s.images.History(r.Context(), envOf(r), r.PathValue("id"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, h)
}

// pruneImages removes dangling images (body {dangling: true}, the default)
// or every unused image ({dangling: false} or ?all=true).
func (s *Server) pruneImages(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Dangling *bool `json:"dangling"`
		All      bool  `json:"all"`
	}
	if err := decode(w, r, &req); err != nil {
		return err
	}
	all, err := queryBool(r, "all", req.All || (req.Dangling != nil && !*req.Dangling))
	if err != nil {
		return err
	}
	rep, err := s.images.Prune(r.Context(), envOf(r), all)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, map[string]any{"success": true, "deleted": rep.Deleted, "spaceReclaimed": rep.SpaceReclaimed})
}
