package agents_test

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/berth-dev/berth/server/internal/helperimage/helperimagetest"
	"github.com/berth-dev/berth/shared/enginetest"
)

// onEngine2 runs the docker CLI against socket and returns its output.
func onEngine2(t *testing.T, socket string, args ...string) string {
	t.Helper()
	cmd := exec.Command("docker", args...)
	cmd.Env = append(os.Environ(), "DOCKER_HOST=unix://"+socket)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("docker %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestVolumeContentThroughAgents browses, reads, exports and clones a
// volume of the remote engine through both kinds of agent environment (the
// helper's exec goes through the agent's exec operation, the archive and
// container calls through its raw Engine pipe), and exports an image.
// Berth's helper image is loaded onto the remote engine through the agent
// when that engine lacks it, and every helper there runs it, by its id.
func TestVolumeContentThroughAgents(t *testing.T) {
	h, socket, envs, _ := agentEnvironments(t)
	helperImages, err := helperimagetest.Set()
	if err != nil {
		t.Fatal(err)
	}
	want, err := helperImages.ID(runtime.GOARCH)
	if err != nil {
		t.Fatal(err)
	}
	// Not there yet: the first browse loads it through the agent.
	rmi := exec.Command("docker", "rmi", "-f", want)
	rmi.Env = append(os.Environ(), "DOCKER_HOST=unix://"+socket)
	_ = rmi.Run()
	for _, typ := range []string{"agent-standard", "agent-edge"} {
		env := envs[typ]
		t.Run(typ, func(t *testing.T) {
			vol := fmt.Sprintf("berth-agentvol-%s-%d", h.label, env)
			clone := vol + "-clone"
			t.Cleanup(func() {
				for _, v := range []string{vol, clone} {
					ids := strings.Fields(onEngine2(t, socket, "ps", "-aq", "--filter", "label=berth.helper.volume="+v))
					if len(ids) > 0 {
						onEngine2(t, socket, append([]string{"rm", "-f"}, ids...)...)
					}
				}
			})
			created := enginetest.WatchCreates(t, socket, "berth.helper.volume="+vol)
			onEngine2(t, socket, "volume", "create", "--label", enginetest.Label+"="+h.label, vol)
			onEngine2(t, socket, "run", "--rm", "--label", enginetest.Label+"="+h.label, "-v", vol+":/d", enginetest.Image(),
				"sh", "-c", "mkdir /d/dir && echo remote > /d/dir/r.txt")

			var l struct {
				Entries []struct{ Name, Type string }
			}
			h.must(200, "GET", fmt.Sprintf("/api/volumes/%s/browse?env=%d&path=dir", vol, env), nil, &l)
			if len(l.Entries) != 1 || l.Entries[0].Name != "r.txt" || l.Entries[0].Type != "file" {
				t.Errorf("listing of dir = %+v", l.Entries)
			}
			var f struct{ Content string }
			h.must(200, "GET", fmt.Sprintf("/api/volumes/%s/browse/content?env=%d&path=dir/r.txt", vol, env), nil, &f)
			if f.Content != "remote\n" {
				t.Errorf("content = %q", f.Content)
			}
			h.must(200, "POST", fmt.Sprintf("/api/volumes/%s/browse/release?env=%d", vol, env), nil, nil)

			status, body := h.do("GET", fmt.Sprintf("/api/volumes/%s/export?env=%d", vol, env), nil)
			if status != 200 {
				t.Fatalf("export = %d %s", status, body)
			}
			if got := tarFile(t, body, "./dir/r.txt"); got != "remote\n" {
				t.Errorf("export's ./dir/r.txt = %q", got)
			}

			h.must(200, "POST", fmt.Sprintf("/api/volumes/%s/clone?env=%d", vol, env), map[string]string{"name": clone}, nil)
			if got := onEngine2(t, socket, "run", "--rm", "--label", enginetest.Label+"="+h.label, "-v", clone+":/c:ro",
				enginetest.Image(), "cat", "/c/dir/r.txt"); got != "remote" {
				t.Errorf("clone's dir/r.txt = %q", got)
			}

			status, body = h.do("GET", fmt.Sprintf("/api/images/%s/export?env=%d", strings.ReplaceAll(enginetest.Image(), "/", "%2F"), env), nil)
			if status != 200 || tarFile(t, body, "manifest.json") == "" {
				t.Errorf("image export = %d, %d bytes, want a tar with manifest.json", status, len(body))
			}
			if left := onEngine2(t, socket, "ps", "-aq", "--filter", "label=berth.helper.volume="+vol); left != "" {
				t.Errorf("helpers left on the remote engine: %s", left)
			}
			images := created()
			if len(images) != 3 {
				t.Errorf("helpers created on the remote engine: %v, want 3 (browse, export, clone)", images)
			}
			for id, img := range images {
				if img != want {
					t.Errorf("remote helper %.12s was created from %q, want Berth's helper image %s", id, img, want)
				}
			}
		})
	}
}

// tarFile returns the content of the entry name of the tar b.
func tarFile(t *testing.T, b []byte, name string) string {
	t.Helper()
	tr := tar.NewReader(bytes.NewReader(b))
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return ""
		}
		if err != nil {
			t.Fatal(err)
		}
		if hdr.Name == name {
			data, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			return string(data)
		}
	}
}
