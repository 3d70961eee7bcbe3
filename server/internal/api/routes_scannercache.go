package api

import (
	"net/http"
	"path/filepath"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/scan"
	"github.com/berth-dev/berth/shared/fault"
)

// scannerCacheRoutes remove what the scanners leave on the engines: their
// images and the volumes caching their vulnerability databases.
func (s *Server) scannerCacheRoutes() []route {
	return []route{
		{"DELETE", "/api/settings/scanner", "settings:edit", EnvQuery, "settings.scanner_remove", false, s.removeScanners},
		{"DELETE", "/api/settings/scanner/cache", "settings:edit", NoEnv, "settings.scanner_cache", false, s.clearScannerCache},
	}
}

// scannerCacheOps document them.
var scannerCacheOps = map[string]apiOp{
	"DELETE /api/settings/scanner": {Summary: "Remove the scanners' images and database volumes from an environment's engine",
		Response: scannerRemovalAnswer{}, Query: []queryParam{
			{"removeImages", "boolean", "must be true"},
			{"scanner", "string", "grype or trivy (scanner_a, scanner_b); absent: both"},
			{"env", "integer", "the environment (required)"},
		}},
	"DELETE /api/settings/scanner/cache": {Summary: "Clear the scanners' vulnerability databases: the cache volumes on every environment and the configured database directories",
		Response: scannerCacheAnswer{}},
}

// scannerRemovalAnswer is what the removal of the scanners did.
type scannerRemovalAnswer struct {
	Success bool `json:"success"`
	scan.Removal
}

// scannerCacheAnswer is what the cache clearing removed.
type scannerCacheAnswer struct {
	Success bool `json:"success"`
	scan.Cleared
}

func (s *Server) removeScanners(c *gin.Context) error {
	remove, err := queryBool(c, "removeImages", false)
	if err != nil {
		return err
	}
	if !remove {
		return fault.New(fault.Invalid, "removeImages parameter required")
	}
	if c.Query("env") == "" {
		return fault.New(fault.Invalid, "Environment ID required")
	}
	names, err := scan.ScannerNames(c.Query("scanner"))
	if err != nil {
		return err
	}
	env := envOf(c)
	out, err := s.scan.RemoveScanners(c.Request.Context(), env, names)
	if err != nil {
		return err
	}
	noteAudit(c, "", env.Name)
	return writeJSON(c, http.StatusOK, scannerRemovalAnswer{Success: true, Removal: out})
}

func (s *Server) clearScannerCache(c *gin.Context) error {
	keep := ""
	if s.dataDir != "" {
		keep, _ = filepath.Abs(s.dataDir)
	}
	out, err := s.scan.ClearCache(c.Request.Context(), keep)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, scannerCacheAnswer{Success: true, Cleared: out})
}
