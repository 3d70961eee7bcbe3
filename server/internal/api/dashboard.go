package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/auth"
	"github.com/berth-dev/berth/server/internal/store"
)

// dashboardPerm is what a caller needs on an environment to see its figures.
const dashboardPerm = "containers:view"

// dashboardStats answers the figures of every environment the caller may
// view (an array), or with ?env=N those of environment N (one object).
func (s *Server) dashboardStats(c *gin.Context) error {
	ctx := c.Request.Context()
	ident := identityOf(c)
	if c.Query("env") != "" {
		env, err := s.environment(c, "env")
		if err != nil {
			return err
		}
		if ident != nil {
			if err := denial(ident.Access.Check(dashboardPerm, &env.ID)); err != nil {
				return err
			}
		}
		return writeJSON(c, http.StatusOK, s.dashboard.Environment(ctx, env))
	}
	envs, err := s.store.ListEnvironments(ctx)
	if err != nil {
		return err
	}
	visible := make([]store.Environment, 0, len(envs))
	for _, e := range envs {
		if ident == nil || ident.Access.Check(dashboardPerm, &e.ID) == auth.Allowed {
			visible = append(visible, e)
		}
	}
	return writeJSON(c, http.StatusOK, s.dashboard.All(ctx, visible))
}
