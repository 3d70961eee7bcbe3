package api

import (
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/templates"
)

// configSetJSON is a config set as clients see it, secrets masked.
type configSetJSON struct {
	ID            int64              `json:"id"`
	Name          string             `json:"name"`
	Description   string             `json:"description"`
	EnvVars       []store.ConfigVar  `json:"envVars"`
	Labels        map[string]string  `json:"labels"`
	Ports         []store.ConfigPort `json:"ports"`
	Volumes       []string           `json:"volumes"`
	NetworkMode   string             `json:"networkMode"`
	RestartPolicy string             `json:"restartPolicy"`
	CreatedAt     time.Time          `json:"createdAt"`
	UpdatedAt     time.Time          `json:"updatedAt"`
}

func toConfigSetJSON(c store.ConfigSet) configSetJSON {
	c = templates.Masked(c)
	return configSetJSON{ID: c.ID, Name: c.Name, Description: c.Description, EnvVars: c.EnvVars, Labels: c.Labels,
		Ports: c.Ports, Volumes: c.Volumes, NetworkMode: c.NetworkMode, RestartPolicy: c.RestartPolicy,
		CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
}

// configSetRequest is the body of POST and PUT /api/config-sets.
type configSetRequest struct {
	Name          string             `json:"name"`
	Description   string             `json:"description"`
	EnvVars       []store.ConfigVar  `json:"envVars"`
	Labels        map[string]string  `json:"labels"`
	Ports         []store.ConfigPort `json:"ports"`
	Volumes       []string           `json:"volumes"`
	NetworkMode   string             `json:"networkMode"`
	RestartPolicy string             `json:"restartPolicy"`
}

func (r configSetRequest) set(id int64) store.ConfigSet {
	return store.ConfigSet{ID: id, Name: r.Name, Description: r.Description, EnvVars: r.EnvVars, Labels: r.Labels,
		Ports: r.Ports, Volumes: r.Volumes, NetworkMode: r.NetworkMode, RestartPolicy: r.RestartPolicy}
}

func (s *Server) listConfigSets(c *gin.Context) error {
	list, err := s.tpl.sets.List(c.Request.Context())
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, convert(list, toConfigSetJSON))
}

func (s *Server) getConfigSet(c *gin.Context) error {
	id, err := pathID(c, "Config set")
	if err != nil {
		return err
	}
	set, err := s.tpl.sets.Get(c.Request.Context(), id)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, toConfigSetJSON(set))
}

// saveConfigSet creates (POST) or updates (PUT /{id}) a config set.
func (s *Server) saveConfigSet(c *gin.Context) error {
	id, status, err := saveTarget(c, "Config set")
	if err != nil {
		return err
	}
	var req configSetRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	set := req.set(id)
	save := s.tpl.sets.Update
	if status == http.StatusCreated {
		save = s.tpl.sets.Create
	}
	if err := save(c.Request.Context(), &set); err != nil {
		return err
	}
	noteAudit(c, strconv.FormatInt(set.ID, 10), set.Name)
	return writeJSON(c, status, toConfigSetJSON(set))
}

func (s *Server) deleteConfigSet(c *gin.Context) error {
	id, err := pathID(c, "Config set")
	if err != nil {
		return err
	}
	ctx := c.Request.Context()
	set, err := s.tpl.sets.Get(ctx, id)
	if err != nil {
		return err
	}
	if err := s.tpl.sets.Delete(ctx, id); err != nil {
		return err
	}
	noteAudit(c, strconv.FormatInt(id, 10), set.Name)
	return writeJSON(c, http.StatusOK, success)
}

// labelJSON is a label with the number of environments carrying it; id is
// null for a label environments carry that was never defined.
type labelJSON struct {
	ID    *int64 `json:"id"`
	Name  string `json:"name"`
	Color string `json:"color"`
	Count int    `json:"count"`
}

func toLabelJSON(l templates.LabelUse) labelJSON {
	out := labelJSON{Name: l.Name, Color: l.Color, Count: l.Count}
	if l.ID != 0 {
		id := l.ID
		out.ID = &id
	}
	return out
}

// listLabels answers the defined labels and those environments carry, with
// their counts.
func (s *Server) listLabels(c *gin.Context) error {
	list, err := templates.Labels(c.Request.Context(), s.store)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, convert(list, toLabelJSON))
}

type labelRequest struct {
	Name  string `json:"name"`
	Color string `json:"color"`
}

func (s *Server) createLabel(c *gin.Context) error {
	var req labelRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	l := store.Label{Name: req.Name, Color: req.Color}
	if err := templates.CreateLabel(c.Request.Context(), s.store, &l); err != nil {
		return err
	}
	noteAudit(c, strconv.FormatInt(l.ID, 10), l.Name)
	return writeJSON(c, http.StatusCreated, toLabelJSON(templates.LabelUse{Label: l}))
}
