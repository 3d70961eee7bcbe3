package api

import (
	"encoding/json"

	"github.com/berth-dev/berth/server/internal/autoupdate"
	"github.com/berth-dev/berth/server/internal/changelog"
	"github.com/berth-dev/berth/server/internal/templates"
)

// inventoryOps: templates, config sets, labels, update checks and batch
// updates, engine socket detection, pictures, favourites and grids, the
// changelog and the dependencies, the registry test and the audit's users.
var inventoryOps = map[string]apiOp{
	"GET /api/templates": {Summary: "The template catalogue", Response: []templates.Template{}, Query: []queryParam{
		{"category", "string", "only this category"}, {"q", "string", "search words"},
		{"type", "integer", "1 (container), 2 (swarm stack) or 3 (compose stack)"}, {"refresh", "boolean", "fetch the sources again"}}},
	"POST /api/templates/compose": {Summary: "The compose file of a template (generated, inline, or fetched from its repository); deploys nothing",
		Request: templateComposeRequest{}, Response: templateComposeAnswer{}},
	"POST /api/templates/deploy": {Summary: "Deploy a template as a stack: its job's events, ending with the result", Request: deployTemplateRequest{},
		Content: mediaSSE, AlsoJSON: true, Response: templateDeployResult{}, Header: "X-Job-Id"},
	"GET /api/templates/{id}/logo": {Summary: "A template's logo, served by Berth (404: none; an image of its own type)", Content: "image/*", Delegated: true},
	"GET /api/templates/sources":   {Summary: "Template sources", Response: []templateSourceJSON{}},
	"POST /api/templates/sources":  {Summary: "Add a template source", Request: templateSourceRequest{}, Response: templateSourceJSON{}, Status: 201},
	"PUT /api/templates/sources": {Summary: "Update a template source (id in the body or the query)", Request: templateSourceRequest{},
		Response: templateSourceJSON{}, Query: []queryParam{{"id", "integer", "the source (instead of the body's)"}}},
	"DELETE /api/templates/sources": {Summary: "Delete a template source (id in the query or the body)", Request: templateSourceRequest{},
		Response: successAnswer{}, Query: []queryParam{{"id", "integer", "the source (instead of the body's)"}}},
	"GET /api/config-sets":         {Summary: "Config sets (presets for new containers)", Response: []configSetJSON{}},
	"POST /api/config-sets":        {Summary: "Add a config set", Request: configSetRequest{}, Response: configSetJSON{}, Status: 201},
	"GET /api/config-sets/{id}":    {Summary: "A config set", Response: configSetJSON{}},
	"PUT /api/config-sets/{id}":    {Summary: "Update a config set", Request: configSetRequest{}, Response: configSetJSON{}},
	"DELETE /api/config-sets/{id}": {Summary: "Delete a config set", Response: successAnswer{}},
	"GET /api/labels":              {Summary: "Environment labels with the environments carrying them, and their colours", Response: labelsAnswer{}},
	"POST /api/labels":             {Summary: "Change environment labels in bulk (action add, rename, delete or set-color); without an action, define a label {name, color} (201)", Request: labelRequest{}, Response: labelsChanged{}},

	"POST /api/containers/check-updates": {Summary: "Check the environment's containers for newer images: a job ({jobId}; with Accept: application/json, its result)",
		Response: anyOf{jobStartAnswer{}, checkUpdatesResult{}}},
	"POST /api/containers/batch-update": {Summary: "Update several containers to their newest images: a job ({jobId}; with Accept: application/json, its result)",
		Request: batchUpdateRequest{}, Response: anyOf{jobStartAnswer{}, batchUpdateResult{}}},
	"POST /api/containers/batch-update-stream": {Summary: "Update several containers: the job's events (start, log, result), ending with the result",
		Request: batchUpdateRequest{}, Content: mediaSSE, AlsoJSON: true, Response: batchUpdateResult{}, Header: "X-Job-Id"},
	"GET /api/environments/detect-socket": {Summary: "The usual engine sockets of Berth's host: which exist and answer", Response: detectSocketAnswer{}},

	"GET /api/environments/{id}/icon": {Summary: "An environment's icon (an image of its own type)", Content: "image/*", Delegated: true},
	"POST /api/environments/{id}/icon": {Summary: "Set an environment's icon (a multipart file, JSON {icon: data URL}, or the image's bytes)",
		Request: pictureInput{}, RequestContent: pictureMedia, Response: pictureSavedAnswer{}},
	"DELETE /api/environments/{id}/icon": {Summary: "Remove an environment's icon", Response: successAnswer{}},
	"GET /api/profile/avatar":            {Summary: "The caller's avatar (an image of its own type)", Content: "image/*", Delegated: true},
	"POST /api/profile/avatar": {Summary: "Set the caller's avatar (a multipart file, JSON {avatar: data URL}, or the image's bytes)",
		Request: pictureInput{}, RequestContent: pictureMedia, Response: pictureSavedAnswer{}},
	"DELETE /api/profile/avatar": {Summary: "Remove the caller's avatar", Response: successAnswer{}},

	"GET /api/preferences/favorites": {Summary: "The caller's favourite containers of an environment", Response: favoritesAnswer{}, Query: prefsEnvQuery},
	"POST /api/preferences/favorites": {Summary: "Add, remove or replace favourite containers", Request: favoritesInput{},
		Response: favoritesAnswer{}, Query: prefsEnvQuery},
	"GET /api/preferences/favorite-groups":  {Summary: "The caller's groups of favourite containers", Response: favoriteGroupsAnswer{}, Query: prefsEnvQuery},
	"POST /api/preferences/favorite-groups": {Summary: "Add, rename, delete or replace favourite groups", Request: favoriteGroupsInput{}, Response: favoriteGroupsAnswer{}, Query: prefsEnvQuery},
	"GET /api/preferences/grid":             {Summary: "The caller's table column layouts, by grid", Response: gridAnswer{}},
	"POST /api/preferences/grid":            {Summary: "Save a grid's column layout", Request: gridInput{}, Response: gridAnswer{}},
	"DELETE /api/preferences/grid": {Summary: "Forget a grid's column layout (all without gridId)", Response: gridAnswer{},
		Query: []queryParam{{"gridId", "string", "the grid (absent: all)"}}},
	"GET /api/changelog":    {Summary: "Berth's changelog", Response: []changelog.Entry{}},
	"GET /api/dependencies": {Summary: "The Go modules Berth is built from", Response: dependenciesAnswer{}},

	"POST /api/registries/test": {Summary: "Test a saved registry ({registryId}, alias {id}; the fields sent override the saved ones, its password only for its own host) or unsaved settings: {success, connectivity, authenticated, message} (always 200; error on a failure)",
		Request: registryTestInput{}, Response: registryTestAnswer{}},
	"GET /api/audit/users": {Summary: "The user names found in the audit log", Response: []string{}},
}

