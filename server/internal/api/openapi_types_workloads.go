package api

import (
	"github.com/berth-dev/berth/server/internal/containers"
	"github.com/berth-dev/berth/server/internal/scan"
	"github.com/berth-dev/berth/server/internal/stacks"
	"github.com/berth-dev/berth/shared/engine"
)

// workloadOps: what coreOps left untyped of containers, images, stacks, git
// stacks, schedules, auto-update and the audit log.
var workloadOps = map[string]apiOp{
	"GET /api/containers/{id}":         {Summary: "Inspect a container (the engine's inspect document)", Response: containerInspectDoc{}},
	"GET /api/containers/{id}/inspect": {Summary: "Inspect a container (the engine's inspect document)", Response: containerInspectDoc{}},
	"GET /api/containers/stats": {Summary: "Every running container's stats, once (with debug=<container>: that one's sample, raw and computed)",
		Response: anyOf{[]containers.Stat{}, containers.StatsDebug{}},
		Query:    []queryParam{{"debug", "string", "a running container's id or name: its sample as the engine reported it and as computed"}}},
	"GET /api/containers/pending-updates": {Summary: "Updates found by the last checks, not applied yet", Response: pendingUpdatesAnswer{}},
	"DELETE /api/containers/pending-updates": {Summary: "Dismiss one container's pending update (?containerName= or ?containerId=) or all of the environment's", Response: deletedCountAnswer{},
		Query: []queryParam{{"containerName", "string", "only this container's (absent, and no containerId: all)"},
			{"containerId", "string", "only the pending update of the container with this id (or id prefix of 12+ characters)"}}},
	"GET /api/containers/{id}/logs": {Summary: "A container's recent logs", Response: logsAnswer{}, Query: logQuery},
	"GET /api/containers/{id}/logs/stream": {Summary: "A container's logs, live (events connected, log {text, stream}, error, end)", Content: mediaSSE,
		Query: logQuery},
	"POST /api/containers/{id}/exec": {Summary: "Create an exec instance (then attach to it)", Request: execInput{}, Response: containers.ExecInstance{}},
	"POST /api/containers/exec/{execId}/resize": {Summary: "Resize an exec instance's terminal", Response: successAnswer{},
		Query: []queryParam{{"h", "integer", "rows"}, {"w", "integer", "columns"}}},

	"POST /api/images/pull": {Summary: "Pull an image: a job ({jobId}; with Accept: application/json, its result)", Request: pullInput{},
		Response: anyOf{jobStartAnswer{}, transferResult{}}},
	"POST /api/images/push": {Summary: "Push an image to a registry: a job ({jobId}; with Accept: application/json, its result)", Request: pushInput{},
		Response: anyOf{jobStartAnswer{}, transferResult{}}},
	"POST /api/images/scan": {Summary: "Scan an image for vulnerabilities: a job ({jobId}; with Accept: application/json, its result). A scanner that cannot run is refused (400, saying why) before the job starts", Request: scanInput{},
		Response: anyOf{jobStartAnswer{}, scanJobResult{}}},
	"GET /api/images/scan": {Summary: "The newest stored scan of an image ({found: false} when none)", Response: scanResultAnswer{},
		Query: []queryParam{{"image", "string", "the image's name"}, {"scanner", "string", "grype or trivy (absent: any)"}}},
	"GET /api/settings/scanner": {Summary: "The environment's vulnerability scanner and the scanners available", Response: scannerAnswer{},
		Query: []queryParam{{"settingsOnly", "boolean", "true: the setting only, without the scanners' availability"}}},
	"POST /api/settings/scanner": {Summary: "Choose the environment's vulnerability scanner", Request: scannerInput{}, Response: scannerAnswer{}},
	"GET /api/images/{id}":       {Summary: "Inspect an image (the engine's inspect document)", Response: imageInspectDoc{}},
	"DELETE /api/images/{id}": {Summary: "Remove an image", Response: removedImagesAnswer{},
		Query: []queryParam{{"force", "boolean", "remove even when in use or tagged more than once"}}},
	"POST /api/images/{id}/tag": {Summary: "Tag an image", Request: tagInput{}, Response: tagAnswer{}},
	"POST /api/prune/images": {Summary: "Remove dangling images (?dangling=false, ?all=true or {dangling: false}: every unused image): a job ({jobId}; its result event is the answer), or with Accept: application/json the answer", Request: pruneImagesInput{},
		Response: pruneImagesAnswer{}, Query: []queryParam{{"dangling", "boolean", "false: every unused image, not only dangling ones (the default is dangling only)"},
			{"all", "boolean", "true: every unused image (Berth's alias of dangling=false)"}}},

	"POST /api/stacks": {Summary: "Create (and start) a stack: its job's events, ending with the result", Request: createStackRequest{},
		Content: mediaSSE, AlsoJSON: true, Response: stackUpResult{}, Header: "X-Job-Id"},
	"PUT /api/stacks/{name}/compose": {Summary: "Save a stack's compose file (restart: recreate it, as its job's events)", Request: updateStackRequest{},
		Content: mediaSSE, AlsoJSON: true, Response: anyOf{successAnswer{}, stackUpResult{}}, Header: "X-Job-Id"},
	"POST /api/stacks/{name}/deploy": {Summary: "Deploy a stack: its job's events, ending with the result", Request: stackDeployRequest{}, Content: mediaSSE, AlsoJSON: true,
		Response: stackUpResult{}, Header: "X-Job-Id"},
	"POST /api/stacks/{name}/start": {Summary: "Start a stack", Response: stackActionAnswer{}},
	"POST /api/stacks/{name}/stop":  {Summary: "Stop a stack", Response: stackActionAnswer{}},
	"POST /api/stacks/{name}/restart": {Summary: "Restart a stack (mode=recreate: recreate its containers)", Response: stackActionAnswer{},
		Query: []queryParam{{"mode", "string", `"restart" (the default) or "recreate"`}}},
	"POST /api/stacks/{name}/down": {Summary: "Take a stack down (removeVolumes: its named volumes too)", Request: stackDownRequest{}, Response: stackActionAnswer{}},
	"DELETE /api/stacks/{name}": {Summary: "Delete a stack", Response: successAnswer{},
		Query: []queryParam{{"force", "boolean", "delete even when running"},
			{"volumes", "boolean", "remove its named volumes too (default: the value of force)"},
			{"files", "boolean", "false keeps its compose and env files on disk (default true)"}}},
	"GET /api/stacks/{name}/env":     {Summary: "A stack's variables (secrets masked)", Response: stackVariables{}},
	"PUT /api/stacks/{name}/env":     {Summary: "Save a stack's variables", Request: stackVariables{}, Response: countAnswer{}},
	"PUT /api/stacks/{name}/env/raw": {Summary: "Save a stack's .env file", Request: contentBody{}, Response: successAnswer{}},
	"POST /api/stacks/scan": {Summary: "Compose projects on the engine that Berth does not manage (with path: those whose compose files are under that directory)",
		Request: scanStacksRequest{}, Response: scanStacksAnswer{}},
	"POST /api/stacks/adopt": {Summary: "Adopt discovered compose projects as stacks ({stacks: [...]}: per stack; {name}: one)", Request: adoptInput{},
		Response: anyOf{adoptListAnswer{}, adoptAnswer{}}},

	"POST /api/git/credentials":         {Summary: "Add a git credential", Request: gitCredentialInput{}, Response: gitCredentialJSON{}, Status: 201},
	"PUT /api/git/credentials/{id}":     {Summary: "Update a git credential", Request: gitCredentialInput{}, Response: gitCredentialJSON{}},
	"DELETE /api/git/credentials/{id}":  {Summary: "Delete a git credential", Response: successAnswer{}},
	"POST /api/git/repositories":        {Summary: "Add a git repository", Request: gitRepositoryInput{}, Response: gitRepositoryJSON{}, Status: 201},
	"PUT /api/git/repositories/{id}":    {Summary: "Update a git repository", Request: gitRepositoryInput{}, Response: gitRepositoryJSON{}},
	"DELETE /api/git/repositories/{id}": {Summary: "Delete a git repository", Response: successAnswer{}},
	"POST /api/git/stacks": {Summary: "Create a git stack (deployNow: deploy it as a job, whose id is in jobId)", Request: gitStackRequest{},
		Response: gitStackJSON{}, Status: 201},
	"PUT /api/git/stacks/{id}":    {Summary: "Update a git stack", Request: gitStackRequest{}, Response: gitStackJSON{}},
	"DELETE /api/git/stacks/{id}": {Summary: "Delete a git stack (force: take it down even if that fails)", Response: successAnswer{}, Query: []queryParam{{"force", "boolean", "delete even when taking the stack down fails (default true)"}}},
	"POST /api/git/stacks/{id}/deploy": {Summary: "Deploy a git stack: a job ({jobId}; with Accept: application/json, its result)",
		Response: anyOf{jobStartAnswer{}, gitDeployResult{}}},
	"POST /api/git/stacks/{id}/sync": {Summary: "Deploy a git stack if its commit changed: a job ({jobId}; with Accept: application/json, its result)",
		Response: anyOf{jobStartAnswer{}, gitDeployResult{}}},
	"POST /api/git/webhook/{id}": {Summary: "A git provider's push webhook for a repository (signed, or ?secret=)", Request: gitPushEvent{},
		Response: webhookAnswer{}, Query: webhookQuery},
	"GET /api/git/webhook/{id}": {Summary: "Trigger a repository's webhook by hand", IgnoresBody: true, Response: webhookAnswer{}, Query: webhookQuery},
	"POST /api/git/stacks/{id}/webhook": {Summary: "A git provider's push webhook for a git stack (signed, or ?secret=)", Request: gitPushEvent{},
		Response: webhookAnswer{}, Query: webhookQuery},
	"GET /api/git/stacks/{id}/webhook": {Summary: "Trigger a git stack's webhook by hand", IgnoresBody: true, Response: webhookAnswer{}, Query: webhookQuery},

	"GET /api/networks/{id}":         {Summary: "Inspect a network (the engine's inspect document)", Response: networkInspectDoc{}},
	"GET /api/networks/{id}/inspect": {Summary: "Inspect a network (the engine's inspect document)", Response: networkInspectDoc{}},
	"DELETE /api/volumes/{name}": {Summary: "Remove a volume", Response: successAnswer{},
		Query: []queryParam{{"force", "boolean", "remove even when in use"}}},

	"GET /api/schedules/executions": {Summary: "Schedule executions", Response: executionsAnswer{}, Query: []queryParam{
		{"limit", "integer", "page size"}, {"offset", "integer", "page start"}, {"scheduleType", "string", "only this type"},
		{"status", "string", "only this status"}, {"triggeredBy", "string", "only this trigger"},
		{"scheduleId", "integer", "only this schedule's"}, {"environmentId", "integer", "only this environment's"},
		{"statuses", "string", "only these statuses (comma-separated)"},
		{"fromDate", "string", "triggered from this date or time (ISO 8601)"},
		{"toDate", "string", "triggered until this date or time, inclusive (ISO 8601)"}}},
	"GET /api/schedules/stream": {Summary: "Schedules and executions, live", Content: mediaSSE,
		Query: []queryParam{{"environmentId", "integer", "only this environment's"}}},
	"GET /api/schedules/settings": {Summary: "Retention of executions and events, and the caller's hideSystemJobs display preference (the user's, else the global one, else false)", Response: scheduleSettingsAnswer{}},
	"PUT /api/schedules/settings": {Summary: "Change the retention of executions and events, and the caller's hideSystemJobs display preference (a signed-in user's own; the global one without authentication)", Request: retentionInput{}, Response: scheduleSettingsAnswer{}},
	"POST /api/schedules/{type}/{id}/run": {Summary: "Run a schedule now (wait=true: answer when it finished)", Response: runScheduleAnswer{},
		Query: []queryParam{{"wait", "boolean", "answer when the execution finished, with it"}}},
	"DELETE /api/schedules/{type}/{id}": {Summary: "Delete a schedule", Response: successAnswer{}},

	"GET /api/auto-update/{containerName}": {Summary: "A container's auto-update settings (the defaults when none are saved)",
		Response: anyOf{autoUpdateJSON{}, autoUpdateSettings{}}},
	"POST /api/auto-update/{containerName}": {Summary: "Save a container's auto-update settings (disabled: they are deleted)", Request: autoUpdateInput{},
		Response: anyOf{autoUpdateJSON{}, autoUpdateDeletedAnswer{}}},
	"DELETE /api/auto-update/{containerName}": {Summary: "Delete a container's auto-update settings", Response: successAnswer{}},

	"GET /api/audit": {Summary: "Audit log entries (format=json or csv: all matching, as a file)", Response: anyOf{auditAnswer{}, []auditJSON{}},
		Content: "text/csv", AlsoJSON: true, Query: append([]queryParam{{"format", "string", "json or csv: download every matching entry"}}, auditQuery...)},
	"GET /api/audit/events": {Summary: "New audit entries, live", Content: mediaSSE, Query: auditStreamQuery},
	"GET /api/audit/export": {Summary: "Export the audit log (format=json or csv)", Content: "text/csv", AlsoJSON: true, Response: []auditJSON{},
		Query: append([]queryParam{{"format", "string", "json (default) or csv"}}, auditQuery...)},
	"GET /api/logs/merged": {Summary: "Several containers' logs merged, live", Content: mediaSSE,
		Query: []queryParam{{"containers", "string", "comma-separated container ids or names"}, {"tail", "string", "lines of history per container"},
			{"since", "string", "only lines from this time (Unix time, RFC 3339, or a duration such as 10m)"},
			{"until", "string", "only lines before this time (the same forms)"}}},
	"GET /api/metrics": {Summary: "Prometheus metrics", Content: "text/plain", Delegated: true},
	"GET /metrics":     {Summary: "Prometheus metrics (the same as /api/metrics, at Prometheus' default path)", Content: "text/plain", Delegated: true},
}

