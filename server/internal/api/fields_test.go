package api_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/apitest"
	"github.com/berth-dev/berth/server/internal/license"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
	"github.com/berth-dev/berth/shared/enginetest"
)

// labelledEnvs creates two (unreachable) environments labelled "prod" and
// "dev" and answers their ids.
func labelledEnvs(t *testing.T, h *harness) (prod, dev int64) {
	t.Helper()
	var ids []int64
	for _, l := range []string{"prod", "dev"} {
		e := store.Environment{Name: l + "-" + h.label, ConnectionType: "direct", Host: "203.0.113.1", Port: 2375,
			Protocol: "http", Labels: []string{l}}
		if err := h.store.CreateEnvironment(t.Context(), &e); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e.ID)
	}
	return ids[0], ids[1]
}

// The reference's activity filters: actions (several), containerId,
// containerName, labels (of the environments), fromDate/toDate (ISO 8601,
// inclusive), and environment_id for the stats and containers.
func TestActivityTakesTheReferenceFilters(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	prod, dev := labelledEnvs(t, h)
	// Yesterday noon, within the retention (a prune could remove older ones).
	day := time.Now().UTC().Truncate(24 * time.Hour).Add(-12 * time.Hour)
	d0, d1 := day.Format(time.DateOnly), day.AddDate(0, 0, 1).Format(time.DateOnly)
	// The environments are real: events of other tests' containers may be
	// collected into them, so names carry the label and only ours count.
	add := func(env int64, id, name, action string, at time.Time) {
		e := store.ActivityEvent{EnvironmentID: env, Type: "container", Action: action, ActorID: id, ActorName: name + "-" + h.label, Time: at}
		if _, err := h.store.AddActivity(t.Context(), &e); err != nil {
			t.Fatal(err)
		}
	}
	idA, idB := "aaaaaaaaaaaa"+h.label+"0000", "bbbbbbbbbbbb"+h.label+"0000"
	add(prod, idA, "web", "start", day)
	add(prod, idA, "web", "die", day.Add(time.Hour))
	add(prod, idA, "web", "restart", day.AddDate(0, 0, 1))
	add(dev, idB, "db", "start", day)
	var page struct {
		Events []activityEvent
		Total  int
	}
	list := func(query string) []string {
		t.Helper()
		h.must(200, "GET", "/api/activity?"+query, nil, &page)
		var out []string
		for _, e := range page.Events {
			if name, ours := strings.CutSuffix(e.ContainerName, "-"+h.label); ours {
				out = append(out, name+":"+e.Action)
			}
		}
		slices.Sort(out)
		return out
	}
	for query, want := range map[string][]string{
		"actions=start,die":                                             {"db:start", "web:die", "web:start"},
		"actions=start&actions=restart":                                 {"db:start", "web:restart", "web:start"},
		"containerId=" + idA[:12]:                                       {"web:die", "web:restart", "web:start"},
		"containerId=" + idB:                                            {"db:start"},
		"containerName=db-" + h.label:                                   {"db:start"},
		"labels=prod&actions=start":                                     {"web:start"},
		"labels=dev,prod&actions=start":                                 {"db:start", "web:start"},
		"labels=nowhere":                                                nil,
		"fromDate=" + d0 + "&toDate=" + d0:                              {"db:start", "web:die", "web:start"},
		"fromDate=" + d1:                                                {"web:restart"},
		"toDate=" + url.QueryEscape(day.Format(time.RFC3339)):           {"db:start", "web:start"},
		fmt.Sprintf("environmentId=%d&fromDate=%sT12:30:00Z", prod, d0): {"web:die", "web:restart"},
	} {
		if got := list(query); !slices.Equal(got, want) {
			t.Errorf("GET /api/activity?%s = %v, want %v", query, got, want)
		}
	}
	h.must(400, "GET", "/api/activity?fromDate=yesterday", nil, nil)

	var stats struct{ Total int64 }
	h.must(200, "GET", fmt.Sprintf("/api/activity/stats?environment_id=%d&fromDate=%s", dev, d0), nil, &stats)
	if stats.Total != 1 {
		t.Errorf("stats of environment_id=%d = %+v, want 1 event", dev, stats)
	}
	var seen struct {
		Containers []struct{ ContainerName string }
	}
	h.must(200, "GET", fmt.Sprintf("/api/activity/containers?environment_id=%d", dev), nil, &seen)
	if len(seen.Containers) != 1 || seen.Containers[0].ContainerName != "db-"+h.label {
		t.Errorf("containers of environment_id=%d = %+v", dev, seen)
	}
}

