package api

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/agents"
	"github.com/berth-dev/berth/server/internal/hawser"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// Environment defaults of the spec.
const (
	defaultPort     = 2375
	defaultProtocol = "http"
	defaultIcon     = "globe"
	maxLabels       = 10
)

// DefaultEnvironmentID is the environment used when a request names none.
const DefaultEnvironmentID = 1

var errEnvNotFound = fault.New(fault.NotFound, "Environment not found")

// environment resolves the environment a request selects with the query
// parameter param ("env", or "envId" for exec); none selects environment 1.
func (s *Server) environment(c *gin.Context, param string) (store.Environment, error) {
	v := c.Query(param)
	id := int64(DefaultEnvironmentID)
	if v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return store.Environment{}, fault.Invalidf("Invalid environment ID: %s must be a positive integer", param)
		}
		id = n
	}
	return s.environmentByID(c.Request.Context(), id)
}

func (s *Server) environmentByID(ctx context.Context, id int64) (store.Environment, error) {
	env, err := s.store.GetEnvironment(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return store.Environment{}, errEnvNotFound
	}
	return env, err
}

// pathEnvironment resolves the {id} path parameter of /api/environments/{id}.
func (s *Server) pathEnvironment(c *gin.Context) (store.Environment, error) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id <= 0 {
		return store.Environment{}, errEnvNotFound
	}
	return s.environmentByID(c.Request.Context(), id)
}

// environmentJSON is the wire form of an environment. Secrets appear only in
// the create response (which echoes what was submitted).
type environmentJSON struct {
	ID                int64      `json:"id"`
	Name              string     `json:"name"`
	ConnectionType    string     `json:"connectionType"`
	Host              string     `json:"host"`
	Port              int        `json:"port"`
	Protocol          string     `json:"protocol"`
	SocketPath        string     `json:"socketPath"`
	TLSCA             string     `json:"tlsCa"`
	TLSCert           string     `json:"tlsCert"`
	TLSKey            *string    `json:"tlsKey,omitempty"`
	TLSSkipVerify     bool       `json:"tlsSkipVerify"`
	AgentToken        *string    `json:"agentToken,omitempty"`
	HasTLSKey         bool       `json:"hasTlsKey"`
	HasAgentToken     bool       `json:"hasAgentToken"`
	AgentLastSeen     *time.Time `json:"agentLastSeen"`
	AgentID           *string    `json:"agentId"`
	AgentName         *string    `json:"agentName"`
	AgentVersion      *string    `json:"agentVersion"`
	AgentCapabilities []string   `json:"agentCapabilities"`
	// AgentConnected and AgentStatus: the live state of an agent
	// environment's agent (absent for socket and direct environments).
	AgentConnected        *bool          `json:"agentConnected,omitempty"`
	AgentStatus           *agents.Status `json:"agentStatus,omitempty"`
	Icon                  string         `json:"icon"`
	Labels                []string       `json:"labels"`
	CollectActivity       bool           `json:"collectActivity"`
	CollectMetrics        bool           `json:"collectMetrics"`
	HighlightChanges      bool           `json:"highlightChanges"`
	PublicIP              *string        `json:"publicIp"`
	UpdateCheckEnabled    bool           `json:"updateCheckEnabled"`
	UpdateCheckAutoUpdate bool           `json:"updateCheckAutoUpdate"`
	ImagePruneEnabled     bool           `json:"imagePruneEnabled"`
	Timezone              *string        `json:"timezone"`
	CreatedAt             time.Time      `json:"createdAt"`
	UpdatedAt             time.Time      `json:"updatedAt"`
}

func toEnvironmentJSON(e store.Environment) environmentJSON {
	caps := e.AgentCapabilities
	if caps == nil {
		caps = []string{}
	}
	labels := e.Labels
	if labels == nil {
		labels = []string{}
	}
	return environmentJSON{
		ID: e.ID, Name: e.Name, ConnectionType: e.ConnectionType, Host: e.Host, Port: e.Port,
		Protocol: e.Protocol, SocketPath: e.SocketPath, TLSCA: e.TLSCA, TLSCert: e.TLSCert,
		TLSSkipVerify: e.TLSSkipVerify, HasTLSKey: e.TLSKey != "", HasAgentToken: e.AgentToken != "" || e.AgentTokenHash != "",
		AgentLastSeen: e.AgentLastSeen, AgentID: nonEmpty(e.AgentID), AgentName: nonEmpty(e.AgentName),
		AgentVersion: nonEmpty(e.AgentVersion), AgentCapabilities: caps, Icon: e.Icon, Labels: labels,
		CollectActivity: e.CollectActivity, CollectMetrics: e.CollectMetrics, HighlightChanges: e.HighlightChanges,
		PublicIP: e.PublicIP, UpdateCheckEnabled: e.UpdateCheckEnabled, UpdateCheckAutoUpdate: e.UpdateCheckAutoUpdate,
		ImagePruneEnabled: e.ImagePruneEnabled, Timezone: e.Timezone, CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt,
	}
}

