package agents_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// An agent environment's disk warning is measured from the disk its agent
// reports: switched on at 1% (below any real filesystem's use), each agent
// environment notifies disk_space_warning once through its subscribed
// webhook channel, right after the setting is saved.
func TestAgentEnvironmentDiskWarningUsesTheAgentsDisk(t *testing.T) {
	h, _, envs, _ := agentEnvironments(t)
	var mu sync.Mutex
	var bodies []string
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		mu.Unlock()
	}))
	t.Cleanup(rcv.Close)
	var ch struct {
		ID int64 `json:"id"`
	}
	h.must(201, "POST", "/api/notifications", map[string]any{"name": "disk-" + h.label, "type": "webhook",
		"config": map[string]any{"url": rcv.URL}}, &ch)
	for typ, id := range envs {
		h.must(201, "POST", fmt.Sprintf("/api/environments/%d/notifications", id), map[string]any{"notificationId": ch.ID,
			"eventTypes": []string{"disk_space_warning"}}, nil)
		h.must(200, "POST", fmt.Sprintf("/api/environments/%d/disk-warning", id),
			map[string]any{"enabled": true, "thresholdPercent": 1}, nil)
		t.Logf("%s: environment %d warns at 1%%", typ, id)
	}
	received := func(name string) []string {
		mu.Lock()
		defer mu.Unlock()
		var out []string
		for _, b := range bodies {
			if strings.Contains(b, "disk_space_warning") && strings.Contains(b, "Disk space low on "+name) {
				out = append(out, b)
			}
		}
		return out
	}
	names := map[string]string{"agent-standard": "standard-" + h.label, "agent-edge": "edge-" + h.label}
	deadline := time.Now().Add(time.Minute)
	for typ, name := range names {
		for len(received(name)) == 0 {
			if time.Now().After(deadline) {
				t.Fatalf("%s: no disk warning for %s within a minute of saving the setting", typ, name)
			}
			time.Sleep(100 * time.Millisecond)
		}
		if got := received(name); len(got) != 1 || !strings.Contains(got[0], "on the agent's host") {
			t.Errorf("%s: warnings %q, want one naming the agent host's disk", typ, got)
		}
	}
}
