package api

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// stackRootsRoutes are the routes of the external stack roots (issue 20):
// the directories outside DATA_DIR/stacks where stack files may live (see
// docs/security.md, "Host paths"). They are console settings: read with
// settings:view, changed with settings:edit. The setting's default,
// EXTERNAL_STACK_ROOTS, is given to the stacks by New.
func (s *Server) stackRootsRoutes() []route {
	return []route{
		{"GET", "/api/settings/stack-roots", "settings:view", NoEnv, "", false, s.getStackRoots},
		{"PUT", "/api/settings/stack-roots", "settings:edit", NoEnv, "settings.stack_roots", false, s.putStackRoots},
	}
}

// stackRoots is the body and answer of the stack roots routes.
type stackRoots struct {
	Roots []string `json:"roots"`
}

// getStackRoots answers GET /api/settings/stack-roots: {roots}, the
// admin's list, or EXTERNAL_STACK_ROOTS while none was saved.
func (s *Server) getStackRoots(c *gin.Context) error {
	roots, err := s.stacks.Roots(c.Request.Context())
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, stackRoots{Roots: roots})
}

// putStackRoots answers PUT /api/settings/stack-roots {roots}: absolute,
// existing directories, not / nor DATA_DIR or inside it (400 naming the
// one refused); the answer is the list saved.
func (s *Server) putStackRoots(c *gin.Context) error {
	var req stackRoots
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	roots, err := s.stacks.SetRoots(c.Request.Context(), req.Roots)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, stackRoots{Roots: roots})
}
