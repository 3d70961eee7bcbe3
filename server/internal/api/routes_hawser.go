package api

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/hawser"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// hawserRoutes are the routes of Hawser, the reference's agent: the tokens
// of edge agents and the WebSocket they dial (the agent authenticates in
// its hello, so the connect route itself is public).
func (s *Server) hawserRoutes() []route {
	return []route{
		{"GET", "/api/hawser/tokens", "environments:view", NoEnv, "", false, s.listHawserTokens},
		{"POST", "/api/hawser/tokens", "environments:edit", NoEnv, "hawser.token_create", false, s.createHawserToken},
		{"DELETE", "/api/hawser/tokens", "environments:edit", NoEnv, "hawser.token_revoke", false, s.revokeHawserToken},
		{"GET", "/api/hawser/connect", Public, NoEnv, "", false, s.hawserConnect},
		{"POST", "/api/hawser/connect", Public, NoEnv, Quiet, false, s.hawserConnectPost},
	}
}

// hawserOps document the Hawser routes.
var hawserOps = map[string]apiOp{
	"GET /api/hawser/tokens": {Summary: "Hawser edge agents' tokens (their 8-character prefix, never the token)",
		Response: []hawserTokenJSON{}},
	"POST /api/hawser/tokens": {Summary: "Generate a Hawser edge agent's token for an environment (shown once; the environment's older tokens are revoked and its agent disconnected)",
		Request: hawserTokenRequest{}, Response: hawserTokenCreated{}},
	"DELETE /api/hawser/tokens": {Summary: "Revoke a Hawser token (its agent is disconnected)", Response: hawserTokenRevoked{},
		Query: []queryParam{{"id", "integer", "the token's id"}}},
	"GET /api/hawser/connect": {Summary: "The WebSocket Hawser edge agents dial (the agent authenticates in its hello); without an upgrade, a signed-in user gets the endpoint's status and the connected agents as JSON",
		Response: hawserConnectStatus{}, Content: mediaWebSocket},
	"POST /api/hawser/connect": {Summary: "For clients that cannot upgrade: changes nothing, advises the WebSocket endpoint",
		Response: hawserConnectAdvice{}},
}

// hawserTokenJSON is a token as listed.
type hawserTokenJSON struct {
	ID            int64      `json:"id"`
	TokenPrefix   string     `json:"tokenPrefix"`
	Name          string     `json:"name"`
	EnvironmentID int64      `json:"environmentId"`
	IsActive      bool       `json:"isActive"`
	LastUsed      *time.Time `json:"lastUsed"`
	CreatedAt     time.Time  `json:"createdAt"`
	ExpiresAt     *time.Time `json:"expiresAt"`
}

// hawserTokenRequest asks for a token; rawToken adopts a token the agent
// already has (at least 32 characters) instead of generating one.
type hawserTokenRequest struct {
	Name          *string    `json:"name"`
	EnvironmentID *int64     `json:"environmentId"`
	ExpiresAt     *time.Time `json:"expiresAt"`
	RawToken      *string    `json:"rawToken"`
}

// hawserTokenCreated is the answer: the token, this once, and the agent's
// command line.
type hawserTokenCreated struct {
	Token     string `json:"token"`
	TokenID   int64  `json:"tokenId"`
	Message   string `json:"message"`
	ServerURL string `json:"serverUrl"`
	Command   string `json:"command"`
}

type hawserTokenRevoked struct {
	Success bool   `json:"success"`
	Message string `json:"message"`
}

type hawserConnectStatus struct {
	Status            string                 `json:"status"`
	Message           string                 `json:"message"`
	Protocol          string                 `json:"protocol"`
	ActiveConnections int                    `json:"activeConnections"`
	Connections       []hawserConnectionJSON `json:"connections"`
}

type hawserConnectionJSON struct {
	EnvironmentID int64      `json:"environmentId"`
	AgentID       string     `json:"agentId"`
	AgentName     string     `json:"agentName"`
	AgentVersion  string     `json:"agentVersion"`
	DockerVersion string     `json:"dockerVersion"`
	Hostname      string     `json:"hostname"`
	Capabilities  []string   `json:"capabilities"`
	ConnectedAt   *time.Time `json:"connectedAt"`
	LastHeartbeat *time.Time `json:"lastHeartbeat"`
}

