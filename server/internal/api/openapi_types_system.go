package api

import (
	"encoding/json"
	"time"

	"github.com/berth-dev/berth/server/internal/activity"
	"github.com/berth-dev/berth/shared/engine"
)

// systemOps: notifications, Berth's own facts, the host, pruning, batch
// actions, profile and preferences, console settings, activity and this
// document.
var systemOps = map[string]apiOp{
	"GET /api/notifications":              {Summary: "Notification channels (secrets masked)", Response: []notificationJSON{}},
	"POST /api/notifications":             {Summary: "Add a notification channel", Request: notificationRequest{}, Response: notificationJSON{}, Status: 201},
	"POST /api/notifications/test":        {Summary: "Send a test message through an unsaved channel", Request: notificationRequest{}, Response: testSendAnswer{}},
	"GET /api/notifications/trigger-test": {Summary: "The channel types and event types", Response: notificationCatalogueAnswer{}},
	"POST /api/notifications/trigger-test": {Summary: "Emit a test event of a type through the subscribed channels", Request: triggerTestInput{},
		Response: triggerTestAnswer{}},
	"GET /api/notifications/{id}":              {Summary: "A notification channel", Response: notificationJSON{}},
	"PUT /api/notifications/{id}":              {Summary: "Update a notification channel (absent fields kept)", Request: notificationRequest{}, Response: notificationJSON{}},
	"DELETE /api/notifications/{id}":           {Summary: "Delete a notification channel", Response: successAnswer{}},
	"POST /api/notifications/{id}/test":        {Summary: "Send a test message through a channel", Response: testSendAnswer{}},
	"GET /api/environments/{id}/notifications": {Summary: "An environment's channel subscriptions", Response: []subscriptionJSON{}},
	"POST /api/environments/{id}/notifications": {Summary: "Subscribe a channel to an environment's events", Request: subscriptionRequest{},
		Response: subscriptionJSON{}, Status: 201},
	"GET /api/environments/{id}/notifications/{notificationId}": {Summary: "A subscription", Response: subscriptionJSON{}},
	"PUT /api/environments/{id}/notifications/{notificationId}": {Summary: "Update a subscription", Request: subscriptionRequest{},
		Response: subscriptionJSON{}},
	"DELETE /api/environments/{id}/notifications/{notificationId}": {Summary: "Unsubscribe a channel", Response: successAnswer{}},

	"GET /api/system": {Summary: "Berth's own facts: version, database, uptime, counts; with ?env= also that environment's engine (docker, host, stats; docker and host null when it cannot be reached)", Response: systemAnswer{},
		Query: []queryParam{{"env", "integer", "the environment whose engine facts to add (unknown: 404; not a positive integer: 400)"}}},
	"GET /api/health/database":  {Summary: "Ping the database (503 with status error when it is unreachable)", Response: databaseHealthAnswer{}},
	"GET /api/host":             {Summary: "The environment's engine and host", Response: hostAnswer{}},
	"GET /api/system/disk":      {Summary: "The environment's engine disk usage", Response: diskAnswer{}},
	"GET /api/containers/sizes": {Summary: "Every container's writable layer and root file system sizes", Response: []containerSizeJSON{}},
	"POST /api/prune/containers": {Summary: "Remove stopped containers: a job ({jobId}; with Accept: application/json, its result)",
		Request: pruneInput{}, Response: anyOf{jobStartAnswer{}, pruneAnswer{}}, Query: pruneQuery},
	"POST /api/prune/networks": {Summary: "Remove unused networks: a job ({jobId}; with Accept: application/json, its result)",
		Request: pruneInput{}, Response: anyOf{jobStartAnswer{}, pruneAnswer{}}, Query: pruneQuery},
	"POST /api/prune/volumes": {Summary: "Remove unused volumes: a job ({jobId}; with Accept: application/json, its result)",
		Request: pruneInput{}, Response: anyOf{jobStartAnswer{}, pruneAnswer{}}, Query: pruneQuery},
	"POST /api/prune/all": {Summary: "Prune containers, networks, images (and volumes): a job ({jobId}; with Accept: application/json, its result)",
		Request: pruneInput{}, Response: anyOf{jobStartAnswer{}, pruneAllAnswer{}}, Query: pruneQuery},

	"PUT /api/profile":               {Summary: "Update the caller's profile (a new password needs the current one)", Request: profileInput{}, Response: userJSON{}},
	"GET /api/profile/preferences":   {Summary: "The caller's console preferences ({} when none)", Response: jsonObject{}},
	"PUT /api/profile/preferences":   {Summary: "Replace the caller's console preferences", Request: jsonObject{}, Response: jsonObject{}},
	"POST /api/profile/preferences":  {Summary: "Replace the caller's console preferences", Request: jsonObject{}, Response: jsonObject{}},
	"GET /api/dashboard/preferences": {Summary: "The caller's dashboard layout ({} when none)", Response: jsonObject{}},
	"POST /api/dashboard/preferences": {Summary: "Replace the caller's dashboard layout", Request: jsonObject{},
		Response: jsonObject{}},
	"PUT /api/dashboard/preferences": {Summary: "Replace the caller's dashboard layout", Request: jsonObject{}, Response: jsonObject{}},
	"GET /api/settings/general":      {Summary: "The general settings: every key the reference answers (its default until written; keys of behaviour Berth does not have keep the reference's default), and any other key stored", Response: jsonObject{}},
	"POST /api/settings/general":     {Summary: "Write the general settings sent (the others keep their value); a value other than the default of a key Berth does not support is 400", Request: jsonObject{}, Response: jsonObject{}},
	"PUT /api/settings/general":      {Summary: "Write the general settings sent (the others keep their value); a value other than the default of a key Berth does not support is 400", Request: jsonObject{}, Response: jsonObject{}},
	"GET /api/settings/theme":        {Summary: "The console's theme (for the sign-in page too)", Response: themeObject{}},
	"PUT /api/settings/theme":        {Summary: "Set the console's theme", Request: themeObject{}, Response: themeObject{}},
	"POST /api/settings/theme":       {Summary: "Set the console's theme", Request: themeObject{}, Response: themeObject{}},

	"GET /api/activity": {Summary: "Container activity events", Response: activityAnswer{}, Query: activityQuery},
	"GET /api/activity/events": {Summary: "Container activity, live (resumes after Last-Event-ID)", Content: mediaSSE,
		Query: activityQuery},
	"GET /api/activity/stats":      {Summary: "Activity counts by action and by hour (default: the last 24 hours)", Response: activityStatsAnswer{}, Query: activityQuery},
	"GET /api/activity/containers": {Summary: "Containers with activity, with their counts", Response: activityContainersAnswer{}, Query: activityQuery},
	"DELETE /api/activity": {Summary: "Delete activity events (of one environment with env or environmentId)", Response: deletedCountAnswer{},
		Query: []queryParam{{"environmentId", "integer", "a synonym of env"}}},
	"GET /api/activity/settings":      {Summary: "Activity retention", Response: activity.Retention{}},
	"PUT /api/activity/settings":      {Summary: "Change activity retention (absent fields kept)", Request: activity.Retention{}, Response: activity.Retention{}},
	"GET /api/dashboard/stats/stream": {Summary: "Dashboard figures per environment, live (events connected, stats, done)", Content: mediaSSE},

	"GET /api/openapi.json": {Summary: "This document (OpenAPI 3.1)", Response: openAPIDocument{}},
	"GET /api/docs":         {Summary: "The API reference page (HTML)", Content: "text/html", Delegated: true},
}

