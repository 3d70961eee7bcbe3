package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/apitest"
	"github.com/berth-dev/berth/shared/enginetest"
)

// scheduleInfo is a schedules list entry as clients decode it.
type scheduleInfo struct {
	ID                    int64       `json:"id"`
	Type                  string      `json:"type"`
	Name                  string      `json:"name"`
	EntityName            string      `json:"entityName"`
	EnvironmentID         *int64      `json:"environmentId"`
	EnvironmentName       *string     `json:"environmentName"`
	Enabled               bool        `json:"enabled"`
	ScheduleType          string      `json:"scheduleType"`
	CronExpression        *string     `json:"cronExpression"`
	Timezone              string      `json:"timezone"`
	NextRun               *string     `json:"nextRun"`
	LastExecution         *execution  `json:"lastExecution"`
	RecentExecutions      []execution `json:"recentExecutions"`
	IsSystem              bool        `json:"isSystem"`
	EnvHasScanning        *bool       `json:"envHasScanning"`
	VulnerabilityCriteria *string     `json:"vulnerabilityCriteria"`
	AutoUpdate            *bool       `json:"autoUpdate"`
	PruneMode             string      `json:"pruneMode"`
}

// execution is an execution record as clients decode it.
type execution struct {
	ID            int64           `json:"id"`
	ScheduleType  string          `json:"scheduleType"`
	ScheduleID    int64           `json:"scheduleId"`
	EnvironmentID *int64          `json:"environmentId"`
	EntityName    string          `json:"entityName"`
	TriggeredBy   string          `json:"triggeredBy"`
	TriggeredAt   string          `json:"triggeredAt"`
	StartedAt     *string         `json:"startedAt"`
	CompletedAt   *string         `json:"completedAt"`
	Duration      *int64          `json:"duration"`
	Status        string          `json:"status"`
	ErrorMessage  *string         `json:"errorMessage"`
	Details       json.RawMessage `json:"details"`
	Logs          string          `json:"logs"`
}

func (h *harness) schedules() map[string]scheduleInfo {
	h.t.Helper()
	var out struct{ Schedules []scheduleInfo }
	h.must(200, "GET", "/api/schedules", nil, &out)
	m := map[string]scheduleInfo{}
	for _, s := range out.Schedules {
		m[fmt.Sprintf("%s/%d", s.Type, s.ID)] = s
	}
	return m
}

// runSchedule runs a schedule through the run endpoint and returns its
// finished execution.
func (h *harness) runSchedule(typ string, id int64) execution {
	h.t.Helper()
	var out struct {
		Success     bool
		ExecutionID int64
		Execution   execution
	}
	h.must(200, "POST", fmt.Sprintf("/api/schedules/%s/%d/run?wait=true", typ, id), nil, &out)
	if !out.Success || out.ExecutionID == 0 || out.Execution.ID != out.ExecutionID {
		h.t.Fatalf("run %s/%d = %+v", typ, id, out)
	}
	return out.Execution
}

func wantError(t *testing.T, h *harness, method, path string, body any, status int, message string) {
	t.Helper()
	code, data := h.do(method, path, body)
	var e struct{ Error string }
	_ = json.Unmarshal(data, &e)
	if code != status || e.Error != message {
		t.Errorf("%s %s %v = %d %s, want %d %q", method, path, body, code, data, status, message)
	}
}

