package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
)

func TestContainerLifecycle(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	name := "berth-life-" + h.label
	id := h.createContainer(name, false, "sleep", "300")

	var list []struct {
		ID, Name, State, Image string
		Labels                 map[string]string
		RestartCount           *int `json:"restartCount"`
	}
	h.must(200, "GET", "/api/containers?env=1&all=true", nil, &list)
	found := false
	for _, c := range list {
		if c.ID == id {
			found = true
			if c.Name != name || c.State != "created" || c.Labels["berth.test"] != h.label || c.RestartCount == nil {
				t.Errorf("list item = %+v", c)
			}
		}
	}
	if !found {
		t.Fatalf("created container %s not listed with all=true", id)
	}
	// Like the reference, the list holds every container unless all=false:
	// clients that never send all keep the stopped ones.
	h.must(200, "GET", "/api/containers?env=1", nil, &list)
	found = false
	for _, c := range list {
		found = found || c.ID == id
	}
	if !found {
		t.Fatalf("created container %s not listed without all (the default is all)", id)
	}
	h.must(200, "GET", "/api/containers?env=1&all=false", nil, &list)
	for _, c := range list {
		if c.ID == id {
			t.Fatalf("created (not running) container listed with all=false")
		}
	}

	steps := []struct {
		action     string
		wantStatus string
	}{
		{"start", "running"},
		{"pause", "paused"},
		{"unpause", "running"},
		{"restart", "running"},
		{"stop", "exited"},
		{"start", "running"},
	}
	for i, st := range steps {
		var ok map[string]bool
		h.must(200, "POST", "/api/containers/"+name+"/"+st.action+"?env=1", nil, &ok)
		if !ok["success"] {
			t.Fatalf("%s: %v", st.action, ok)
		}
		if got := h.inspectState(id).Status; got != st.wantStatus {
			t.Fatalf("after %s: status %q, want %q", st.action, got, st.wantStatus)
		}
		if i == 0 { // stats of the running container
			var snap map[string]float64
			h.must(200, "GET", "/api/containers/"+id+"/stats?env=1", nil, &snap)
			for _, k := range []string{"cpuPercent", "memoryUsage", "memoryRaw", "memoryCache", "memoryLimit",
				"memoryPercent", "networkRx", "networkTx", "blockRead", "blockWrite", "timestamp"} {
				if _, ok := snap[k]; !ok {
					t.Errorf("stats lack %q: %v", k, snap)
				}
			}
			if snap["memoryLimit"] <= 0 || snap["memoryRaw"] <= 0 || snap["memoryUsage"] > snap["memoryRaw"] {
				t.Errorf("stats memory figures implausible: %v", snap)
			}
			if ts := int64(snap["timestamp"]); time.Since(time.UnixMilli(ts)) > time.Minute || time.Until(time.UnixMilli(ts)) > time.Minute {
				t.Errorf("stats timestamp %d is not now in Unix milliseconds", ts)
			}
		}
	}

	// Both inspect paths answer the engine's inspection document.
	var a, b map[string]any
	h.must(200, "GET", "/api/containers/"+id+"?env=1", nil, &a)
	h.must(200, "GET", "/api/containers/"+name+"/inspect?env=1", nil, &b)
	if a["Id"] != id || b["Id"] != id || a["Name"] != "/"+name {
		t.Fatalf("inspect Id/Name = %v %v / %v", a["Id"], a["Name"], b["Id"])
	}
	for _, k := range []string{"Created", "Path", "Args", "State", "Image", "Config", "NetworkSettings", "Mounts"} {
		if _, ok := a[k]; !ok {
			t.Errorf("inspection lacks %s", k)
		}
	}

	// A running container is not removed without force.
	status, body := h.do("DELETE", "/api/containers/"+id+"?env=1", nil)
	if status != 400 || !strings.Contains(string(body), "force") {
		t.Fatalf("delete running without force = %d %s, want 400 naming force", status, body)
	}
	if got := h.inspectState(id).Status; got != "running" {
		t.Fatalf("refused delete changed the container: %q", got)
	}
	h.must(200, "POST", "/api/containers/"+id+"/stop?env=1", nil, nil)
	h.must(200, "DELETE", "/api/containers/"+id+"?env=1", nil, nil)
	status, body = h.do("GET", "/api/containers/"+id+"?env=1", nil)
	if status != 404 {
		t.Fatalf("inspect after delete = %d %s, want 404", status, body)
	}
}

