package api

import (
	"context"
	"net/http"

	"github.com/berth-dev/berth/server/internal/jobs"
)

// scanImage starts a scan job ({jobId}), or with Accept: application/json
// answers the final payload {stage: complete, result, results}.
func (s *Server) scanImage(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		ImageName string `json:"imageName"`
		Scanner   string `json:"scanner"`
	}
	if err := decode(w, r, &req); err != nil {
		return err
	}
	env := envOf(r)
	if err := s.scan.CheckRequest(r.Context(), env.ID, req.ImageName, req.Scanner); err != nil {
		return err
	}
	noteAudit(r, "", req.ImageName)
	return s.runJob(w, r, func(ctx context.Context, emit jobs.Emit) (string, any, bool) {
		return s.scan.Scan(ctx, env, req.ImageName, req.Scanner, emit)
	})
}

// scanResult answers the newest stored result: {found: true, result} or
// {found: false}; it never scans.
func (s *Server) scanResult(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	res, found, err := s.scan.Latest(r.Context(), envOf(r).ID, q.Get("image"), q.Get("scanner"))
	if err != nil {
		return err
	}
	if !found {
		return writeJSON(w, http.StatusOK, map[string]any{"found": false})
	}
	return writeJSON(w, http.StatusOK, map[string]any{"found": true, "result": res})
}

func (s *Server) getScannerSetting(w http.ResponseWriter, r *http.Request) error {
	v, err := s.scan.Setting(r.Context(), envOf(r).ID)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, map[string]any{"scanner": v, "available": s.scan.Availability()})
}

func (s *Server) setScannerSetting(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Scanner string `json:"scanner"`
	}
	if err := decode(w, r, &req); err != nil {
		return err
	}
	if err := s.scan.SetSetting(r.Context(), envOf(r).ID, req.Scanner); err != nil {
		return err
	}
	noteAudit(r, "", req.Scanner)
	return writeJSON(w, http.StatusOK, map[string]any{"success": true, "scanner": req.Scanner})
}
