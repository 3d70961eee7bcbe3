package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/apitest"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/enginetest"
)

// activityEvent is an event of /api/activity as the tests read it.
type activityEvent struct {
	ID              int64  `json:"id"`
	EnvironmentID   int64  `json:"environmentId"`
	EnvironmentName string `json:"environmentName"`
	Type            string `json:"type"`
	Action          string `json:"action"`
	ContainerID     string `json:"containerId"`
	ContainerName   string `json:"containerName"`
	Timestamp       string `json:"timestamp"`
}

// waitActivity restarts container id until the live stream events delivers
// an event of it with action, and returns that event. The collector starts
// following the engine shortly after the server starts: an event from
// before that is not collected, hence the repeated restarts.
func waitActivity(t *testing.T, h *harness, events <-chan sseEvent, id, action string) activityEvent {
	t.Helper()
	deadline := time.After(90 * time.Second)
	retry := time.NewTicker(3 * time.Second)
	defer retry.Stop()
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatalf("the activity stream ended before %s of %s", action, id)
			}
			if ev.Name != "activity" {
				continue
			}
			var a activityEvent
			if err := json.Unmarshal([]byte(ev.Data), &a); err != nil {
				t.Fatalf("activity event %s: %v", ev.Data, err)
			}
			if a.ContainerID == id && a.Action == action {
				return a
			}
		case <-retry.C:
			h.must(200, "POST", "/api/containers/"+id+"/restart?env=1", nil, nil)
		case <-deadline:
			t.Fatalf("no %s event of %s in the activity stream", action, id)
		}
	}
}

func TestActivityIsCollectedStreamedListedCountedAndCleared(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	name := "act-" + h.label
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	events, resp := h.openEvents(ctx, "/api/activity/events?container="+name)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream = %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if ev := <-events; ev.Name != "connected" {
		t.Fatalf("first event = %+v, want connected", ev)
	}
	id := h.createContainer(name, true, "sleep", "300")
	got := waitActivity(t, h, events, id, "start")
	if got.EnvironmentID != 1 || got.ContainerName != name || got.Type != "container" || got.EnvironmentName == "" {
		t.Errorf("streamed event = %+v", got)
	}
	if _, err := time.Parse(time.RFC3339, got.Timestamp); err != nil {
		t.Errorf("timestamp %q: %v", got.Timestamp, err)
	}

	var page struct {
		Events               []activityEvent `json:"events"`
		Total, Limit, Offset int
	}
	h.must(200, "GET", "/api/activity?env=1&action=start&container="+name, nil, &page)
	if page.Total < 1 || len(page.Events) != page.Total || page.Limit != 100 || page.Offset != 0 {
		t.Fatalf("list = %+v", page)
	}
	for _, e := range page.Events {
		if e.ContainerName != name || e.Action != "start" {
			t.Errorf("filtered list holds %+v", e)
		}
	}
	h.must(200, "GET", "/api/activity?container="+id[:12]+"&limit=1", nil, &page)
	if len(page.Events) != 1 || page.Events[0].ContainerID != id || page.Limit != 1 {
		t.Errorf("by id prefix, limit 1 = %+v", page)
	}
	since := url.QueryEscape(time.Now().Add(time.Hour).UTC().Format(time.RFC3339))
	h.must(200, "GET", "/api/activity?container="+name+"&since="+since, nil, &page)
	if page.Total != 0 {
		t.Errorf("since an hour ahead = %+v, want none", page)
	}

	var stats struct {
		Total    int64
		ByAction []struct {
			Action string
			Count  int64
		}
		ByHour []struct {
			Hour  string
			Count int64
		}
	}
	h.must(200, "GET", "/api/activity/stats?container="+name, nil, &stats)
	counts := map[string]int64{}
	for _, a := range stats.ByAction {
		counts[a.Action] = a.Count
	}
	if counts["create"] != 1 || counts["start"] < 1 || len(stats.ByHour) == 0 || stats.Total < 2 {
		t.Errorf("stats = %+v", stats)
	}

	var seen struct {
		Containers []struct {
			EnvironmentID int64
			ContainerID   string
			ContainerName string
			Events        int64
			LastAction    string
		}
	}
	h.must(200, "GET", "/api/activity/containers?container="+name, nil, &seen)
	if len(seen.Containers) != 1 || seen.Containers[0].ContainerID != id || seen.Containers[0].Events < 2 ||
		seen.Containers[0].LastAction == "" {
		t.Errorf("containers = %+v", seen)
	}

	var cleared struct {
		Success bool
		Deleted int64
	}
	h.must(200, "DELETE", "/api/activity?env=1", nil, &cleared)
	if !cleared.Success || cleared.Deleted < 2 {
		t.Errorf("clear = %+v", cleared)
	}
	h.must(200, "GET", "/api/activity?env=1&container="+name+"&action=create", nil, &page)
	if page.Total != 0 {
		t.Errorf("after clearing: %+v", page)
	}
	audit, _, err := h.store.ListAudit(t.Context(), store.AuditFilter{Action: "activity.clear"})
	if err != nil || len(audit) != 1 {
		t.Errorf("audit of the clear = %+v, %v", audit, err)
	}
}

