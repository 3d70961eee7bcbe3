package api_test

import (
	"fmt"
	"net/url"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/berth-dev/berth/server/internal/backup"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/enginetest"
)

// userWithRoleOn creates user name holding role on each of envs only.
func (h *harness) userWithRoleOn(name string, grants map[string]int64) {
	h.t.Helper()
	var u struct{ ID int64 }
	h.must(201, "POST", "/api/users", map[string]any{"username": name, "password": name + "-password-1"}, &u)
	var roles []struct {
		ID   int64
		Name string
	}
	h.must(200, "GET", "/api/roles", nil, &roles)
	for role, env := range grants {
		i := slices.IndexFunc(roles, func(r struct {
			ID   int64
			Name string
		}) bool {
			return r.Name == role
		})
		if i < 0 {
			h.t.Fatalf("no role %q", role)
		}
		h.must(201, "POST", fmt.Sprintf("/api/users/%d/roles", u.ID), map[string]any{"roleId": roles[i].ID, "environmentId": env}, nil)
	}
}

// snapshotScopeFixture is one destination holding snapshots of a
// configuration on environment 1 (A), of one on environment 2 (B), of
// another install, and two of this install whose configuration is gone.
type snapshotScopeFixture struct {
	h        *harness
	destID   int64
	root     string // the volume's directory in every snapshot
	ofA, ofB string // made by the configurations of environments 1 and 2
	foreign  string // another install's, tagged with A's configuration and environment
	// goneOnA and goneOnB: this install's, their configuration deleted,
	// tagged berth:env=1 and 2.
	goneOnA, goneOnB string
	// misTagged: A's configuration, tagged berth:env=2: the stored
	// configuration says its environment (1).
	misTagged string
}

