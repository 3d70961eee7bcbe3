package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/store/storetest"
	"github.com/berth-dev/berth/shared/enginetest"
)

func TestLocalEnvironmentIsCreatedWithIDOne(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var envs []map[string]any
	h.must(200, "GET", "/api/environments", nil, &envs)
	if len(envs) != 1 || envs[0]["id"] != float64(1) || envs[0]["connectionType"] != "socket" {
		t.Fatalf("environments = %v", envs)
	}
	// Every environment object carries these non-null fields (COMPAT.md).
	for _, k := range []string{"id", "name", "connectionType", "port", "protocol", "socketPath", "icon",
		"collectActivity", "collectMetrics", "highlightChanges", "labels", "createdAt"} {
		if envs[0][k] == nil {
			t.Errorf("field %s is null or missing", k)
		}
	}
}

func TestEnvironmentCreateDefaultsAndEcho(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var created map[string]any
	h.must(201, "POST", "/api/environments", map[string]any{
		"name": "remote-" + h.label, "connectionType": "direct", "host": "10.0.0.5", "protocol": "https",
		"tlsCa": "CA-PEM", "tlsCert": "CERT-PEM", "tlsKey": "KEY-PEM-SECRET", "labels": []string{"prod", "eu"},
	}, &created)
	want := map[string]any{"port": float64(2375), "icon": "globe", "collectActivity": true, "collectMetrics": true,
		"highlightChanges": true, "tlsSkipVerify": false, "socketPath": "/var/run/docker.sock",
		"tlsKey": "KEY-PEM-SECRET", "tlsCa": "CA-PEM", "tlsCert": "CERT-PEM", "protocol": "https", "host": "10.0.0.5"}
	for k, v := range want {
		if created[k] != v {
			t.Errorf("created[%s] = %v, want %v", k, created[k], v)
		}
	}
	for _, k := range []string{"id", "createdAt", "updatedAt"} {
		if created[k] == nil {
			t.Errorf("created lacks %s", k)
		}
	}
	id := int(created["id"].(float64))

	// List and get never return the secret.
	for _, path := range []string{"/api/environments", fmt.Sprintf("/api/environments/%d", id)} {
		status, body := h.do("GET", path, nil)
		if status != 200 || strings.Contains(string(body), "KEY-PEM-SECRET") || strings.Contains(string(body), `"tlsKey"`) {
			t.Errorf("GET %s = %d, leaks the TLS key: %s", path, status, body)
		}
	}
	var got map[string]any
	h.must(200, "GET", fmt.Sprintf("/api/environments/%d", id), nil, &got)
	if got["hasTlsKey"] != true || fmt.Sprint(got["labels"]) != "[prod eu]" {
		t.Errorf("get = %v", got)
	}
	// The secret is stored encrypted.
	var raw string
	if err := h.store.DB().QueryRow(`SELECT tls_key FROM environments WHERE id = ?`, id).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	if raw == "" || strings.Contains(raw, "KEY-PEM-SECRET") {
		t.Errorf("tls_key at rest = %q", raw)
	}
}

func TestEnvironmentUpdateAndDelete(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var env struct {
		ID        int64
		Name      string
		Labels    []string
		Icon      string
		UpdatedAt time.Time
		Timezone  *string
	}
	h.must(201, "POST", "/api/environments", map[string]any{"name": "upd-" + h.label, "socketPath": "/run/x.sock"}, &env)
	path := fmt.Sprintf("/api/environments/%d", env.ID)
	before := env.UpdatedAt
	h.must(200, "PUT", path, map[string]any{"icon": "server", "labels": []string{"a"}, "timezone": "Europe/Berlin"}, &env)
	if env.Icon != "server" || len(env.Labels) != 1 || env.Name != "upd-"+h.label || env.Timezone == nil || !env.UpdatedAt.After(before) {
		t.Errorf("after update = %+v", env)
	}
	if status, body := h.do("PUT", path, map[string]any{"timezone": "Mars/Olympus"}); status != 400 {
		t.Errorf("bad timezone = %d %s", status, body)
	}
	if status, body := h.do("PUT", path, map[string]any{"name": "local"}); status != 409 {
		t.Errorf("rename onto an existing name = %d %s, want 409", status, body)
	}
	h.must(200, "DELETE", path, nil, nil)
	for _, m := range []string{"GET", "PUT", "DELETE"} {
		status, body := h.do(m, path, map[string]any{})
		if status != 404 || !strings.Contains(string(body), "Environment not found") {
			t.Errorf("%s after delete = %d %s", m, status, body)
		}
	}
}