func TestDashboardCarriesTheCollectedMetricsAndActivity(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	// It writes a file: its writable layer has a size (containersSize).
	h.createContainer("metrics-"+h.label, true, "sh", "-c", "echo written > /f; sleep 300")
	var st struct {
		dashboardStats
		Metrics *struct {
			CPUPercent, MemoryPercent float64
			MemoryUsed, MemoryTotal   uint64
		} `json:"metrics"`
		MetricsHistory []struct {
			CPUPercent    float64 `json:"cpu_percent"`
			MemoryPercent float64 `json:"memory_percent"`
			Timestamp     string  `json:"timestamp"`
		} `json:"metricsHistory"`
		TopContainers []struct {
			ID, Name                  string
			CPUPercent, MemoryPercent float64
		} `json:"topContainers"`
		Events         *struct{ Total, Today int } `json:"events"`
		ContainersSize int64                       `json:"containersSize"`
		BuildCacheSize *int64                      `json:"buildCacheSize"`
	}
	// The collector samples every environment with collectMetrics every
	// 30 s, the first time within 30 s of its start: wait for a sample taken
	// while our container ran (the second one at the latest).
	deadline := time.Now().Add(100 * time.Second)
	for {
		h.must(200, "GET", "/api/dashboard/stats?env=1", nil, &st)
		sampled := (len(st.MetricsHistory) > 0 && st.Metrics.MemoryUsed > 0) || len(st.MetricsHistory) > 1
		if (sampled && st.ContainersSize > 0) || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second)
	}
	if len(st.MetricsHistory) == 0 || st.Metrics == nil || st.Metrics.MemoryTotal == 0 || st.Metrics.MemoryUsed == 0 {
		t.Fatalf("metrics = %+v, history %+v", st.Metrics, st.MetricsHistory)
	}
	if _, err := time.Parse(time.RFC3339, st.MetricsHistory[0].Timestamp); err != nil {
		t.Errorf("history timestamp: %v", err)
	}
	if len(st.TopContainers) == 0 || len(st.TopContainers) > 5 || st.TopContainers[0].ID == "" {
		t.Errorf("topContainers = %+v", st.TopContainers)
	}
	// The engine's disk usage arrives in the background, then is cached.
	if st.ContainersSize <= 0 || st.BuildCacheSize == nil {
		t.Errorf("containersSize %d, buildCacheSize %v", st.ContainersSize, st.BuildCacheSize)
	}
	if st.Events == nil || st.Events.Total < st.Events.Today {
		t.Errorf("events = %+v", st.Events)
	}
	// Switched off, the environment carries neither.
	h.must(200, "PUT", "/api/environments/1", map[string]any{"collectMetrics": false, "collectActivity": false}, nil)
	st.Metrics, st.MetricsHistory, st.Events = nil, nil, nil
	h.must(200, "GET", "/api/dashboard/stats?env=1", nil, &st)
	if st.Metrics != nil || st.MetricsHistory != nil || st.Events != nil || st.TopContainers == nil {
		t.Errorf("with collection off: metrics %+v, history %+v, events %+v, top %+v", st.Metrics, st.MetricsHistory,
			st.Events, st.TopContainers)
	}
}

func TestActivityRejectsBadFilters(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, tt := range []struct {
		path   string
		status int
	}{
		{"/api/activity?since=yesterday", 400},
		{"/api/activity?until=2026-13-01T00:00:00Z", 400},
		{"/api/activity?limit=-1", 400},
		{"/api/activity?limit=5000", 400},
		{"/api/activity?offset=x", 400},
		{"/api/activity?env=x", 400},
		{"/api/activity?env=999", 404},
		{"/api/activity/stats?environmentId=999", 404},
		{"/api/activity/containers?since=x", 400},
	} {
		if status, body := h.do("GET", tt.path, nil); status != tt.status {
			t.Errorf("GET %s = %d %s, want %d", tt.path, status, body, tt.status)
		}
	}
	if status, body := h.do("DELETE", "/api/activity?env=999", nil); status != 404 {
		t.Errorf("DELETE ?env=999 = %d %s", status, body)
	}
	if status, body := h.do("PUT", "/api/activity/settings", map[string]any{"retentionDays": 0}); status != 400 {
		t.Errorf("PUT retentionDays 0 = %d %s", status, body)
	}
	var r struct{ RetentionDays, MaxEvents int }
	h.must(200, "GET", "/api/activity/settings", nil, &r)
	if r.RetentionDays != 7 || r.MaxEvents != 100000 {
		t.Errorf("default retention = %+v", r)
	}
	h.must(200, "PUT", "/api/activity/settings", map[string]any{"retentionDays": 14}, &r)
	h.must(200, "GET", "/api/activity/settings", nil, &r)
	if r.RetentionDays != 14 || r.MaxEvents != 100000 {
		t.Errorf("after PUT retentionDays 14: %+v", r)
	}
}