func newSnapshotScopeFixture(t *testing.T) *snapshotScopeFixture {
	h := newDestinationsHarness(t)
	runner := backupRunner(t)
	second := h.addEnvironment(map[string]any{"name": "second", "connectionType": "socket", "socketPath": enginetest.Socket})
	if second != 2 {
		t.Fatalf("the second environment is %d, want 2", second)
	}
	cl, err := engine.NewManager(nil).Client(t.Context(), engine.Endpoint{ID: 1, ConnectionType: engine.Socket, SocketPath: enginetest.Socket})
	if err != nil {
		t.Fatal(err)
	}
	where := backup.Where{EnvID: 1, Client: cl, Owner: "berth-test-" + h.label}
	var instance struct{ InstanceID string }
	h.must(200, "GET", "/api/backup/instance", nil, &instance)
	var d backupDestination
	h.must(201, "POST", "/api/backup/destinations", map[string]any{"name": "shared", "repository": filepath.Join(t.TempDir(), "repo"),
		"password": "pw-" + h.label}, &d)
	if d.LastTestStatus != "success" {
		t.Fatalf("destination = %+v", d)
	}
	configOn := func(env int64) int64 {
		var id int64
		err := h.store.DB().QueryRowContext(t.Context(), `INSERT INTO backup_configs (type, target_name, environment_id,
			destination_id, created_at, updated_at) VALUES ('container', 'app', $1, $2, $3, $3) RETURNING id`, env, d.ID,
			"2026-01-01T00:00:00.000000000Z").Scan(&id)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	cfgA, cfgB := configOn(1), configOn(2)
	t.Cleanup(func() { _, _ = h.store.DB().Exec("DELETE FROM backup_configs WHERE destination_id = $1", d.ID) })
	repo, _, err := h.store.BackupDestinationRepo(t.Context(), d.ID)
	if err != nil {
		t.Fatal(err)
	}
	vol := backupVolume(t, h, "scope", "echo hello > a.txt")
	// What a restore to a new location refused below would have written.
	t.Cleanup(func() { _ = exec.Command("docker", "volume", "rm", "-f", "copy-"+h.label+"_"+vol).Run() })
	snap := func(tags ...string) string {
		t.Helper()
		sum, err := runner.Backup(t.Context(), where, repo, backup.Source{Volumes: []string{vol}, Tags: tags, Host: "berth"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return sum.SnapshotID
	}
	own := "berth:instance=" + instance.InstanceID
	f := &snapshotScopeFixture{h: h, destID: d.ID, root: backup.VolumesDir + "/" + vol}
	f.ofA = snap(own, fmt.Sprintf("berth:config=%d", cfgA), "berth:env=1")
	inBackupVolume(t, h, vol, "echo changed > a.txt")
	f.ofB = snap(own, fmt.Sprintf("berth:config=%d", cfgB), "berth:env=2")
	f.foreign = snap("berth:instance=another-install", fmt.Sprintf("berth:config=%d", cfgA), "berth:env=1")
	f.goneOnA = snap(own, "berth:config=999999", "berth:env=1")
	f.goneOnB = snap(own, "berth:config=999998", "berth:env=2")
	f.misTagged = snap(own, fmt.Sprintf("berth:config=%d", cfgA), "berth:env=2")
	return f
}

// listed is the ids the destination's listing answers the signed-in user.
func (f *snapshotScopeFixture) listed(query string) []string {
	f.h.t.Helper()
	var out struct{ Snapshots []backupSnapshot }
	f.h.getJSON(200, "GET", "/api/backup/snapshots?"+query, nil, &out)
	var ids []string
	for _, s := range out.Snapshots {
		ids = append(ids, s.ID)
	}
	slices.Sort(ids)
	return ids
}

func sorted(ids ...string) []string {
	ids = slices.Clone(ids)
	slices.Sort(ids)
	return ids
}

// answer is a request's status and body, with and without Accept:
// application/json (a job-polled route answers {jobId} without it).
func (f *snapshotScopeFixture) answer(method, path string) string {
	f.h.t.Helper()
	status, body := f.h.do(method, path, nil)
	f.h.headers["Accept"] = "application/json"
	jstatus, jbody := f.h.do(method, path, nil)
	delete(f.h.headers, "Accept")
	return fmt.Sprintf("%d %s | %d %s", status, strings.TrimSpace(string(body)), jstatus, strings.TrimSpace(string(jbody)))
}

// snapshotRoutes are the single-snapshot routes of snapshot id (and, for
// diff, of the pair base, id).
func (f *snapshotScopeFixture) snapshotRoutes(base, id string) map[string][2]string {
	q := fmt.Sprintf("destinationId=%d", f.destID)
	return map[string][2]string{
		"browse":   {"GET", fmt.Sprintf("/api/backup/snapshots/%s/browse?%s&path=%s", id, q, url.QueryEscape(f.root))},
		"dump":     {"GET", fmt.Sprintf("/api/backup/snapshots/%s/dump?%s&path=%s", id, q, url.QueryEscape(f.root+"/a.txt"))},
		"download": {"GET", fmt.Sprintf("/api/backup/snapshots/%s/dump?%s&download=true&path=%s", id, q, url.QueryEscape(f.root+"/a.txt"))},
		"metadata": {"GET", fmt.Sprintf("/api/backup/snapshots/%s/metadata?%s", id, q)},
		"diff":     {"GET", fmt.Sprintf("/api/backup/snapshots/diff?%s&snapshotA=%s&snapshotB=%s", q, base, id)},
		"forget":   {"DELETE", fmt.Sprintf("/api/backup/snapshots/%s?%s", id, q)},
	}
}

// An Operator of environment 1 alone picks the destination and works with
// the snapshots of environment 1's configurations; those of environment
// 2's, another install's and this install's of a deleted configuration of
// environment 2 are out of reach: not listed, and every single-snapshot
// route answers them exactly as a snapshot that does not exist, as do
// the restore preview and the restore. An admin still lists and browses
// everything.
func TestBackupSnapshotsOfAnotherEnvironmentAreOutOfReach(t *testing.T) {
	f := newSnapshotScopeFixture(t)
	h := f.h
	admin := h.headers
	h.userWithRoleOn("olive", map[string]int64{"Operator": 1})
	h.as(h.login("olive", "olive-password-1"))

	var dests []backupDestination
	h.must(200, "GET", "/api/backup/destinations", nil, &dests)
	if len(dests) != 1 || dests[0].ID != f.destID {
		t.Fatalf("olive lists destinations %+v, want the one", dests)
	}
	var one backupDestination
	h.must(200, "GET", fmt.Sprintf("/api/backup/destinations/%d", f.destID), nil, &one)
	if one.EnvVars != nil {
		t.Errorf("olive reads the envVars of the destination: %v", one.EnvVars)
	}
	h.must(200, "GET", "/api/backup/instance", nil, nil)

	mine := sorted(f.ofA, f.goneOnA, f.misTagged)
	if got := f.listed(fmt.Sprintf("destinationId=%d", f.destID)); !slices.Equal(got, mine) {
		t.Errorf("olive lists %v, want %v (A's, A's of a deleted configuration, A's mis-tagged)", got, mine)
	}
	var cfgs []struct {
		ID            int64
		EnvironmentID int64
	}
	h.must(200, "GET", "/api/backup/configs", nil, &cfgs)
	if len(cfgs) != 1 || cfgs[0].EnvironmentID != 1 {
		t.Fatalf("olive lists configurations %+v, want environment 1's", cfgs)
	}
	if got := f.listed(fmt.Sprintf("configId=%d", cfgs[0].ID)); !slices.Equal(got, sorted(f.ofA, f.misTagged)) {
		t.Errorf("olive lists the configuration's %v, want %v", got, sorted(f.ofA, f.misTagged))
	}
	var cfgB int64
	if err := h.store.DB().QueryRowContext(t.Context(), "SELECT id FROM backup_configs WHERE environment_id = 2").Scan(&cfgB); err != nil {
		t.Fatal(err)
	}
	h.must(403, "GET", fmt.Sprintf("/api/backup/snapshots?configId=%d", cfgB), nil, nil)

	// Out of reach answers as unknown, route by route, byte for byte.
	unknown := "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	for _, id := range []string{f.ofB, f.ofB[:8], f.foreign, f.goneOnB} {
		reached, absent := f.snapshotRoutes(f.ofA, id), f.snapshotRoutes(f.ofA, unknown)
		for name, rt := range reached {
			got, want := f.answer(rt[0], rt[1]), f.answer(absent[name][0], absent[name][1])
			if got != want || !strings.HasPrefix(got, "404 ") {
				t.Errorf("%s of %s = %s\nwant as for an unknown snapshot: %s", name, id, got, want)
			}
		}
		// Diff needs both: the one out of reach first too.
		rt := f.snapshotRoutes(id, f.ofA)["diff"]
		if got, want := f.answer(rt[0], rt[1]), f.answer(absent["diff"][0], absent["diff"][1]); got != want {
			t.Errorf("diff %s vs A = %s, want %s", id, got, want)
		}
	}

	// Nor previewed or restored, onto their environment or in place.
	for _, id := range []string{f.ofB, f.foreign, f.goneOnB} {
		for name, body := range map[string]map[string]any{
			"preview":      {"destinationId": f.destID, "includeTargets": true},
			"new location": {"destinationId": f.destID, "mode": "new-location", "targetName": "copy-" + h.label, "environmentId": 1},
			"in place":     {"destinationId": f.destID, "mode": "in-place", "confirmOverwrite": true},
		} {
			path := "/api/backup/restore"
			if name == "preview" {
				path += "/preview"
			}
			body["snapshotId"] = id
			status, got := h.do("POST", path, body)
			body["snapshotId"] = unknown
			wstatus, want := h.do("POST", path, body)
			if status != 404 || status != wstatus || string(got) != string(want) {
				t.Errorf("%s of %s = %d %s, want as for an unknown snapshot: %d %s", name, id, status, got, wstatus, want)
			}
		}
	}
	h.expectRefusals([]refusal{{"stop every restore", "POST", "/api/backup/restore/stop", map[string]any{}, 400, "snapshotId is required"}})
	var preview0 struct{ Items []struct{ Source string } }
	h.must(200, "POST", "/api/backup/restore/preview", map[string]any{"destinationId": f.destID, "snapshotId": f.ofA[:8]}, &preview0)
	if len(preview0.Items) != 1 {
		t.Errorf("preview of A's = %+v, want its volume", preview0)
	}

	// Their own: browsed, dumped, laid out, diffed, forgotten.
	var dir struct{ Entries []struct{ Name string } }
	h.getJSON(200, "GET", f.snapshotRoutes(f.ofA, f.ofA)["browse"][1], nil, &dir)
	if len(dir.Entries) != 1 || dir.Entries[0].Name != "a.txt" {
		t.Errorf("browse of A's = %+v, want a.txt", dir)
	}
	var preview struct{ Content string }
	h.getJSON(200, "GET", f.snapshotRoutes(f.ofA, f.ofA[:8])["dump"][1], nil, &preview)
	if preview.Content != "hello\n" {
		t.Errorf("dump of A's = %q, want hello", preview.Content)
	}
	var meta struct{ Snapshot backupSnapshot }
	h.getJSON(200, "GET", f.snapshotRoutes(f.ofA, f.goneOnA)["metadata"][1], nil, &meta)
	if meta.Snapshot.ID != f.goneOnA {
		t.Errorf("metadata of A's of a deleted configuration = %+v", meta)
	}
	var diff backup.Diff
	h.getJSON(200, "GET", f.snapshotRoutes(f.misTagged, f.ofA)["diff"][1], nil, &diff)
	if !slices.Equal(diff.Modified, []string{f.root + "/a.txt"}) {
		t.Errorf("diff of A's = %+v, want a.txt modified", diff)
	}
	h.must(200, "DELETE", f.snapshotRoutes(f.ofA, f.ofA)["forget"][1], nil, nil)

	h.headers = admin
	all := sorted(f.ofB, f.foreign, f.goneOnA, f.goneOnB, f.misTagged)
	if got := f.listed(fmt.Sprintf("destinationId=%d", f.destID)); !slices.Equal(got, all) {
		t.Errorf("the admin lists %v, want %v (A's forgotten)", got, all)
	}
	for _, id := range []string{f.ofB, f.foreign} {
		h.getJSON(200, "GET", f.snapshotRoutes(id, id)["browse"][1], nil, &dir)
		if len(dir.Entries) != 1 {
			t.Errorf("the admin browses %s: %+v", id, dir)
		}
	}
}

// A Viewer of environment 1 lists and browses its snapshots but forgets
// none (403); one who views environment 1 and operates environment 2 may
// forget 2's, not 1's (403: it sees that one), nor restore 1's in place
// (onto environment 1, the snapshot's own).
func TestBackupSnapshotViewersOfAnEnvironmentMayNotForget(t *testing.T) {
	f := newSnapshotScopeFixture(t)
	h := f.h
	h.userWithRoleOn("vera", map[string]int64{"Viewer": 1})
	h.userWithRoleOn("mona", map[string]int64{"Viewer": 1, "Operator": 2})
	admin := h.headers

	h.as(h.login("vera", "vera-password-1"))
	if got, want := f.listed(fmt.Sprintf("destinationId=%d", f.destID)), sorted(f.ofA, f.goneOnA, f.misTagged); !slices.Equal(got, want) {
		t.Errorf("vera lists %v, want %v", got, want)
	}
	var dir struct{ Entries []struct{ Name string } }
	h.getJSON(200, "GET", f.snapshotRoutes(f.ofA, f.ofA)["browse"][1], nil, &dir)
	if len(dir.Entries) != 1 {
		t.Errorf("vera browses A's: %+v", dir)
	}
	h.expectRefusals([]refusal{
		{"viewer forgets", "DELETE", f.snapshotRoutes(f.ofA, f.ofA)["forget"][1], nil, 403, "Permission denied"},
	})

	h.as(h.login("mona", "mona-password-1"))
	if got, want := f.listed(fmt.Sprintf("destinationId=%d", f.destID)), sorted(f.ofA, f.ofB, f.goneOnA, f.goneOnB, f.misTagged); !slices.Equal(got, want) {
		t.Errorf("mona lists %v, want %v", got, want)
	}
	h.expectRefusals([]refusal{
		{"viewer of 1 forgets 1's", "DELETE", f.snapshotRoutes(f.ofA, f.ofA)["forget"][1], nil, 403, "Permission denied"},
		{"viewer of 1 restores 1's in place", "POST", "/api/backup/restore", map[string]any{"destinationId": f.destID,
			"snapshotId": f.ofA, "mode": "in-place", "confirmOverwrite": true}, 403, "Permission denied"},
	})
	h.must(200, "DELETE", f.snapshotRoutes(f.ofB, f.ofB)["forget"][1], nil, nil)

	h.headers = admin
	if got, want := f.listed(fmt.Sprintf("destinationId=%d", f.destID)), sorted(f.ofA, f.foreign, f.goneOnA, f.goneOnB, f.misTagged); !slices.Equal(got, want) {
		t.Errorf("after the forgets the admin lists %v, want %v (only B's forgotten)", got, want)
	}
}
