package api

import (
	"context"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/jobs"
	"github.com/berth-dev/berth/shared/fault"
)

// scanImage starts a scan job ({jobId}), or with Accept: application/json
// answers the final payload {stage: complete, result, results}.
func (s *Server) scanImage(c *gin.Context) error {
	var req scanInput
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	env := envOf(c)
	if err := s.scan.CheckRequest(c.Request.Context(), env.ID, req.ImageName, ""); err != nil {
		return err
	}
	// A scanner that cannot run is refused now (400, saying why), not
	// reported as a failed job.
	names, err := s.scan.Choose(c.Request.Context(), env, req.Scanner, s.findScannerImage)
	if err != nil {
		return err
	}
	noteAudit(c, "", req.ImageName)
	return s.runJob(c, func(ctx context.Context, emit jobs.Emit) (string, any, bool) {
		return s.scan.Scan(ctx, env, req.ImageName, names, emit)
	})
}

// scanResult answers the newest stored result: {found: true, result} or
// {found: false}; it never scans.
func (s *Server) scanResult(c *gin.Context) error {
	q := c.Request.URL.Query()
	res, found, err := s.scan.Latest(c.Request.Context(), envOf(c).ID, q.Get("image"), q.Get("scanner"))
	if err != nil {
		return err
	}
	if !found {
		return writeJSON(c, http.StatusOK, map[string]any{"found": false})
	}
	return writeJSON(c, http.StatusOK, map[string]any{"found": true, "result": res})
}

func (s *Server) getScannerSetting(c *gin.Context) error {
	v, err := s.scan.Setting(c.Request.Context(), envOf(c).ID)
	if err != nil {
		return err
	}
	if c.Query("settingsOnly") == "true" { // the reference's: the setting without the scanners' availability
		return writeJSON(c, http.StatusOK, map[string]any{"scanner": v})
	}
	return writeJSON(c, http.StatusOK, map[string]any{"scanner": v, "available": s.scan.Availability()})
}

func (s *Server) setScannerSetting(c *gin.Context) error {
	var req scannerInput
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	if strings.TrimSpace(req.GrypeArgs) != "" || strings.TrimSpace(req.TrivyArgs) != "" {
		return fault.New(fault.Invalid, "Custom scanner arguments are not supported: Berth runs its scanners with fixed arguments")
	}
	env, err := s.bodyEnvironment(c, "settings:edit", "envId", req.EnvID)
	if err != nil {
		return err
	}
	if err := s.scan.SetSetting(c.Request.Context(), env.ID, req.Scanner); err != nil {
		return err
	}
	noteAudit(c, "", req.Scanner)
	return writeJSON(c, http.StatusOK, map[string]any{"success": true, "scanner": req.Scanner})
}
