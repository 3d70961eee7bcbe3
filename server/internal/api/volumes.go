package api

import (
	"net/http"

	"github.com/berth-dev/berth/server/internal/volumes"
)

// volumeService returns the volume operations. The service holds no state
// of its own, so it is built per request from the engine manager.
func (s *Server) volumeService() *volumes.Service { return volumes.New(s.engines, s.log) }

func (s *Server) listVolumes(w http.ResponseWriter, r *http.Request) error {
	list, err := s.volumeService().List(r.Context(), envOf(r))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, list)
}

// createVolumeRequest is the spec's volume request.
type createVolumeRequest struct {
	Name       string            `json:"name"`
	Driver     string            `json:"driver"`
	DriverOpts map[string]string `json:"driverOpts"`
	Labels     map[string]string `json:"labels"`
}

func (s *Server) createVolume(w http.ResponseWriter, r *http.Request) error {
	var req createVolumeRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	v, err := s.volumeService().Create(r.Context(), envOf(r), volumes.CreateSpec{
		Name: req.Name, Driver: req.Driver, DriverOpts: req.DriverOpts, Labels: req.Labels,
	})
	if err != nil {
		return err
	}
	noteAudit(r, v.Name, v.Name)
	return writeJSON(w, http.StatusOK, map[string]any{"success": true, "name": v.Name})
}

func (s *Server) inspectVolume(w http.ResponseWriter, r *http.Request) error {
	v, err := s.volumeService().Inspect(r.Context(), envOf(r), r.PathValue("name"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, v)
}

func (s *Server) removeVolume(w http.ResponseWriter, r *http.Request) error {
	force, err := queryBool(r, "force", false)
	if err != nil {
		return err
	}
	if err := s.volumeService().Remove(r.Context(), envOf(r), r.PathValue("name"), force); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, success)
}
