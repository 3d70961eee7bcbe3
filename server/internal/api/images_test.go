package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/shared/enginetest"
)

// testRegistry is the registry scripts/test-env.sh runs on loopback.
type testRegistry struct{ host, user, password string }

func requireRegistry(t *testing.T) testRegistry {
	t.Helper()
	enginetest.RequireEnv(t, "test registry", "BERTH_TEST_REGISTRY", "BERTH_TEST_REGISTRY_USER", "BERTH_TEST_REGISTRY_PASSWORD")
	return testRegistry{os.Getenv("BERTH_TEST_REGISTRY"), os.Getenv("BERTH_TEST_REGISTRY_USER"), os.Getenv("BERTH_TEST_REGISTRY_PASSWORD")}
}

// removeImages force-removes local images by name at cleanup.
func removeImages(t *testing.T, names ...string) {
	t.Cleanup(func() {
		for _, n := range names {
			req, _ := http.NewRequest("DELETE", "http://engine/images/"+n+"?force=1", nil)
			if resp, err := enginetest.HTTPClient().Do(req); err == nil {
				resp.Body.Close()
			}
		}
	})
}

// followJob reads a job's event stream to its end.
func (h *harness) followJob(jobID string) []sseEvent {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	events, resp := h.openEvents(ctx, "/api/jobs/"+jobID)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		h.t.Fatalf("job stream = %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var out []sseEvent
	for ev := range events {
		out = append(out, ev)
	}
	return out
}

func lastData(t *testing.T, evs []sseEvent) map[string]any {
	t.Helper()
	if len(evs) == 0 {
		t.Fatal("no events")
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(evs[len(evs)-1].Data), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestPushToARealRegistryAndPullBack(t *testing.T) {
	t.Parallel()
	reg := requireRegistry(t)
	h := newHarness(t)
	repo := "berth-test/push-" + h.label
	local, remote := repo+":1", reg.host+"/"+repo+":1"
	removeImages(t, local, remote)

	var created map[string]any
	h.must(201, "POST", "/api/registries", map[string]any{"name": "local-" + h.label, "url": reg.host,
		"username": reg.user, "password": reg.password}, &created)
	regID := int64(created["id"].(float64))
	if created["hasCredentials"] != true || created["password"] != nil {
		t.Errorf("registry = %v", created)
	}
	var test map[string]any
	h.must(200, "POST", "/api/registries/test?env=1", map[string]any{"id": regID}, &test)
	if test["success"] != true {
		t.Errorf("registry test = %v", test)
	}

	var tagged map[string]any
	h.must(200, "POST", "/api/images/"+url.PathEscape(enginetest.Image())+"/tag?env=1", map[string]string{"repo": repo, "tag": "1"}, &tagged)
	if tagged["tag"] != local {
		t.Fatalf("tag = %v", tagged)
	}

	var job struct{ JobID string }
	h.must(200, "POST", "/api/images/push?env=1", map[string]any{"imageId": local, "registryId": regID}, &job)
	evs := h.followJob(job.JobID)
	statuses := map[string]bool{}
	for _, e := range evs {
		var d map[string]any
		_ = json.Unmarshal([]byte(e.Data), &d)
		statuses[fmt.Sprint(d["status"])] = true
		if e.Name != "" {
			t.Errorf("push event named %q, want unnamed (message) events", e.Name)
		}
	}
	final := lastData(t, evs)
	if final["status"] != "complete" || final["targetTag"] != remote || !statuses["tagging"] || !statuses["pushing"] {
		t.Fatalf("push events %v, final %v", statuses, final)
	}

	// Gone locally, then pulled back: synchronously with Accept: application/json …
	h.must(200, "DELETE", "/api/images/"+url.PathEscape(remote)+"?env=1&force=true", nil, nil)
	if status, _ := h.do("GET", "/api/images/"+url.PathEscape(remote)+"/history?env=1", nil); status != 404 {
		t.Fatalf("image still present after delete: %d", status)
	}
	h.headers["Accept"] = "application/json"
	var result map[string]any
	h.must(200, "POST", "/api/images/pull?env=1", map[string]any{"image": remote, "scanAfterPull": false}, &result)
	delete(h.headers, "Accept")
	if result["status"] != "complete" {
		t.Fatalf("synchronous pull = %v", result)
	}
	var list []map[string]any
	h.must(200, "GET", "/api/images?env=1", nil, &list)
	found := false
	for _, img := range list {
		if strings.Contains(fmt.Sprint(img["RepoTags"]), remote) {
			found = img["id"] == img["Id"] && img["repoTags"] != nil && img["tags"] != nil && img["size"] != nil
		}
	}
	if !found {
		t.Errorf("pulled image not listed with its camelCase twins")
	}
	// … and as a job followed over SSE, with layer progress.
	h.must(200, "DELETE", "/api/images/"+url.PathEscape(remote)+"?env=1&force=true", nil, nil)
	h.must(200, "POST", "/api/images/pull?env=1", map[string]any{"image": remote, "scanAfterPull": false}, &job)
	evs = h.followJob(job.JobID)
	if final := lastData(t, evs); evs[len(evs)-1].Name != "result" || final["status"] != "complete" {
		t.Fatalf("pull job ended with %+v", evs[len(evs)-1])
	}
	sawLayer := false
	for _, e := range evs[:len(evs)-1] {
		var d struct {
			ID, Status     string
			ProgressDetail *struct{ Current, Total int64 }
		}
		_ = json.Unmarshal([]byte(e.Data), &d)
		if e.Name != "progress" || d.ProgressDetail == nil {
			t.Errorf("pull event %+v is not a progress line", e)
		}
		if d.ID != "" && d.Status != "" {
			sawLayer = true
		}
	}
	if !sawLayer {
		t.Error("no layer progress in the pull events")
	}
	// The JSON snapshot of the finished job.
	var snap struct {
		ID, Status string
		Lines      []struct{ Event string }
		Result     map[string]any
	}
	h.must(200, "GET", "/api/jobs/"+job.JobID, nil, &snap)
	if snap.ID != job.JobID || snap.Status != "done" || snap.Result["status"] != "complete" || len(snap.Lines) != len(evs) {
		t.Errorf("snapshot = %+v", snap)
	}

	// A wrong password gives the spec's authentication text.
	h.must(200, "PUT", fmt.Sprintf("/api/registries/%d", regID), map[string]any{"name": "local-" + h.label, "url": reg.host,
		"username": reg.user, "password": "wrong-password"}, nil)
	h.must(200, "POST", "/api/images/push?env=1", map[string]any{"imageId": remote, "registryId": regID}, &job)
	if final := lastData(t, h.followJob(job.JobID)); final["status"] != "error" || final["error"] != "Authentication failed. Check registry credentials." {
		t.Errorf("push with a wrong password ended with %v", final)
	}
	h.must(200, "POST", "/api/registries/test?env=1", map[string]any{"id": regID}, &test)
	if test["success"] != false {
		t.Errorf("registry test with a wrong password = %v", test)
	}

	// A missing tag: an error event, and nothing half-written.
	h.must(200, "PUT", fmt.Sprintf("/api/registries/%d", regID), map[string]any{"name": "local-" + h.label, "url": reg.host,
		"username": reg.user, "password": reg.password}, nil)
	missing := reg.host + "/" + repo + ":no-such-tag"
	h.must(200, "POST", "/api/images/pull?env=1", map[string]any{"image": missing, "scanAfterPull": false}, &job)
	evs = h.followJob(job.JobID)
	if final := lastData(t, evs); final["status"] != "error" || final["error"] == "" {
		t.Errorf("pull of a missing tag ended with %v", final)
	}
	h.must(200, "GET", "/api/jobs/"+job.JobID, nil, &snap)
	if snap.Status != "error" {
		t.Errorf("failed job status = %q", snap.Status)
	}
	if status, _ := h.do("GET", "/api/images/"+url.PathEscape(missing)+"/history?env=1", nil); status != 404 {
		t.Errorf("a failed pull left an image behind: %d", status)
	}
}

func TestImageAndRegistryBadInput(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var reg map[string]any
	h.must(201, "POST", "/api/registries", map[string]any{"name": "r-" + h.label, "url": "https://registry.example.com/v2/"}, &reg)
	regID := reg["id"].(float64)

	// An image without a tag: commit a container (the result has none).
	id := h.createContainer("berth-untagged-"+h.label, false, "true")
	req, _ := http.NewRequest("POST", "http://engine/commit?container="+id, nil)
	resp, err := enginetest.HTTPClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var commit struct {
		ID string `json:"Id"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&commit)
	resp.Body.Close()
	removeImages(t, commit.ID)

	cases := []struct {
		name, method, path string
		body               any
		want               int
		wantError          string
	}{
		{"push without imageId", "POST", "/api/images/push?env=1", map[string]any{"registryId": regID}, 400, "Image ID and registry ID are required"},
		{"push without registryId", "POST", "/api/images/push?env=1", map[string]any{"imageId": "x"}, 400, "Image ID and registry ID are required"},
		{"push to an unknown registry", "POST", "/api/images/push?env=1", map[string]any{"imageId": "x", "registryId": 99999}, 404, "Registry not found"},
		{"push of an image without tag", "POST", "/api/images/push?env=1", map[string]any{"imageId": commit.ID, "registryId": regID}, 400, "Image has no tag. Please provide a tag name."},
		{"pull without image", "POST", "/api/images/pull?env=1", map[string]any{}, 400, "Image name is required"},
		{"images of an unknown environment", "GET", "/api/images?env=999", nil, 404, "Environment not found"},
		{"unknown registry", "GET", "/api/registries/99999", nil, 404, "Registry not found"},
		{"registry without url", "POST", "/api/registries", map[string]any{"name": "x"}, 400, ""},
		{"duplicate registry name", "POST", "/api/registries", map[string]any{"name": "r-" + h.label, "url": "x.example"}, 409, ""},
		{"remove an unknown image", "DELETE", "/api/images/berth-test%2Fnone:0?env=1", nil, 404, ""},
		{"history of an unknown image", "GET", "/api/images/sha256:0000/history?env=1", nil, 404, "Image not found"},
	}
	for _, c := range cases {
		status, body := h.do(c.method, c.path, c.body)
		var e struct{ Error string }
		_ = json.Unmarshal(body, &e)
		if status != c.want || e.Error == "" || (c.wantError != "" && e.Error != c.wantError) {
			t.Errorf("%s = %d %s, want %d %q", c.name, status, body, c.want, c.wantError)
		}
	}
	// Without env the image list is empty (spec), with it the test image is there.
	var none, some []map[string]any
	h.must(200, "GET", "/api/images", nil, &none)
	h.must(200, "GET", "/api/images?env=1", nil, &some)
	if len(none) != 0 || len(some) == 0 {
		t.Errorf("images without env: %d, with env 1: %d", len(none), len(some))
	}
}

// GET /api/images/{id} answers the engine's inspection; the list counts the
// containers of each image (engines before API 1.42 answer -1 themselves).
func TestImageInspectAndContainerCount(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.createContainer("berth-imguse-"+h.label, false, "sleep", "300")

	var info struct {
		ID       string `json:"Id"`
		RepoTags []string
		Config   *struct{ Cmd []string }
	}
	h.must(200, "GET", "/api/images/"+url.PathEscape(enginetest.Image())+"?env=1", nil, &info)
	if !strings.HasPrefix(info.ID, "sha256:") || !slices.Contains(info.RepoTags, enginetest.Image()) || info.Config == nil {
		t.Errorf("inspect = %+v", info)
	}

	var list []struct {
		ID         string `json:"Id"`
		Containers int64
	}
	h.must(200, "GET", "/api/images?env=1", nil, &list)
	found := false
	for _, img := range list {
		if img.Containers < 0 {
			t.Errorf("image %s: Containers = %d", img.ID, img.Containers)
		}
		if img.ID == info.ID {
			found = true
			if img.Containers < 1 {
				t.Errorf("the test image is used by our container, Containers = %d", img.Containers)
			}
		}
	}
	if !found {
		t.Errorf("the test image %s is not in the list", info.ID)
	}

	status, body := h.do("GET", "/api/images/sha256:0000?env=1", nil)
	if status != 404 || !strings.Contains(string(body), "Image not found") {
		t.Errorf("inspect of an unknown image: %d %s", status, body)
	}
}