var logQuery = []queryParam{{"tail", "string", "lines of history (a number or all)"}, {"timestamps", "boolean", "prefix each line with its time"},
	{"since", "string", "only lines from this time (Unix time, RFC 3339, or a duration back from now such as 10m)"},
	{"until", "string", "only lines before this time (the same forms)"}}

var webhookQuery = []queryParam{{"secret", "string", "the webhook secret (instead of a signature header)"}}

var auditQuery = []queryParam{{"userId", "integer", "only this user's"}, {"username", "string", "only this user's"},
	{"environmentId", "integer", "only this environment's"}, {"action", "string", "only this action (a trailing * matches a prefix)"},
	{"entityType", "string", "only this kind of entity"}, {"since", "string", "from this time (RFC 3339)"},
	{"until", "string", "until this time (RFC 3339)"}, {"limit", "integer", "page size (default 100)"}, {"offset", "integer", "page start"},
	{"usernames", "string", "only these users' (comma-separated)"}, {"actions", "string", "only these actions (comma-separated)"},
	{"entityTypes", "string", "only these kinds of entity (comma-separated)"},
	{"labels", "string", "only environments bearing one of these labels (comma-separated)"},
	{"fromDate", "string", "from this date or time (ISO 8601)"}, {"toDate", "string", "until this date or time, inclusive (ISO 8601)"}}

