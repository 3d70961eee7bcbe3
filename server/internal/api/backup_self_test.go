package api_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/berth-dev/berth/server/internal/apitest"
	"github.com/berth-dev/berth/server/internal/backupjobs"
	"github.com/berth-dev/berth/server/internal/secret"
	"github.com/berth-dev/berth/server/internal/selfbackup"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/google/go-cmp/cmp"
)

// newSelfBackupHarness is a backup harness with authentication whose
// SelfArchive writes its own data directory's archive (as berth serve
// wires it), signed in as its admin.
func newSelfBackupHarness(t *testing.T) *backupHarness {
	t.Helper()
	dataDir := t.TempDir()
	key, err := secret.LoadKey(dataDir, "") // written to the data directory, as berth does
	if err != nil {
		t.Fatal(err)
	}
	box, err := secret.New(key)
	if err != nil {
		t.Fatal(err)
	}
	dbPath := filepath.Join(dataDir, "berth.db")
	h := newBackupHarness(t, apitest.Options{Auth: true, DBPath: dbPath, Box: box,
		SelfArchive: func(ctx context.Context, includeGit bool, w io.Writer) error {
			return selfbackup.Write(ctx, selfbackup.Options{DataDir: dataDir, DatabaseURL: dbPath, WithGit: includeGit,
				TempDir: dataDir}, w)
		}})
	user, pw := h.setupAdmin()
	h.as(h.login(user, pw))
	return h
}

// A configuration of type berth runs twice against a local repository:
// retention keepLast 1 leaves the second snapshot, whose archive, dumped
// through the API, restores with selfbackup.Restore onto an empty data
// directory holding the same users and environments. A restore of it onto
// an environment is refused with what to do instead.
func TestBackupOfBerthItselfRestoresOntoAnEmptyDataDir(t *testing.T) {
	h := newSelfBackupHarness(t)
	h.userWithRole("otto", "Operator")
	id := h.backupConfig(map[string]any{"destinationId": h.destID, "type": "berth", "environmentId": 1,
		"retention": map[string]int{"keepLast": 1}, "schedule": "0 3 * * *"})
	var got struct {
		Type, TargetName, Name string
	}
	h.must(200, "GET", fmt.Sprintf("/api/backup/configs/%d", id), nil, &got)
	if got.Type != "berth" || got.TargetName != "berth" {
		t.Errorf("GET = %+v, want type and target berth", got)
	}
	var made []string
	for i := range 2 {
		res, phases := h.stream(fmt.Sprintf("/api/backup/configs/%d/run", id), nil)
		if res.Status != "success" {
			t.Fatalf("run %d = %+v (%q)", i, res, phases)
		}
		made = append(made, res.SnapshotID)
	}
	snaps, err := h.runner.Snapshots(t.Context(), h.where, h.repo, []string{backupjobs.ConfigTag(id)})
	if err != nil {
		t.Fatal(err)
	}
	if len(snaps) != 1 || !hasSnapshot([]string{snaps[0].ID}, made[1]) {
		t.Fatalf("snapshots %+v, want only the second run's %s", snaps, made[1])
	}
	if !slices.Equal(snaps[0].Paths, []string{"/" + backupjobs.SelfFile}) || !slices.Contains(snaps[0].Tags, "berth:type=berth") {
		t.Errorf("snapshot paths %v tags %v, want /%s and berth:type=berth", snaps[0].Paths, snaps[0].Tags, backupjobs.SelfFile)
	}

	status, archive := h.do("GET", fmt.Sprintf("/api/backup/snapshots/%s/dump?destinationId=%d&path=/%s&download=true",
		snaps[0].ID, h.destID, backupjobs.SelfFile), nil)
	if status != 200 {
		t.Fatalf("download = %d %s", status, archive)
	}
	file := filepath.Join(t.TempDir(), "berth-backup.tar.gz")
	if err := os.WriteFile(file, archive, 0o600); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "restored")
	m, err := selfbackup.Restore(t.Context(), selfbackup.RestoreOptions{DataDir: target}, file)
	if err != nil {
		t.Fatalf("restore of the dumped archive: %v", err)
	}
	if m.Database != selfbackup.SQLite || m.WithGit {
		t.Errorf("manifest = %+v, want SQLite without git", m)
	}
	key, err := secret.LoadKey(target, "")
	if err != nil {
		t.Fatal(err)
	}
	box, err := secret.New(key)
	if err != nil {
		t.Fatal(err)
	}
	restored, err := store.Open(t.Context(), filepath.Join(target, "berth.db"), box)
	if err != nil {
		t.Fatal(err)
	}
	defer restored.Close()
	if diff := cmp.Diff(usersAndEnvironments(t, h.store), usersAndEnvironments(t, restored)); diff != "" {
		t.Errorf("restored users and environments (-want +got):\n%s", diff)
	}

	h.expectRefusals([]refusal{
		{"restore onto an environment", "POST", "/api/backup/restore", map[string]any{"destinationId": h.destID,
			"snapshotId": snaps[0].ID, "mode": "in-place", "confirmOverwrite": true}, 400, "berth admin restore"},
	})
	h.as(h.login("otto", "otto-password-1"))
	h.expectRefusals([]refusal{
		{"operator downloads", "GET", fmt.Sprintf("/api/backup/snapshots/%s/dump?destinationId=%d&path=/%s&download=true",
			snaps[0].ID, h.destID, backupjobs.SelfFile), nil, 403, "Only an admin"},
		{"operator runs", "POST", fmt.Sprintf("/api/backup/configs/%d/run", id), nil, 403, "Only an admin"},
		{"operator changes", "PUT", fmt.Sprintf("/api/backup/configs/%d", id), map[string]any{"retention": map[string]int{"keepLast": 3}},
			403, "Only an admin"},
	})
}