// The reference's audit filters: usernames, entityTypes, actions (several),
// labels, fromDate/toDate, on the list and the export.
func TestAuditTakesTheReferenceFilters(t *testing.T) {
	t.Parallel()
	enginetest.Require(t)
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	h := startHarnessWith(t, apitest.Options{DBPath: filepath.Join(t.TempDir(), "berth.db"), Box: storetest.Box(t),
		LicenseKeys: []ed25519.PublicKey{pub}})
	doc, err := license.Sign(license.License{ID: "L-1", Customer: "Test", Edition: "enterprise",
		IssuedAt: time.Now().Add(-time.Hour)}, priv)
	if err != nil {
		t.Fatal(err)
	}
	h.must(200, "POST", "/api/license", map[string]string{"license": doc, "key": doc, "name": "Test"}, nil)
	prod, dev := labelledEnvs(t, h)
	day := time.Now().UTC().Truncate(24 * time.Hour).Add(-36 * time.Hour) // noon two days ago
	d0, d1, d2 := day.Format(time.DateOnly), day.AddDate(0, 0, 1).Format(time.DateOnly), day.AddDate(0, 0, 2).Format(time.DateOnly)
	add := func(user string, env int64, action, entity string, at time.Time) {
		e := store.AuditEntry{CreatedAt: at, Username: user, EnvironmentID: &env, Action: action, EntityType: entity,
			EntityName: user + "-" + action}
		if err := h.store.AddAudit(t.Context(), &e); err != nil {
			t.Fatal(err)
		}
	}
	add("ann", prod, "container.start", "container", day)
	add("bob", dev, "image.pull", "image", day.Add(time.Hour))
	add("cat", dev, "stack.deploy", "stack", day.AddDate(0, 0, 2))
	names := func(path string) []string {
		t.Helper()
		var page struct{ Entries []struct{ EntityName string } }
		h.must(200, "GET", path, nil, &page)
		var out []string
		for _, e := range page.Entries {
			if e.EntityName != "" && e.EntityName != "Test" {
				out = append(out, e.EntityName)
			}
		}
		slices.Sort(out)
		return out
	}
	for query, want := range map[string][]string{
		"usernames=ann,bob":                    {"ann-container.start", "bob-image.pull"},
		"entityTypes=image&entityTypes=stack":  {"bob-image.pull", "cat-stack.deploy"},
		"actions=container.start,stack.deploy": {"ann-container.start", "cat-stack.deploy"},
		"labels=dev":                           {"bob-image.pull", "cat-stack.deploy"},
		"labels=prod&usernames=bob":            nil,
		"fromDate=" + d0 + "&toDate=" + d0:     {"ann-container.start", "bob-image.pull"},
		"fromDate=" + d1 + "T00:00:00Z":        {"cat-stack.deploy"},
	} {
		if got := names("/api/audit?" + query); !slices.Equal(got, want) {
			t.Errorf("GET /api/audit?%s = %v, want %v", query, got, want)
		}
	}
	var exported []struct{ EntityName string }
	h.must(200, "GET", "/api/audit/export?format=json&usernames=ann,cat&fromDate="+d2+"&toDate="+d2, nil, &exported)
	if len(exported) != 1 || exported[0].EntityName != "cat-stack.deploy" {
		t.Errorf("export of %s = %+v", d2, exported)
	}
	h.must(400, "GET", "/api/audit?toDate=03/10/2025", nil, nil)
}

// since and until bound a container's logs (list, stream) and the merged
// logs, as the reference passes them to the engine.
func TestLogsTakeSinceAndUntil(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.createContainer("logs-range-"+h.label, true, "sh", "-c", "echo early; sleep 3; echo late; sleep 300")
	var out struct{ Logs string }
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(out.Logs, "late") && time.Now().Before(deadline) {
		time.Sleep(500 * time.Millisecond)
		h.must(200, "GET", "/api/containers/"+id+"/logs?env=1&timestamps=true", nil, &out)
	}
	var times []time.Time
	for _, line := range strings.Split(strings.TrimSpace(out.Logs), "\n") {
		ts, _, _ := strings.Cut(line, " ")
		at, err := time.Parse(time.RFC3339Nano, ts)
		if err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		times = append(times, at)
	}
	if len(times) != 2 {
		t.Fatalf("logs = %q", out.Logs)
	}
	mid := url.QueryEscape(times[0].Add(times[1].Sub(times[0]) / 2).Format(time.RFC3339Nano))
	for query, want := range map[string]string{"since=" + mid: "late\n", "until=" + mid: "early\n",
		fmt.Sprintf("since=%d", times[1].Unix()+10): ""} {
		h.must(200, "GET", "/api/containers/"+id+"/logs?env=1&"+query, nil, &out)
		if out.Logs != want {
			t.Errorf("logs?%s = %q, want %q", query, out.Logs, want)
		}
	}
	h.must(400, "GET", "/api/containers/"+id+"/logs?env=1&since=yesterday", nil, nil)

	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	lines := func(path string, field string) []string {
		events, resp := h.openEvents(ctx, path)
		if resp.StatusCode != 200 {
			t.Fatalf("%s = %d", path, resp.StatusCode)
		}
		var got []string
		for ev := range events {
			if ev.Name == "end" || ev.Name == "error" {
				break
			}
			if ev.Name == "log" {
				var l map[string]any
				_ = json.Unmarshal([]byte(ev.Data), &l)
				got = append(got, fmt.Sprint(l[field]))
			}
		}
		return got
	}
	// until in the past ends the live streams once the lines before it are sent.
	if got := lines("/api/containers/"+id+"/logs/stream?env=1&until="+mid, "text"); !slices.Equal(got, []string{"early"}) {
		t.Errorf("stream until the middle = %v", got)
	}
	if got := lines("/api/logs/merged?env=1&containers="+id+"&until="+mid, "text"); !slices.Equal(got, []string{"early"}) {
		t.Errorf("merged until the middle = %v", got)
	}
	h.must(400, "GET", "/api/logs/merged?env=1&containers="+id+"&until=soon", nil, nil)
}