func TestForceDeleteRemovesRunningContainerAndItsAutoUpdate(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	name := "berth-au-" + h.label
	id := h.createContainer(name, true, "sleep", "300")
	envID := int64(1)
	au := &store.AutoUpdate{ContainerName: name, EnvironmentID: &envID, Enabled: true, ScheduleType: "daily",
		CronExpression: "0 3 * * *", VulnerabilityCriteria: "never"}
	if err := h.store.UpsertAutoUpdate(context.Background(), au); err != nil {
		t.Fatal(err)
	}
	h.must(200, "DELETE", "/api/containers/"+id+"?env=1&force=true", nil, nil)
	if _, err := h.store.GetAutoUpdate(context.Background(), &envID, name); err == nil {
		t.Fatal("auto-update configuration survived the container's deletion")
	}
	if status, _ := h.do("GET", "/api/containers/"+id+"?env=1", nil); status != 404 {
		t.Fatalf("container still there: %d", status)
	}
}

func TestCreateWithPortsEnvAndStartAfterCreate(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	name := "berth-ports-" + h.label
	var out struct{ ID string }
	h.must(200, "POST", "/api/containers?env=1", map[string]any{
		"name": name, "image": "berth-test/busybox:1", "command": "sleep 300", "startAfterCreate": true,
		"portBindings":  map[string]any{"8080/tcp": []map[string]string{{"HostPort": ""}}},
		"ports":         []map[string]any{{"containerPort": 9090, "hostPort": "", "protocol": "udp"}},
		"env":           []string{"GREETING=hello"},
		"labels":        map[string]string{"berth.test": h.label},
		"restartPolicy": "unless-stopped",
	}, &out)
	var doc struct {
		State      struct{ Running bool }
		Config     struct{ Env []string }
		HostConfig struct {
			PortBindings  map[string][]struct{ HostPort string }
			RestartPolicy struct{ Name string }
		}
	}
	h.must(200, "GET", "/api/containers/"+out.ID+"?env=1", nil, &doc)
	if !doc.State.Running {
		t.Error("startAfterCreate did not start the container")
	}
	if !contains(doc.Config.Env, "GREETING=hello") {
		t.Errorf("env = %v", doc.Config.Env)
	}
	for _, p := range []string{"8080/tcp", "9090/udp"} {
		if _, ok := doc.HostConfig.PortBindings[p]; !ok {
			t.Errorf("port binding %s missing: %v", p, doc.HostConfig.PortBindings)
		}
	}
	if doc.HostConfig.RestartPolicy.Name != "unless-stopped" {
		t.Errorf("restart policy = %q", doc.HostConfig.RestartPolicy.Name)
	}
	// The list shows the published ports.
	var list []struct {
		ID    string
		Ports []struct {
			PrivatePort int
			PublicPort  int
			Type        string
		}
	}
	h.must(200, "GET", "/api/containers?env=1", nil, &list)
	listed := false
	for _, c := range list {
		if c.ID == out.ID {
			listed = true
			if len(c.Ports) < 2 || c.Ports[0].PublicPort == 0 {
				t.Errorf("ports = %+v", c.Ports)
			}
		}
	}
	if !listed {
		t.Fatal("container not listed")
	}
	// The list is written without encoding/json, and reads as if written
	// by it: the same bytes for the same containers.
	status, body := h.do("GET", "/api/containers?env=1", nil)
	var full []engine.Container
	if err := json.Unmarshal(body, &full); status != 200 || err != nil {
		t.Fatalf("list = %d %s (%v)", status, body, err)
	}
	want, _ := json.Marshal(full)
	if string(body) != string(want)+"\n" {
		t.Errorf("the list reads as\n%s\nencoding/json would write\n%s", body, want)
	}
}

