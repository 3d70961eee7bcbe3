package api

import "github.com/berth-dev/berth/server/internal/backup"

// backupDestinationOps document the backup destination and snapshot routes
// (issue 24; backup_destinations.go, backup_snapshots.go). A snapshot is in
// a caller's reach when the permission holds on its environment (its
// configuration's), or on every environment
// (backup_snapshot_scope.go).
var backupDestinationOps = map[string]apiOp{
	"GET /api/backup/instance": {Summary: "This install's stable backup instance id: its snapshots carry the tag berth:instance=<id>",
		Response: backupInstanceAnswer{}},
	"GET /api/backup/destinations": {Summary: "Every backup destination (restic repository), to anyone with backups:view on some environment; never the password, SSH key or envVars' values",
		Response: []backupDestinationJSON{}},
	"POST /api/backup/destinations": {Summary: "Create a destination: saved, then its repository initialised and tested (the outcome in lastTestStatus)",
		Request: backupDestinationRequest{}, Response: backupDestinationAnswer{}, Status: 201},
	"POST /api/backup/destinations/test": {Summary: "Test a saved destination (destinationId; its outcome kept), a saved one as a form edits it (destinationId with the edited fields: the secrets left out or masked are the stored ones, only while the repository stays on the saved host and port, else 400 saying the credentials must be entered again; nothing stored), or the settings of one not saved yet: {success, status, needsInit, error?}",
		Request: backupRepositoryTestRequest{}, Response: backupTestAnswer{}},
	"GET /api/backup/destinations/{id}": {Summary: "One destination, to anyone with backups:view on some environment; envVars (secret values masked) only for a caller with backups:manage on every environment (who may change it), never the password",
		Response: backupDestinationJSON{}},
	"PUT /api/backup/destinations/{id}": {Summary: "Change a destination (absent fields kept; stored secrets go only to the repository host they were saved for)",
		Request: backupDestinationRequest{}, Response: backupDestinationJSON{}},
	"DELETE /api/backup/destinations/{id}": {Summary: "Delete a destination (409 while backup configurations use it or a backup runs on it)",
		Response: successAnswer{}},
	"POST /api/backup/destinations/{id}/init": {Summary: "Initialise the destination's repository (an existing one opened by the password is not an error)",
		Response: backupInitAnswer{}},
	"POST /api/backup/destinations/{id}/test": {Summary: "Open the destination's repository and keep the outcome: {success, status: success|needs_init|failed, error?}",
		Response: backupTestAnswer{}},
	"POST /api/backup/destinations/{id}/rotate-key": {Summary: "Replace the repository's password (restic key add, then the old key removed); 409 with dbOutOfSync when the new one could not be saved",
		Request: rotateKeyRequest{}, Response: successAnswer{}},
	"POST /api/backup/destinations/{id}/task": {Summary: "Run a maintenance task (unlock, check, prune, stats, repair-index, repair-snapshots): its job's progress events and a final result event; DELETE /api/jobs/{jobId} stops it (restic interrupted, its lock released, the result cancelled: true)",
		Request: backupTaskRequest{}, Content: mediaSSE, AlsoJSON: true, Response: backupTaskResult{}, Header: "X-Job-Id"},
	"POST /api/backup/destinations/{id}/verify": {Summary: "Check the repository reading a subset of its data (default 5%): progress events and a final result event; stopped as a task is",
		Request: backupVerifyRequest{}, Content: mediaSSE, AlsoJSON: true, Response: backupTaskResult{}, Header: "X-Job-Id"},

	"GET /api/backup/snapshots": {Summary: "A destination's snapshots, or a configuration's (403 without backups:view on its environment); only those of the environments where the caller holds backups:view, another install's and untagged ones only to a caller holding it on every environment (job-polled: {jobId}, or the result with Accept: application/json)",
		Response: anyOf{jobStartAnswer{}, backupSnapshotsAnswer{}}, Query: []queryParam{
			{"destinationId", "integer", "the destination (or configId)"}, {"configId", "integer", "the configuration (or destinationId)"},
			{"allDestinations", "boolean", "with configId: every destination of the configuration (it has one)"}}},
	"GET /api/backup/snapshots/diff": {Summary: "What changed between two snapshots of one destination, both in the caller's reach (404 Snapshot not found otherwise, as for an unknown id; job-polled)",
		Response: anyOf{jobStartAnswer{}, backup.Diff{}}, Query: []queryParam{{"destinationId", "integer", "the destination"},
			{"snapshotA", "string", "the baseline snapshot"}, {"snapshotB", "string", "the snapshot compared with it"}}},
	"DELETE /api/backup/snapshots/{id}": {Summary: "Forget one of this install's snapshots and prune the data only it used: backups:manage on the snapshot's environment (403 when the caller only views it there; 404 for another install's or one out of the caller's reach)",
		Response: successAnswer{}, Query: []queryParam{{"destinationId", "integer", "the destination holding it"},
			{"env", "integer", "accepted for the reference's clients; the destination says where restic runs"}}},
	"GET /api/backup/snapshots/{id}/browse": {Summary: "A directory of a snapshot in the caller's reach (404 Snapshot not found otherwise, as for an unknown id; job-polled)",
		Response: anyOf{jobStartAnswer{}, backupBrowseAnswer{}}, Query: []queryParam{{"destinationId", "integer", "the destination"},
			{"path", "string", "the directory (default /)"},
			{"env", "integer", "accepted for the reference's clients; the destination says where restic runs"}}},
	"GET /api/backup/snapshots/{id}/dump": {Summary: "A file of a snapshot in the caller's reach (404 Snapshot not found otherwise, as for an unknown id): an inline preview (job-polled), or with download (or type dir) the file or a tar of the directory",
		Response: anyOf{jobStartAnswer{}, backupDumpAnswer{}}, Content: "application/octet-stream,application/x-tar", AlsoJSON: true,
		Query: []queryParam{{"destinationId", "integer", "the destination"}, {"path", "string",
			"under /backup/volumes or /backup/paths; /berth-backup.tar.gz for a backup of Berth itself (admins only)"},
			{"type", "string", "file (default) or dir"}, {"download", "boolean", "answer the file itself as an attachment"}}},
	"GET /api/backup/snapshots/{id}/metadata": {Summary: "A snapshot's layout: its restic metadata and the volumes and host paths it holds, for a snapshot in the caller's reach (404 Snapshot not found otherwise, as for an unknown id; job-polled)",
		Response: anyOf{jobStartAnswer{}, backupMetadataAnswer{}}, Query: []queryParam{{"destinationId", "integer", "the destination"}}},
}

// backupInstanceAnswer is the reference's {instanceId}.
type backupInstanceAnswer struct {
	InstanceID string `json:"instanceId"`
}