// liveAgents is the live state of some environments' agents, read at once
// (each replica holding some of their agents is asked once).
type liveAgents struct {
	hawser map[int64]hawser.Status
	agents map[int64]agents.Status
}

// liveAgentsOf reads the live state of envs' agents.
func (s *Server) liveAgentsOf(ctx context.Context, envs ...store.Environment) liveAgents {
	var hawserIDs []int64
	agentTypes := map[int64]string{}
	for _, e := range envs {
		switch e.ConnectionType {
		case engine.HawserEdge:
			hawserIDs = append(hawserIDs, e.ID)
		case engine.AgentEdge, engine.AgentStandard:
			agentTypes[e.ID] = e.ConnectionType
		}
	}
	// Both ask the replicas holding their agents: side by side, so that a
	// holder that does not answer costs its deadline once.
	var live liveAgents
	var wg sync.WaitGroup
	if s.hawser != nil && len(hawserIDs) > 0 {
		wg.Go(func() { live.hawser = s.hawser.Statuses(ctx, hawserIDs) })
	}
	if s.agents != nil && len(agentTypes) > 0 {
		wg.Go(func() { live.agents = s.agents.Statuses(ctx, agentTypes) })
	}
	wg.Wait()
	return live
}

// withAgentStatus adds the live agent state (from live) to an agent
// environment's JSON: the live connection's facts win over the stored ones.
func (s *Server) withAgentStatus(out environmentJSON, live liveAgents) environmentJSON {
	if out.ConnectionType == engine.HawserEdge && s.hawser != nil {
		st := live.hawser[out.ID]
		out.AgentConnected = &st.Connected
		if st.Connected {
			out.AgentLastSeen, out.AgentID, out.AgentName = st.LastHeartbeat, &st.AgentID, &st.AgentName
			out.AgentVersion, out.AgentCapabilities = &st.AgentVersion, st.Capabilities
		}
		return out
	}
	if s.agents == nil || (out.ConnectionType != engine.AgentEdge && out.ConnectionType != engine.AgentStandard) {
		return out
	}
	st := live.agents[out.ID]
	out.AgentConnected, out.AgentStatus = &st.Connected, &st
	if st.Connected && out.ConnectionType == engine.AgentEdge {
		out.AgentLastSeen, out.AgentID, out.AgentName, out.AgentVersion = st.LastSeen, st.AgentID, st.AgentName, st.AgentVersion
		if st.AgentCapabilities != nil {
			out.AgentCapabilities = st.AgentCapabilities
		}
	}
	return out
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// environmentRequest is the body of create (absent fields take defaults) and
// update (absent fields keep their value; tlsKey and agentToken follow
// secretField).
type environmentRequest struct {
	Name                  *string     `json:"name"`
	ConnectionType        *string     `json:"connectionType"`
	Host                  *string     `json:"host"`
	Port                  *int        `json:"port"`
	Protocol              *string     `json:"protocol"`
	SocketPath            *string     `json:"socketPath"`
	TLSCA                 *string     `json:"tlsCa"`
	TLSCert               *string     `json:"tlsCert"`
	TLSKey                secretField `json:"tlsKey"`
	TLSSkipVerify         *bool       `json:"tlsSkipVerify"`
	AgentToken            secretField `json:"agentToken"`
	HawserToken           secretField `json:"hawserToken"` // the reference's name of a hawser-standard agent's token
	Icon                  *string     `json:"icon"`
	Labels                *[]string   `json:"labels"`
	CollectActivity       *bool       `json:"collectActivity"`
	CollectMetrics        *bool       `json:"collectMetrics"`
	HighlightChanges      *bool       `json:"highlightChanges"`
	PublicIP              *string     `json:"publicIp"`
	UpdateCheckEnabled    *bool       `json:"updateCheckEnabled"`
	UpdateCheckAutoUpdate *bool       `json:"updateCheckAutoUpdate"`
	ImagePruneEnabled     *bool       `json:"imagePruneEnabled"`
	Timezone              *string     `json:"timezone"`
}

// newEnvironment is an environment with the spec's defaults.
func newEnvironment() store.Environment {
	return store.Environment{
		ConnectionType: engine.Socket, Port: defaultPort, Protocol: defaultProtocol,
		SocketPath: engine.DefaultSocket, Icon: defaultIcon, Labels: []string{},
		CollectActivity: true, CollectMetrics: true, HighlightChanges: true,
	}
}

// apply copies the present fields of req onto e and validates the result.
func (req environmentRequest) apply(e *store.Environment) error {
	set := func(dst *string, src *string) {
		if src != nil {
			*dst = strings.TrimSpace(*src)
		}
	}
	setBool := func(dst *bool, src *bool) {
		if src != nil {
			*dst = *src
		}
	}
	set(&e.Name, req.Name)
	set(&e.ConnectionType, req.ConnectionType)
	set(&e.Host, req.Host)
	set(&e.Protocol, req.Protocol)
	set(&e.SocketPath, req.SocketPath)
	set(&e.Icon, req.Icon)
	if req.Port != nil {
		e.Port = *req.Port
	}
	if req.TLSCA != nil {
		e.TLSCA = *req.TLSCA
	}
	if req.TLSCert != nil {
		e.TLSCert = *req.TLSCert
	}
	req.TLSKey.applyTo(&e.TLSKey)
	req.AgentToken.applyTo(&e.AgentToken)
	req.HawserToken.applyTo(&e.AgentToken)
	setBool(&e.TLSSkipVerify, req.TLSSkipVerify)
	setBool(&e.CollectActivity, req.CollectActivity)
	setBool(&e.CollectMetrics, req.CollectMetrics)
	setBool(&e.HighlightChanges, req.HighlightChanges)
	setBool(&e.UpdateCheckEnabled, req.UpdateCheckEnabled)
	setBool(&e.UpdateCheckAutoUpdate, req.UpdateCheckAutoUpdate)
	setBool(&e.ImagePruneEnabled, req.ImagePruneEnabled)
	if req.Labels != nil {
		e.Labels = cleanLabels(*req.Labels)
	}
	if req.PublicIP != nil {
		e.PublicIP = nonEmpty(strings.TrimSpace(*req.PublicIP))
	}
	if req.Timezone != nil {
		e.Timezone = nonEmpty(strings.TrimSpace(*req.Timezone))
	}
	return validateEnvironment(e)
}

// cleanLabels trims labels and drops empty and repeated ones.
func cleanLabels(in []string) []string {
	out := make([]string, 0, len(in))
	seen := map[string]bool{}
	for _, l := range in {
		l = strings.TrimSpace(l)
		if l != "" && !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	return out
}

func validateEnvironment(e *store.Environment) error {
	if e.Name == "" {
		return fault.New(fault.Invalid, "Environment name is required")
	}
	if len(e.Name) > 100 {
		return fault.New(fault.Invalid, "Environment name must be at most 100 characters")
	}
	switch e.ConnectionType {
	case engine.Socket, engine.Direct, engine.AgentStandard, engine.AgentEdge, engine.HawserStandard, engine.HawserEdge:
	default:
		return fault.New(fault.Invalid, "Invalid connection type: use socket, direct, agent-standard, agent-edge, hawser-standard or hawser-edge")
	}
	if (e.ConnectionType == engine.Direct || e.ConnectionType == engine.AgentStandard) && e.Host == "" {
		return fault.New(fault.Invalid, "Host is required for direct and agent-standard connections")
	}
	if e.ConnectionType == engine.HawserStandard && e.Host == "" {
		return fault.New(fault.Invalid, "Host is required for hawser-standard connections")
	}
	if e.Port < 1 || e.Port > 65535 {
		return fault.New(fault.Invalid, "Port must be between 1 and 65535")
	}
	if e.Protocol != "http" && e.Protocol != "https" {
		return fault.New(fault.Invalid, "Protocol must be http or https")
	}
	if e.SocketPath == "" {
		e.SocketPath = engine.DefaultSocket
	}
	if e.ConnectionType == engine.Socket && !strings.HasPrefix(e.SocketPath, "/") {
		return fault.New(fault.Invalid, "Socket path must be absolute")
	}
	if e.Icon == "" {
		e.Icon = defaultIcon
	}
	if len(e.Labels) > maxLabels {
		return fault.New(fault.Invalid, "An environment can have at most 10 labels")
	}
	if (e.TLSCert == "") != (e.TLSKey == "") {
		return fault.New(fault.Invalid, "tlsCert and tlsKey must be given together")
	}
	if e.Timezone != nil {
		if _, err := time.LoadLocation(*e.Timezone); err != nil {
			return fault.Invalidf("Unknown timezone %q", *e.Timezone)
		}
	}
	return nil
}

var errEnvNameTaken = fault.New(fault.Conflict, "An environment with this name already exists")

func (s *Server) listEnvironments(c *gin.Context) error {
	envs, err := s.store.ListEnvironments(c.Request.Context())
	if err != nil {
		return err
	}
	ident := identityOf(c)
	shown := make([]store.Environment, 0, len(envs))
	for _, e := range envs {
		if ident == nil || ident.Access.CanAccess(e.ID) {
			shown = append(shown, e)
		}
	}
	live := s.liveAgentsOf(c.Request.Context(), shown...)
	out := make([]environmentJSON, 0, len(shown))
	for _, e := range shown {
		out = append(out, s.withAgentStatus(toEnvironmentJSON(e), live))
	}
	return writeJSON(c, http.StatusOK, out)
}

func (s *Server) getEnvironment(c *gin.Context) error {
	env := envOf(c)
	return writeJSON(c, http.StatusOK, s.withAgentStatus(toEnvironmentJSON(env), s.liveAgentsOf(c.Request.Context(), env)))
}

func (s *Server) createEnvironment(c *gin.Context) error {
	var req environmentRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	env := newEnvironment()
	if req.ConnectionType != nil && strings.TrimSpace(*req.ConnectionType) == engine.HawserStandard && req.Port == nil {
		env.Port = engine.HawserDefaultPort // where a Hawser agent listens by default
	}
	if err := req.apply(&env); err != nil {
		return err
	}
	if err := s.store.CreateEnvironment(c.Request.Context(), &env); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return errEnvNameTaken
		}
		return err
	}
	noteAudit(c, strconv.FormatInt(env.ID, 10), env.Name)
	out := toEnvironmentJSON(env)
	// The create response echoes the submitted connection fields (spec).
	out.TLSKey, out.AgentToken = req.TLSKey.change(), req.AgentToken.change()
	if out.AgentToken == nil {
		out.AgentToken = req.HawserToken.change()
	}
	return writeJSON(c, http.StatusCreated, out)
}