var errHawserUnavailable = fault.New(fault.Invalid, "Hawser agents are not available in this server")

func (s *Server) listHawserTokens(c *gin.Context) error {
	toks, err := s.store.ListHawserTokens(c.Request.Context())
	if err != nil {
		return err
	}
	ident := identityOf(c)
	out := make([]hawserTokenJSON, 0, len(toks))
	for _, t := range toks {
		if ident != nil && !ident.Access.CanAccess(t.EnvironmentID) {
			continue
		}
		out = append(out, hawserTokenJSON{ID: t.ID, TokenPrefix: t.Prefix, Name: t.Name, EnvironmentID: t.EnvironmentID,
			IsActive: t.Active, LastUsed: t.LastUsed, CreatedAt: t.CreatedAt, ExpiresAt: t.ExpiresAt})
	}
	return writeJSON(c, http.StatusOK, out)
}

func (s *Server) createHawserToken(c *gin.Context) error {
	var req hawserTokenRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	if req.Name == nil || strings.TrimSpace(*req.Name) == "" || req.EnvironmentID == nil {
		return fault.New(fault.Invalid, "Name and environmentId are required")
	}
	ctx := c.Request.Context()
	env, err := s.store.GetEnvironment(ctx, *req.EnvironmentID)
	if errors.Is(err, store.ErrNotFound) {
		return errEnvNotFound
	} else if err != nil {
		return err
	}
	if env.ConnectionType != engine.HawserEdge {
		return fault.New(fault.Invalid, "Hawser tokens are issued for hawser-edge environments only")
	}
	if req.ExpiresAt != nil && !req.ExpiresAt.After(s.now()) {
		return fault.New(fault.Invalid, "expiresAt must be in the future")
	}
	token := ""
	if req.RawToken != nil && *req.RawToken != "" {
		token = *req.RawToken
		if len(token) < 32 || strings.ContainsAny(token, " \t\r\n") {
			return fault.New(fault.Invalid, "rawToken must be at least 32 characters without spaces")
		}
	} else if token, err = hawser.NewToken(); err != nil {
		return err
	}
	hash, err := hawser.HashToken(token)
	if err != nil {
		return err
	}
	t := store.HawserToken{EnvironmentID: env.ID, Name: strings.TrimSpace(*req.Name), Prefix: hawser.Prefix(token),
		Hash: hash, ExpiresAt: req.ExpiresAt}
	if err := s.store.CreateHawserToken(ctx, &t); err != nil {
		return err
	}
	if s.hawser != nil {
		s.hawser.Disconnect(env.ID, "the environment's Hawser token was replaced")
	}
	noteAudit(c, strconv.FormatInt(t.ID, 10), env.Name)
	serverURL := hawserServerURL(c.Request)
	c.Header("Cache-Control", "no-store")
	return writeJSON(c, http.StatusOK, hawserTokenCreated{Token: token, TokenID: t.ID,
		Message:   "Token generated successfully. Save this token - it will not be shown again.",
		ServerURL: serverURL, Command: "hawser --server " + serverURL + " --token " + token})
}

// hawserServerURL is the WebSocket URL agents dial, as the request reached Berth.
func hawserServerURL(r *http.Request) string {
	scheme := "ws"
	if r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https") {
		scheme = "wss"
	}
	return scheme + "://" + r.Host + "/api/hawser/connect"
}