func TestEnvironmentTestEndpoint(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var res struct {
		Success bool
		Info    struct {
			ServerVersion string
			Containers    *int
			Images        *int
			Name          string
		}
		Error string
	}
	h.must(200, "POST", "/api/environments/1/test", nil, &res)
	if !res.Success || res.Info.ServerVersion == "" || res.Info.Containers == nil || res.Info.Images == nil || res.Info.Name == "" {
		t.Errorf("test of the local engine = %+v", res)
	}
	dead := filepath.Join(t.TempDir(), "dead.sock")
	var env struct{ ID int64 }
	h.must(201, "POST", "/api/environments", map[string]any{"name": "dead-" + h.label, "socketPath": dead}, &env)
	res.Success, res.Error = true, ""
	h.must(200, "POST", fmt.Sprintf("/api/environments/%d/test", env.ID), nil, &res)
	if res.Success || res.Error == "" {
		t.Errorf("test of a dead socket = %+v", res)
	}
}

func TestBadInputGetsClearErrors(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	elevenLabels := make([]string, 11)
	for i := range elevenLabels {
		elevenLabels[i] = fmt.Sprint("l", i)
	}
	cases := []struct {
		name, method, path string
		body               any
		want               int
		wantError          string
	}{
		{"unknown env on list", "GET", "/api/containers?env=999", nil, 404, "Environment not found"},
		{"unknown env on inspect", "GET", "/api/containers/x?env=999", nil, 404, "Environment not found"},
		{"unknown env on stats stream", "GET", "/api/containers/stats/stream?env=999", nil, 404, "Environment not found"},
		{"unknown env on exec", "POST", "/api/containers/x/exec?envId=999", "{}", 404, "Environment not found"},
		{"unknown env on events", "GET", "/api/events?env=999", nil, 404, "Environment not found"},
		{"unknown environment by path", "GET", "/api/environments/999", nil, 404, "Environment not found"},
		{"env not a number", "GET", "/api/containers?env=abc", nil, 400, ""},
		{"malformed JSON on create container", "POST", "/api/containers?env=1", `{"image": `, 400, "Invalid JSON body"},
		{"trailing garbage", "POST", "/api/containers?env=1", `{"image":"x"} {}`, 400, "Invalid JSON body"},
		{"wrong JSON type", "POST", "/api/environments", `{"name": 5}`, 400, "Invalid JSON body"},
		{"malformed JSON on environment", "POST", "/api/environments", `[1,2`, 400, "Invalid JSON body"},
		{"image missing", "POST", "/api/containers?env=1", `{"name":"x"}`, 400, "Image is required"},
		{"bad container name", "POST", "/api/containers?env=1", `{"image":"x","name":"-bad name"}`, 400, ""},
		{"unknown image", "POST", "/api/containers?env=1", `{"image":"berth-test/none:404"}`, 404, ""},
		{"unknown container inspect", "GET", "/api/containers/no-such-" + h.label + "?env=1", nil, 404, "Container not found"},
		{"unknown container start", "POST", "/api/containers/no-such-" + h.label + "/start?env=1", nil, 404, "Container not found"},
		{"unknown container delete", "DELETE", "/api/containers/no-such-" + h.label + "?env=1", nil, 404, "Container not found"},
		{"unknown container stats", "GET", "/api/containers/no-such-" + h.label + "/stats?env=1", nil, 404, "Container not found"},
		{"unknown container logs", "GET", "/api/containers/no-such-" + h.label + "/logs?env=1", nil, 404, "Container not found"},
		{"bad force flag", "DELETE", "/api/containers/x?env=1&force=maybe", nil, 400, ""},
		{"labels over 10", "POST", "/api/environments", map[string]any{"name": "many-" + h.label, "labels": elevenLabels}, 400, "An environment can have at most 10 labels"},
		{"environment name missing", "POST", "/api/environments", map[string]any{"connectionType": "socket"}, 400, "Environment name is required"},
		{"direct without host", "POST", "/api/environments", map[string]any{"name": "d-" + h.label, "connectionType": "direct"}, 400, ""},
		{"unknown connection type", "POST", "/api/environments", map[string]any{"name": "u-" + h.label, "connectionType": "ssh"}, 400, ""},
		{"port out of range", "POST", "/api/environments", map[string]any{"name": "p-" + h.label, "port": 70000}, 400, ""},
		{"duplicate environment name", "POST", "/api/environments", map[string]any{"name": "local"}, 409, "An environment with this name already exists"},
		{"unknown api path", "GET", "/api/nope", nil, 404, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := countEnvironments(t, h)
			status, body := h.do(c.method, c.path, c.body)
			if status != c.want {
				t.Fatalf("status = %d (%s), want %d", status, body, c.want)
			}
			var e struct {
				Error string `json:"error"`
			}
			if err := json.Unmarshal(body, &e); err != nil || e.Error == "" {
				t.Fatalf("error body %q has no error field", body)
			}
			if c.wantError != "" && e.Error != c.wantError {
				t.Errorf("error = %q, want %q", e.Error, c.wantError)
			}
			if after := countEnvironments(t, h); after != before {
				t.Errorf("a rejected request changed the environments: %d → %d", before, after)
			}
		})
	}
}

