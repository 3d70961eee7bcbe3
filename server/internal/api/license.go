package api

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/shared/fault"
)

func (s *Server) licenseState() map[string]any {
	out := map[string]any{"edition": "community", "license": nil}
	if l, ok := s.license.Current(); ok {
		out["license"] = l
		if s.license.Enterprise() {
			out["edition"] = "enterprise"
		} else {
			out["expired"] = true
		}
	}
	return out
}

func (s *Server) getLicense(c *gin.Context) error {
	return writeJSON(c, http.StatusOK, s.licenseState())
}

func (s *Server) installLicense(c *gin.Context) error {
	var req licenseInput
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	// The reference's {name, key}; Berth's {license} (the document alone)
	// stays an alias.
	doc := strings.TrimSpace(req.Key)
	if doc == "" {
		doc = strings.TrimSpace(req.License)
	}
	if doc == "" || (req.Key != "" && strings.TrimSpace(req.Name) == "") {
		return fault.New(fault.Invalid, "Name and key are required")
	}
	if _, err := s.license.Install(c.Request.Context(), doc, req.Name); err != nil {
		return err
	}
	out := s.licenseState()
	out["success"] = true
	return writeJSON(c, http.StatusOK, out)
}

func (s *Server) removeLicense(c *gin.Context) error {
	if err := s.license.Remove(c.Request.Context()); err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, success)
}