func (s *Server) revokeHawserToken(c *gin.Context) error {
	id, err := strconv.ParseInt(c.Query("id"), 10, 64)
	if err != nil || id <= 0 {
		return fault.New(fault.Invalid, "Token ID is required")
	}
	ctx := c.Request.Context()
	t, err := s.store.HawserToken(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return fault.New(fault.NotFound, "Token not found")
	} else if err != nil {
		return err
	}
	if ident := identityOf(c); ident != nil && !ident.Access.CanAccess(t.EnvironmentID) {
		return fault.New(fault.NotFound, "Token not found")
	}
	if err := s.store.RevokeHawserToken(ctx, id); err != nil {
		return err
	}
	if t.Active && s.hawser != nil {
		s.hawser.Disconnect(t.EnvironmentID, "the environment's Hawser token was revoked")
	}
	noteAudit(c, strconv.FormatInt(id, 10), t.Name)
	return writeJSON(c, http.StatusOK, hawserTokenRevoked{Success: true, Message: "Token revoked"})
}

// hawserConnect serves an agent's WebSocket; a plain GET (a signed-in user)
// answers the endpoint's status.
func (s *Server) hawserConnect(c *gin.Context) error {
	if strings.EqualFold(c.GetHeader("Upgrade"), "websocket") {
		if s.hawser == nil {
			return errHawserUnavailable
		}
		ip := s.clientIP(c.Request)
		if wait := s.hawser.Cooldown(ip); wait > 0 {
			c.Header("Retry-After", strconv.Itoa(int(wait.Seconds())+1))
			return fault.New(fault.TooMany, "Too many failed authentication attempts")
		}
		ws, err := s.acceptWebSocket(c)
		if err != nil {
			return nil // Accept answered the refusal
		}
		s.hawser.Serve(c.Request.Context(), ws, ip)
		return nil
	}
	st, err := s.auth.Settings(c.Request.Context())
	if err != nil {
		return err
	}
	ident := identityOf(c)
	if st.AuthEnabled && ident == nil {
		return errAuthRequired
	}
	out := hawserConnectStatus{Status: "ready", Message: "Hawser Edge WebSocket endpoint. Connect via WebSocket.",
		Protocol: hawserServerURL(c.Request), Connections: []hawserConnectionJSON{}}
	if s.hawser != nil {
		conns, err := s.hawserConnections(c.Request.Context())
		if err != nil {
			return err
		}
		for envID, cs := range conns {
			if ident != nil && !ident.Access.CanAccess(envID) {
				continue
			}
			out.Connections = append(out.Connections, hawserConnectionJSON{EnvironmentID: envID, AgentID: cs.AgentID,
				AgentName: cs.AgentName, AgentVersion: cs.AgentVersion, DockerVersion: cs.DockerVersion,
				Hostname: cs.Hostname, Capabilities: cs.Capabilities, ConnectedAt: cs.ConnectedAt, LastHeartbeat: cs.LastHeartbeat})
		}
	}
	slices.SortFunc(out.Connections, func(a, b hawserConnectionJSON) int { return cmp.Compare(a.EnvironmentID, b.EnvironmentID) })
	out.ActiveConnections = len(out.Connections)
	return writeJSON(c, http.StatusOK, out)
}

// hawserConnections returns the Hawser edge agents connected to this
// replica and, with replicas, those other replicas hold (from their
// leases), by environment.
func (s *Server) hawserConnections(ctx context.Context) (map[int64]hawser.Status, error) {
	out := s.hawser.Connections()
	envs, err := s.store.ListEnvironments(ctx)
	if err != nil {
		return nil, err
	}
	var away []int64
	for _, env := range envs {
		if _, ok := out[env.ID]; !ok && env.ConnectionType == engine.HawserEdge {
			away = append(away, env.ID)
		}
	}
	if len(away) == 0 {
		return out, nil
	}
	for id, st := range s.hawser.Statuses(ctx, away) {
		if st.Connected {
			out[id] = st
		}
	}
	return out, nil
}

// hawserConnectAdvice is the answer of a POST to the agents' endpoint.
type hawserConnectAdvice struct {
	Status   string `json:"status"`
	Message  string `json:"message"`
	Protocol string `json:"protocol"`
}

func (s *Server) hawserConnectPost(c *gin.Context) error {
	return writeJSON(c, http.StatusOK, hawserConnectAdvice{Status: "upgrade-required",
		Message: "This endpoint requires a WebSocket upgrade (ws:// or wss://)", Protocol: hawserServerURL(c.Request)})
}