func TestAutoUpdateStateTableAndCronValidation(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	name := "au-" + h.label
	path := "/api/auto-update/" + name + "?env=1"

	for _, cron := range []string{"", "* * * *", "60 * * * *", "* * * * 8", "@daily", "0 0 * * MON", "*/0 * * * *", "1-10/2 * * * *"} {
		wantError(t, h, "POST", path, map[string]any{"enabled": true, "cronExpression": cron}, 400, "Invalid cron expression")
	}
	wantError(t, h, "POST", path, map[string]any{"enabled": true, "cronExpression": "0 3 * * *", "vulnerabilityCriteria": "some"}, 400,
		`Invalid vulnerabilityCriteria "some": use never, any, critical_high, critical or more_than_current`)

	// absent → present: created, schedule type detected, criteria never.
	var a struct {
		ID                    int64
		ContainerName         string
		EnvironmentID         *int64
		Enabled               bool
		ScheduleType          string
		CronExpression        string
		VulnerabilityCriteria string
		CreatedAt, UpdatedAt  string
	}
	h.must(200, "POST", path, map[string]any{"enabled": true, "cronExpression": "0 3 * * *"}, &a)
	if a.ID == 0 || a.ContainerName != name || a.EnvironmentID == nil || *a.EnvironmentID != 1 || !a.Enabled ||
		a.ScheduleType != "daily" || a.CronExpression != "0 3 * * *" || a.VulnerabilityCriteria != "never" || a.CreatedAt == "" {
		t.Fatalf("created = %+v", a)
	}
	first := a.ID
	// present → present, updated.
	h.must(200, "POST", path, map[string]any{"enabled": true, "cronExpression": "0 4 * * 1", "vulnerability_criteria": "critical"}, &a)
	if a.ID != first || a.ScheduleType != "weekly" || a.VulnerabilityCriteria != "critical" {
		t.Fatalf("updated = %+v", a)
	}
	h.must(200, "POST", path, map[string]any{"enabled": true, "cronExpression": "*/30 * * * *", "scheduleType": "custom"}, &a)
	if a.ID != first || a.ScheduleType != "custom" || a.VulnerabilityCriteria != "never" {
		t.Fatalf("updated again = %+v", a)
	}
	var byName map[string]map[string]any
	h.must(200, "GET", "/api/auto-update?env=1", nil, &byName)
	if s := byName[name]; s["enabled"] != true || s["cronExpression"] != "*/30 * * * *" {
		t.Errorf("GET /api/auto-update = %v", byName)
	}
	sched, ok := h.schedules()[fmt.Sprintf("container_update/%d", first)]
	if !ok || sched.EntityName != name || !sched.Enabled || sched.NextRun == nil || sched.IsSystem ||
		sched.EnvHasScanning == nil || *sched.EnvHasScanning || sched.VulnerabilityCriteria == nil || sched.EnvironmentName == nil {
		t.Fatalf("schedule = %+v (listed %v)", sched, ok)
	}
	next, err := time.Parse(time.RFC3339, *sched.NextRun)
	if err != nil || next.Minute()%30 != 0 || next.Second() != 0 || !next.After(time.Now()) {
		t.Errorf("nextRun = %v (%v)", *sched.NextRun, err)
	}

	// toggle: off (no next run), then on.
	var tg struct{ Success, Enabled bool }
	h.must(200, "POST", fmt.Sprintf("/api/schedules/container_update/%d/toggle", first), nil, &tg)
	if !tg.Success || tg.Enabled {
		t.Fatalf("toggle = %+v", tg)
	}
	if s := h.schedules()[fmt.Sprintf("container_update/%d", first)]; s.Enabled || s.NextRun != nil {
		t.Errorf("after toggle off: enabled %v, nextRun %v", s.Enabled, s.NextRun)
	}
	h.must(200, "POST", fmt.Sprintf("/api/schedules/container_update/%d/toggle", first), nil, &tg)
	if !tg.Enabled {
		t.Fatal("toggle back on failed")
	}

	// present → absent: a hard delete.
	var del map[string]any
	h.must(200, "POST", path, map[string]any{"enabled": false}, &del)
	if del["success"] != true || del["deleted"] != true || len(del) != 2 {
		t.Fatalf("disable = %v", del)
	}
	var defaults map[string]any
	h.must(200, "GET", path, nil, &defaults)
	if defaults["enabled"] != false || defaults["cronExpression"] != "0 3 * * *" || defaults["id"] != nil {
		t.Errorf("after delete = %v", defaults)
	}
	if _, ok := h.schedules()[fmt.Sprintf("container_update/%d", first)]; ok {
		t.Error("deleted configuration still scheduled")
	}
	// Re-enabling creates a new configuration.
	h.must(200, "POST", path, map[string]any{"enabled": true, "cronExpression": "0 3 * * *"}, &a)
	if a.ID == first {
		t.Errorf("re-enabled configuration kept id %d", a.ID)
	}
	// A missing enabled is false, as in the reference: deleted, 200.
	del = nil
	h.must(200, "POST", path, map[string]any{"cronExpression": "0 3 * * *"}, &del)
	if del["success"] != true || del["deleted"] != true {
		t.Fatalf("save without enabled = %v, want {success, deleted}", del)
	}
	if _, ok := h.schedules()[fmt.Sprintf("container_update/%d", a.ID)]; ok {
		t.Error("configuration saved without enabled still scheduled")
	}
	h.must(200, "POST", path, map[string]any{"enabled": true, "cronExpression": "0 3 * * *"}, &a)
	// DELETE of the schedule removes it too; of the container's configuration, answers whether there was one.
	h.must(200, "DELETE", fmt.Sprintf("/api/schedules/container_update/%d", a.ID), nil, nil)
	var gone struct{ Success bool }
	h.must(200, "DELETE", path, nil, &gone)
	if gone.Success {
		t.Error("DELETE of a configuration already deleted answered success")
	}
	wantError(t, h, "POST", "/api/schedules/container_update/999999/toggle", nil, 404, "Schedule not found")
	wantError(t, h, "POST", "/api/schedules/snapshot/1/run", nil, 400, "Invalid schedule type")
	wantError(t, h, "POST", "/api/schedules/backup/999999/run", nil, 404, "Schedule not found")
}