var auditStreamQuery = []queryParam{{"username", "string", "only this user's"}, {"action", "string", "only this action (a trailing * matches a prefix)"},
	{"entityType", "string", "only this kind of entity"},
	{"usernames", "string", "only these users' (comma-separated)"}, {"actions", "string", "only these actions (comma-separated)"},
	{"entityTypes", "string", "only these kinds of entity (comma-separated)"},
	{"labels", "string", "only environments bearing one of these labels (comma-separated)"}}

// anyOf is a Response of several possible shapes (by query or Accept).
type anyOf []any

// containerInspectDoc is the engine's container inspect document, passed
// through as the engine wrote it: its main members are named here; the
// others are as the Docker Engine API documents them.
type containerInspectDoc struct {
	ID              string         `json:"Id"`
	Name            string         `json:"Name"`
	Created         string         `json:"Created"`
	Image           string         `json:"Image"`
	State           map[string]any `json:"State"`
	Config          map[string]any `json:"Config"`
	HostConfig      map[string]any `json:"HostConfig"`
	NetworkSettings map[string]any `json:"NetworkSettings"`
	Mounts          []any          `json:"Mounts"`
}

// imageInspectDoc is the engine's image inspect document (see
// containerInspectDoc).
type imageInspectDoc struct {
	ID           string         `json:"Id"`
	RepoTags     []string       `json:"RepoTags"`
	RepoDigests  []string       `json:"RepoDigests"`
	Created      string         `json:"Created,omitempty"`
	Architecture string         `json:"Architecture"`
	Os           string         `json:"Os"`
	Size         int64          `json:"Size"`
	Config       map[string]any `json:"Config"`
}

