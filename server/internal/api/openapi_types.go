package api

import (
	"time"

	"github.com/berth-dev/berth/server/internal/agents"
	"github.com/berth-dev/berth/server/internal/auth"
	"github.com/berth-dev/berth/server/internal/containers"
	"github.com/berth-dev/berth/server/internal/dashboard"
	"github.com/berth-dev/berth/server/internal/jobs"
	"github.com/berth-dev/berth/server/internal/stacks"
	"github.com/berth-dev/berth/server/internal/volumes"
	"github.com/berth-dev/berth/shared/engine"
)

// apiOps are the body types of routes, by "METHOD /path" as in the route
// table (a key the table lacks fails TestOpenAPIRegistryNamesRealRoutes),
// gathered from the groups of the openapi_types*.go files. A route missing
// here is still described, with a generic JSON answer, and fails
// TestOpenAPIEveryRouteIsTyped, which also compares each entry with what its
// handler's source does (body, query parameters, media types).
//
// The types are the ones the handlers bind and encode. Where a handler
// answers an ad hoc map (or binds an anonymous struct), the *Answer and
// *Input structs spell out its shape; the live validation test
// (openapi_live_test.go) checks a sample of them against real answers.
var apiOps = mergeOps(opGroups...)

// opGroups are the registry's parts, one per area; a route is in one.
var opGroups = []map[string]apiOp{coreOps, authOps, workloadOps, systemOps, contentOps, helperOps, inventoryOps, envSecurityOps, outboundOps,
	navigationOps, aboutOps, hostFilesOps,
	registryBrowserOps,
	containersOps,
	scannerCacheOps,
	imageScanOps,
	scannerOps,
	jobsOps,
	selfUpdateOps,
	hawserOps,
	remoteStacksOps,
	backupDestinationOps,
	backupConfigOps}

// mergeOps joins groups (a key in two is a mistake that
// TestOpenAPIOpGroupsDoNotOverlap reports; the later one wins).
func mergeOps(groups ...map[string]apiOp) map[string]apiOp {
	out := map[string]apiOp{}
	for _, g := range groups {
		for k, op := range g {
			out[k] = op
		}
	}
	return out
}

