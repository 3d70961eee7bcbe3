package api

import (
	"context"
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/jobs"
	"github.com/berth-dev/berth/server/internal/scan"
	"github.com/berth-dev/berth/shared/fault"
)

// scannerRoutes tell the console whether each scanner can scan on an
// environment, so that Scan is offered only when one can, and get a
// missing scanner's image from a configured registry that serves it.
func (s *Server) scannerRoutes() []route {
	return []route{
		{"GET", "/api/images/scanners", "images:inspect", EnvQuery, "", false, s.scannerStatuses},
		{"POST", "/api/images/scanners/pull", "images:pull", EnvQuery, "image.pull", false, s.pullScanner},
	}
}

// scannerOps document them.
var scannerOps = map[string]apiOp{
	"GET /api/images/scanners": {Summary: "Whether each vulnerability scanner can scan on the environment (its binary runs, or its image is on the engine) and, when not, how to get it: a configured registry serving its image, or the binary's setting",
		Response: scannersAnswer{}},
	"POST /api/images/scanners/pull": {Summary: "Pull a scanner's image from the configured registry that serves it and give it the scanner's name: a job ({jobId}; with Accept: application/json, its result)",
		Request: scannerPullInput{}, Response: anyOf{jobStartAnswer{}, transferResult{}}},
}

// scannersAnswer is the scanners' state on an environment.
type scannersAnswer struct {
	// Setting is the environment's scanner setting (none, scanner_a,
	// scanner_b or both).
	Setting  string        `json:"setting"`
	Scanners []scan.Status `json:"scanners"`
	// Usable tells whether any scanner can scan.
	Usable bool `json:"usable"`
}

type scannerPullInput struct {
	Scanner string `json:"scanner"` // scanner_a or scanner_b
}

// findScannerImage is the scan package's way to find a configured
// registry serving a scanner's image.
func (s *Server) findScannerImage(ctx context.Context, image string) (*scan.PullSource, error) {
	found, ok, err := s.registryBrowser().FindImage(ctx, image)
	if err != nil || !ok {
		return nil, err
	}
	return &scan.PullSource{RegistryID: found.RegistryID, RegistryName: found.RegistryName, Reference: found.Reference}, nil
}

func (s *Server) scannerStatuses(c *gin.Context) error {
	env := envOf(c)
	setting, err := s.scan.Setting(c.Request.Context(), env.ID)
	if err != nil {
		return err
	}
	list, err := s.scan.Statuses(c.Request.Context(), env, s.findScannerImage)
	if err != nil {
		return err
	}
	out := scannersAnswer{Setting: setting, Scanners: list}
	for _, st := range list {
		out.Usable = out.Usable || st.Usable
	}
	return writeJSON(c, http.StatusOK, out)
}

func (s *Server) pullScanner(c *gin.Context) error {
	var req scannerPullInput
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	image, err := s.scan.Image(req.Scanner)
	if err != nil {
		return err
	}
	src, err := s.findScannerImage(c.Request.Context(), image)
	if err != nil {
		return err
	}
	if src == nil {
		return fault.New(fault.NotFound, "No configured registry serves "+image)
	}
	env := envOf(c)
	noteAudit(c, "", src.Reference)
	return s.runJob(c, func(ctx context.Context, emit jobs.Emit) (string, any, bool) {
		event, res, failed := s.images.Pull(ctx, env, src.Reference, false, emit)
		if failed || src.Reference == image {
			return event, res, failed
		}
		cl, err := s.engines.Client(ctx, env.Endpoint())
		if err == nil {
			err = cl.TagImage(ctx, src.Reference, image)
		}
		if err != nil {
			return "result", map[string]any{"status": "error", "error": fmt.Sprintf("Pulled %s but could not name it %s: %v", src.Reference, image, err)}, true
		}
		return "result", map[string]any{"status": "complete", "message": fmt.Sprintf("Pulled %s from %s", image, src.RegistryName)}, false
	})
}
