package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/networks"
	"github.com/berth-dev/berth/shared/engine"
)

// networkService returns the network operations. The service holds no
// state of its own, so it is built per request from the engine manager.
func (s *Server) networkService() *networks.Service { return networks.New(s.engines, s.log) }

func (s *Server) listNetworks(c *gin.Context) error {
	list, err := s.networkService().List(c.Request.Context(), envOf(c))
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, list)
}

// createNetworkRequest is a network to create.
type createNetworkRequest struct {
	Name       string            `json:"name"`
	Driver     string            `json:"driver"`
	Internal   bool              `json:"internal"`
	Attachable bool              `json:"attachable"`
	EnableIPv6 bool              `json:"enableIPv6"`
	Ingress    bool              `json:"ingress"` // swarm only: an engine outside a swarm refuses it
	Labels     map[string]string `json:"labels"`
	Options    map[string]string `json:"options"`
	IPAM       *struct {
		Driver string `json:"driver"`
		Config []struct {
			Subnet  string `json:"subnet"`
			Gateway string `json:"gateway"`
			IPRange string `json:"ipRange"`
		} `json:"config"`
	} `json:"ipam"`
}

func (req createNetworkRequest) spec() networks.CreateSpec {
	sp := networks.CreateSpec{Name: req.Name, Driver: req.Driver, Internal: req.Internal,
		Attachable: req.Attachable, EnableIPv6: req.EnableIPv6, Ingress: req.Ingress, Labels: req.Labels, Options: req.Options}
	if req.IPAM != nil {
		sp.IPAMDriver = req.IPAM.Driver
		for _, c := range req.IPAM.Config {
			sp.IPAM = append(sp.IPAM, engine.IPAMConfig{Subnet: c.Subnet, Gateway: c.Gateway, IPRange: c.IPRange})
		}
	}
	return sp
}

func (s *Server) createNetwork(c *gin.Context) error {
	var req createNetworkRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	id, err := s.networkService().Create(c.Request.Context(), envOf(c), req.spec())
	if err != nil {
		return err
	}
	noteAudit(c, id, req.Name)
	return writeJSON(c, http.StatusOK, map[string]any{"success": true, "id": id})
}

// inspectNetwork answers the engine's inspection document of a network.
func (s *Server) inspectNetwork(c *gin.Context) error {
	raw, err := s.networkService().Inspect(c.Request.Context(), envOf(c), c.Param("id"))
	if err != nil {
		return err
	}
	c.Header("Content-Type", "application/json")
	_, err = c.Writer.Write(raw)
	return err
}

func (s *Server) removeNetwork(c *gin.Context) error {
	if err := s.networkService().Remove(c.Request.Context(), envOf(c), c.Param("id")); err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, success)
}

// networkContainerRequest names the container to connect or disconnect:
// by containerId, or (the reference's clients) by containerName.
type networkContainerRequest struct {
	ContainerID   string `json:"containerId"`
	ContainerName string `json:"containerName"`
	Force         bool   `json:"force"` // disconnect only
}

// container is the container named, by id or else by name.
func (r networkContainerRequest) container() string {
	if r.ContainerID != "" {
		return r.ContainerID
	}
	return r.ContainerName
}

func (s *Server) connectNetwork(c *gin.Context) error {
	var req networkContainerRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	if err := s.networkService().Connect(c.Request.Context(), envOf(c), c.Param("id"), req.container()); err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, success)
}

func (s *Server) disconnectNetwork(c *gin.Context) error {
	var req networkContainerRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	err := s.networkService().Disconnect(c.Request.Context(), envOf(c), c.Param("id"), req.container(), req.Force)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, success)
}
