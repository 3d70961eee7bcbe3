package api

import (
	"net/http"

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

func (s *Server) getLicense(w http.ResponseWriter, r *http.Request) error {
	return writeJSON(w, http.StatusOK, s.licenseState())
}

func (s *Server) installLicense(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		License string `json:"license"`
	}
	if err := decode(w, r, &req); err != nil {
		return err
	}
	if req.License == "" {
		return fault.New(fault.Invalid, "license is required")
	}
	if _, err := s.license.Install(r.Context(), req.License); err != nil {
		return err
	}
	out := s.licenseState()
	out["success"] = true
	return writeJSON(w, http.StatusOK, out)
}

func (s *Server) removeLicense(w http.ResponseWriter, r *http.Request) error {
	if err := s.license.Remove(r.Context()); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, success)
}
