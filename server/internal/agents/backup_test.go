package agents_test

import (
	"bytes"
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/berth-dev/berth/server/internal/backup"
	"github.com/berth-dev/berth/server/internal/helperimage/helperimagetest"
	"github.com/berth-dev/berth/shared/enginetest"
)

// TestBackupRoundTripThroughAnAgent backs a volume of the remote engine up
// to a REST repository and restores it in place, restic running next to
// the data in a helper on that engine, reached through a standard agent
// (the helper's creation, its secrets copied in, its logs, its wait and
// the dump's archive read all go through the agent's raw Engine pipe).
func TestBackupRoundTripThroughAnAgent(t *testing.T) {
	enginetest.RequireEnv(t, "backup repositories", "BERTH_TEST_RESTIC", "BERTH_TEST_REST_URL", "BERTH_TEST_REST_DIR")
	socket := engine2(t)
	h := startBerth(t, 0)
	t.Cleanup(func() { removeLabelled(t, socket, h.label) })
	const token = "standard-agent-token-backup-0123456789"
	_, port, cert := standardAgent(t, socket, token)
	var e environment
	h.must(201, "POST", "/api/environments", map[string]any{"name": "backup-" + h.label, "connectionType": "agent-standard",
		"host": "127.0.0.1", "port": port, "protocol": "https", "agentToken": token, "tlsCa": cert}, &e)
	runner, where := backupRunnerOn(t, h, e.ID)
	t.Cleanup(func() {
		if ids := strings.Fields(onEngine2(t, socket, "ps", "-aq", "--filter", "label="+backup.OwnerLabel+"="+where.Owner)); len(ids) > 0 {
			t.Errorf("backup helpers left on the remote engine: %v", ids)
			onEngine2(t, socket, append([]string{"rm", "-f"}, ids...)...)
		}
	})

	name := "berth-test-" + h.label
	repo := backup.Repo{Repository: "rest:" + os.Getenv("BERTH_TEST_REST_URL") + "/" + name + "/", Password: "pw-" + rand.Text()}
	t.Cleanup(func() { os.RemoveAll(filepath.Join(os.Getenv("BERTH_TEST_REST_DIR"), name)) })
	vol := "berth-agentbackup-" + h.label
	onEngine2(t, socket, "volume", "create", "--label", enginetest.Label+"="+h.label, vol)
	inVol := func(script string) string {
		return onEngine2(t, socket, "run", "--rm", "--label", enginetest.Label+"="+h.label, "-v", vol+":/d", "-w", "/d",
			enginetest.Image(), "sh", "-c", "set -e; "+script)
	}
	sums := `busybox find . -type f | busybox sort | while read -r f; do echo "$f $(busybox sha256sum < "$f")"; done`
	inVol("mkdir dir; echo remote > a.txt; busybox dd if=/dev/urandom of=dir/b.bin bs=1024 count=200 2>/dev/null")
	want := inVol(sums)

	if _, err := runner.Init(t.Context(), where, repo); err != nil {
		t.Fatal(err)
	}
	sum, err := runner.Backup(t.Context(), where, repo, backup.Source{Volumes: []string{vol}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	inVol("echo changed > a.txt; rm dir/b.bin")
	if err := runner.Restore(t.Context(), where, repo, sum.SnapshotID, backup.Target{Volumes: map[string]string{vol: vol}}, nil); err != nil {
		t.Fatal(err)
	}
	if got := inVol(sums); got != want {
		t.Errorf("restored volume:\n%s\nwant\n%s", got, want)
	}
	var buf bytes.Buffer
	if err := runner.Dump(t.Context(), where, repo, sum.SnapshotID, backup.VolumesDir+"/"+vol+"/a.txt", &buf); err != nil {
		t.Fatal(err)
	}
	if buf.String() != "remote\n" {
		t.Errorf("dump of a.txt = %q", buf.String())
	}
}

// backupRunnerOn returns a backup runner with Berth's helper image and
// where it runs on environment envID of h (helpers owned by this test).
func backupRunnerOn(t *testing.T, h *berth, envID int64) (*backup.Restic, backup.Where) {
	t.Helper()
	stored, err := h.b.Store.GetEnvironment(t.Context(), envID)
	if err != nil {
		t.Fatal(err)
	}
	c, err := h.b.Engines.Client(t.Context(), stored.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	set, err := helperimagetest.Set()
	if err != nil {
		t.Fatal(err)
	}
	runner := backup.New(backup.Config{Restic: os.Getenv("BERTH_TEST_RESTIC"), Helper: set})
	return runner, backup.Where{EnvID: envID, Client: c, Owner: "berth-test-" + h.label}
}
