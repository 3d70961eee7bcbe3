package agents_test

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/berth-dev/berth/shared/enginetest"
)

// TestAgentImageDialsBerthInEdgeMode runs the agent image built by `make
// images` (BERTH_AGENT_IMAGE) as docs/agents.md tells users to: a container
// on the test engine with the engine socket mounted, dialling a test Berth in
// edge mode. Its environment then lists a container of that engine.
func TestAgentImageDialsBerthInEdgeMode(t *testing.T) {
	enginetest.Require(t)
	enginetest.RequireEnv(t, "agent image (make images)", "BERTH_AGENT_IMAGE")
	image := os.Getenv("BERTH_AGENT_IMAGE")
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	t.Setenv("DOCKER_HOST", "unix://"+enginetest.Socket)
	docker := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("docker", args...).CombinedOutput()
		if err != nil {
			t.Fatalf("docker %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}

	h := startBerth(t, 0)
	t.Cleanup(func() { removeLabelled(t, enginetest.Socket, h.label) })
	e, in := h.createEdge("image-" + h.label)
	if !strings.Contains(in.DockerRun, "-v /var/run/docker.sock:/var/run/docker.sock") || !strings.Contains(in.DockerRun, "BERTH_TOKEN="+in.Token) {
		t.Fatalf("dockerRun = %q", in.DockerRun)
	}
	// As the install line says, on the host network so that the agent
	// reaches this test's Berth on loopback.
	name := "berth-agent-" + h.label
	docker("run", "-d", "--name", name, "--network", "host", "--label", enginetest.Label+"="+h.label,
		"-v", enginetest.Socket+":/var/run/docker.sock", "-e", "BERTH_SERVER="+h.b.AgentURL, "-e", "BERTH_TOKEN="+in.Token,
		"-e", "BERTH_AGENT_NAME=image-test", image)
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := exec.Command("docker", "logs", name).CombinedOutput()
			t.Logf("agent container log:\n%s", out)
		}
	})
	got := h.waitConnected(e.ID, true)
	if got.AgentName == nil || *got.AgentName != "image-test" {
		t.Errorf("agent name = %v", got.AgentName)
	}
	id := docker("create", "--label", enginetest.Label+"="+h.label, enginetest.Image(), "true")
	var list []struct{ ID, Name string }
	h.must(200, "GET", fmt.Sprintf("/api/containers?env=%d&all=true", e.ID), nil, &list)
	found := false
	for _, c := range list {
		found = found || c.ID == id
	}
	if !found {
		t.Fatalf("the container list through the agent image lacks %s (%d containers)", id, len(list))
	}
}
