package api

import "github.com/berth-dev/berth/server/internal/backupjobs"

// backupConfigQuery are the filters of the configurations list and the
// stack directory routes' environment.
var backupEnvParams = []queryParam{
	{"env", "integer", "environment id (from GET /api/environments)"},
	{"environmentId", "integer", "environment id, Berth's other name of env"},
}

// backupConfigOps: backup configurations, their runs, the stack directory
// previews, and restores.
var backupConfigOps = map[string]apiOp{
	"GET /api/backup/configs": {Summary: "Backup configurations the caller may see, optionally filtered", Response: []backupConfigJSON{},
		Query: append([]queryParam{{"type", "string", "container, stack or berth"}, {"target", "string", "the container or stack name (berth for Berth itself)"}},
			backupEnvParams...)},
	"POST /api/backup/configs": {Summary: "Create a backup configuration (its cron, when enabled, registers a schedule of type backup); " +
		"type berth (admins only) backs up Berth itself (database, encryption key, stack files; git with options.includeGit) " +
		"as the file /berth-backup.tar.gz of its snapshots, restored with berth admin restore",
		Request: backupConfigRequest{}, Response: backupConfigJSON{}, Status: 201},
	"GET /api/backup/configs/{id}": {Summary: "A backup configuration", Response: backupConfigJSON{}},
	"PUT /api/backup/configs/{id}": {Summary: "Update a backup configuration (absent fields kept; environment, type and target fixed)",
		Request: backupConfigRequest{}, Response: backupConfigJSON{}},
	"DELETE /api/backup/configs/{id}": {Summary: "Delete a backup configuration (409 while it runs)", Response: successAnswer{}},
	"POST /api/backup/configs/{id}/run": {Summary: "Run a backup now: progress events, then the result (status success, error or stopped)",
		Content: mediaSSE, Response: backupResultJSON{}},
	"POST /api/backup/configs/{id}/stop": {Summary: "Stop the configuration's running backup", Response: stoppedAnswer{}},
	"GET /api/backup/stack-path": {Summary: "Where a stack's directory is captured from (kind candidate, tar or unknown)",
		Response: stackPathJSON{}, Query: append([]queryParam{{"target", "string", "the stack name (required)"}}, backupEnvParams...)},
	"GET /api/backup/stack-dir-listing": {Summary: "The entries of a stack's directory (kind listed, tar or unknown)",
		Response: stackDirListingJSON{}, Query: append([]queryParam{{"target", "string", "the stack name (required)"}}, backupEnvParams...)},
	"POST /api/backup/restore/preview": {Summary: "What a snapshot holds and, with includeTargets, where an in-place restore writes it; a snapshot out of the caller's reach (backups:view on its environment) is not found (404)",
		Request: restorePreviewRequest{}, Response: backupjobs.Preview{}},
	"POST /api/backup/restore": {Summary: "Restore a snapshot in place (confirmOverwrite) or to a new name: progress events, then the result; the snapshot must be in the caller's reach (404 otherwise) and the caller needs backups:manage on the environment written (without environmentId: the snapshot's own)",
		Request: restoreRequest{}, Content: mediaSSE, Response: restoreResultAnswer{}},
	"POST /api/backup/restore/stop": {Summary: "Stop the running restore of a snapshot, or every restore of environmentId (without either: every restore, only for a caller with backups:manage on every environment, 400 otherwise); only restores of environments the caller manages backups on stop, another's is answered as none (stopped: false)",
		Request: stopRestoreRequest{}, Response: stoppedAnswer{}},
}

// stoppedAnswer is the answer of the stop routes.
type stoppedAnswer struct {
	Success bool `json:"success"`
	Stopped bool `json:"stopped"` // whether a running backup or restore was stopped
}

// restoreResultAnswer is the result event of a restore.
type restoreResultAnswer struct {
	Status  string `json:"status"` // success | error | stopped
	Message string `json:"message"`
	Error   string `json:"error,omitempty"`
}