func TestEnvironmentScheduleSettingsAndTimezone(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var env struct{ ID int64 }
	h.must(201, "POST", "/api/environments", map[string]any{"name": "tz-" + h.label, "connectionType": "socket",
		"socketPath": "/var/run/berth-none-" + h.label + ".sock"}, &env)
	base := fmt.Sprintf("/api/environments/%d", env.ID)

	var uc struct {
		Success  bool
		Settings struct {
			Enabled               bool
			Cron                  string
			AutoUpdate            bool
			VulnerabilityCriteria string
		}
	}
	h.must(200, "GET", base+"/update-check", nil, &uc)
	if uc.Settings.Enabled || uc.Settings.Cron != "0 4 * * *" || uc.Settings.AutoUpdate || uc.Settings.VulnerabilityCriteria != "never" {
		t.Errorf("update-check defaults = %+v", uc.Settings)
	}
	wantError(t, h, "POST", base+"/update-check", map[string]any{"enabled": true, "cron": "0 25 * * *"}, 400, "Invalid cron expression")
	h.must(200, "POST", base+"/update-check", map[string]any{"enabled": true, "cron": "30 5 * * *", "autoUpdate": true,
		"vulnerabilityCriteria": "critical_high"}, &uc)
	if !uc.Success || !uc.Settings.Enabled || uc.Settings.Cron != "30 5 * * *" || !uc.Settings.AutoUpdate || uc.Settings.VulnerabilityCriteria != "critical_high" {
		t.Errorf("update-check saved = %+v", uc)
	}

	var ip struct {
		Success  bool
		Settings struct {
			Enabled        bool
			CronExpression string
			PruneMode      string
		}
	}
	h.must(200, "GET", base+"/image-prune", nil, &ip)
	if ip.Settings.Enabled || ip.Settings.CronExpression != "0 3 * * 0" || ip.Settings.PruneMode != "dangling" {
		t.Errorf("image-prune defaults = %+v", ip.Settings)
	}
	wantError(t, h, "POST", base+"/image-prune", map[string]any{"pruneMode": "some"}, 400, `Invalid pruneMode "some": use dangling or all`)
	wantError(t, h, "POST", base+"/image-prune", map[string]any{"cronExpression": "* * *"}, 400, "Invalid cron expression")
	h.must(200, "POST", base+"/image-prune", map[string]any{"enabled": true, "cronExpression": "0 2 * * 0", "pruneMode": "all"}, &ip)
	if !ip.Settings.Enabled || ip.Settings.PruneMode != "all" {
		t.Errorf("image-prune saved = %+v", ip)
	}

	wantError(t, h, "POST", base+"/timezone", map[string]any{"timezone": "Mars/Olympus_Mons"}, 400, "Invalid timezone")
	var tz struct {
		Success  bool
		Timezone string
	}
	h.must(200, "POST", base+"/timezone", map[string]any{"timezone": "Asia/Tokyo"}, &tz)
	h.must(200, "GET", base+"/timezone", nil, &tz)
	if tz.Timezone != "Asia/Tokyo" {
		t.Errorf("timezone = %+v", tz)
	}
	var got struct{ Timezone *string }
	h.must(200, "GET", base, nil, &got)
	if got.Timezone == nil || *got.Timezone != "Asia/Tokyo" {
		t.Errorf("environment timezone = %v", got.Timezone)
	}

	// Both schedules listed, next runs in Tokyo time.
	list := h.schedules()
	for _, key := range []string{"env_update_check", "image_prune"} {
		s, ok := list[fmt.Sprintf("%s/%d", key, env.ID)]
		if !ok || !s.Enabled || s.NextRun == nil || s.Timezone != "Asia/Tokyo" || s.EnvironmentID == nil || *s.EnvironmentID != env.ID {
			t.Fatalf("%s = %+v (listed %v)", key, s, ok)
		}
		next, err := time.Parse(time.RFC3339, *s.NextRun)
		if _, off := next.Zone(); err != nil || off != 9*3600 {
			t.Errorf("%s next run %s is not in Tokyo time", key, *s.NextRun)
		}
		local := next
		switch key {
		case "env_update_check":
			if local.Hour() != 5 || local.Minute() != 30 || s.AutoUpdate == nil || !*s.AutoUpdate || *s.VulnerabilityCriteria != "critical_high" {
				t.Errorf("update check = %+v at %v", s, local)
			}
		case "image_prune":
			if local.Weekday() != time.Sunday || local.Hour() != 2 || s.PruneMode != "all" {
				t.Errorf("image prune = %+v at %v", s, local)
			}
		}
	}
	// Delete: gone from the list, switched off on the environment.
	h.must(200, "DELETE", fmt.Sprintf("/api/schedules/image_prune/%d", env.ID), nil, nil)
	if _, ok := h.schedules()[fmt.Sprintf("image_prune/%d", env.ID)]; ok {
		t.Error("image prune still listed after delete")
	}
	h.must(200, "GET", base+"/image-prune", nil, &ip)
	if ip.Settings.Enabled {
		t.Error("image prune still enabled after delete")
	}
	// An offline environment's update check fails with a reason.
	e := h.runSchedule("env_update_check", env.ID)
	if e.Status != "failed" || e.ErrorMessage == nil || e.TriggeredBy != "manual" {
		t.Errorf("update check of an offline environment = %+v", e)
	}
}