// coreOps: health, sign-in, users and roles, environments, containers,
// images, stacks, volumes, networks, schedules, audit.
var coreOps = map[string]apiOp{
	"GET /api/health": {Summary: "Health check", Response: healthAnswer{}},

	// Sign-in and API tokens.
	"POST /api/auth/login":         {Summary: "Sign in (sets the session cookie)", Request: loginInput{}, Response: loginAnswer{}},
	"POST /api/auth/logout":        {Summary: "Sign out", Response: successAnswer{}},
	"GET /api/auth/session":        {Summary: "The caller's session", Response: sessionAnswer{}},
	"GET /api/auth/providers":      {Summary: "Sign-in choices", Response: providersAnswer{}},
	"GET /api/auth/tokens":         {Summary: "API tokens (the caller's; all=true: everyone's, for admins)", Response: []tokenJSON{}, Query: []queryParam{{"all", "boolean", "every user's tokens (admins)"}}},
	"POST /api/auth/tokens":        {Summary: "Create an API token (its secret is shown once)", Request: tokenInput{}, Response: createdTokenAnswer{}, Status: 201},
	"DELETE /api/auth/tokens/{id}": {Summary: "Revoke an API token", Response: successAnswer{}},

	"GET /api/auth/settings": {Summary: "Authentication settings", Response: auth.Settings{}},
	"PUT /api/auth/settings": {Summary: "Change authentication settings", Request: auth.SettingsPatch{}, Response: auth.Settings{}},

	"GET /api/profile": {Summary: "The caller's profile", Response: userJSON{}},

	// Registries, git and auto-update.
	"GET /api/registries":            {Summary: "List registries", Response: []registryJSON{}},
	"POST /api/registries":           {Summary: "Add a registry", Request: registryRequest{}, Response: registryJSON{}, Status: 201},
	"GET /api/registries/{id}":       {Summary: "Get a registry", Response: registryJSON{}},
	"PUT /api/registries/{id}":       {Summary: "Update a registry", Request: registryRequest{}, Response: registryJSON{}},
	"DELETE /api/registries/{id}":    {Summary: "Delete a registry", Response: successAnswer{}},
	"GET /api/git/credentials":       {Summary: "List git credentials", Response: []gitCredentialJSON{}},
	"GET /api/git/credentials/{id}":  {Summary: "Get a git credential", Response: gitCredentialJSON{}},
	"GET /api/git/repositories":      {Summary: "List git repositories", Response: []gitRepositoryJSON{}},
	"GET /api/git/repositories/{id}": {Summary: "Get a git repository", Response: gitRepositoryJSON{}},
	"GET /api/git/stacks": {Summary: "List git stacks (?env=: one environment's)", Response: []gitStackJSON{},
		Query: []queryParam{{"env", "integer", "only this environment's git stacks"}}},
	"GET /api/git/stacks/{id}": {Summary: "Get a git stack", Response: gitStackJSON{}},
	"GET /api/auto-update":     {Summary: "Auto-update settings by container name", Response: map[string]autoUpdateSettings{}},

	// Users and roles.
	"GET /api/users":      {Summary: "List users", Response: []userJSON{}},
	"GET /api/users/{id}": {Summary: "Get a user", Response: userJSON{}},
	"DELETE /api/users/{id}": {Summary: "Delete a user; the last active admin is 409 unless ?confirmDisableAuth=true, which turns authentication off", Response: deleteUserAnswer{},
		Query: []queryParam{{"confirmDisableAuth", "boolean", "true: delete the last active admin and turn authentication off"}}},
	"GET /api/users/{id}/roles":  {Summary: "A user's role assignments", Response: []assignmentJSON{}},
	"POST /api/users/{id}/roles": {Summary: "Assign a role", Request: assignmentRequest{}, Response: assignmentJSON{}, Status: 201},
	"GET /api/roles":             {Summary: "List roles", Response: []roleJSON{}},
	"POST /api/roles":            {Summary: "Create a role", Request: roleRequest{}, Response: roleJSON{}, Status: 201},
	"GET /api/roles/{id}":        {Summary: "Get a role", Response: roleJSON{}},
	"PUT /api/roles/{id}":        {Summary: "Update a role", Request: roleRequest{}, Response: roleJSON{}},
	"DELETE /api/roles/{id}":     {Summary: "Delete a role", Response: successAnswer{}},

	// Environments.
	"GET /api/environments":                   {Summary: "List environments", Response: []environmentJSON{}},
	"POST /api/environments":                  {Summary: "Create an environment", Request: environmentRequest{}, Response: environmentJSON{}, Status: 201},
	"POST /api/environments/test":             {Summary: "Test a connection before saving it", Request: environmentRequest{}, Response: testResult{}},
	"GET /api/environments/{id}":              {Summary: "Get an environment", Response: environmentJSON{}},
	"PUT /api/environments/{id}":              {Summary: "Update an environment", Request: environmentRequest{}, Response: environmentJSON{}},
	"DELETE /api/environments/{id}":           {Summary: "Delete an environment", Response: successAnswer{}},
	"POST /api/environments/{id}/test":        {Summary: "Test an environment's connection", Response: testResult{}},
	"POST /api/environments/{id}/agent-token": {Summary: "Issue an agent token (and its install lines)", Response: agents.Install{}},
	"GET /api/environments/{id}/agent-status": {Summary: "An agent environment's connection", Response: agents.Status{}},
	"GET /api/environments/{id}/status": {Summary: "Whether the environment's engine can be used now: online, offline (with the reason) or busy; when it last answered",
		Response: envStatusAnswer{}},

	"GET /api/dashboard/stats": {Summary: "Dashboard figures per environment", Response: []dashboard.Stats{}},

	// Containers.
	"GET /api/containers": {Summary: "List containers", Response: []engine.Container{},
		Query: []queryParam{{"all", "boolean", "include stopped containers (default true; false: running ones only)"}}},
	"POST /api/containers": {Summary: "Create a container", Request: createContainerRequest{}, Response: idAnswer{}},
	"GET /api/containers/stats/stream": {Summary: "Every container's stats, live", Content: mediaSSE,
		Query: []queryParam{{"ids", "string", "only these containers (ids, comma separated; a list shows the stats of the rows on screen)"}}},
	"DELETE /api/containers/{id}":       {Summary: "Remove a container", Response: successAnswer{}, Query: []queryParam{{"force", "boolean", "remove even when running"}}},
	"POST /api/containers/{id}/start":   {Summary: "Start a container", Response: successAnswer{}},
	"POST /api/containers/{id}/stop":    {Summary: "Stop a container", Response: successAnswer{}},
	"POST /api/containers/{id}/restart": {Summary: "Restart a container", Response: successAnswer{}},
	"POST /api/containers/{id}/pause":   {Summary: "Pause a container", Response: successAnswer{}},
	"POST /api/containers/{id}/unpause": {Summary: "Unpause a container", Response: successAnswer{}},
	"POST /api/containers/{id}/rename":  {Summary: "Rename a container", Request: nameInput{}, Response: successAnswer{}},
	"POST /api/containers/{id}/kill": {Summary: "Send a signal to a running container (default SIGKILL); 409 when it is not running",
		Request: killInput{}, Response: successAnswer{}},
	"GET /api/containers/{id}/stats":           {Summary: "A container's stats", Response: containers.TimedSnapshot{}},
	"GET /api/containers/{id}/top":             {Summary: "A container's processes", Response: engine.Processes{}},
	"GET /api/containers/exec/{execId}/attach": {Summary: "Attach a terminal to an exec instance", Content: mediaWebSocket},

	// Images.
	"GET /api/images":              {Summary: "List images", Response: []engine.Image{}},
	"GET /api/images/{id}/history": {Summary: "An image's layers", Response: []engine.HistoryItem{}},
	"GET /api/jobs/{jobId}":        {Summary: "A job: its snapshot, or its events with Accept: text/event-stream", Content: mediaSSE, AlsoJSON: true, Response: jobs.Snapshot{}},

	// Stacks.
	"GET /api/stacks":                {Summary: "List an environment's stacks (none without env)", Response: []stacks.Entry{}},
	"GET /api/stacks/{name}/compose": {Summary: "A stack's compose file", Response: stacks.ComposeFile{}},
	"GET /api/stacks/{name}/env/raw": {Summary: "A stack's .env file", Response: contentBody{}},

	// Volumes and networks.
	"GET /api/volumes":                   {Summary: "List volumes", Response: []volumes.Volume{}},
	"POST /api/volumes":                  {Summary: "Create a volume", Request: createVolumeRequest{}, Response: nameAnswer{}},
	"GET /api/volumes/{name}":            {Summary: "Inspect a volume", Response: volumes.Volume{}},
	"GET /api/volumes/{name}/inspect":    {Summary: "Inspect a volume", Response: volumes.Volume{}},
	"GET /api/networks":                  {Summary: "List networks", Response: []engine.Network{}},
	"POST /api/networks":                 {Summary: "Create a network", Request: createNetworkRequest{}, Response: idAnswer{}},
	"DELETE /api/networks/{id}":          {Summary: "Remove a network", Response: successAnswer{}},
	"POST /api/networks/{id}/connect":    {Summary: "Connect a container", Request: networkContainerRequest{}, Response: successAnswer{}},
	"POST /api/networks/{id}/disconnect": {Summary: "Disconnect a container", Request: networkContainerRequest{}, Response: successAnswer{}},

	"GET /api/events": {Summary: "The engine's events, live", Content: mediaSSE},

	// Schedules.
	"GET /api/schedules":                     {Summary: "Every schedule the caller may see", Response: schedulesAnswer{}},
	"GET /api/schedules/executions/{id}":     {Summary: "One execution", Response: executionJSON{}},
	"DELETE /api/schedules/executions/{id}":  {Summary: "Delete an execution", Response: successAnswer{}},
	"POST /api/schedules/{type}/{id}/toggle": {Summary: "Enable or disable a schedule", Response: toggleAnswer{}},
	"POST /api/schedules/system/{id}/toggle": {Summary: "Enable or disable a system schedule", Response: toggleAnswer{}},

	// Git, audit and system streams.

	// This document and its viewer.
}