// usersAndEnvironments lists the usernames and environment names of st.
func usersAndEnvironments(t *testing.T, st *store.Store) []string {
	t.Helper()
	users, err := st.ListUsers(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	envs, err := st.ListEnvironments(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, u := range users {
		out = append(out, fmt.Sprintf("user %s admin=%v", u.Username, u.IsAdmin))
	}
	for _, e := range envs {
		out = append(out, fmt.Sprintf("environment %d %s %s", e.ID, e.Name, e.ConnectionType))
	}
	return out
}

// A non-admin (an Operator, who manages backups) may not create a backup
// of Berth itself; what only a container or stack has is refused, as is
// another target name or bad options.
func TestBackupOfBerthItselfRefusesNonAdminsAndBadInput(t *testing.T) {
	h := newSelfBackupHarness(t)
	h.userWithRole("otto", "Operator")
	base := func(extra map[string]any) map[string]any {
		b := map[string]any{"destinationId": h.destID, "type": "berth", "environmentId": 1}
		for k, v := range extra {
			b[k] = v
		}
		return b
	}
	h.expectRefusals([]refusal{
		{"volumes", "POST", "/api/backup/configs", base(map[string]any{"selectedVolumes": []string{"data"}}), 400,
			"selectedVolumes does not apply to a backup of Berth itself"},
		{"all volumes", "POST", "/api/backup/configs", base(map[string]any{"allVolumes": true}), 400, "allVolumes does not apply"},
		{"paths", "POST", "/api/backup/configs", base(map[string]any{"paths": []string{"/srv"}}), 400, "paths does not apply"},
		{"hooks", "POST", "/api/backup/configs", base(map[string]any{"preHook": "true"}), 400, "preHook does not apply"},
		{"stop", "POST", "/api/backup/configs", base(map[string]any{"stopBeforeBackup": true}), 400, "stopBeforeBackup does not apply"},
		{"target", "POST", "/api/backup/configs", base(map[string]any{"targetName": "web"}), 400, `is "berth"`},
		{"options", "POST", "/api/backup/configs", base(map[string]any{"options": map[string]any{"includeGit": "yes"}}), 400,
			"includeGit is true or false"},
	})
	var list []map[string]any
	h.must(200, "GET", "/api/backup/configs", nil, &list)
	if len(list) != 0 {
		t.Errorf("refused requests left configurations: %v", list)
	}
	h.as(h.login("otto", "otto-password-1"))
	h.expectRefusals([]refusal{
		{"operator creates", "POST", "/api/backup/configs", base(nil), 403,
			"Only an admin may manage or download a backup of Berth itself"},
	})
}
