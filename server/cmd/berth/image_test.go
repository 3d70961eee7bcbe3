package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/servertest"
	"github.com/berth-dev/berth/shared/enginetest"
	"github.com/berth-dev/berth/shared/testwait"
)

// imageLabel is the berth.test label value of what the image test creates.
const imageLabel = "server-image"

// maxImageSize is generous for a static binary plus CA bundle and time zone
// data (about 55 MB in 2026-11, nearly all of it the binary); a base
// distribution sneaking in would exceed it.
const maxImageSize = 120 << 20

// TestServerImageServesTheLocalEngine runs the server image built by `make
// images` (named by BERTH_SERVER_IMAGE) as docs/deploy.md tells users to: the
// engine socket mounted with its group added, a named volume at /data, the
// port published. A fresh install then answers /api/health, prints a setup
// token with which the first admin is created, lists the local environment
// (so the unprivileged user reached the engine), and its HEALTHCHECK reports
// healthy.
func TestServerImageServesTheLocalEngine(t *testing.T) {
	enginetest.Require(t)
	enginetest.RequireEnv(t, "server image (make images)", "BERTH_SERVER_IMAGE")
	image := os.Getenv("BERTH_SERVER_IMAGE")
	if _, err := exec.LookPath("docker"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the docker CLI is missing: %v", err)
		}
		t.Skipf("the docker CLI is missing: %v", err)
	}
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	t.Setenv("DOCKER_HOST", "unix://"+enginetest.Socket)

	var inspect struct {
		Size   int64
		Config struct {
			User        string
			Healthcheck struct{ Test []string }
			Volumes     map[string]struct{}
		}
	}
	decode(t, docker(t, "image", "inspect", "--format", "{{json .}}", image), &inspect)
	t.Logf("%s: %.1f MB", image, float64(inspect.Size)/(1<<20))
	if inspect.Size > maxImageSize {
		t.Errorf("image size = %d bytes, want at most %d", inspect.Size, maxImageSize)
	}
	if inspect.Config.User == "" || strings.HasPrefix(inspect.Config.User, "0") || inspect.Config.User == "root" {
		t.Errorf("image user = %q, want an unprivileged user", inspect.Config.User)
	}
	if got := strings.Join(inspect.Config.Healthcheck.Test, " "); got != "CMD /berth healthcheck" {
		t.Errorf("image healthcheck = %q, want CMD /berth healthcheck", got)
	}
	if _, ok := inspect.Config.Volumes["/data"]; !ok {
		t.Errorf("image volumes = %v, want /data", inspect.Config.Volumes)
	}

	name, base := runServerImage(t, image)
	cookie := imageFirstAdmin(t, name, base)
	waitLocal(t, base, cookie)
	var envs []struct {
		ID             int64
		Name           string
		ConnectionType string `json:"connectionType"`
	}
	if status := do(t, "GET", base+"/api/environments", map[string]string{"Cookie": cookie}, "", &envs); status != http.StatusOK {
		t.Fatalf("GET /api/environments = %d", status)
	}
	if len(envs) != 1 || envs[0].Name != "local" || envs[0].ConnectionType != "socket" {
		t.Fatalf("environments = %+v, want the local socket environment only", envs)
	}

	waitFor(t, 30*time.Second, "the container to be healthy", func() bool {
		return strings.TrimSpace(docker(t, "inspect", "--format", "{{.State.Health.Status}}", name)) == "healthy"
	})
}

// runServerImage runs image as docs/deploy.md tells users to (the engine
// socket mounted with its group added, a named volume at /data, the port
// published on loopback) and waits for /api/health. It returns the
// container's name and the server's base URL. What it creates carries the
// image test's label and goes at the end of the test.
func runServerImage(t *testing.T, image string) (name, base string) {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(enginetest.Socket, &st); err != nil {
		t.Fatal(err)
	}
	name = "berth-image-test-" + randomHex(t)
	// Leftovers of an interrupted run go too; containers before volumes.
	cleanup := func() {
		enginetest.RemoveLabelled(t, imageLabel)
		enginetest.RemoveLabelledVolumes(t, imageLabel)
	}
	cleanup()
	t.Cleanup(cleanup)
	label := enginetest.Label + "=" + imageLabel
	docker(t, "volume", "create", "--label", label, name)
	docker(t, "run", "-d", "--name", name, "--label", label,
		"-v", enginetest.Socket+":/var/run/docker.sock", "--group-add", strconv.FormatUint(uint64(st.Gid), 10),
		"-v", name+":/data", "-p", "127.0.0.1::3000",
		// The image checks every 30 s; the test need not wait that long.
		"--health-interval", "1s", image)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("container log:\n%s", dockerOutput(name))
		}
	})
	return name, waitServing(t, name)
}

// waitServing waits for container name's published port to answer
// /api/health and returns its base URL.
func waitServing(t *testing.T, name string) string {
	t.Helper()
	hostPort := strings.TrimSpace(strings.Split(docker(t, "port", name, "3000/tcp"), "\n")[0])
	base := "http://" + hostPort
	waitFor(t, 30*time.Second, "GET /api/health to answer 200", func() bool {
		resp, err := http.Get(base + "/api/health")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return base
}

// imageAdminPassword is the password of the first admin firstAdmin creates.
const imageAdminPassword = "image-test-password"

// imageFirstAdmin creates the first admin of a fresh install with the setup token
// from the container's log, as a real user does, and returns the Cookie
// header of its session.
func imageFirstAdmin(t *testing.T, name, base string) string {
	t.Helper()
	var token string
	waitFor(t, 10*time.Second, "the setup token in the log", func() bool {
		m := regexp.MustCompile(`setup_token=([0-9a-f]{32,})`).FindStringSubmatch(dockerOutput(name))
		if m != nil {
			token = m[1]
		}
		return m != nil
	})
	admin := `{"username":"admin","password":"` + imageAdminPassword + `"}`
	if status := do(t, "POST", base+"/api/users", map[string]string{"X-Setup-Token": token}, admin, nil); status != http.StatusCreated {
		t.Fatalf("first admin with the setup token = %d, want 201", status)
	}
	return servertest.Login(t, base, "admin", imageAdminPassword)
}

// docker runs the docker CLI and returns its standard output; a failure
// fails the test.
func docker(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "docker", args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("docker %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

// dockerOutput returns what container name wrote (standard output and error).
func dockerOutput(name string) string { return dockerOutputOf("logs", name) }

// dockerOutputOf runs the docker CLI and returns what it wrote (standard
// output and error); a failure is in the text, not the test's.
func dockerOutputOf(args ...string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "docker", args...).CombinedOutput()
	if err != nil {
		return "docker " + args[0] + ": " + err.Error() + "\n" + string(out)
	}
	return string(out)
}

func decode(t *testing.T, s string, out any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), out); err != nil {
		t.Fatalf("decode %q: %v", s, err)
	}
}

// waitFor polls cond until it holds, failing the test after d.
var waitFor = testwait.Within

func randomHex(t *testing.T) string {
	t.Helper()
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