// The shapes of ad hoc answers and of bodies bound into anonymous structs.

type healthAnswer struct {
	Status    string    `json:"status"`
	Timestamp time.Time `json:"timestamp"`
}

type successAnswer struct {
	Success bool `json:"success"`
}

type idAnswer struct {
	Success bool   `json:"success"`
	ID      string `json:"id"`
}

type nameAnswer struct {
	Success bool   `json:"success"`
	Name    string `json:"name"`
}

type toggleAnswer struct {
	Success bool `json:"success"`
	Enabled bool `json:"enabled"`
}

// killInput is the signal a kill sends: a name (SIGTERM or TERM) or a
// number from 1 to 64; absent or empty is SIGKILL.
type killInput struct {
	Signal string `json:"signal,omitempty"`
}

type nameInput struct {
	Name string `json:"name"`
}

type contentBody struct {
	Content string `json:"content"`
}

type logsAnswer struct {
	Logs string `json:"logs"`
}

type loginInput struct {
	Username string `json:"username"`
	Password string `json:"password"`
	Provider string `json:"provider"`
	MFAToken string `json:"mfaToken"`
}

// loginAnswer is {success, user}, or {requiresMfa: true} when a second
// factor is needed.
type loginAnswer struct {
	Success     bool         `json:"success,omitempty"`
	User        *sessionUser `json:"user,omitempty"`
	RequiresMFA bool         `json:"requiresMfa,omitempty"`
}

type providersAnswer struct {
	Providers       []provider `json:"providers"`
	DefaultProvider string     `json:"defaultProvider"`
}

type sessionAnswer struct {
	Authenticated bool         `json:"authenticated"`
	AuthEnabled   bool         `json:"authEnabled"`
	SetupRequired *bool        `json:"setupRequired,omitempty"`
	User          *sessionUser `json:"user,omitempty"`
}

type tokenInput struct {
	Name      string     `json:"name"`
	ExpiresAt *time.Time `json:"expiresAt"`
	Password  string     `json:"password"`
}

type createdTokenAnswer struct {
	tokenJSON
	Token string `json:"token"`
}

type pullInput struct {
	Image         string `json:"image"`
	ScanAfterPull *bool  `json:"scanAfterPull"`
}

type pushInput struct {
	ImageID    string `json:"imageId"`
	RegistryID int64  `json:"registryId"`
	ImageName  string `json:"imageName"`
	NewTag     string `json:"newTag"`
}

type schedulesAnswer struct {
	Schedules []scheduleJSON `json:"schedules"`
}

type executionsAnswer struct {
	Executions []executionJSON `json:"executions"`
	Total      int64           `json:"total"`
	Limit      int             `json:"limit"`
	Offset     int             `json:"offset"`
}

type auditAnswer struct {
	Entries []auditJSON `json:"entries"`
	Total   int64       `json:"total"`
	Limit   int         `json:"limit"`
	Offset  int         `json:"offset"`
}