func TestDashboardStreamSendsEachEnvironmentAndAnOfflineOneWithinTheLimit(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	hung := enginetest.NewHanging(t)
	host, port := splitHostPort(t, hung.Addr)
	var off struct{ ID int64 }
	h.must(201, "POST", "/api/environments", map[string]any{"name": "hung-" + h.label, "connectionType": "direct",
		"host": host, "port": port}, &off)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	events, resp := h.openEvents(ctx, "/api/dashboard/stats/stream")
	if resp.StatusCode != 200 {
		t.Fatalf("stream = %d", resp.StatusCode)
	}
	var order []int64
	got := map[int64]dashboardStats{}
	for ev := range events {
		if ev.Name == "done" {
			break
		}
		if ev.Name != "stats" {
			continue
		}
		var st dashboardStats
		if err := json.Unmarshal([]byte(ev.Data), &st); err != nil {
			t.Fatalf("stats %s: %v", ev.Data, err)
		}
		order = append(order, st.ID)
		got[st.ID] = st
	}
	if len(order) != 2 || !got[1].Online || got[off.ID].Online || got[off.ID].Error == "" {
		t.Fatalf("first pass: order %v, figures %+v", order, got)
	}
	// The reachable engine's figures come first: the hung one's wait for
	// the time limit.
	if order[0] != 1 {
		t.Errorf("order = %v, want environment 1 before the hung one", order)
	}
	if status, body := h.do("GET", fmt.Sprintf("/api/dashboard/stats/stream?env=%d", off.ID+100), nil); status != 404 {
		t.Errorf("?env=unknown = %d %s", status, body)
	}
}

func splitHostPort(t *testing.T, addr string) (string, int) {
	t.Helper()
	u, err := url.Parse("tcp://" + addr)
	if err != nil {
		t.Fatal(err)
	}
	var port int
	if _, err := fmt.Sscan(u.Port(), &port); err != nil {
		t.Fatal(err)
	}
	return u.Hostname(), port
}

func TestActivityShowsOnlyTheEnvironmentsTheCallerMayView(t *testing.T) {
	t.Parallel()
	h := newAuthHarness(t, apitest.Options{})
	user, pw := h.setupAdmin()
	h.as(h.login(user, pw))
	var env2 struct{ ID int64 }
	h.must(201, "POST", "/api/environments", map[string]any{"name": "second", "socketPath": "/x.sock"}, &env2)
	at := time.Now().UTC()
	for _, env := range []int64{1, env2.ID} {
		e := store.ActivityEvent{EnvironmentID: env, Type: "container", Action: "start", ActorID: fmt.Sprint("c", env),
			ActorName: fmt.Sprint("perm-", env), Time: at}
		if _, err := h.store.AddActivity(t.Context(), &e); err != nil {
			t.Fatal(err)
		}
	}
	var bob struct{ ID int64 }
	h.must(201, "POST", "/api/users", map[string]any{"username": "bob", "password": "bob-password-1"}, &bob)
	var roles []struct {
		ID   int64
		Name string
	}
	h.must(200, "GET", "/api/roles", nil, &roles)
	for _, r := range roles {
		if r.Name == "Viewer" {
			h.must(201, "POST", fmt.Sprintf("/api/users/%d/roles", bob.ID), map[string]any{"roleId": r.ID, "environmentId": env2.ID}, nil)
		}
	}
	h.headers = map[string]string{}
	h.as(h.login("bob", "bob-password-1"))
	var page struct {
		Events []activityEvent
		Total  int
	}
	h.must(200, "GET", "/api/activity?container=", nil, &page)
	for _, e := range page.Events {
		if e.EnvironmentID != env2.ID {
			t.Errorf("bob sees %+v of environment %d", e, e.EnvironmentID)
		}
	}
	if page.Total < 1 {
		t.Errorf("bob sees nothing of environment %d: %+v", env2.ID, page)
	}
	if status, body := h.do("GET", "/api/activity?env=1", nil); status != 403 {
		t.Errorf("bob on environment 1 = %d %s", status, body)
	}
	// A viewer may not clear, neither one environment nor all.
	for _, q := range []string{fmt.Sprintf("?env=%d", env2.ID), ""} {
		if status, body := h.do("DELETE", "/api/activity"+q, nil); status != 403 {
			t.Errorf("bob clears %q = %d %s", q, status, body)
		}
	}
	h.headers = map[string]string{}
	if status, _ := h.do("GET", "/api/activity", nil); status != 401 {
		t.Errorf("anonymous = %d, want 401", status)
	}
}
