package api_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/berth-dev/berth/shared/enginetest"
)

// batchOutcome is POST /api/batch's final payload.
type batchOutcome struct {
	Type    string
	Summary struct{ Total, Success, Failed int }
	Results []struct {
		ID, Name, Status, Error string
	}
}

// batchItems are items {id, name} of the reference's batch shape.
func batchItems(ids ...string) []map[string]string {
	out := make([]map[string]string, len(ids))
	for i, id := range ids {
		out[i] = map[string]string{"id": id, "name": id}
	}
	return out
}

// runBatch posts a batch as the reference's clients do (no Accept: a job),
// follows the job to its end and returns its final payload and the
// progress events' statuses per item.
func (h *harness) runBatch(body map[string]any) (batchOutcome, map[string][]string) {
	h.t.Helper()
	var job struct{ JobID string }
	h.must(200, "POST", "/api/batch?env=1", body, &job)
	if job.JobID == "" {
		h.t.Fatalf("batch %v answered no jobId", body)
	}
	evs := h.followJob(job.JobID)
	progress := map[string][]string{}
	for _, e := range evs {
		var d struct{ Type, ID, Status string }
		_ = json.Unmarshal([]byte(e.Data), &d)
		if d.Type == "progress" {
			progress[d.ID] = append(progress[d.ID], d.Status)
		}
	}
	var out batchOutcome
	if err := json.Unmarshal([]byte(evs[len(evs)-1].Data), &out); err != nil || out.Type != "complete" {
		h.t.Fatalf("batch final event %+v: %v", evs[len(evs)-1], err)
	}
	// GET /api/jobs/{id} polls the same job: its result is the payload.
	var snap struct {
		Status string
		Result batchOutcome
	}
	h.must(200, "GET", "/api/jobs/"+job.JobID, nil, &snap)
	if snap.Result.Summary != out.Summary {
		h.t.Errorf("polled job = %+v, streamed %+v", snap, out)
	}
	return out, progress
}

func TestBatchRefusesWhatTheReferenceRefuses(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := h.createContainer("berth-batch-r-"+h.label, false, "sleep", "300")
	for _, tc := range []struct {
		body map[string]any
		msg  string
	}{
		{map[string]any{"operation": "start", "entityType": "pods", "items": batchItems(a)},
			"Invalid entity type: pods. Supported: containers, images, volumes, networks, stacks"},
		{map[string]any{"operation": "start", "entityType": "images", "items": batchItems(a)},
			"Invalid operation 'start' for images. Supported: remove"},
		{map[string]any{"operation": "start", "entityType": "containers"}, "items array is required and must not be empty"},
		{map[string]any{"operation": "start", "entityType": "containers", "items": []map[string]string{{"id": " "}}}, "Every item needs an id"},
		{map[string]any{"action": "explode", "containers": []string{a}}, "Invalid operation 'explode' for containers"},
		{map[string]any{"operation": "remove", "entityType": "volumes", "items": batchItems(a), "options": map[string]bool{"removeVolumes": true}},
			"options.removeVolumes applies to stacks only"},
		{map[string]any{"operation": "remove", "entityType": "stacks", "items": batchItems(a), "options": map[string]bool{"removeVolumes": true}},
			"options.removeVolumes needs options.force"},
	} {
		status, body := h.do("POST", "/api/batch?env=1", tc.body)
		var e struct{ Error string }
		_ = json.Unmarshal(body, &e)
		if status != 400 || !strings.HasPrefix(e.Error, tc.msg) {
			t.Errorf("batch %v = %d %s, want 400 %q", tc.body, status, body, tc.msg)
		}
	}
	if h.inspectState(a).Running {
		t.Fatal("a refused batch started a container")
	}
}

func TestBatchOnContainersIsAJobWithEachItemsOutcome(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := h.createContainer("berth-batch-a-"+h.label, false, "sleep", "300")
	b := h.createContainer("berth-batch-b-"+h.label, false, "sleep", "300")
	missing := "berth-no-such-" + h.label
	out, progress := h.runBatch(map[string]any{"operation": "start", "entityType": "containers", "items": batchItems(a, b, missing)})
	if out.Summary.Total != 3 || out.Summary.Success != 2 || out.Summary.Failed != 1 || len(out.Results) != 3 ||
		out.Results[0].Status != "success" || out.Results[2].Status != "error" || out.Results[2].Error == "" {
		t.Errorf("batch start = %+v", out)
	}
	if got := progress[missing]; len(got) != 2 || got[0] != "processing" || got[1] != "error" {
		t.Errorf("progress of the missing container = %v", got)
	}
	if !h.inspectState(a).Running || !h.inspectState(b).Running {
		t.Fatal("batch start left a container stopped")
	}
	for _, op := range []string{"pause", "unpause", "restart", "stop"} {
		out, _ := h.runBatch(map[string]any{"operation": op, "entityType": "containers", "items": batchItems(a, b)})
		if out.Summary.Success != 2 {
			t.Errorf("batch %s = %+v", op, out)
		}
		if op == "pause" && (!h.inspectState(a).Paused || !h.inspectState(b).Paused) {
			t.Error("batch pause left a container unpaused")
		}
	}
	if h.inspectState(a).Running || h.inspectState(b).Running {
		t.Error("batch stop left a container running")
	}
	// Berth's earlier shape is an alias; with Accept: application/json the
	// answer is the final payload. A container is removed with force unless
	// told otherwise (the reference's default).
	h.must(200, "POST", "/api/batch?env=1", map[string]any{"action": "start", "ids": []string{a}}, nil)
	h.headers["Accept"] = "application/json"
	h.must(200, "POST", "/api/batch?env=1", map[string]any{"action": "remove", "containers": []string{a, b}}, &out)
	delete(h.headers, "Accept")
	if out.Type != "complete" || out.Summary.Success != 2 {
		t.Errorf("alias remove = %+v", out)
	}
	for _, id := range []string{a, b} {
		if status, _ := h.do("GET", "/api/containers/"+id+"?env=1", nil); status != 404 {
			t.Errorf("container after batch remove = %d", status)
		}
	}
}

