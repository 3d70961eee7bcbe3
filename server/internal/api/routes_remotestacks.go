package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/hostpath"
	"github.com/berth-dev/berth/shared/fault"
)

// remoteStacksRoutes are the routes of an environment's remote stacks
// directory: where the stack files of an environment on another host
// (direct, agent or Hawser) live on that host. Berth records it (the
// reference's 1.0.42 setting); its own files of those stacks stay in its
// stack directory, and an agent keeps its own STACKS_DIR.
func (s *Server) remoteStacksRoutes() []route {
	return []route{
		{"GET", "/api/environments/{id}/remote-stacks-dir", "environments:view", EnvPath, "", false, s.getRemoteStacksDir},
		{"POST", "/api/environments/{id}/remote-stacks-dir", "environments:edit", EnvPath, "environment.remote_stacks_dir", false, s.setRemoteStacksDir},
	}
}

// remoteStacksOps document the remote stacks directory routes.
var remoteStacksOps = map[string]apiOp{
	"GET /api/environments/{id}/remote-stacks-dir": {Summary: "The stacks directory recorded for an environment on another host (null when none is)",
		Response: remoteStacksDirJSON{}},
	"POST /api/environments/{id}/remote-stacks-dir": {Summary: "Set (a string) or clear (null or \"\") an environment's remote stacks directory: an absolute path without \"..\"; not for a socket environment",
		Request: remoteStacksDirRequest{}, Response: remoteStacksDirAnswer{}},
}

// remoteStacksDirJSON is an environment's remote stacks directory.
type remoteStacksDirJSON struct {
	RemoteStacksDir *string `json:"remoteStacksDir"`
}

// remoteStacksDirRequest sets it: a string, or null to clear it.
type remoteStacksDirRequest struct {
	RemoteStacksDir json.RawMessage `json:"remoteStacksDir"`
}

// remoteStacksDirAnswer is the answer of a change.
type remoteStacksDirAnswer struct {
	Success         bool    `json:"success"`
	RemoteStacksDir *string `json:"remoteStacksDir"`
}

func (s *Server) getRemoteStacksDir(c *gin.Context) error {
	dir, err := s.store.RemoteStacksDir(c.Request.Context(), envOf(c).ID)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, remoteStacksDirJSON{RemoteStacksDir: optional(dir)})
}

// setRemoteStacksDir records the directory: remoteStacksDir must be sent,
// as a string (an absolute path with no ".." element) or null; null or ""
// clears it. An environment on Berth's own host (socket) has none: its
// stacks are in Berth's stack roots.
func (s *Server) setRemoteStacksDir(c *gin.Context) error {
	var req remoteStacksDirRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	raw := bytes.TrimSpace(req.RemoteStacksDir)
	var dir string
	switch {
	case len(raw) == 0:
		return fault.Invalidf("remoteStacksDir is required: a string or null")
	case bytes.Equal(raw, []byte("null")):
	case json.Unmarshal(raw, &dir) != nil:
		return fault.Invalidf("remoteStacksDir must be a string or null")
	}
	dir = strings.TrimSpace(dir)
	env := envOf(c)
	if dir != "" {
		if env.ConnectionType == "" || env.ConnectionType == "socket" {
			return fault.Invalidf("A socket environment has no remote stacks directory: its stacks are in Berth's stack roots")
		}
		if err := hostpath.CheckForm("remote stacks directory", dir); err != nil {
			return err
		}
		dir = filepath.Clean(dir)
	}
	if err := s.store.SetRemoteStacksDir(c.Request.Context(), env.ID, dir); err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, remoteStacksDirAnswer{Success: true, RemoteStacksDir: optional(dir)})
}

// optional is s, or nil for "".
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
