package api_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/berth-dev/berth/server/internal/apitest"
	"github.com/berth-dev/berth/shared/enginetest"
)

// dashboardStats is the part of a dashboard entry the tests read.
type dashboardStats struct {
	ID             int64    `json:"id"`
	Name           string   `json:"name"`
	Host           string   `json:"host"`
	Port           int      `json:"port"`
	Icon           string   `json:"icon"`
	ConnectionType string   `json:"connectionType"`
	Labels         []string `json:"labels"`
	ScannerEnabled bool     `json:"scannerEnabled"`
	Online         bool     `json:"online"`
	Error          string   `json:"error"`
	Containers     struct {
		Total, Running, Stopped, Paused, Restarting, Unhealthy, PendingUpdates int
	} `json:"containers"`
	Images   struct{ Total, TotalSize int64 }               `json:"images"`
	Volumes  struct{ Total, TotalSize int64 }               `json:"volumes"`
	Networks struct{ Total int }                            `json:"networks"`
	Stacks   struct{ Total, Running, Partial, Stopped int } `json:"stacks"`
}

func TestDashboardStatsCountTheEnginesObjects(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var before dashboardStats
	h.must(200, "GET", "/api/dashboard/stats?env=1", nil, &before)
	if before.ID != 1 || !before.Online || before.Error != "" || before.ConnectionType != "socket" || before.Labels == nil {
		t.Fatalf("environment 1 = %+v", before)
	}
	if before.Images.Total < 1 || before.Images.TotalSize <= 0 || before.Networks.Total < 3 { // bridge, host, none
		t.Errorf("images %+v, networks %+v", before.Images, before.Networks)
	}
	c := before.Containers
	if c.Total != c.Running+c.Stopped+c.Paused+c.Restarting {
		t.Errorf("containers %+v do not add up", c)
	}
	if s := before.Stacks; s.Total != s.Running+s.Partial+s.Stopped {
		t.Errorf("stacks %+v do not add up", s)
	}

	h.createContainer("dash-run-"+h.label, true, "sleep", "300")
	h.createContainer("dash-new-"+h.label, false, "true")
	// Other tests create and remove containers on the same engine meanwhile:
	// the dashboard's counts must equal the engine's own list read just
	// before and just after it, in a window where that list did not change.
	matched := false
	for range 20 {
		engineBefore := engineCounts(t)
		var after dashboardStats
		h.must(200, "GET", "/api/dashboard/stats?env=1", nil, &after)
		engineAfter := engineCounts(t)
		if engineBefore != engineAfter {
			continue // the engine changed under the read: try again
		}
		got := after.Containers
		got.PendingUpdates = 0
		if got != engineBefore {
			t.Fatalf("dashboard containers %+v, engine %+v", got, engineBefore)
		}
		if got.Running < 1 || got.Stopped < 1 {
			t.Fatalf("containers %+v: want ours counted (one running, one stopped)", got)
		}
		matched = true
		break
	}
	if !matched {
		t.Fatal("the engine's container list never held still for a dashboard read")
	}

	var all []dashboardStats
	h.must(200, "GET", "/api/dashboard/stats", nil, &all)
	if len(all) != 1 || all[0].ID != 1 || !all[0].Online || all[0].Containers.Total < 2 {
		t.Fatalf("array form = %+v", all)
	}
}