// statuses, fromDate and toDate filter the schedule executions.
func TestScheduleExecutionsTakeStatusesAndDates(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	day := time.Now().UTC().Truncate(24 * time.Hour).Add(-36 * time.Hour)
	for i, st := range []string{"success", "failed", "skipped"} {
		e := store.Execution{ScheduleType: "system_cleanup", ScheduleID: 9000 + int64(i), EntityName: st + "-" + h.label,
			TriggeredBy: "manual", TriggeredAt: day.AddDate(0, 0, i), Status: st}
		if err := h.store.AddExecution(t.Context(), &e); err != nil {
			t.Fatal(err)
		}
	}
	names := func(query string) []string {
		t.Helper()
		var page struct{ Executions []struct{ EntityName string } }
		h.must(200, "GET", "/api/schedules/executions?"+query, nil, &page)
		var out []string
		for _, e := range page.Executions {
			if name, ok := strings.CutSuffix(e.EntityName, "-"+h.label); ok {
				out = append(out, name)
			}
		}
		slices.Sort(out)
		return out
	}
	d0, d1 := day.Format(time.DateOnly), day.AddDate(0, 0, 1).Format(time.DateOnly)
	for query, want := range map[string][]string{
		"statuses=success,skipped":                       {"skipped", "success"},
		"statuses=failed&statuses=skipped":               {"failed", "skipped"},
		"fromDate=" + d1:                                 {"failed", "skipped"},
		"fromDate=" + d0 + "&toDate=" + d1:               {"failed", "success"},
		"toDate=" + d0 + "&statuses=failed":              nil,
		"statuses=success&fromDate=" + d0 + "T00:00:00Z": {"success"},
	} {
		if got := names(query); !slices.Equal(got, want) {
			t.Errorf("executions?%s = %v, want %v", query, got, want)
		}
	}
	h.must(400, "GET", "/api/schedules/executions?fromDate=last-week", nil, nil)
}

// event_types is the reference's name of eventTypes; trigger-test's
// payload is the text the channels get.
func TestNotificationsTakeEventTypesSnakeAndTestPayload(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	rcv := newHookReceiver(t, nil)
	var ch notificationOut
	h.must(201, "POST", "/api/notifications", map[string]any{"name": "snake-" + h.label, "type": "webhook",
		"config": map[string]any{"url": rcv.URL}, "event_types": []string{"container_oom"}}, &ch)
	if !slices.Equal(ch.EventTypes, []string{"container_oom"}) {
		t.Errorf("created with event_types: %+v", ch)
	}
	h.must(200, "PUT", fmt.Sprintf("/api/notifications/%d", ch.ID), map[string]any{"event_types": []string{"container_started"}}, &ch)
	if !slices.Equal(ch.EventTypes, []string{"container_started"}) {
		t.Errorf("updated with event_types: %+v", ch)
	}
	h.must(201, "POST", "/api/environments/1/notifications", map[string]any{"notificationId": ch.ID}, nil)
	h.must(200, "POST", "/api/notifications/trigger-test", map[string]any{"environmentId": 1, "eventType": "container_started",
		"payload": map[string]any{"title": "Custom title", "message": "web-1 started", "type": "warning"}}, nil)
	// The channel hears environment 1's real container_started events too
	// (other tests start containers there): only the test's own counts.
	mine := func() []map[string]any {
		var out []map[string]any
		for _, m := range rcv.received() {
			if m["message"] == "web-1 started" {
				out = append(out, m)
			}
		}
		return out
	}
	deadline := time.Now().Add(time.Minute)
	for len(mine()) == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	got := mine()
	if len(got) != 1 || got[0]["event"] != "container_started" || !strings.Contains(fmt.Sprint(got[0]["title"]), "Custom title") ||
		!strings.Contains(fmt.Sprint(got[0]["title"]), "Warning") {
		t.Errorf("the channel got %v (all: %v)", got, rcv.received())
	}
	h.must(400, "POST", "/api/notifications/trigger-test", map[string]any{"eventType": "container_started",
		"payload": map[string]any{"title": "t", "message": "m", "type": "shout"}}, nil)
	h.must(400, "POST", "/api/notifications/trigger-test", map[string]any{"eventType": "container_started",
		"payload": map[string]any{"title": "only a title"}}, nil)
}
