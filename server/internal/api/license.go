package api

import (
	"net/http"

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
	if req.License == "" {
		return fault.New(fault.Invalid, "license is required")
	}
	if _, err := s.license.Install(c.Request.Context(), req.License); err != nil {
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