// networkInspectDoc is the engine's network inspect document (see
// containerInspectDoc).
type networkInspectDoc struct {
	ID         string            `json:"Id"`
	Name       string            `json:"Name"`
	Driver     string            `json:"Driver"`
	Scope      string            `json:"Scope"`
	Internal   bool              `json:"Internal"`
	Containers map[string]any    `json:"Containers"`
	Labels     map[string]string `json:"Labels"`
	IPAM       map[string]any    `json:"IPAM"`
}

type pendingUpdatesAnswer struct {
	PendingUpdates []pendingJSON `json:"pendingUpdates"`
}

type deletedCountAnswer struct {
	Success bool  `json:"success"`
	Deleted int64 `json:"deleted"`
}

type execInput struct {
	Shell string `json:"shell"`
	User  string `json:"user"`
}

// jobStartAnswer is the answer of a job started in the background: follow
// it at GET /api/jobs/{jobId}.
type jobStartAnswer struct {
	JobID string `json:"jobId"`
}

// transferResult is a pull's or a push's final payload.
type transferResult struct {
	Status    string `json:"status"` // complete or error
	Error     string `json:"error,omitempty"`
	Message   string `json:"message,omitempty"`
	TargetTag string `json:"targetTag,omitempty"`
}

type scanInput struct {
	ImageName string `json:"imageName"`
	// Scanner is scanner_a, scanner_b or both, which must be able to run (a
	// 400 says why not); without it, those of the environment's setting that
	// can run, else the other one.
	Scanner string `json:"scanner"`
}