func (s *Server) updateEnvironment(c *gin.Context) error {
	env := envOf(c)
	wasEdge := env.ConnectionType == engine.AgentEdge
	wasHawserEdge := env.ConnectionType == engine.HawserEdge
	var req environmentRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	if err := req.apply(&env); err != nil {
		return err
	}
	if err := s.store.UpdateEnvironment(c.Request.Context(), &env); err != nil {
		switch {
		case errors.Is(err, store.ErrConflict):
			return errEnvNameTaken
		case errors.Is(err, store.ErrNotFound):
			return errEnvNotFound
		}
		return err
	}
	noteAudit(c, "", env.Name)
	s.engines.Forget(env.ID)
	if s.agents != nil && wasEdge && env.ConnectionType != engine.AgentEdge {
		s.agents.Forget(env.ID, "the environment is no longer an edge environment")
	}
	if s.hawser != nil && wasHawserEdge && env.ConnectionType != engine.HawserEdge {
		s.hawser.Disconnect(env.ID, "the environment is no longer a Hawser edge environment")
	}
	s.schedulesChanged(c) // its update check, image prune or time zone may have changed
	return writeJSON(c, http.StatusOK, s.withAgentStatus(toEnvironmentJSON(env), s.liveAgentsOf(c.Request.Context(), env)))
}