func countEnvironments(t *testing.T, h *harness) int {
	envs, err := h.store.ListEnvironments(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return len(envs)
}

// TestOfflineEnvironmentsAnswerFastAndEmpty points environments at a dead
// socket and at an engine that accepts connections but never answers. The
// dead one is offline: lists are empty, streams end, actions are refused
// naming it offline. The stuck one is busy, not offline: every list and action
// is refused with 503 and a Retry-After saying so (never an empty list), and
// the stats stream ends with an error event. Neither delays the local one.
func TestOfflineEnvironmentsAnswerFastAndEmpty(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	hang := enginetest.NewHanging(t)
	var dead, stuck struct{ ID int64 }
	h.must(201, "POST", "/api/environments", map[string]any{"name": "dead-" + h.label, "socketPath": filepath.Join(t.TempDir(), "none.sock")}, &dead)
	host, port, _ := net.SplitHostPort(hang.Addr)
	h.must(201, "POST", "/api/environments", map[string]any{"name": "stuck-" + h.label, "connectionType": "direct", "host": host, "port": mustAtoi(t, port)}, &stuck)

	for _, env := range []int64{dead.ID, stuck.ID} {
		busy := env == stuck.ID
		for _, path := range []string{"/api/containers?all=true&env=%d", "/api/containers/stats?env=%d", "/api/images?env=%d",
			"/api/volumes?env=%d", "/api/networks?env=%d", "/api/stacks?env=%d"} {
			start := time.Now()
			resp, body := h.getRaw(fmt.Sprintf(path, env), "")
			switch {
			case busy && (resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(body), "busy")):
				t.Errorf("GET %s = %d (Retry-After %q) %s, want 503 saying busy", fmt.Sprintf(path, env), resp.StatusCode, resp.Header.Get("Retry-After"), body)
			case !busy && (resp.StatusCode != 200 || strings.TrimSpace(string(body)) != "[]"):
				t.Errorf("GET %s = %d %s, want 200 []", fmt.Sprintf(path, env), resp.StatusCode, body)
			}
			// The spec's longest timeout for a list is 10 s.
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("GET %s took %v", fmt.Sprintf(path, env), d)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		events, _ := h.openEvents(ctx, fmt.Sprintf("/api/containers/stats/stream?env=%d", env))
		var last sseEvent
		for ev := range events {
			last = ev
		}
		cancel()
		if want := map[bool]string{false: "done", true: "error"}[busy]; last.Name != want {
			t.Errorf("stats stream of env %d ended with %+v, want %s", env, last, want)
		}
		want := map[bool]string{false: "offline", true: "busy"}[busy]
		status, body := h.do("POST", fmt.Sprintf("/api/containers/x/start?env=%d", env), nil)
		if status != 503 || !strings.Contains(string(body), want) {
			t.Errorf("start on env %d = %d %s, want 503 naming %s", env, status, body, want)
		}
	}
	// The stuck engine was dialled for a ping and a reachability probe; the
	// busy window answered the rest (one more ping and probe if the requests
	// above outlasted it on a slow machine).
	if n := hang.Count(); n < 2 || n > 4 {
		t.Errorf("the hanging engine was dialled %d times, want 2 (busy window), at most 4", n)
	}
	// The local environment is unaffected.
	start := time.Now()
	h.must(200, "GET", "/api/containers?env=1", nil, nil)
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("local list took %v while other environments are offline", d)
	}
}

func mustAtoi(t *testing.T, s string) int {
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestRestartKeepsEnvironments(t *testing.T) {
	t.Parallel()
	enginetest.Require(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "berth.db")
	box := storetest.Box(t)

	first := startHarness(t, db, box)
	var created struct{ ID int64 }
	first.must(201, "POST", "/api/environments", map[string]any{"name": "kept", "connectionType": "direct",
		"host": "192.0.2.10", "tlsCert": "c", "tlsKey": "k", "labels": []string{"x"}}, &created)
	var before []map[string]any
	first.must(200, "GET", "/api/environments", nil, &before)
	if err := first.store.Close(); err != nil {
		t.Fatal(err)
	}

	second := startHarness(t, db, box)
	var after []map[string]any
	second.must(200, "GET", "/api/environments", nil, &after)
	if len(after) != 2 || len(before) != 2 {
		t.Fatalf("environments before restart %d, after %d, want 2 and 2", len(before), len(after))
	}
	for i := range before {
		if fmt.Sprint(before[i]) != fmt.Sprint(after[i]) {
			t.Errorf("environment changed across restart:\nbefore %v\nafter  %v", before[i], after[i])
		}
	}
	env, err := second.store.GetEnvironment(context.Background(), created.ID)
	if err != nil || env.TLSKey != "k" {
		t.Errorf("secret after restart = %q, %v", env.TLSKey, err)
	}
}