var pruneQuery = []queryParam{{"label", "string", "only objects with this label (key or key=value; repeatable)"},
	{"volumes", "boolean", "prune/all: volumes too"}}

var activityQuery = []queryParam{{"environmentId", "integer", "a synonym of env"}, {"container", "string", "only this container's (id or name)"}, {"action", "string", "only this action"}, {"type", "string", "only this type"},
	{"since", "string", "from this time (RFC 3339)"}, {"until", "string", "until this time (RFC 3339)"},
	{"limit", "integer", "page size"}, {"offset", "integer", "page start"},
	{"environment_id", "integer", "a synonym of env"}, {"containerId", "string", "only this container's (id or id prefix)"},
	{"containerName", "string", "only this container's (exact name)"}, {"actions", "string", "only these actions (comma-separated)"},
	{"labels", "string", "only environments bearing one of these labels (comma-separated)"},
	{"fromDate", "string", "from this date or time (ISO 8601)"}, {"toDate", "string", "until this date or time, inclusive (ISO 8601)"}}

// jsonObject is a JSON object the console stores and reads back as is.
type jsonObject map[string]json.RawMessage

// themeObject is the theme setting: {"theme": "light"|"dark"|"system"}.
type themeObject struct {
	Theme string `json:"theme"`
}

// testSendAnswer is {success: true} or {success: false, error}.
type testSendAnswer struct {
	Success bool   `json:"success"`
	Error   string `json:"error,omitempty"`
}