var prefsEnvQuery = []queryParam{{"env", "integer", "the environment (default 1; the body's environmentId wins)"}}

// pictureMedia are the forms a picture may be sent in.
const pictureMedia = "application/json, multipart/form-data, image/*"

// templateDeployResult is a template deploy's final payload: the stack's
// up result, with the stack, environment and template.
type templateDeployResult struct {
	stackUpResult
	Name          string `json:"name,omitempty"`
	EnvironmentID int64  `json:"environmentId,omitempty"`
	TemplateID    string `json:"templateId,omitempty"`
}

// checkUpdatesResult is an update check's final payload.
type checkUpdatesResult struct {
	Success        bool          `json:"success"`
	Status         string        `json:"status"` // complete or error
	PendingUpdates []pendingJSON `json:"pendingUpdates,omitempty"`
	Count          int           `json:"count,omitempty"`
	NotChecked     any           `json:"notChecked,omitempty"`
	Error          string        `json:"error,omitempty"`
	Details        any           `json:"details,omitempty"`
}

type batchUpdateResult struct {
	Success bool                     `json:"success"`
	Results []autoupdate.BatchResult `json:"results"`
	Summary autoupdate.BatchSummary  `json:"summary"`
}

type detectSocketAnswer struct {
	Sockets     []detectedSocket `json:"sockets"`
	Recommended string           `json:"recommended"`
}

// pictureInput is a picture as JSON: a data URL (or base64) under one of
// the names pictureFields lists.
type pictureInput struct {
	Icon    string `json:"icon"`
	Avatar  string `json:"avatar"`
	Image   string `json:"image"`
	Data    string `json:"data"`
	DataURL string `json:"dataUrl"`
	File    string `json:"file"`
}

type pictureSavedAnswer struct {
	Success     bool   `json:"success"`
	ContentType string `json:"contentType"`
	Size        int    `json:"size"`
	URL         string `json:"url"`
}

type favoritesAnswer struct {
	Success   bool     `json:"success,omitempty"`
	Favorites []string `json:"favorites"`
}

type favoritesInput struct {
	EnvironmentID *int64   `json:"environmentId"`
	Action        string   `json:"action"` // add, remove or set
	ContainerName string   `json:"containerName"`
	Favorites     []string `json:"favorites"`
}

type favoriteGroupsAnswer struct {
	Success bool            `json:"success,omitempty"`
	Groups  []favoriteGroup `json:"groups"`
}

type favoriteGroupsInput struct {
	EnvironmentID *int64          `json:"environmentId"`
	Action        string          `json:"action"`
	Name          string          `json:"name"`
	NewName       string          `json:"newName"`
	Containers    []string        `json:"containers"`
	Groups        []favoriteGroup `json:"groups"`
}

type gridAnswer struct {
	Success     bool                       `json:"success,omitempty"`
	Preferences map[string]json.RawMessage `json:"preferences"`
}

type gridInput struct {
	GridID  string          `json:"gridId"`
	Columns json.RawMessage `json:"columns"`
}

type dependenciesAnswer struct {
	GoVersion    string           `json:"goVersion"`
	Main         string           `json:"main"`
	Dependencies []dependencyJSON `json:"dependencies"`
}

type registryTestInput struct {
	registryRequest
	RegistryID int64 `json:"registryId"` // the reference's name
	ID         int64 `json:"id"`         // Berth's (the console's)
}