func (s *Server) deleteEnvironment(c *gin.Context) error {
	env := envOf(c)
	if err := s.store.DeleteEnvironment(c.Request.Context(), env.ID); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return errEnvNotFound
		}
		return err
	}
	noteAudit(c, "", env.Name)
	s.engines.Forget(env.ID)
	if s.agents != nil {
		s.agents.Forget(env.ID, "the environment was deleted")
	}
	if s.hawser != nil {
		s.hawser.Disconnect(env.ID, "the environment was deleted")
	}
	s.schedulesChanged(c) // its schedules went with it
	return writeJSON(c, http.StatusOK, success)
}

// issueAgentToken generates an edge environment's agent token (rotating the
// previous one, whose connection is closed) and answers the install lines;
// the token is shown this once.
func (s *Server) issueAgentToken(c *gin.Context) error {
	env := envOf(c)
	if s.agents == nil {
		return fault.New(fault.Invalid, "Agents are not available in this server")
	}
	inst, err := s.agents.IssueToken(c.Request.Context(), env, c.Request.Host)
	if err != nil {
		return err
	}
	c.Header("Cache-Control", "no-store")
	return writeJSON(c, http.StatusOK, inst)
}

// agentStatus answers the live state of an agent environment's agent.
func (s *Server) agentStatus(c *gin.Context) error {
	env := envOf(c)
	if env.ConnectionType != engine.AgentEdge && env.ConnectionType != engine.AgentStandard {
		return fault.New(fault.Invalid, "Not an agent environment")
	}
	st := agents.Status{}
	if s.agents != nil {
		st = s.agents.Status(c.Request.Context(), env.ID, env.ConnectionType)
	}
	return writeJSON(c, http.StatusOK, st)
}