func TestSystemSchedulesAndExecutions(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	list := h.schedules()
	for id, name := range map[int64]string{1: "Schedule execution cleanup", 2: "Event cleanup"} {
		s, ok := list[fmt.Sprintf("system_cleanup/%d", id)]
		if !ok || !s.IsSystem || s.Name != name || s.EnvironmentID != nil || s.EnvironmentName != nil || !s.Enabled || s.NextRun == nil {
			t.Errorf("system schedule %d = %+v (listed %v)", id, s, ok)
		}
	}
	wantError(t, h, "DELETE", "/api/schedules/system_cleanup/1", nil, 400, "System schedules cannot be deleted")
	var tg struct{ Success, Enabled bool }
	h.must(200, "POST", "/api/schedules/system/2/toggle", nil, &tg)
	if !tg.Success || tg.Enabled {
		t.Errorf("system toggle = %+v", tg)
	}
	if s := h.schedules()["system_cleanup/2"]; s.Enabled || s.NextRun != nil {
		t.Errorf("system schedule 2 after toggle = %+v", s)
	}
	h.must(200, "POST", "/api/schedules/system/2/toggle", nil, &tg)
	if !tg.Enabled {
		t.Error("system toggle back failed")
	}
	wantError(t, h, "POST", "/api/schedules/system/9/toggle", nil, 404, "Unknown system schedule")

	e := h.runSchedule("system_cleanup", 1)
	if e.Status != "success" || e.ScheduleType != "system_cleanup" || e.ScheduleID != 1 || e.EnvironmentID != nil ||
		e.TriggeredBy != "manual" || e.StartedAt == nil || e.CompletedAt == nil || e.Duration == nil || !strings.Contains(e.Logs, "Deleted 0 executions") {
		t.Errorf("cleanup execution = %+v", e)
	}
	var page struct {
		Executions           []execution
		Total, Limit, Offset int
	}
	h.must(200, "GET", "/api/schedules/executions?limit=10&offset=0&scheduleType=system_cleanup", nil, &page)
	if page.Total != 1 || page.Limit != 10 || len(page.Executions) != 1 || page.Executions[0].ID != e.ID {
		t.Errorf("executions = %+v", page)
	}
	var one execution
	h.must(200, "GET", fmt.Sprintf("/api/schedules/executions/%d", e.ID), nil, &one)
	if one.ID != e.ID || one.Logs == "" || string(one.Details) != `{"deleted":0}` {
		t.Errorf("execution = %+v", one)
	}
	if s := h.schedules()["system_cleanup/1"]; s.LastExecution == nil || s.LastExecution.ID != e.ID || len(s.RecentExecutions) != 1 {
		t.Errorf("schedule after a run = %+v", s)
	}
	h.must(200, "DELETE", fmt.Sprintf("/api/schedules/executions/%d", e.ID), nil, nil)
	wantError(t, h, "GET", fmt.Sprintf("/api/schedules/executions/%d", e.ID), nil, 404, "Execution not found")

	var ret struct {
		ExecutionRetentionDays, EventRetentionDays int
	}
	h.must(200, "GET", "/api/schedules/settings", nil, &ret)
	if ret.ExecutionRetentionDays != 30 || ret.EventRetentionDays != 0 {
		t.Errorf("retention = %+v", ret)
	}
	h.must(200, "PUT", "/api/schedules/settings", map[string]any{"executionRetentionDays": 7}, &ret)
	if ret.ExecutionRetentionDays != 7 {
		t.Errorf("retention = %+v", ret)
	}
}