type notificationCatalogueAnswer struct {
	Types      []string `json:"types"`
	EventTypes []string `json:"eventTypes"`
}

type triggerTestInput struct {
	EnvironmentID int64  `json:"environmentId"`
	EventType     string `json:"eventType"`
	// Payload replaces the test event's text: {title, message, type?}
	// (type info, success, warning or error marks the title).
	Payload *triggerTestPayload `json:"payload"`
}

// triggerTestPayload is the text of a test event (the reference's payload).
type triggerTestPayload struct {
	Title   string `json:"title"`
	Message string `json:"message"`
	Type    string `json:"type"`
}

type triggerTestAnswer struct {
	Success   bool   `json:"success"`
	EventType string `json:"eventType"`
}

type systemAnswer struct {
	Version         string           `json:"version"`
	GoVersion       string           `json:"goVersion"`
	OS              string           `json:"os"`
	Architecture    string           `json:"architecture"`
	Database        string           `json:"database"`
	StartedAt       time.Time        `json:"startedAt"`
	UptimeSeconds   int64            `json:"uptimeSeconds"`
	Counts          map[string]int64 `json:"counts"`
	Jobs            map[string]int   `json:"jobs"`
	Enterprise      bool             `json:"enterprise"`
	AgentsConnected int              `json:"agentsConnected"`
	EnvironmentID   int64            `json:"environmentId,omitempty"`
	Docker          *systemDocker    `json:"docker"`
	Host            *systemHost      `json:"host"`
	Stats           *systemStats     `json:"stats,omitempty"`
}

// systemDocker, systemHost and systemStats are the reference's facts of
// GET /api/system?env='s engine.
type systemDocker struct {
	Version       string `json:"version"`
	APIVersion    string `json:"apiVersion"`
	OS            string `json:"os"`
	Arch          string `json:"arch"`
	KernelVersion string `json:"kernelVersion"`
	ServerVersion string `json:"serverVersion"`
	Connection    struct {
		Type       string `json:"type"`
		SocketPath string `json:"socketPath"`
		Host       string `json:"host"`
		Port       int    `json:"port"`
	} `json:"connection"`
}

type systemHost struct {
	Name          string `json:"name"`
	CPUs          int    `json:"cpus"`
	Memory        int64  `json:"memory"`
	StorageDriver string `json:"storageDriver"`
}

type systemStats struct {
	Containers struct {
		Total   int `json:"total"`
		Running int `json:"running"`
		Stopped int `json:"stopped"`
	} `json:"containers"`
	Images   int `json:"images"`
	Volumes  int `json:"volumes"`
	Networks int `json:"networks"`
}

type databaseHealthAnswer struct {
	Dialect   string  `json:"dialect"`
	LatencyMs float64 `json:"latencyMs"`
	Status    string  `json:"status"` // ok or error
	Healthy   bool    `json:"healthy"`
	Error     string  `json:"error,omitempty"`
}