func TestExecRoundTripOverWebSocket(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.createContainer("berth-exec-"+h.label, true, "sleep", "300")

	var inst struct {
		ExecID         string `json:"execId"`
		ConnectionInfo struct {
			Type string `json:"type"`
		} `json:"connectionInfo"`
	}
	h.must(200, "POST", "/api/containers/"+id+"/exec?envId=1", map[string]string{}, &inst)
	if inst.ExecID == "" || inst.ConnectionInfo.Type != "socket" {
		t.Fatalf("exec instance = %+v", inst)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	wsURL := "ws" + strings.TrimPrefix(h.url, "http") + "/api/containers/exec/" + inst.ExecID + "/attach?envId=1"
	ws, _, err := websocket.Dial(ctx, wsURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()

	// Resize while attached.
	h.must(200, "POST", "/api/containers/exec/"+inst.ExecID+"/resize?envId=1&h=40&w=120", nil, nil)
	if status, _ := h.do("POST", "/api/containers/exec/"+inst.ExecID+"/resize?envId=1&h=0&w=x", nil); status != 400 {
		t.Errorf("bad resize = %d, want 400", status)
	}

	if err := ws.Write(ctx, websocket.MessageText, []byte("stty size; echo hi\n")); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	hiLine := regexp.MustCompile(`(?m)^hi\r?$`)
	for !hiLine.MatchString(out.String()) {
		typ, data, err := ws.Read(ctx)
		if err != nil {
			t.Fatalf("read: %v; output so far %q", err, out.String())
		}
		if typ != websocket.MessageText {
			t.Fatalf("frame type %v, want text", typ)
		}
		out.Write(data)
	}
	if !strings.Contains(out.String(), "40 120") {
		t.Errorf("terminal size after resize not 40x120: %q", out.String())
	}

	// Each exec is single-use.
	ws2, resp, err := websocket.Dial(ctx, wsURL, nil)
	if err == nil {
		ws2.CloseNow()
		t.Fatal("second attach of one exec succeeded")
	}
	if resp == nil || resp.StatusCode != 409 {
		t.Fatalf("second attach: %v %v, want 409", resp, err)
	}

	// Leaving the shell ends the session: the server closes the socket.
	if err := ws.Write(ctx, websocket.MessageText, []byte("exit\n")); err != nil {
		t.Fatal(err)
	}
	for {
		if _, _, err := ws.Read(ctx); err != nil {
			if websocket.CloseStatus(err) != websocket.StatusNormalClosure {
				t.Fatalf("session end: %v, want a normal closure", err)
			}
			break
		}
	}
}

func TestExecOnUnknownContainerOrStoppedOne(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	if status, body := h.do("POST", "/api/containers/nope-"+h.label+"/exec?envId=1", "{}"); status != 404 {
		t.Errorf("exec on unknown container = %d %s, want 404", status, body)
	}
	id := h.createContainer("berth-exec-stopped-"+h.label, false, "sleep", "300")
	if status, body := h.do("POST", "/api/containers/"+id+"/exec?envId=1", "{}"); status != 400 {
		t.Errorf("exec on a stopped container = %d %s, want 400", status, body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(h.url, "http")+"/api/containers/exec/unknown/attach?envId=1", nil)
	if err == nil || resp == nil || resp.StatusCode != 404 {
		t.Errorf("attach of an unknown exec: %v %v, want 404", resp, err)
	}
}

func TestStatsStreamSendsEachRunningContainerThenDone(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ids := map[string]bool{}
	for i := range 3 {
		ids[h.createContainer("berth-stats-"+h.label+"-"+string(rune('a'+i)), true, "sleep", "300")] = false
	}
	stopped := h.createContainer("berth-stats-stopped-"+h.label, false, "sleep", "300")

	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	events, resp := h.openEvents(ctx, "/api/containers/stats/stream?env=1")
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type = %q", ct)
	}
	if resp.Header.Get("X-Accel-Buffering") != "no" {
		t.Error("X-Accel-Buffering: no is missing")
	}
	var last sseEvent
	for ev := range events {
		last = ev
		if ev.Name != "stat" {
			continue
		}
		var st map[string]any
		if err := json.Unmarshal([]byte(ev.Data), &st); err != nil {
			t.Fatal(err)
		}
		id, _ := st["id"].(string)
		if id == stopped {
			t.Error("a stopped container was included")
		}
		if _, ok := ids[id]; ok {
			ids[id] = true
			if _, ok := st["timestamp"]; ok {
				t.Error("stream stat carries timestamp")
			}
			if st["name"] == "" || st["memoryLimit"] == nil {
				t.Errorf("stat = %v", st)
			}
		}
	}
	if last.Name != "done" || last.Data != "{}" {
		t.Fatalf("last event = %+v, want done {}", last)
	}
	for id, seen := range ids {
		if !seen {
			t.Errorf("no stat for running container %s", id)
		}
	}

	// ids: only the containers named (a list samples the rows on screen).
	var one string
	for id := range ids {
		one = id
		break
	}
	events, _ = h.openEvents(ctx, "/api/containers/stats/stream?env=1&ids="+one[:12]+","+stopped)
	got := []string{}
	for ev := range events {
		if ev.Name == "stat" {
			var st struct{ ID string }
			_ = json.Unmarshal([]byte(ev.Data), &st)
			got = append(got, st.ID)
		}
	}
	if len(got) != 1 || got[0] != one {
		t.Errorf("stats of ids=%s,%s = %v, want only %s", one[:12], stopped, got, one)
	}
	if status, body := h.do("GET", "/api/containers/stats/stream?env=1&ids=nope", nil); status != 400 {
		t.Errorf("ids=nope = %d %s, want 400", status, body)
	}

	var all []map[string]any
	h.must(200, "GET", "/api/containers/stats?env=1", nil, &all)
	n := 0
	for _, st := range all {
		if _, ok := ids[st["id"].(string)]; ok {
			n++
		}
	}
	if n != len(ids) {
		t.Errorf("GET /api/containers/stats has %d of our %d containers", n, len(ids))
	}

	// The reference's debug=<name>: one container's sample, raw and computed.
	for id := range ids {
		var d struct {
			Container string
			Raw       struct{ MemoryUsage, MemoryLimit uint64 }
			Computed  struct{ MemoryLimit uint64 }
		}
		h.must(200, "GET", "/api/containers/stats?env=1&debug="+id, nil, &d)
		if d.Container != id || d.Raw.MemoryUsage == 0 || d.Raw.MemoryLimit == 0 || d.Computed.MemoryLimit != d.Raw.MemoryLimit {
			t.Errorf("stats debug of %s = %+v", id, d)
		}
		break
	}
	if status, body := h.do("GET", "/api/containers/stats?env=1&debug=no-such-"+h.label, nil); status != 404 {
		t.Errorf("stats debug of an unknown container = %d %s, want 404", status, body)
	}
}

func TestEventsStreamShowsContainerStart(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	name := "berth-events-" + h.label
	id := h.createContainer(name, false, "sleep", "300")

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	events, _ := h.openEvents(ctx, "/api/events?env=1")
	if first := <-events; first.Name != "connected" {
		t.Fatalf("first event = %+v, want connected", first)
	}
	before := time.Now().Add(-time.Minute).Unix()
	h.must(200, "POST", "/api/containers/"+id+"/start?env=1", nil, nil)
	h.must(200, "POST", "/api/containers/"+id+"/stop?env=1", nil, nil)
	after := time.Now().Add(time.Minute).Unix()
	seen := map[string]bool{}
	for ev := range events {
		var data struct {
			ID, Name string
			Time     int64
		}
		if err := json.Unmarshal([]byte(ev.Data), &data); err != nil {
			t.Fatalf("event %s data %q: %v", ev.Name, ev.Data, err)
		}
		if data.ID == id {
			if data.Name != name {
				t.Errorf("event %s name = %q, want %q", ev.Name, data.Name, name)
			}
			if data.Time < before || data.Time > after { // the engine's clock is this machine's
				t.Errorf("event %s time = %d, want the engine's time of the event (Unix seconds)", ev.Name, data.Time)
			}
			seen[ev.Name] = true
		}
		if seen["container-start"] && seen["container-die"] {
			return
		}
	}
	t.Fatalf("stream ended; saw %v, want container-start and container-die", seen)
}

func TestLogsTailAndStream(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.createContainer("berth-logs-"+h.label, true, "sh", "-c", "for i in 1 2 3 4 5; do echo line$i; done; echo oops 1>&2")
	waitExited(t, h, id)

	// stdout and stderr reach the engine through separate pipes: their
	// relative order is not defined, the order within each stream is.
	var out struct{ Logs string }
	h.must(200, "GET", "/api/containers/"+id+"/logs?env=1&tail=2", nil, &out)
	if lines := strings.Split(strings.TrimSuffix(out.Logs, "\n"), "\n"); len(lines) != 2 {
		t.Errorf("tail=2 logs = %q, want 2 lines", out.Logs)
	}
	h.must(200, "GET", "/api/containers/"+id+"/logs?env=1&tail=all", nil, &out)
	if got := strings.ReplaceAll(out.Logs, "oops\n", ""); got != "line1\nline2\nline3\nline4\nline5\n" || !strings.Contains(out.Logs, "oops\n") {
		t.Errorf("tail=all logs = %q", out.Logs)
	}
	if status, _ := h.do("GET", "/api/containers/"+id+"/logs?env=1&tail=-3", nil); status != 400 {
		t.Errorf("tail=-3 = %d, want 400", status)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	events, _ := h.openEvents(ctx, "/api/containers/"+id+"/logs/stream?env=1&tail=all")
	var names []string
	byStream := map[string][]string{}
	for ev := range events {
		names = append(names, ev.Name)
		if ev.Name == "log" {
			var l struct{ Text, Stream string }
			if err := json.Unmarshal([]byte(ev.Data), &l); err != nil {
				t.Fatal(err)
			}
			byStream[l.Stream] = append(byStream[l.Stream], l.Text)
		}
	}
	if len(names) == 0 || names[0] != "connected" || names[len(names)-1] != "end" {
		t.Fatalf("log stream events = %v", names)
	}
	if got := strings.Join(byStream["stdout"], " "); got != "line1 line2 line3 line4 line5" {
		t.Errorf("stdout lines = %q", got)
	}
	if got := strings.Join(byStream["stderr"], " "); got != "oops" {
		t.Errorf("stderr lines = %q", got)
	}
}

func TestTopAndRename(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.createContainer("berth-top-"+h.label, true, "sleep", "300")
	var top struct {
		Titles    []string
		Processes [][]string
	}
	h.must(200, "GET", "/api/containers/"+id+"/top?env=1", nil, &top)
	if len(top.Titles) == 0 || len(top.Processes) != 1 || !strings.Contains(strings.Join(top.Processes[0], " "), "sleep 300") {
		t.Errorf("top = %+v", top)
	}
	newName := "berth-renamed-" + h.label
	h.must(200, "POST", "/api/containers/"+id+"/rename?env=1", map[string]string{"name": newName}, nil)
	var doc struct{ Name string }
	h.must(200, "GET", "/api/containers/"+newName+"?env=1", nil, &doc)
	if doc.Name != "/"+newName {
		t.Errorf("name after rename = %q", doc.Name)
	}
	if status, _ := h.do("POST", "/api/containers/"+id+"/rename?env=1", map[string]string{"name": ""}); status != 400 {
		t.Errorf("rename to empty = %d, want 400", status)
	}
}

func TestKillSendsTheSignalAndRefusesAStoppedOrUnknownSignal(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.createContainer("berth-kill-"+h.label, true, "sleep", "300")
	h.expectRefusals([]refusal{
		{"unknown signal", "POST", "/api/containers/" + id + "/kill?env=1", map[string]string{"signal": "SIGNOPE"}, 400, "Unknown signal"},
		{"signal out of range", "POST", "/api/containers/" + id + "/kill?env=1", map[string]string{"signal": "99"}, 400, "Unknown signal"},
	})
	if !h.inspectState(id).Running {
		t.Fatal("a refused kill stopped the container")
	}
	// SIGTERM is ignored by sleep as PID 1; SIGKILL (the default) is not.
	h.must(200, "POST", "/api/containers/"+id+"/kill?env=1", nil, nil)
	waitExited(t, h, id)
	var doc struct{ State struct{ ExitCode int } }
	h.must(200, "GET", "/api/containers/"+id+"?env=1", nil, &doc)
	if doc.State.ExitCode != 137 {
		t.Errorf("exit code after kill = %d, want 137 (SIGKILL)", doc.State.ExitCode)
	}
	if status, body := h.do("POST", "/api/containers/"+id+"/kill?env=1", map[string]string{"signal": "TERM"}); status != 409 {
		t.Errorf("kill of a stopped container = %d %s, want 409", status, body)
	}
}

func waitExited(t *testing.T, h *harness, id string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for h.inspectState(id).Running {
		if time.Now().After(deadline) {
			t.Fatalf("container %s still running", id)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func TestCrossOriginAttachIsRefusedWithoutUsingTheExec(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.createContainer("berth-origin-"+h.label, true, "sleep", "300")
	var inst struct {
		ExecID string `json:"execId"`
	}
	h.must(200, "POST", "/api/containers/"+id+"/exec?envId=1", "{}", &inst)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	wsURL := "ws" + strings.TrimPrefix(h.url, "http") + "/api/containers/exec/" + inst.ExecID + "/attach?envId=1"
	_, resp, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {"https://evil.example.com"}}})
	if err == nil || resp == nil || resp.StatusCode != 403 {
		t.Fatalf("cross-origin attach: %v %v, want 403", resp, err)
	}
	// The refused attempt did not consume the single-use exec.
	ws, _, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {h.url}}})
	if err != nil {
		t.Fatalf("same-origin attach after a refused one: %v", err)
	}
	ws.Close(websocket.StatusNormalClosure, "")
}