// Deleting a container removes its auto-update configuration and its schedule.
func TestDeletingAContainerRemovesItsAutoUpdate(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	name := "au-del-" + h.label
	id := h.createContainer(name, false, "sleep", "60")
	var a struct{ ID int64 }
	h.must(200, "POST", "/api/auto-update/"+name+"?env=1", map[string]any{"enabled": true, "cronExpression": "0 3 * * *"}, &a)
	if _, ok := h.schedules()[fmt.Sprintf("container_update/%d", a.ID)]; !ok {
		t.Fatal("not scheduled")
	}
	h.must(200, "DELETE", "/api/containers/"+id+"?env=1&force=true", nil, nil)
	var byName map[string]any
	h.must(200, "GET", "/api/auto-update?env=1", nil, &byName)
	if _, ok := byName[name]; ok {
		t.Error("configuration survived its container")
	}
	if _, ok := h.schedules()[fmt.Sprintf("container_update/%d", a.ID)]; ok {
		t.Error("schedule survived its container")
	}
}

// A container removed outside Berth (docker rm -f) takes its auto-update
// with it at the schedule's next run: that run is recorded as skipped with
// the reason (no failure, no failed-update notification), the configuration
// and the schedule are gone, so nothing fails again every tick.
func TestAutoUpdateOfAContainerRemovedOutsideBerthIsRemoved(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	name := "au-orphan-" + h.label
	id := h.createContainer(name, false, "sleep", "60")
	var a struct{ ID int64 }
	h.must(200, "POST", "/api/auto-update/"+name+"?env=1", map[string]any{"enabled": true, "cronExpression": "*/5 * * * *"}, &a)
	key := fmt.Sprintf("container_update/%d", a.ID)
	if _, ok := h.schedules()[key]; !ok {
		t.Fatal("not scheduled")
	}
	enginetest.Must(t, 204, "DELETE", "/containers/"+id+"?force=1", nil, nil, nil)

	e := h.runSchedule("container_update", a.ID)
	if e.Status != "skipped" || e.ErrorMessage == nil || !strings.Contains(*e.ErrorMessage, "no longer exists") {
		t.Errorf("run of the orphaned schedule = %s %v, want skipped with the reason", e.Status, e.ErrorMessage)
	}
	var byName map[string]any
	h.must(200, "GET", "/api/auto-update?env=1", nil, &byName)
	if _, ok := byName[name]; ok {
		t.Error("configuration survived its container")
	}
	if _, ok := h.schedules()[key]; ok {
		t.Error("schedule survived its container")
	}
	// It cannot run (and fail) again.
	wantError(t, h, "POST", "/api/schedules/"+key+"/run", nil, 404, "Schedule not found")
}