// hostAnswer is the engine's host facts, some under two names.
type hostAnswer struct {
	EnvironmentID     int64  `json:"environmentId"`
	Environment       string `json:"environment"`
	Name              string `json:"name"`
	Hostname          string `json:"hostname"`
	OS                string `json:"os"`
	KernelVersion     string `json:"kernelVersion"`
	Architecture      string `json:"architecture"`
	CPUs              int    `json:"cpus"`
	MemTotal          int64  `json:"memTotal"`
	MemoryTotal       int64  `json:"memoryTotal"`
	DockerVersion     string `json:"dockerVersion"`
	ServerVersion     string `json:"serverVersion"`
	APIVersion        string `json:"apiVersion"`
	Containers        int    `json:"containers"`
	ContainersRunning int    `json:"containersRunning"`
	ContainersPaused  int    `json:"containersPaused"`
	ContainersStopped int    `json:"containersStopped"`
	Images            int    `json:"images"`
	CgroupVersion     string `json:"cgroupVersion"`
	OSType            string `json:"osType"`
	StorageDriver     string `json:"storageDriver"`
	DockerRootDir     string `json:"dockerRootDir"`
	SystemTime        string `json:"systemTime"`
	LoggingDriver     string `json:"loggingDriver"`
	CgroupDriver      string `json:"cgroupDriver"`
}

type diskAnswer struct {
	engine.DiskUsage
	TotalSize int64 `json:"totalSize"`
}

// containerSizeJSON is a container's sizes (under the engine's names and
// in camel case).
type containerSizeJSON struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	SizeRw      int64  `json:"SizeRw"`
	SizeRootFs  int64  `json:"SizeRootFs"`
	SizeRwC     int64  `json:"sizeRw"`
	SizeRootFsC int64  `json:"sizeRootFs"`
}

type pruneInput struct {
	Labels  []string `json:"labels"`
	Volumes bool     `json:"volumes"`
}

// pruneAnswer is a prune's result (or, as a job's, {success: false,
// status: error, error, details}).
type pruneAnswer struct {
	Success        bool     `json:"success"`
	Deleted        []string `json:"deleted,omitempty"`
	SpaceReclaimed uint64   `json:"spaceReclaimed,omitempty"`
	Status         string   `json:"status,omitempty"`
	Error          string   `json:"error,omitempty"`
	Details        any      `json:"details,omitempty"`
}

type pruneAllAnswer struct {
	Success        bool           `json:"success"`
	Containers     *engine.Pruned `json:"containers,omitempty"`
	Networks       *engine.Pruned `json:"networks,omitempty"`
	Images         *engine.Pruned `json:"images,omitempty"`
	Volumes        *engine.Pruned `json:"volumes,omitempty"`
	SpaceReclaimed uint64         `json:"spaceReclaimed,omitempty"`
	Status         string         `json:"status,omitempty"`
	Error          string         `json:"error,omitempty"`
	Details        any            `json:"details,omitempty"`
}

type profileInput struct {
	DisplayName     *string `json:"displayName"`
	Email           *string `json:"email"`
	CurrentPassword string  `json:"currentPassword"`
	NewPassword     *string `json:"newPassword"`
}

type activityAnswer struct {
	Events []activityJSON `json:"events"`
	Total  int64          `json:"total"`
	Limit  int            `json:"limit"`
	Offset int            `json:"offset"`
}

type activityStatsAnswer struct {
	Total    int64  `json:"total"`
	Since    string `json:"since"`
	Until    string `json:"until"`
	ByAction []struct {
		Action string `json:"action"`
		Count  int64  `json:"count"`
	} `json:"byAction"`
	ByHour []struct {
		Hour  string `json:"hour"`
		Count int64  `json:"count"`
	} `json:"byHour"`
}

type activityContainersAnswer struct {
	Containers []activityContainerJSON `json:"containers"`
}

// openAPIDocument is this document's outline.
type openAPIDocument struct {
	OpenAPI    string                               `json:"openapi"`
	Info       map[string]any                       `json:"info"`
	Paths      map[string]map[string]map[string]any `json:"paths"`
	Components map[string]any                       `json:"components"`
}
