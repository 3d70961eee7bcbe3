package api_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/apitest"
	"github.com/berth-dev/berth/server/internal/selfupdate"
	"github.com/berth-dev/berth/shared/enginetest"
)

// Outside a container, self-update says why it cannot run; the updater's
// progress is read from an updater container only; only administrators may
// use any of it.
func TestSelfUpdateOutsideAContainerAndUpdaterProgress(t *testing.T) {
	t.Parallel()
	h := newAuthHarness(t, apitest.Options{})
	admin, operator := h.withOperator()
	if f, err := os.Open("/proc/self/mountinfo"); err == nil {
		id := selfupdate.Detect(f)
		f.Close()
		if id != "" {
			t.Skip("the tests run in a container")
		}
	}
	notIn := "Berth is not running in a container"
	h.expectRefusals([]refusal{
		{"check", "GET", "/api/self-update/check", nil, 400, notIn},
		{"update", "POST", "/api/self-update", map[string]string{"newImage": "berth/berth:2"}, 400, notIn},
		{"progress without id", "GET", "/api/self-update/progress", nil, 400, "Container ID is required"},
	})

	run := func(labels map[string]string) string {
		labels[enginetest.Label] = h.label
		var ct struct{ ID string }
		enginetest.Must(t, 201, "POST", "/containers/create", nil, map[string]any{"Image": enginetest.Image(),
			"Cmd": []string{"sh", "-c", "echo Stopping berth; echo Updated berth"}, "Labels": labels}, &ct)
		enginetest.Must(t, 204, "POST", "/containers/"+ct.ID+"/start", nil, nil, nil)
		enginetest.Must(t, 200, "POST", "/containers/"+ct.ID+"/wait", nil, nil, nil)
		return ct.ID
	}
	updater := run(map[string]string{selfupdate.Label: strings.Repeat("a", 64)})
	other := run(map[string]string{})
	var p struct {
		Logs     string `json:"logs"`
		Status   string `json:"status"`
		ExitCode *int   `json:"exitCode"`
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		h.must(200, "GET", "/api/self-update/progress?id="+updater, nil, &p)
		if p.ExitCode != nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if p.Logs != "Stopping berth\nUpdated berth\n" || p.Status != "exited" || p.ExitCode == nil || *p.ExitCode != 0 {
		t.Errorf("progress = %+v", p)
	}
	h.expectRefusals([]refusal{
		{"not an updater", "GET", "/api/self-update/progress?id=" + other, nil, 404, "Updater container not found"},
		{"bad id", "GET", "/api/self-update/progress?id=../../images", nil, 400, ""},
	})

	h.as(operator)
	h.expectRefusals([]refusal{
		{"operator checks", "GET", "/api/self-update/check", nil, 403, "Permission denied"},
		{"operator updates", "POST", "/api/self-update", map[string]string{}, 403, "Permission denied"},
		{"operator follows", "GET", "/api/self-update/progress?id=" + updater, nil, 403, "Permission denied"},
	})
	h.as(admin)
}
