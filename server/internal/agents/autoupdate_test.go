package agents_test

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/shared/enginetest"
)

// Auto-update works the same through both kinds of agent: the registry is
// asked through the remote engine, the new image pulled through the agent,
// the container recreated there and kept once it stays up.
func TestAutoUpdateThroughAgents(t *testing.T) {
	h, socket, envs, _ := agentEnvironments(t)
	h.opts.UpdateGrace = 3 * time.Second
	h.restart()
	h.waitConnected(envs["agent-edge"], true)
	host, user, password := registry(t)
	addRegistry(t, h, host, user, password)

	for _, typ := range []string{"agent-standard", "agent-edge"} {
		env := envs[typ]
		t.Run(typ, func(t *testing.T) {
			ref := fmt.Sprintf("%s/berth-test/au-agent-%s-%d:1", host, h.label, env)
			name := fmt.Sprintf("au-agent-%s-%d", h.label, env)
			var v1, v2 string
			enginetest.RemoveImages(t, h.label, &v1, &v2)
			t.Cleanup(func() {
				removeLabelled(t, socket, h.label) // the containers first
				cmd := exec.Command("docker", "rmi", "-f", ref, v1, v2)
				cmd.Env = append(os.Environ(), "DOCKER_HOST=unix://"+socket)
				_ = cmd.Run()
			})
			v1 = enginetest.BuildImage(t, enginetest.Image(), ref, h.label, "LABEL version=1")
			enginetest.Push(t, ref, user, password)

			var pulled map[string]any
			h.must(200, "POST", fmt.Sprintf("/api/images/pull?env=%d", env), map[string]any{"image": ref, "scanAfterPull": false},
				&pulled, "Accept", "application/json")
			if pulled["status"] != "complete" {
				t.Fatalf("pull = %v", pulled)
			}
			var created struct{ ID string }
			h.must(200, "POST", fmt.Sprintf("/api/containers?env=%d", env), map[string]any{"name": name, "image": ref,
				"command": []string{"sleep", "3600"}, "labels": map[string]string{enginetest.Label: h.label},
				"restartPolicy": "unless-stopped", "startAfterCreate": true}, &created)
			var a struct{ ID int64 }
			h.must(200, "POST", fmt.Sprintf("/api/auto-update/%s?env=%d", name, env), map[string]any{"enabled": true,
				"cronExpression": "0 3 * * *"}, &a)

			v2 = enginetest.BuildImage(t, enginetest.Image(), ref, h.label, "LABEL version=2")
			enginetest.Push(t, ref, user, password)
			var run struct {
				Execution struct {
					Status       string
					ErrorMessage *string
					Logs         string
				}
			}
			h.must(200, "POST", fmt.Sprintf("/api/schedules/container_update/%d/run?wait=true", a.ID), nil, &run)
			if run.Execution.Status != "success" || !strings.Contains(run.Execution.Logs, "Updated "+name) {
				t.Fatalf("update through the %s = %+v", typ, run.Execution)
			}
			var in struct {
				ID     string `json:"Id"`
				Image  string
				State  struct{ Running bool }
				Config struct{ Image string }
			}
			engineGet(t, socket, "/containers/"+name+"/json", &in)
			if in.ID == created.ID || in.Image != v2 || !in.State.Running || in.Config.Image != ref {
				t.Errorf("container on the remote engine after the update: %+v; want a new container on %s", in, v2)
			}
		})
	}
}
