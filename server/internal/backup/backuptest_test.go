package backup_test

import (
	"context"
	"crypto/rand"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/berth-dev/berth/server/internal/backup"
	"github.com/berth-dev/berth/server/internal/helperimage/helperimagetest"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/enginetest"
)

// env is what a backup test works with: a Runner, the local engine and a
// unique label for what the test creates.
type env struct {
	t      *testing.T
	runner *backup.Restic
	where  backup.Where
	label  string
	socket string
}

// newEnv returns a Runner on the local engine, skipping (or failing in
// CI) without restic or the engine.
func newEnv(t *testing.T) *env {
	t.Helper()
	enginetest.Require(t)
	enginetest.RequireEnv(t, "restic", "BERTH_TEST_RESTIC")
	return newEnvOn(t, enginetest.Socket)
}

func newEnvOn(t *testing.T, socket string) *env {
	t.Helper()
	set, err := helperimagetest.Set()
	if err != nil {
		t.Fatal(err)
	}
	label := strings.ToLower(rand.Text()[:10])
	c, err := engine.NewManager(slog.New(slog.DiscardHandler)).Client(t.Context(),
		engine.Endpoint{ID: 1, ConnectionType: engine.Socket, SocketPath: socket})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, label: label, socket: socket,
		runner: backup.New(backup.Config{Restic: os.Getenv("BERTH_TEST_RESTIC"), Helper: set}),
		where:  backup.Where{EnvID: 1, Client: c, Owner: "berth-test-" + label}}
	t.Cleanup(func() {
		e.removeHelpers()
		enginetest.RemoveLabelled(t, label)
		removeVolumes(t, socket, label)
	})
	return e
}

// removeHelpers removes the backup helpers the test left (there should be
// none: the test checks).
func (e *env) removeHelpers() {
	ids := strings.Fields(e.docker("ps", "-aq", "--filter", "label="+backup.OwnerLabel+"="+e.where.Owner))
	if len(ids) > 0 {
		e.docker(append([]string{"rm", "-f"}, ids...)...)
	}
}

// helpers returns the ids of the test's backup helpers.
func (e *env) helpers() []string {
	return strings.Fields(e.docker("ps", "-aq", "--filter", "label="+backup.OwnerLabel+"="+e.where.Owner))
}

