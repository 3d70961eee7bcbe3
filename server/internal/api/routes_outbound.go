package api

import (
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/outbound"
	"github.com/berth-dev/berth/shared/fault"
)

// outboundRoutes are the routes of the outbound policy: which address
// ranges the requests Berth makes on a user's behalf (git, registries,
// webhooks, template sources, OIDC, LDAP) may reach beyond public ones.
// Link-local and cloud metadata addresses are refused whatever it says.
func (s *Server) outboundRoutes() []route {
	return []route{
		{"GET", "/api/settings/outbound", "settings:view", NoEnv, "", false, s.getOutboundSettings},
		{"PUT", "/api/settings/outbound", "settings:edit", NoEnv, "settings.outbound", false, s.putOutboundSettings},
	}
}

// outboundOps document the outbound policy routes.
var outboundOps = map[string]apiOp{
	"GET /api/settings/outbound": {Summary: "The outbound policy: may requests made on a user's behalf reach private and loopback addresses",
		Response: outboundSettingsJSON{}},
	"PUT /api/settings/outbound": {Summary: "Set the outbound policy (link-local and cloud metadata addresses stay refused)",
		Request: outboundSettingsRequest{}, Response: outboundSettingsJSON{}},
}

// outboundSettingsJSON is the outbound policy in force.
type outboundSettingsJSON struct {
	AllowPrivate  bool `json:"allowPrivate"`  // RFC 1918, unique local (fc00::/7) and CGNAT (100.64.0.0/10) addresses
	AllowLoopback bool `json:"allowLoopback"` // 127.0.0.0/8 and ::1
}

// outboundSettingsRequest changes the policy; an absent field keeps its
// value.
type outboundSettingsRequest struct {
	AllowPrivate  *bool `json:"allowPrivate"`
	AllowLoopback *bool `json:"allowLoopback"`
}

func (s *Server) getOutboundSettings(c *gin.Context) error {
	p, err := s.outbound.Policy(c.Request.Context())
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, outboundSettingsJSON(p))
}

func (s *Server) putOutboundSettings(c *gin.Context) error {
	var req outboundSettingsRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	p, err := s.outbound.Policy(c.Request.Context())
	if err != nil {
		return err
	}
	if req.AllowPrivate != nil {
		p.AllowPrivate = *req.AllowPrivate
	}
	if req.AllowLoopback != nil {
		p.AllowLoopback = *req.AllowLoopback
	}
	if err := s.outbound.Save(c.Request.Context(), p); err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, outboundSettingsJSON(p))
}

// secretStays refuses settings that would send a stored secret (stored:
// whether one is kept) to another origin than the one it was saved for
// (oldURL): whoever moves it there must send it again.
func secretStays(what, oldURL, newURL string, stored bool) error {
	if !stored {
		return nil
	}
	if have, want := outbound.OriginOf(oldURL), outbound.OriginOf(newURL); have != want {
		return fault.New(fault.Forbidden, fmt.Sprintf("The stored %s is saved for %s, not for %s: send it again", what, have, want))
	}
	return nil
}
