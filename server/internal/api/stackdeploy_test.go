package api_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/berth-dev/berth/shared/enginetest"
)

// stackImage returns the image id of the stack's only container.
func (h *harness) stackImage(name string) string {
	h.t.Helper()
	e, ok := h.stackEntry(name)
	if !ok || len(e.Containers) != 1 {
		h.t.Fatalf("stack %s = %+v, %v: want one container", name, e, ok)
	}
	var ct struct{ Image string }
	enginetest.Must(h.t, 200, "GET", "/containers/"+e.Containers[0]+"/json", nil, nil, &ct)
	return ct.Image
}

// TestStackDeployPullTakesTheRepointedTag checks deploy's pull (issue 21
// item 7) on the real engine and registry: once the stack's tag points to
// another image in the registry, a deploy without pull keeps the image the
// engine has and a deploy with pull:true runs the registry's.
func TestStackDeployPullTakesTheRepointedTag(t *testing.T) {
	reg := requireRegistry(t)
	h := newHarness(t)
	name := "pl-" + h.label
	h.removeStackAtCleanup(name)
	ref := reg.host + "/berth-test/pull-" + h.label + ":1"
	oldID := enginetest.BuildImage(t, enginetest.Image(), ref, h.label, "LABEL berth.test.version=1")
	newID := ""
	enginetest.RemoveImages(t, h.label, &oldID, &newID)
	enginetest.Push(t, ref, reg.user, reg.password)
	h.must(201, "POST", "/api/registries", map[string]any{"name": "pull-" + h.label, "url": reg.host,
		"username": reg.user, "password": reg.password}, nil)

	compose := fmt.Sprintf("services:\n  app:\n    image: %s\n    command: [\"sleep\", \"3600\"]\n    labels:\n      %s: %s\n",
		ref, enginetest.Label, h.label)
	if _, _, res := h.streamStack("POST", "/api/stacks?env=1", map[string]any{"name": name, "compose": compose}); !res.Success {
		t.Fatalf("deploy: %+v", res)
	}
	if got := h.stackImage(name); got != oldID {
		t.Fatalf("image after the first deploy = %s, want %s", got, oldID)
	}
	// The registry's tag now names another image; the engine's still the old one.
	newID = enginetest.BuildImage(t, enginetest.Image(), ref, h.label, "LABEL berth.test.version=2")
	enginetest.Push(t, ref, reg.user, reg.password)
	enginetest.TagImage(t, oldID, ref)

	if _, _, res := h.streamStack("POST", "/api/stacks/"+name+"/deploy?env=1", map[string]any{"forceRecreate": true}); !res.Success {
		t.Fatalf("deploy without pull: %+v", res)
	}
	if got := h.stackImage(name); got != oldID {
		t.Errorf("image after a deploy without pull = %s, want the engine's %s", got, oldID)
	}
	if _, _, res := h.streamStack("POST", "/api/stacks/"+name+"/deploy?env=1", map[string]any{"pull": true}); !res.Success {
		t.Fatalf("deploy with pull: %+v", res)
	}
	if got := h.stackImage(name); got != newID {
		t.Errorf("image after a deploy with pull = %s, want the registry's %s (old %s)", got, newID, oldID)
	}
}

// TestStackDeployBuildsFromTheStackDirectoryOnly checks deploy's build
// (issue 21 item 7) on the real engine: a service with build: is built from
// the Dockerfile in the stack's directory (FROM a local image) and runs;
// a context or Dockerfile that leaves the directory by ".." or a symbolic
// link is refused with 400 before anything runs.
func TestStackDeployBuildsFromTheStackDirectoryOnly(t *testing.T) {
	h := newHarness(t)
	name := "bd-" + h.label
	h.removeStackAtCleanup(name)
	image := "berth-test/built-" + h.label + ":1"
	builtID := ""
	enginetest.RemoveImages(t, h.label, &builtID)
	t.Cleanup(func() { enginetest.Do(t, "DELETE", "/images/"+image+"?force=1", nil, nil) })
	compose := func(build string) string {
		return fmt.Sprintf("services:\n  app:\n    image: %s\n    build: %s\n    labels:\n      %s: %s\n",
			image, build, enginetest.Label, h.label)
	}
	h.createStoppedStack(name, compose("."), nil)
	var f struct {
		StackDir string `json:"stackDir"`
	}
	h.must(200, "GET", "/api/stacks/"+name+"/compose?env=1", nil, &f)
	dockerfile := fmt.Sprintf("FROM %s\nLABEL %s=%s\nLABEL berth.test.built=yes\nCMD [\"sleep\", \"3600\"]\n",
		enginetest.Image(), enginetest.Label, h.label)
	if err := os.WriteFile(filepath.Join(f.StackDir, "Dockerfile"), []byte(dockerfile), 0o644); err != nil {
		t.Fatal(err)
	}

	status, _, res := h.streamStack("POST", "/api/stacks/"+name+"/deploy?env=1", map[string]any{"build": true})
	if status != 200 || !res.Success {
		t.Fatalf("deploy with build: %d %+v", status, res)
	}
	builtID = enginetest.ImageID(t, image)
	if got := h.stackImage(name); got != builtID {
		t.Errorf("container image = %s, want the built %s", got, builtID)
	}
	var img struct {
		Config struct{ Labels map[string]string }
	}
	enginetest.Must(t, 200, "GET", "/images/"+builtID+"/json", nil, nil, &img)
	if img.Config.Labels["berth.test.built"] != "yes" {
		t.Errorf("built image labels = %v, want the Dockerfile's", img.Config.Labels)
	}
	if e, _ := h.stackEntry(name); e.Status != "running" {
		t.Errorf("stack after the build = %+v, want running", e)
	}

	// Contexts and Dockerfiles outside the stack's directory.
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "Dockerfile"), []byte(dockerfile), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(f.StackDir, "elsewhere")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "Dockerfile"), filepath.Join(f.StackDir, "Linked.Dockerfile")); err != nil {
		t.Fatal(err)
	}
	for _, build := range []string{
		"..",
		"{context: ., dockerfile: ../Dockerfile}",
		"./elsewhere",
		"{context: ., dockerfile: Linked.Dockerfile}",
		"https://example.com/repo.git",
	} {
		h.must(200, "PUT", "/api/stacks/"+name+"/compose?env=1", map[string]any{"content": compose(build)}, nil)
		code, body := h.do("POST", "/api/stacks/"+name+"/deploy?env=1", map[string]any{"build": true})
		if code != 400 || !strings.Contains(shErrorOf(body), "not in the stack's directory") {
			t.Errorf("deploy with build %s = %d %s, want 400", build, code, body)
		}
	}
}
