package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/policy"
	"github.com/berth-dev/berth/shared/fault"
)

// envSecurityRoutes are the security settings of an environment: what
// users who are not administrators may ask of its host (package policy).
// Only administrators change them: a custom role holding environments:edit
// must not lift the restrictions that bind its holder.
func (s *Server) envSecurityRoutes() []route {
	return []route{
		{"GET", "/api/environments/{id}/security", "environments:view", EnvPath, "", false, s.getEnvSecurity},
		{"PUT", "/api/environments/{id}/security", "environments:edit", EnvPath, "environment.security", false, s.putEnvSecurity},
	}
}

// envSecurityOps document the routes.
var envSecurityOps = map[string]apiOp{
	"GET /api/environments/{id}/security": {Summary: "An environment's security settings: what non-administrators may ask of its host",
		Response: envSecurityAnswer{}},
	"PUT /api/environments/{id}/security": {Summary: "Change an environment's security settings (administrators only; absent fields kept)",
		Request: policy.Settings{}, Response: envSecurityAnswer{}},
}

// envSecurityAnswer is an environment's security settings.
type envSecurityAnswer struct {
	policy.Settings
	// BerthHost says the engine runs on Berth's own host (a socket
	// environment): Berth's data directory, and every directory holding it,
	// is never bound by non-administrators, whatever the settings.
	BerthHost bool `json:"berthHost"`
}

// policy returns the security settings and their check.
func (s *Server) policy() *policy.Service { return policy.New(s.store, s.dataDir) }

func (s *Server) getEnvSecurity(c *gin.Context) error {
	env := envOf(c)
	set, err := s.policy().Settings(c.Request.Context(), env.ID)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, envSecurityAnswer{Settings: set, BerthHost: policy.OnBerthHost(env)})
}

func (s *Server) putEnvSecurity(c *gin.Context) error {
	ctx := c.Request.Context()
	if !policy.ActorFrom(ctx).Admin {
		return fault.New(fault.Forbidden, "Only administrators change the security settings of an environment")
	}
	env := envOf(c)
	set, err := s.policy().Settings(ctx, env.ID)
	if err != nil {
		return err
	}
	if err := bindJSON(c, &set); err != nil {
		return err
	}
	set, err = s.policy().SetSettings(ctx, env.ID, set)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, envSecurityAnswer{Settings: set, BerthHost: policy.OnBerthHost(env)})
}