func TestBatchRemovesImagesVolumesAndNetworks(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.removeObjectsAtCleanup()
	repo := "berth-batch-img-" + h.label
	h.must(200, "POST", "/api/images/"+url.PathEscape(enginetest.Image())+"/tag?env=1", map[string]string{"repo": repo, "tag": "1"}, nil)
	out, _ := h.runBatch(map[string]any{"operation": "remove", "entityType": "images", "items": batchItems(repo+":1", repo+":404")})
	if out.Summary.Success != 1 || out.Summary.Failed != 1 || out.Results[0].Status != "success" || out.Results[1].Error == "" {
		t.Errorf("batch image remove = %+v", out)
	}
	if status, _ := h.do("GET", "/api/images/"+url.PathEscape(repo+":1")+"?env=1", nil); status != 404 {
		t.Errorf("image after batch remove = %d", status)
	}

	labels := map[string]string{enginetest.Label: h.label}
	var vols, nets []string
	for i := range 2 {
		v, n := fmt.Sprintf("berth-batch-v%d-%s", i, h.label), fmt.Sprintf("berth-batch-n%d-%s", i, h.label)
		h.must(200, "POST", "/api/volumes?env=1", map[string]any{"name": v, "labels": labels}, nil)
		h.must(200, "POST", "/api/networks?env=1", map[string]any{"name": n, "labels": labels}, nil)
		vols, nets = append(vols, v), append(nets, n)
	}
	// A volume in use is refused without force; the other goes.
	h.must(200, "POST", "/api/containers?env=1", h.containerBody(map[string]any{"name": "berth-batch-vu-" + h.label,
		"volumes": []string{vols[0] + ":/data"}}), nil)
	out, _ = h.runBatch(map[string]any{"operation": "remove", "entityType": "volumes", "items": batchItems(vols...)})
	if out.Summary.Success != 1 || out.Results[0].Status != "error" || out.Results[1].Status != "success" {
		t.Errorf("batch volume remove = %+v", out)
	}
	out, _ = h.runBatch(map[string]any{"operation": "remove", "entityType": "networks", "items": batchItems(nets...)})
	if out.Summary.Success != 2 {
		t.Errorf("batch network remove = %+v", out)
	}
	var list []struct{ Name string }
	h.must(200, "GET", "/api/networks?env=1", nil, &list)
	for _, n := range list {
		if n.Name == nets[0] || n.Name == nets[1] {
			t.Errorf("network %s listed after batch remove", n.Name)
		}
	}
}

func TestBatchRunsStackLifecycles(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	names := []string{"bs1-" + h.label, "bs2-" + h.label}
	for _, n := range names {
		h.removeStackAtCleanup(n)
		h.createStoppedStack(n, plainCompose(h.label), nil)
	}
	for _, tc := range []struct{ op, want string }{{"start", "running"}, {"restart", "running"}, {"stop", "stopped"}} {
		out, _ := h.runBatch(map[string]any{"operation": tc.op, "entityType": "stacks", "items": batchItems(names...)})
		if out.Summary.Success != 2 {
			t.Fatalf("batch stack %s = %+v", tc.op, out)
		}
		for _, n := range names {
			if e, ok := h.stackEntry(n); !ok || e.Status != tc.want {
				t.Errorf("stack %s after batch %s = %+v (listed %v), want %s", n, tc.op, e.Status, ok, tc.want)
			}
		}
	}
	out, _ := h.runBatch(map[string]any{"operation": "down", "entityType": "stacks", "items": batchItems(names[0])})
	if out.Summary.Success != 1 {
		t.Errorf("batch stack down = %+v", out)
	}
	if e, _ := h.stackEntry(names[0]); len(e.Containers) != 0 {
		t.Errorf("stack after batch down still has containers %v", e.Containers)
	}
	out, _ = h.runBatch(map[string]any{"operation": "remove", "entityType": "stacks", "items": batchItems(names...),
		"options": map[string]bool{"force": true}})
	if out.Summary.Success != 2 {
		t.Errorf("batch stack remove = %+v", out)
	}
	for _, n := range names {
		if _, ok := h.stackEntry(n); ok {
			t.Errorf("stack %s listed after batch remove", n)
		}
	}
}

func TestCancelJobIsForItsStarterOrAnAdmin(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := h.createContainer("berth-batch-c-"+h.label, false, "sleep", "300")
	var job struct{ JobID string }
	h.must(200, "POST", "/api/batch?env=1", map[string]any{"operation": "start", "entityType": "containers", "items": batchItems(a)}, &job)
	h.followJob(job.JobID)
	var ans struct{ Cancelled *bool }
	h.must(200, "DELETE", "/api/jobs/"+job.JobID, nil, &ans)
	if ans.Cancelled == nil || *ans.Cancelled {
		t.Errorf("DELETE of a finished job = %+v, want cancelled false", ans)
	}
	wantError(t, h, "GET", "/api/jobs/"+job.JobID, nil, 404, "Job not found")
	wantError(t, h, "DELETE", "/api/jobs/"+job.JobID, nil, 404, "Job not found")
}