// scanJobResult is a scan's final payload.
type scanJobResult struct {
	Stage    string        `json:"stage"` // complete or error
	Message  string        `json:"message"`
	Progress int           `json:"progress,omitempty"`
	Result   *scan.Result  `json:"result,omitempty"`
	Results  []scan.Result `json:"results,omitempty"`
	Error    string        `json:"error,omitempty"`
}

type scanResultAnswer struct {
	Found  bool         `json:"found"`
	Result *scan.Result `json:"result,omitempty"`
}

// scannerAnswer is {scanner, available}; after a change {success, scanner}.
type scannerAnswer struct {
	Scanner   string            `json:"scanner"`
	Available map[string]string `json:"available,omitempty"`
	Success   bool              `json:"success,omitempty"`
}

type scannerInput struct {
	Scanner string `json:"scanner"`
	// EnvID is the reference's way to name the environment (Berth's is
	// ?env=); both may be sent when they agree.
	EnvID int64 `json:"envId"`
	// GrypeArgs and TrivyArgs are the reference's custom scanner command
	// lines: Berth runs its pinned scanners with fixed arguments (an
	// argument such as --output would write where the scanner may), so a
	// non-empty value is refused.
	GrypeArgs string `json:"grypeArgs"`
	TrivyArgs string `json:"trivyArgs"`
}

type removedImagesAnswer struct {
	Success bool                  `json:"success"`
	Removed []engine.RemovedImage `json:"removed"`
}

type tagInput struct {
	Repo string `json:"repo"`
	Tag  string `json:"tag"`
}

type tagAnswer struct {
	Success bool   `json:"success"`
	Tag     string `json:"tag"`
}

type pruneImagesInput struct {
	Dangling *bool `json:"dangling"`
	All      bool  `json:"all"`
}

type pruneImagesAnswer struct {
	Success        bool                  `json:"success"`
	Deleted        []engine.RemovedImage `json:"deleted"`
	SpaceReclaimed uint64                `json:"spaceReclaimed"`
	Result         enginePruneReport     `json:"result"` // the reference's: the engine's report
}

// enginePruneReport is the engine's image prune report, in its names.
type enginePruneReport struct {
	ImagesDeleted  []engineDeletedImage `json:"ImagesDeleted"`
	SpaceReclaimed uint64               `json:"SpaceReclaimed"`
}

// engineDeletedImage is one entry of ImagesDeleted.
type engineDeletedImage struct {
	Untagged string `json:"Untagged,omitempty"`
	Deleted  string `json:"Deleted,omitempty"`
}

// pruneImagesFailed is the final result of a failed prune job.
type pruneImagesFailed struct {
	Success bool   `json:"success"`
	Error   string `json:"error"`
	Details string `json:"details,omitempty"`
}

// stackUpResult is the final payload of a stack's up job.
type stackUpResult struct {
	Success bool   `json:"success"`
	Started *bool  `json:"started,omitempty"`
	Output  string `json:"output,omitempty"`
	Error   string `json:"error,omitempty"`
}

type stackActionAnswer struct {
	Success bool   `json:"success"`
	Output  string `json:"output"`
}

type stackVariables struct {
	Variables []stacks.Variable `json:"variables"`
}

type countAnswer struct {
	Success bool `json:"success"`
	Count   int  `json:"count"`
}

// scanStacksAnswer is Berth's {stacks} with the reference's keys: discovered
// (the same list), adopted and skipped (always empty: a scan adopts nothing
// here; POST /api/stacks/adopt does) and errors (none: a directory that
// cannot be read fails the whole scan with its status).
type scanStacksAnswer struct {
	Stacks     []stacks.Discovered `json:"stacks"`
	Discovered []stacks.Discovered `json:"discovered"`
	Adopted    []string            `json:"adopted"`
	Skipped    []string            `json:"skipped"`
	Errors     []scanError         `json:"errors"`
}

