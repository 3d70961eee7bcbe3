package api

import (
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/containers"
	"github.com/berth-dev/berth/shared/fault"
)

// containersRoutes are container routes of the reference's newer releases
// (1.0.42): the cached pending updates under the check's own path, and what
// is known of the versions an update check surfaced.
func (s *Server) containersRoutes() []route {
	return []route{
		{"GET", "/api/containers/check-updates", "containers:view", EnvQuery, "", false, s.cachedUpdateCheck},
		{"GET", "/api/containers/{id}/version-notes", "containers:view", EnvQuery, "", false, s.versionNotes},
	}
}

// containersOps document the routes of containersRoutes.
var containersOps = map[string]apiOp{
	"GET /api/containers/check-updates": {Summary: "The pending updates the last check recorded (no new check: POST runs one)",
		Response: cachedUpdateCheckAnswer{}},
	"GET /api/containers/{id}/version-notes": {Summary: "What is known locally of the versions an update check surfaced " +
		"(release page links, the image's version labels, current and available digests; no notes are fetched from the internet)",
		Response: containers.VersionNotes{}, Query: []queryParam{{"versions", "string", "comma-separated version tags"}}},
}

// cachedUpdateCheckAnswer is the reference's answer to GET …/check-updates.
type cachedUpdateCheckAnswer struct {
	EnvironmentID  int64                 `json:"environmentId"`
	PendingUpdates []cachedPendingUpdate `json:"pendingUpdates"`
}

// cachedPendingUpdate is one pending update: the reference's fields, then
// Berth's.
type cachedPendingUpdate struct {
	ContainerID    string    `json:"containerId"`
	ContainerName  string    `json:"containerName"`
	CurrentImage   string    `json:"currentImage"`
	CheckedAt      time.Time `json:"checkedAt"`
	CurrentImageID string    `json:"currentImageId"`
	NewDigest      string    `json:"newDigest"`
}

// cachedUpdateCheck serves GET /api/containers/check-updates: the pending
// updates the last check of ?env recorded; the environment is required.
func (s *Server) cachedUpdateCheck(c *gin.Context) error {
	if strings.TrimSpace(c.Query("env")) == "" {
		return fault.New(fault.Invalid, "Environment ID required")
	}
	env := envOf(c)
	list, err := s.autoupdate.PendingUpdates(c.Request.Context(), env)
	if err != nil {
		return err
	}
	out := cachedUpdateCheckAnswer{EnvironmentID: env.ID, PendingUpdates: []cachedPendingUpdate{}}
	for _, p := range list {
		out.PendingUpdates = append(out.PendingUpdates, cachedPendingUpdate{ContainerID: p.ContainerID,
			ContainerName: p.ContainerName, CurrentImage: p.Image, CheckedAt: p.CheckedAt,
			CurrentImageID: p.CurrentImageID, NewDigest: p.NewDigest})
	}
	return writeJSON(c, http.StatusOK, out)
}

// versionNotes serves GET /api/containers/{id}/version-notes?versions=a,b.
func (s *Server) versionNotes(c *gin.Context) error {
	notes, err := s.containers.VersionNotes(c.Request.Context(), envOf(c), c.Param("id"), c.Query("versions"))
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, notes)
}