// testResult is the answer of a connection test.
type testResult struct {
	Success bool      `json:"success"`
	Info    *testInfo `json:"info,omitempty"`
	Error   string    `json:"error,omitempty"`
}

type testInfo struct {
	ServerVersion string            `json:"serverVersion"`
	APIVersion    string            `json:"apiVersion"`
	Containers    int               `json:"containers"`
	Images        int               `json:"images"`
	Name          string            `json:"name"`
	Agent         *engine.AgentInfo `json:"agent,omitempty"`
}

func (s *Server) testEnvironment(c *gin.Context) error {
	env := envOf(c)
	return writeJSON(c, http.StatusOK, s.test(c.Request.Context(), env))
}

// testNewEnvironment tests connection settings before they are saved.
func (s *Server) testNewEnvironment(c *gin.Context) error {
	var req environmentRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	env := newEnvironment()
	if req.Name == nil {
		env.Name = "test"
	}
	if err := req.apply(&env); err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, s.test(c.Request.Context(), env))
}

func (s *Server) test(ctx context.Context, env store.Environment) testResult {
	agent, info, err := s.engines.TestAgent(ctx, env.Endpoint())
	if err != nil {
		var msg string
		var off *engine.OfflineError
		switch {
		case errors.Is(err, engine.ErrAgentAbsent):
			msg = engine.ErrAgentAbsent.Error()
		case errors.Is(err, engine.ErrUnsupported):
			msg = "Agent connections are not available in this server"
		case errors.As(err, &off) && off.Cause != nil:
			msg = "Cannot connect to the engine: " + off.Cause.Error()
		default:
			msg = engine.Details(err)
		}
		return testResult{Success: false, Error: msg}
	}
	out := testResult{Success: true, Info: &testInfo{ServerVersion: info.ServerVersion, APIVersion: info.APIVersion,
		Containers: info.Containers, Images: info.Images, Name: info.Name}}
	if agent.ID != "" {
		out.Info.Agent = &agent
		if env.ID != 0 && (env.ConnectionType == engine.AgentStandard || env.ConnectionType == engine.HawserStandard) {
			// A standard agent tells its facts when asked; keep them.
			if err := s.store.SetAgentSeen(ctx, env.ID, store.AgentSeen{ID: agent.ID, Name: agent.Name, Version: agent.Version,
				Capabilities: agent.Capabilities, LastSeen: s.now()}); err != nil {
				s.log.Warn("record standard agent", "env", env.ID, "err", err)
			}
		}
	}
	return out
}

// envKey is the context key of the environment a route's selector resolved.
type envKey struct{}

// envOf returns the environment resolved for the request by its route's
// selector (the zero Environment for routes without one).
func envOf(c *gin.Context) store.Environment {
	v, _ := c.Get(envKey{})
	env, _ := v.(store.Environment)
	return env
}

// withEnvironment resolves the route's environment selector and keeps the
// environment on the gin context.
func (s *Server) withEnvironment(c *gin.Context, sel Selector) error {
	var (
		env store.Environment
		err error
	)
	switch sel {
	case NoEnv, AnyEnv:
		return nil
	case EnvQuery:
		env, err = s.environment(c, "env")
	case EnvIDQuery:
		env, err = s.environment(c, "envId")
	case EnvPath:
		env, err = s.pathEnvironment(c)
	}
	if err != nil {
		return err
	}
	c.Set(envKey{}, env)
	return nil
}
