package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/selfupdate"
	"github.com/berth-dev/berth/server/internal/servertest"
	"github.com/berth-dev/berth/shared/enginetest"
)

// TestServerImageUpdatesItself runs the server image as users do and updates
// it through POST /api/self-update to a second tag of the image in the test
// registry, as a client of the reference does (newImage, the event stream):
// the stream reports the reference's steps and ends with launched; the
// updater replaces the container by one of the same name on the new tag,
// which keeps the data volume (the admin signs in again) and becomes
// healthy; the old container is gone and the updater reports success.
func TestServerImageUpdatesItself(t *testing.T) {
	enginetest.Require(t)
	enginetest.RequireEnv(t, "server image (make images)", "BERTH_SERVER_IMAGE")
	enginetest.RequireEnv(t, "test registry", "BERTH_TEST_REGISTRY")
	image, reg := os.Getenv("BERTH_SERVER_IMAGE"), os.Getenv("BERTH_TEST_REGISTRY")
	user, password := os.Getenv("BERTH_TEST_REGISTRY_USER"), os.Getenv("BERTH_TEST_REGISTRY_PASSWORD")
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	t.Setenv("DOCKER_HOST", "unix://"+enginetest.Socket)

	// The second tag: the same image under a name the registry serves.
	next := reg + "/berth-test/selfupdate-image:" + randomHex(t)
	docker(t, "tag", image, next)
	t.Cleanup(func() { dockerOutputOf("rmi", next) })
	if user != "" {
		loginCmd := exec.Command("docker", "login", "--username", user, "--password-stdin", reg)
		loginCmd.Stdin = strings.NewReader(password)
		if out, err := loginCmd.CombinedOutput(); err != nil {
			t.Fatalf("docker login: %v\n%s", err, out)
		}
	}
	docker(t, "push", "--quiet", next)
	docker(t, "rmi", next) // Berth must pull it

	name, base := runServerImage(t, image)
	t.Cleanup(func() {
		for _, id := range strings.Fields(dockerOutputOf("ps", "-aq", "--filter", "label="+selfupdate.Label)) {
			dockerOutputOf("rm", "-f", "-v", id)
		}
	})
	oldID := strings.TrimSpace(docker(t, "inspect", "--format", "{{.Id}}", name))
	cookie := map[string]string{"Cookie": imageFirstAdmin(t, name, base)}
	if user != "" {
		body, _ := json.Marshal(map[string]string{"name": "selfupdate-test", "url": "http://" + reg, "username": user, "password": password})
		if status := do(t, "POST", base+"/api/registries", cookie, string(body), nil); status != http.StatusCreated {
			t.Fatalf("POST /api/registries = %d", status)
		}
	}

	// The update, followed as the reference's console does.
	req, _ := http.NewRequest("POST", base+"/api/self-update", strings.NewReader(`{"newImage":"`+next+`"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Cookie", cookie["Cookie"])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		resp.Body.Close()
		t.Fatalf("POST /api/self-update = %d %s, want 200 and an event stream", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	completed := map[string]bool{}
	var event, updater string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() && updater == "" {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var d struct{ Step, Status, Message, UpdaterID string }
			_ = json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &d)
			switch event {
			case "step":
				if d.Status == "completed" {
					completed[d.Step] = true
				}
			case "error":
				t.Fatalf("self-update failed: %s", line)
			case "launched":
				updater = d.UpdaterID
			}
		}
	}
	resp.Body.Close()
	for _, step := range []string{"pulling_image", "building_config", "pulling_updater", "creating_container", "launching_updater"} {
		if !completed[step] {
			t.Errorf("step %s not reported completed (completed: %v)", step, completed)
		}
	}
	if updater == "" {
		t.Fatalf("the stream ended without launched (err %v)", sc.Err())
	}

	// The hand-over: a new container under the same name, on the new tag.
	waitFor(t, 3*time.Minute, "the container to run on "+next, func() bool {
		out := strings.Fields(dockerOutputOf("inspect", "--format", "{{.Id}} {{.Config.Image}} {{.State.Running}}", name))
		return len(out) == 3 && out[0] != oldID && out[1] == next && out[2] == "true"
	})
	waitFor(t, 3*time.Minute, "the updater to finish", func() bool {
		return strings.TrimSpace(dockerOutputOf("inspect", "--format", "{{.State.Status}}", updater)) == "exited"
	})
	if code := strings.TrimSpace(dockerOutputOf("inspect", "--format", "{{.State.ExitCode}}", updater)); code != "0" {
		t.Fatalf("updater exit code %s; its log:\n%s", code, dockerOutputOf("logs", updater))
	}
	if out := dockerOutputOf("inspect", "--format", "{{.Id}}", oldID); strings.TrimSpace(out) == oldID {
		t.Errorf("the old container %s is still there", oldID)
	}
	// Same data: the admin signs in on the new container; it reports the
	// updater's success.
	base = waitServing(t, name)
	cookie = map[string]string{"Cookie": servertest.Login(t, base, "admin", imageAdminPassword)}
	var p struct {
		Logs     string
		Status   string
		ExitCode *int
	}
	if status := do(t, "GET", base+"/api/self-update/progress?id="+updater, cookie, "", &p); status != http.StatusOK ||
		p.ExitCode == nil || *p.ExitCode != 0 || !strings.Contains(p.Logs, "Updated") {
		t.Fatalf("progress = %d %+v", status, p)
	}
	waitFor(t, time.Minute, "the new container to be healthy", func() bool {
		return strings.TrimSpace(dockerOutputOf("inspect", "--format", "{{.State.Health.Status}}", name)) == "healthy"
	})
}