// docker runs the docker CLI on the test's engine.
func (e *env) docker(args ...string) string {
	e.t.Helper()
	cmd := exec.Command("docker", args...)
	cmd.Env = append(os.Environ(), "DOCKER_HOST=unix://"+e.socket)
	out, err := cmd.CombinedOutput()
	if err != nil {
		e.t.Fatalf("docker %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func removeVolumes(t *testing.T, socket, label string) {
	cmd := exec.Command("docker", "volume", "ls", "-q", "--filter", "label="+enginetest.Label+"="+label)
	cmd.Env = append(os.Environ(), "DOCKER_HOST=unix://"+socket)
	out, _ := cmd.Output()
	if ids := strings.Fields(string(out)); len(ids) > 0 {
		rm := exec.Command("docker", append([]string{"volume", "rm", "-f"}, ids...)...)
		rm.Env = cmd.Env
		if b, err := rm.CombinedOutput(); err != nil {
			t.Logf("removing volumes: %v %s", err, b)
		}
	}
}

// volume creates a volume holding what script (sh, in /d) writes.
func (e *env) volume(name, script string) string {
	e.t.Helper()
	name = "berth-test-backup-" + e.label + "-" + name
	e.docker("volume", "create", "--label", enginetest.Label+"="+e.label, name)
	e.inVolume(name, script)
	return name
}

// inVolume runs script (sh, in /d) in a container with the volume at /d
// and returns its output.
func (e *env) inVolume(name, script string) string {
	e.t.Helper()
	return e.docker("run", "--rm", "--label", enginetest.Label+"="+e.label, "-v", name+":/d", "-w", "/d",
		enginetest.Image(), "sh", "-c", "set -e; "+script)
}

// volumeSums lists every entry of the volume with its type, mode, owner
// and (files) its sha256.
func (e *env) volumeSums(name string) string {
	e.t.Helper()
	return e.inVolume(name, `busybox find . | busybox sort | while read -r f; do
		if [ -L "$f" ]; then echo "link $f -> $(busybox readlink "$f")"
		elif [ -d "$f" ]; then echo "dir $f $(busybox stat -c '%a %u:%g' "$f")"
		else echo "file $f $(busybox stat -c '%a %u:%g' "$f") $(busybox sha256sum < "$f")"; fi
	done`)
}

// hostSums is volumeSums of a host directory.
func hostSums(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			b.WriteString("link " + rel + " -> " + l + "\n")
		case fi.IsDir():
			b.WriteString("dir " + rel + " " + fi.Mode().String() + "\n")
		default:
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			b.WriteString("file " + rel + " " + fi.Mode().String() + " " + sha(data) + "\n")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// repos returns a repository of each type the test environment serves,
// each new (a unique path) and removed after the test.
func (e *env) repos() map[string]backup.Repo {
	e.t.Helper()
	t := e.t
	enginetest.RequireEnv(t, "backup repositories", "BERTH_TEST_REST_URL", "BERTH_TEST_REST_DIR", "BERTH_TEST_SFTP_HOST",
		"BERTH_TEST_SFTP_PORT", "BERTH_TEST_SFTP_USER", "BERTH_TEST_SFTP_DIR", "BERTH_TEST_SFTP_KEY", "BERTH_TEST_SFTP_KNOWN_HOSTS",
		"BERTH_TEST_S3_URL", "BERTH_TEST_S3_BUCKET", "BERTH_TEST_S3_ACCESS_KEY", "BERTH_TEST_S3_SECRET_KEY", "BERTH_TEST_S3_DIR",
		"BERTH_TEST_S3_META_DIR")
	password := "pw-" + rand.Text()
	name := "berth-test-" + e.label
	key, err := os.ReadFile(os.Getenv("BERTH_TEST_SFTP_KEY"))
	if err != nil {
		t.Fatal(err)
	}
	known, err := os.ReadFile(os.Getenv("BERTH_TEST_SFTP_KNOWN_HOSTS"))
	if err != nil {
		t.Fatal(err)
	}
	sftpDir := filepath.Join(os.Getenv("BERTH_TEST_SFTP_DIR"), name)
	restDir := filepath.Join(os.Getenv("BERTH_TEST_REST_DIR"), name)
	s3Dir := filepath.Join(os.Getenv("BERTH_TEST_S3_DIR"), os.Getenv("BERTH_TEST_S3_BUCKET"), name)
	// versitygw keeps each object's metadata in a sidecar tree of its own.
	s3Meta := filepath.Join(os.Getenv("BERTH_TEST_S3_META_DIR"), os.Getenv("BERTH_TEST_S3_BUCKET"), name)
	t.Cleanup(func() {
		os.RemoveAll(sftpDir)
		os.RemoveAll(restDir)
		os.RemoveAll(s3Dir)
		os.RemoveAll(s3Meta)
	})
	return map[string]backup.Repo{
		backup.TypeLocal: {Type: backup.TypeLocal, Repository: filepath.Join(t.TempDir(), "repo"), Password: password},
		backup.TypeREST: {Type: backup.TypeREST, Password: password,
			Repository: "rest:" + os.Getenv("BERTH_TEST_REST_URL") + "/" + name + "/"},
		backup.TypeSFTP: {Type: backup.TypeSFTP, Password: password, SSHKey: string(key), SSHKnownHosts: string(known),
			Repository: "sftp://" + os.Getenv("BERTH_TEST_SFTP_USER") + "@" + os.Getenv("BERTH_TEST_SFTP_HOST") + ":" +
				os.Getenv("BERTH_TEST_SFTP_PORT") + "/" + sftpDir},
		backup.TypeS3: {Type: backup.TypeS3, Password: password,
			Repository: "s3:" + os.Getenv("BERTH_TEST_S3_URL") + "/" + os.Getenv("BERTH_TEST_S3_BUCKET") + "/" + name,
			Env: map[string]string{"AWS_ACCESS_KEY_ID": os.Getenv("BERTH_TEST_S3_ACCESS_KEY"),
				"AWS_SECRET_ACCESS_KEY": os.Getenv("BERTH_TEST_S3_SECRET_KEY")}},
	}
}

// localRepo returns a new local repository, initialised.
func (e *env) localRepo() backup.Repo {
	e.t.Helper()
	r := backup.Repo{Type: backup.TypeLocal, Repository: filepath.Join(e.t.TempDir(), "repo"), Password: "pw-" + rand.Text()}
	if _, err := e.runner.Init(e.t.Context(), e.where, r); err != nil {
		e.t.Fatal(err)
	}
	return r
}

// noHelpersLeft fails the test if a backup helper is still there.
func (e *env) noHelpersLeft() {
	e.t.Helper()
	if ids := e.helpers(); len(ids) > 0 {
		e.t.Errorf("backup helpers left: %v", ids)
	}
}

func ctx(t *testing.T) context.Context { return t.Context() }