func TestDashboardStatsShowAnOfflineEnvironmentWithoutFailing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var off struct{ ID int64 }
	h.must(201, "POST", "/api/environments", map[string]any{"name": "gone-" + h.label, "socketPath": "/nonexistent/docker.sock",
		"labels": []string{"lab"}, "icon": "server"}, &off)
	var all []dashboardStats
	h.must(200, "GET", "/api/dashboard/stats", nil, &all)
	if len(all) != 2 {
		t.Fatalf("array form = %+v, want environments 1 and %d", all, off.ID)
	}
	byID := map[int64]dashboardStats{all[0].ID: all[0], all[1].ID: all[1]}
	if e := byID[1]; !e.Online || e.Networks.Total == 0 {
		t.Errorf("environment 1 = %+v, want online with its figures", e)
	}
	e := byID[off.ID]
	if e.Online || e.Error == "" || e.Name != "gone-"+h.label || e.Icon != "server" || len(e.Labels) != 1 || e.Containers.Total != 0 {
		t.Errorf("offline environment = %+v", e)
	}
	var one dashboardStats
	h.must(200, "GET", fmt.Sprintf("/api/dashboard/stats?env=%d", off.ID), nil, &one)
	if one.ID != off.ID || one.Online {
		t.Errorf("?env=%d = %+v", off.ID, one)
	}
}

func TestDashboardStatsOfAnUnknownEnvironmentIs404(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	status, body := h.do("GET", "/api/dashboard/stats?env=999", nil)
	if status != 404 || string(body) != `{"error":"Environment not found"}`+"\n" {
		t.Errorf("?env=999 = %d %s", status, body)
	}
	if status, body := h.do("GET", "/api/dashboard/stats?env=x", nil); status != 400 {
		t.Errorf("?env=x = %d %s", status, body)
	}
}

// TestDashboardStatsWithABearerTokenListOnlyViewableEnvironments reads the
// array form as a metrics exporter does, with an API token, and as a user
// who may view one environment only.
func TestDashboardStatsWithABearerTokenListOnlyViewableEnvironments(t *testing.T) {
	t.Parallel()
	h := newAuthHarness(t, apitest.Options{})
	user, pw := h.setupAdmin()
	h.as(h.login(user, pw))
	var env2 struct{ ID int64 }
	h.must(201, "POST", "/api/environments", map[string]any{"name": "second", "socketPath": "/x.sock"}, &env2)
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
	var created struct{ Token string }
	h.must(201, "POST", "/api/auth/tokens", map[string]string{"name": "exporter", "password": pw}, &created)

	h.headers = map[string]string{"Authorization": "Bearer " + created.Token}
	var all []dashboardStats
	h.must(200, "GET", "/api/dashboard/stats", nil, &all)
	if len(all) != 2 || all[0].ID != 1 || !all[0].Online || all[1].ID != env2.ID || all[1].Online {
		t.Fatalf("admin token sees %+v", all)
	}

	h.headers = map[string]string{}
	h.as(h.login("bob", "bob-password-1"))
	h.must(200, "GET", "/api/dashboard/stats", nil, &all)
	if len(all) != 1 || all[0].ID != env2.ID {
		t.Fatalf("bob sees %+v, want only environment %d", all, env2.ID)
	}
	status, body := h.do("GET", "/api/dashboard/stats?env=1", nil)
	if status != 403 || !strings.Contains(string(body), "Access denied to this environment") {
		t.Errorf("bob on environment 1 = %d %s", status, body)
	}
	h.headers = map[string]string{}
	if status, _ := h.do("GET", "/api/dashboard/stats", nil); status != 401 {
		t.Errorf("anonymous = %d, want 401", status)
	}
}

// engineCounts counts the engine's containers by state the way the
// dashboard does, from the engine's own list.
func engineCounts(t *testing.T) (n struct {
	Total, Running, Stopped, Paused, Restarting, Unhealthy, PendingUpdates int
}) {
	t.Helper()
	var list []struct {
		State, Status string
	}
	enginetest.Must(t, 200, "GET", "/containers/json?all=1", nil, nil, &list)
	n.Total = len(list)
	for _, c := range list {
		switch c.State {
		case "running":
			n.Running++
		case "paused":
			n.Paused++
		case "restarting":
			n.Restarting++
		default:
			n.Stopped++
		}
		if strings.Contains(c.Status, "(unhealthy)") {
			n.Unhealthy++
		}
	}
	return n
}
