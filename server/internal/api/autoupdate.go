package api

import (
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/autoupdate"
	"github.com/berth-dev/berth/server/internal/schedule"
	"github.com/berth-dev/berth/server/internal/store"
)

// autoUpdateJSON is the wire form of an auto-update configuration (spec).
type autoUpdateJSON struct {
	ID                    int64     `json:"id"`
	ContainerName         string    `json:"containerName"`
	EnvironmentID         *int64    `json:"environmentId"`
	Enabled               bool      `json:"enabled"`
	ScheduleType          string    `json:"scheduleType"`
	CronExpression        string    `json:"cronExpression"`
	VulnerabilityCriteria string    `json:"vulnerabilityCriteria"`
	CreatedAt             time.Time `json:"createdAt"`
	UpdatedAt             time.Time `json:"updatedAt"`
}

func toAutoUpdateJSON(a store.AutoUpdate) autoUpdateJSON {
	return autoUpdateJSON{ID: a.ID, ContainerName: a.ContainerName, EnvironmentID: a.EnvironmentID, Enabled: a.Enabled,
		ScheduleType: a.ScheduleType, CronExpression: a.CronExpression, VulnerabilityCriteria: a.VulnerabilityCriteria,
		CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt}
}

// autoUpdateSettings is the short form clients read per container.
type autoUpdateSettings struct {
	Enabled               bool   `json:"enabled"`
	ScheduleType          string `json:"scheduleType"`
	CronExpression        string `json:"cronExpression"`
	VulnerabilityCriteria string `json:"vulnerabilityCriteria"`
}

// listAutoUpdates answers the configurations of the environment's
// containers, keyed by container name.
func (s *Server) listAutoUpdates(c *gin.Context) error {
	list, err := s.autoupdate.Configs(c.Request.Context(), envOf(c))
	if err != nil {
		return err
	}
	out := make(map[string]autoUpdateSettings, len(list))
	for _, a := range list {
		out[a.ContainerName] = autoUpdateSettings{Enabled: a.Enabled, ScheduleType: a.ScheduleType,
			CronExpression: a.CronExpression, VulnerabilityCriteria: a.VulnerabilityCriteria}
	}
	return writeJSON(c, http.StatusOK, out)
}

// getAutoUpdate answers a container's configuration, or the defaults
// (enabled false) when it has none.
func (s *Server) getAutoUpdate(c *gin.Context) error {
	a, found, err := s.autoupdate.Config(c.Request.Context(), envOf(c), c.Param("containerName"))
	if err != nil {
		return err
	}
	if !found {
		return writeJSON(c, http.StatusOK, autoUpdateSettings{ScheduleType: schedule.Daily, CronExpression: autoupdate.DefaultCron,
			VulnerabilityCriteria: autoupdate.Never})
	}
	return writeJSON(c, http.StatusOK, toAutoUpdateJSON(a))
}

// saveAutoUpdate applies the spec's state table: enabled true creates or
// updates the configuration, enabled false deletes it.
func (s *Server) saveAutoUpdate(c *gin.Context) error {
	var req autoUpdateInput
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	name := c.Param("containerName")
	noteAudit(c, name, name)
	a, deleted, err := s.autoupdate.Configure(c.Request.Context(), envOf(c), name, autoupdate.Request{
		Enabled: req.Enabled, CronExpression: first(req.CronExpression, req.CronExpressionSnake),
		VulnerabilityCriteria: first(req.VulnerabilityCriteria, req.VulnerabilityCriteriaSnak), ScheduleType: first(req.ScheduleType)})
	if err != nil {
		return err
	}
	s.schedulesChanged(c)
	if deleted {
		return writeJSON(c, http.StatusOK, map[string]bool{"success": true, "deleted": true})
	}
	return writeJSON(c, http.StatusOK, toAutoUpdateJSON(a))
}

func (s *Server) deleteAutoUpdate(c *gin.Context) error {
	name := c.Param("containerName")
	noteAudit(c, name, name)
	deleted, err := s.autoupdate.Remove(c.Request.Context(), envOf(c), name)
	if err != nil {
		return err
	}
	s.schedulesChanged(c)
	return writeJSON(c, http.StatusOK, map[string]bool{"success": deleted})
}

// first is the first non-nil value, or "".
func first(vs ...*string) string {
	for _, v := range vs {
		if v != nil {
			return *v
		}
	}
	return ""
}

// listPendingUpdates answers the pending updates the last update check of
// the environment found.
func (s *Server) listPendingUpdates(c *gin.Context) error {
	list, err := s.autoupdate.PendingUpdates(c.Request.Context(), envOf(c))
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, map[string]any{"pendingUpdates": convert(list, toPendingJSON)})
}

// clearPendingUpdates forgets the pending updates recorded for the
// environment, or only the named container's (?containerName=), until the
// next check finds them again: {success, deleted}.
func (s *Server) clearPendingUpdates(c *gin.Context) error {
	ctx, env := c.Request.Context(), envOf(c)
	var deleted int64
	name := strings.TrimSpace(c.Query("containerName"))
	if id := strings.TrimSpace(c.Query("containerId")); id != "" && name == "" {
		// The reference's clients name the container by its id (from GET
		// /api/containers): its pending update is found by that id, and
		// no other is touched when none has it.
		list, err := s.store.ListPendingUpdates(ctx, env.ID)
		if err != nil {
			return err
		}
		name = "\x00" // matches no container: nothing is deleted
		for _, p := range list {
			if p.ContainerID == id || (len(id) >= 12 && strings.HasPrefix(p.ContainerID, id)) {
				name = p.ContainerName
				break
			}
		}
	}
	if name != "" {
		one, err := s.store.DeletePendingUpdate(ctx, env.ID, name)
		if err != nil {
			return err
		}
		if one {
			deleted = 1
		}
	} else {
		n, err := s.store.ClearPendingUpdates(ctx, env.ID)
		if err != nil {
			return err
		}
		deleted = n
	}
	return writeJSON(c, http.StatusOK, map[string]any{"success": true, "deleted": deleted})
}

// pendingJSON is the wire form of a pending update.
type pendingJSON struct {
	ContainerName  string    `json:"containerName"`
	ContainerID    string    `json:"containerId"`
	Image          string    `json:"image"`
	CurrentImageID string    `json:"currentImageId"`
	NewDigest      string    `json:"newDigest"`
	CheckedAt      time.Time `json:"checkedAt"`
}

func toPendingJSON(p store.PendingUpdate) pendingJSON {
	return pendingJSON{ContainerName: p.ContainerName, ContainerID: p.ContainerID, Image: p.Image,
		CurrentImageID: p.CurrentImageID, NewDigest: p.NewDigest, CheckedAt: p.CheckedAt}
}