// A git stack's auto-sync is a schedule: listed, run through the run
// endpoint (deploying the new commit, then nothing while it is unchanged),
// and deleting the schedule keeps the stack.
func TestGitStackSyncSchedule(t *testing.T) {
	h := newHarness(t)
	g := newGitServer(t)
	name := "gs-" + h.label
	h.removeStackAtCleanup(name)
	commit := g.commit("main", map[string]string{"compose.yaml": gitCompose(h.label, "1")})
	var cred, repo, gs struct{ ID int64 }
	h.must(201, "POST", "/api/git/credentials", map[string]any{"name": "c-" + h.label, "authType": "password",
		"username": gitUser, "password": gitPassword}, &cred)
	h.must(201, "POST", "/api/git/repositories", map[string]any{"name": "r-" + h.label, "url": g.URL, "branch": "main",
		"credentialId": cred.ID}, &repo)
	h.must(201, "POST", "/api/git/stacks", map[string]any{"stackName": name, "environmentId": 1, "repositoryId": repo.ID,
		"autoUpdate": true, "autoUpdateCron": "*/15 * * * *", "envVars": []map[string]any{{"key": "TOKEN", "value": "t"}}}, &gs)
	s, ok := h.schedules()[fmt.Sprintf("git_stack_sync/%d", gs.ID)]
	if !ok || s.EntityName != name || !s.Enabled || s.NextRun == nil || s.CronExpression == nil || *s.CronExpression != "*/15 * * * *" ||
		s.ScheduleType != "custom" || s.EnvHasScanning != nil {
		t.Fatalf("git schedule = %+v (listed %v)", s, ok)
	}
	e := h.runSchedule("git_stack_sync", gs.ID)
	var d struct {
		Commit   string
		Deployed bool
	}
	_ = json.Unmarshal(e.Details, &d)
	if e.Status != "success" || !d.Deployed || d.Commit != commit || !strings.Contains(e.Logs, "Deployed stack") {
		t.Fatalf("first sync = %+v", e)
	}
	if en, ok := h.stackEntry(name); !ok || en.Status != "running" {
		t.Errorf("stack after sync = %+v", en)
	}
	e = h.runSchedule("git_stack_sync", gs.ID)
	_ = json.Unmarshal(e.Details, &d)
	if e.Status != "success" || d.Deployed || !strings.Contains(e.Logs, "up to date") {
		t.Errorf("second sync = %+v", e)
	}
	h.must(200, "DELETE", fmt.Sprintf("/api/schedules/git_stack_sync/%d", gs.ID), nil, nil)
	if _, ok := h.schedules()[fmt.Sprintf("git_stack_sync/%d", gs.ID)]; ok {
		t.Error("git schedule still listed after delete")
	}
	var after struct {
		AutoUpdate bool
		ID         int64
	}
	h.must(200, "GET", fmt.Sprintf("/api/git/stacks/%d", gs.ID), nil, &after)
	if after.ID != gs.ID || after.AutoUpdate {
		t.Errorf("git stack after its schedule was deleted = %+v", after)
	}
}

