package api

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/auth"
	"github.com/berth-dev/berth/server/internal/outbound"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// oidcJSON is a provider configuration as clients see it (secret masked).
type oidcJSON struct {
	ID                int64                   `json:"id"`
	Name              string                  `json:"name"`
	Enabled           bool                    `json:"enabled"`
	IssuerURL         string                  `json:"issuerUrl"`
	ClientID          string                  `json:"clientId"`
	ClientSecret      string                  `json:"clientSecret"`
	RedirectURI       string                  `json:"redirectUri"`
	Scopes            string                  `json:"scopes"`
	UsernameClaim     string                  `json:"usernameClaim"`
	EmailClaim        string                  `json:"emailClaim"`
	DisplayNameClaim  string                  `json:"displayNameClaim"`
	AdminClaim        string                  `json:"adminClaim"`
	AdminValue        string                  `json:"adminValue"`
	RoleMappingsClaim string                  `json:"roleMappingsClaim"`
	RoleMappings      []store.OIDCRoleMapping `json:"roleMappings"`
	CreatedAt         time.Time               `json:"createdAt"`
	UpdatedAt         time.Time               `json:"updatedAt"`
}

func toOIDCJSON(p store.OIDCProvider) oidcJSON {
	mask := ""
	if p.ClientSecret != "" {
		mask = secretMask
	}
	mappings := p.RoleMappings
	if mappings == nil {
		mappings = []store.OIDCRoleMapping{}
	}
	return oidcJSON{ID: p.ID, Name: p.Name, Enabled: p.Enabled, IssuerURL: p.IssuerURL, ClientID: p.ClientID,
		ClientSecret: mask, RedirectURI: p.RedirectURI, Scopes: p.Scopes, UsernameClaim: p.UsernameClaim,
		EmailClaim: p.EmailClaim, DisplayNameClaim: p.DisplayNameClaim, AdminClaim: p.AdminClaim,
		AdminValue: p.AdminValue, RoleMappingsClaim: p.RoleMappingsClaim, RoleMappings: mappings,
		CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt}
}

// oidcRequest is the body of create (absent fields take defaults) and
// PATCH (absent fields keep their value; the secret follows secretField).
type oidcRequest struct {
	Name              *string                  `json:"name"`
	Enabled           *bool                    `json:"enabled"`
	IssuerURL         *string                  `json:"issuerUrl"`
	ClientID          *string                  `json:"clientId"`
	ClientSecret      secretField              `json:"clientSecret"`
	RedirectURI       *string                  `json:"redirectUri"`
	Scopes            *string                  `json:"scopes"`
	UsernameClaim     *string                  `json:"usernameClaim"`
	EmailClaim        *string                  `json:"emailClaim"`
	DisplayNameClaim  *string                  `json:"displayNameClaim"`
	AdminClaim        *string                  `json:"adminClaim"`
	AdminValue        *string                  `json:"adminValue"`
	RoleMappingsClaim *string                  `json:"roleMappingsClaim"`
	RoleMappings      *[]store.OIDCRoleMapping `json:"roleMappings"`
}

func (req oidcRequest) apply(p *store.OIDCProvider) {
	for _, f := range []struct {
		dst *string
		src *string
	}{{&p.Name, req.Name}, {&p.IssuerURL, req.IssuerURL}, {&p.ClientID, req.ClientID}, {&p.RedirectURI, req.RedirectURI},
		{&p.Scopes, req.Scopes}, {&p.UsernameClaim, req.UsernameClaim}, {&p.EmailClaim, req.EmailClaim},
		{&p.DisplayNameClaim, req.DisplayNameClaim}, {&p.AdminClaim, req.AdminClaim}, {&p.AdminValue, req.AdminValue},
		{&p.RoleMappingsClaim, req.RoleMappingsClaim}} {
		if f.src != nil {
			*f.dst = *f.src
		}
	}
	req.ClientSecret.applyTo(&p.ClientSecret)
	if req.Enabled != nil {
		p.Enabled = *req.Enabled
	}
	if req.RoleMappings != nil {
		p.RoleMappings = *req.RoleMappings
	}
}

func (s *Server) listOIDC(c *gin.Context) error {
	list, err := s.store.ListOIDCProviders(c.Request.Context())
	if err != nil {
		return err
	}
	out := convert(list, toOIDCJSON)
	return writeJSON(c, http.StatusOK, out)
}

func (s *Server) createOIDC(c *gin.Context) error {
	var req oidcRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	var p store.OIDCProvider
	req.apply(&p)
	if err := s.auth.SaveOIDC(c.Request.Context(), &p); err != nil {
		return err
	}
	noteAudit(c, strconv.FormatInt(p.ID, 10), p.Name)
	return writeJSON(c, http.StatusCreated, toOIDCJSON(p))
}

func (s *Server) getOIDC(c *gin.Context) error {
	id, err := pathID(c, "OIDC provider")
	if err != nil {
		return err
	}
	p, err := s.auth.GetOIDC(c.Request.Context(), id)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, toOIDCJSON(p))
}