// scanError is the reference's per-path scan error.
type scanError struct {
	Path  string `json:"path"`
	Error string `json:"error"`
}

// adoptInput is the reference's {environmentId, stacks} or Berth's single
// stack {name | stackName, composePath, envPath}.
type adoptInput struct {
	EnvironmentID int64       `json:"environmentId"`
	Stacks        []adoptItem `json:"stacks"`
	Name          string      `json:"name"`
	StackName     string      `json:"stackName"` // a synonym of name
	ComposePath   string      `json:"composePath"`
	EnvPath       string      `json:"envPath"`
}

type adoptItem struct {
	Name        string `json:"name"`
	ComposePath string `json:"composePath"`
	EnvPath     string `json:"envPath"`
}

// adoptListAnswer is the answer of the reference's form: per stack.
type adoptListAnswer struct {
	Adopted []string       `json:"adopted"`
	Failed  []adoptFailure `json:"failed"`
}

type adoptFailure struct {
	Name  string `json:"name"`
	Error string `json:"error"`
}

type adoptAnswer struct {
	Success     bool   `json:"success"`
	Name        string `json:"name"`
	SourceType  string `json:"sourceType"`
	ComposePath string `json:"composePath"`
}

type gitCredentialInput struct {
	Name          string      `json:"name"`
	AuthType      *string     `json:"authType"`
	Username      *string     `json:"username"`
	Password      secretField `json:"password"`
	SSHPrivateKey secretField `json:"sshPrivateKey"`
	// SSHPassphrase is the passphrase of an encrypted sshPrivateKey (the
	// reference's name; Berth's password is the same for an ssh credential).
	SSHPassphrase secretField `json:"sshPassphrase"`
	// Host is the repository URL or scheme://host:port the credential is
	// for (absent: kept); changing it needs the password or key again.
	Host *string `json:"host"`
}

type gitRepositoryInput struct {
	Name           string      `json:"name"`
	URL            string      `json:"url"`
	Branch         string      `json:"branch"`
	CredentialID   *int64      `json:"credentialId"`
	WebhookEnabled bool        `json:"webhookEnabled"`
	WebhookSecret  secretField `json:"webhookSecret"`
}

// gitDeployResult is a git deploy's final payload.
type gitDeployResult struct {
	Success  bool   `json:"success"`
	Deployed bool   `json:"deployed"`
	Commit   string `json:"commit"`
	Message  string `json:"message"`
	Output   string `json:"output"`
	Error    string `json:"error,omitempty"`
}

// gitPushEvent is a provider's push event (GitHub, GitLab, Gitea): Berth
// reads the branch pushed to and checks the signature of the whole body.
type gitPushEvent struct {
	Ref   string `json:"ref"`
	After string `json:"after"`
}

type webhookAnswer struct {
	Success bool   `json:"success"`
	Message string `json:"message"`
	Error   string `json:"error,omitempty"`
}

type retentionInput struct {
	ExecutionDays  *int  `json:"executionRetentionDays"`
	EventDays      *int  `json:"eventRetentionDays"`
	HideSystemJobs *bool `json:"hideSystemJobs"`
}

// scheduleSettingsAnswer is the retention and the caller's schedules-page
// preference hideSystemJobs (the reference's; the list itself is not
// filtered by it, as the reference's is not).
type scheduleSettingsAnswer struct {
	ExecutionDays  int  `json:"executionRetentionDays"`
	EventDays      int  `json:"eventRetentionDays"`
	HideSystemJobs bool `json:"hideSystemJobs"`
}

type runScheduleAnswer struct {
	Success     bool           `json:"success"`
	Message     string         `json:"message"`
	ExecutionID int64          `json:"executionId"`
	Execution   *executionJSON `json:"execution,omitempty"`
}

type autoUpdateInput struct {
	Enabled                   *bool   `json:"enabled"`
	CronExpression            *string `json:"cronExpression"`
	CronExpressionSnake       *string `json:"cron_expression"`
	VulnerabilityCriteria     *string `json:"vulnerabilityCriteria"`
	VulnerabilityCriteriaSnak *string `json:"vulnerability_criteria"`
	ScheduleType              *string `json:"scheduleType"`
}

type autoUpdateDeletedAnswer struct {
	Success bool `json:"success"`
	Deleted bool `json:"deleted"`
}