// The schedules stream announces an execution when it starts and when it
// ends, without its logs.
func TestSchedulesStreamAnnouncesExecutions(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	events, resp := h.openEvents(ctx, "/api/schedules/stream")
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("stream = %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if ev := <-events; ev.Name != "connected" {
		t.Fatalf("first event = %+v", ev)
	}
	e := h.runSchedule("system_cleanup", 1)
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatal("the stream ended")
			}
			var got execution
			if ev.Name != "execution" || json.Unmarshal([]byte(ev.Data), &got) != nil {
				t.Fatalf("event = %+v", ev)
			}
			if got.ID != e.ID || got.ScheduleType != "system_cleanup" || got.Logs != "" {
				t.Fatalf("execution event = %+v", got)
			}
			if got.Status == "success" {
				if got.CompletedAt == nil || got.Duration == nil {
					t.Errorf("finished execution event = %+v", got)
				}
				return
			}
			if got.Status != "running" {
				t.Fatalf("execution event status = %s", got.Status)
			}
		case <-timeout:
			t.Fatal("no event of the execution's end")
		}
	}
}

// hideSystemJobs (the reference's schedules-page preference) is stored and
// answered: the global one without authentication, a signed-in user's own
// with it. GET /api/schedules still lists the system jobs, as the
// reference's does (the page hides them).
func TestScheduleSettingsStoreHideSystemJobs(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var got struct {
		HideSystemJobs         bool `json:"hideSystemJobs"`
		ExecutionRetentionDays int  `json:"executionRetentionDays"`
	}
	h.must(200, "GET", "/api/schedules/settings", nil, &got)
	if got.HideSystemJobs {
		t.Errorf("default hideSystemJobs = true")
	}
	h.must(200, "PUT", "/api/schedules/settings", map[string]any{"hideSystemJobs": true}, &got)
	if !got.HideSystemJobs || got.ExecutionRetentionDays != 30 {
		t.Errorf("PUT answered %+v", got)
	}
	got.HideSystemJobs = false
	h.must(200, "GET", "/api/schedules/settings", nil, &got)
	if !got.HideSystemJobs {
		t.Errorf("hideSystemJobs not stored")
	}
	var list struct {
		Schedules []struct {
			IsSystem bool `json:"isSystem"`
		} `json:"schedules"`
	}
	h.must(200, "GET", "/api/schedules", nil, &list)
	if !slices.ContainsFunc(list.Schedules, func(s struct {
		IsSystem bool `json:"isSystem"`
	}) bool {
		return s.IsSystem
	}) {
		t.Errorf("the system jobs are no longer listed: %+v", list)
	}

	a := newAuthHarness(t, apitest.Options{})
	user, pw := a.setupAdmin()
	a.as(a.login(user, pw))
	a.must(200, "PUT", "/api/schedules/settings", map[string]any{"hideSystemJobs": true}, nil)
	got.HideSystemJobs = false
	a.must(200, "GET", "/api/schedules/settings", nil, &got)
	if !got.HideSystemJobs {
		t.Errorf("the user's hideSystemJobs not stored")
	}
	if _, err := a.store.GetSetting(t.Context(), "schedules.hide_system_jobs"); err == nil {
		t.Errorf("a user's preference was stored as the global one")
	}
}