func (s *Server) patchOIDC(c *gin.Context) error {
	id, err := pathID(c, "OIDC provider")
	if err != nil {
		return err
	}
	var req oidcRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	p, err := s.auth.GetOIDC(c.Request.Context(), id)
	if err != nil {
		return err
	}
	issuer := p.IssuerURL
	req.apply(&p)
	if err := secretStays("client secret", issuer, p.IssuerURL, req.ClientSecret.change() == nil && p.ClientSecret != ""); err != nil {
		return err
	}
	if err := s.auth.SaveOIDC(c.Request.Context(), &p); err != nil {
		return err
	}
	noteAudit(c, "", p.Name)
	return writeJSON(c, http.StatusOK, toOIDCJSON(p))
}

func (s *Server) deleteOIDC(c *gin.Context) error {
	id, err := pathID(c, "OIDC provider")
	if err != nil {
		return err
	}
	if err := s.auth.DeleteOIDC(c.Request.Context(), id); err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, success)
}

// testOIDC fetches the discovery document: {success, issuer, endpoints}.
func (s *Server) testOIDC(c *gin.Context) error {
	id, err := pathID(c, "OIDC provider")
	if err != nil {
		return err
	}
	ep, err := s.auth.TestOIDC(c.Request.Context(), id)
	if err != nil {
		if _, refused := outbound.Refused(err); refused {
			return err // the outbound policy's 403
		}
		if f, ok := fault.As(err); ok && f.Kind != fault.NotFound {
			return writeJSON(c, http.StatusOK, map[string]any{"success": false, "error": f.Message, "details": f.Details})
		}
		return err
	}
	return writeJSON(c, http.StatusOK, map[string]any{"success": true, "issuer": ep.Issuer,
		"endpoints": map[string]string{"authorization": ep.Authorization, "token": ep.Token, "userinfo": ep.UserInfo}})
}

// initiateOIDC starts a sign-in: GET redirects the browser to the provider;
// POST answers {url} for pages that navigate themselves. The optional
// redirect parameter (a local path) is where the browser lands afterwards.
func (s *Server) initiateOIDC(c *gin.Context) error {
	id, err := pathID(c, "OIDC provider")
	if err != nil {
		return err
	}
	to := c.Query("redirect")
	if c.Request.Method == http.MethodPost {
		var req oidcInitiateInput
		if err := bindJSON(c, &req); err != nil {
			return err
		}
		if req.Redirect != "" {
			to = req.Redirect
		}
	}
	authURL, err := s.auth.OIDCInitiate(c.Request.Context(), id, to)
	if err != nil {
		return err
	}
	if c.Request.Method == http.MethodPost {
		return writeJSON(c, http.StatusOK, map[string]string{"url": authURL})
	}
	c.Redirect(http.StatusFound, authURL)
	return nil
}

// oidcCallback completes a sign-in and sends the browser on with a session;
// a failure sends it to the login page with the error.
func (s *Server) oidcCallback(c *gin.Context) error {
	q := c.Request.URL.Query()
	fail := func(msg string) error {
		s.audit(c, store.AuditEntry{Action: "login.failure", EntityType: "session", Description: "OIDC: " + msg})
		c.Redirect(http.StatusFound, "/login?error="+url.QueryEscape(msg))
		return nil
	}
	if e := q.Get("error"); e != "" { // the provider refused (e.g. access_denied)
		msg := "The identity provider answered " + printable(e, 64)
		if d := printable(q.Get("error_description"), 200); d != "" { // its words for the person signing in
			msg += ": " + d
		}
		return fail(msg)
	}
	if tag := auth.StateTag(q.Get("state")); s.replicas != nil && tag != "" && tag != s.replicas.Self() && !s.relayed(c.Request) {
		// Another replica began this sign-in and holds it: it completes it.
		if err := s.forwardTo(c, tag, errOIDCReplicaGone); err != nil {
			_, body := errorResponse(err)
			return fail(body.Error)
		}
		return nil
	}
	ident, sess, to, err := s.auth.OIDCCallback(c.Request.Context(), q.Get("state"), q.Get("code"), s.clientIP(c.Request), c.Request.UserAgent())
	if err != nil {
		_, body := errorResponse(err)
		if status, _ := errorResponse(err); status >= 500 {
			s.log.Error("OIDC sign-in failed", "err", err)
		}
		return fail(body.Error)
	}
	s.setSessionCookie(c, sess)
	uid := ident.User.ID
	s.audit(c, store.AuditEntry{Action: "login", EntityType: "session", UserID: &uid, Username: ident.User.Username,
		EntityID: strconv.FormatInt(uid, 10), EntityName: ident.User.Username, Description: "signed in with oidc"})
	c.Redirect(http.StatusFound, to)
	return nil
}

// printable is s without control characters, cut to at most n runes: a
// value another party sent, fit to show in a message.
func printable(s string, n int) string {
	out := make([]rune, 0, min(len(s), n))
	for _, r := range s {
		if len(out) == n {
			break
		}
		if unicode.IsPrint(r) {
			out = append(out, r)
		}
	}
	return strings.TrimSpace(string(out))
}
