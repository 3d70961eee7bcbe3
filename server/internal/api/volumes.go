package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/policy"
	"github.com/berth-dev/berth/server/internal/volumes"
)

// volumeService returns the volume operations. The service holds no state
// of its own, so it is built per request from the engine manager.
func (s *Server) volumeService() *volumes.Service { return volumes.New(s.engines, s.log) }

func (s *Server) listVolumes(c *gin.Context) error {
	list, err := s.volumeService().List(c.Request.Context(), envOf(c))
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, list)
}

// createVolumeRequest is the spec's volume request.
type createVolumeRequest struct {
	Name       string            `json:"name"`
	Driver     string            `json:"driver"`
	DriverOpts map[string]string `json:"driverOpts"`
	Labels     map[string]string `json:"labels"`
}

func (s *Server) createVolume(c *gin.Context) error {
	var req createVolumeRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	if dev, ok := policy.HostDevice(req.Driver, req.DriverOpts); ok { // a bind mount in disguise
		if err := s.policy().Check(c.Request.Context(), envOf(c), policy.Workload{Binds: []string{dev}}); err != nil {
			return err
		}
	}
	v, err := s.volumeService().Create(c.Request.Context(), envOf(c), volumes.CreateSpec{
		Name: req.Name, Driver: req.Driver, DriverOpts: req.DriverOpts, Labels: req.Labels,
	})
	if err != nil {
		return err
	}
	noteAudit(c, v.Name, v.Name)
	return writeJSON(c, http.StatusOK, map[string]any{"success": true, "name": v.Name})
}

func (s *Server) inspectVolume(c *gin.Context) error {
	v, err := s.volumeService().Inspect(c.Request.Context(), envOf(c), c.Param("name"))
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, v)
}

func (s *Server) removeVolume(c *gin.Context) error {
	force, err := queryBool(c, "force", false)
	if err != nil {
		return err
	}
	if err := s.volumeService().Remove(c.Request.Context(), envOf(c), c.Param("name"), force); err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, success)
}
