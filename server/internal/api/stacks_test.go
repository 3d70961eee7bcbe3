package api_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/shared/enginetest"
)

// stackResult is the final payload of a deploy stream.
type stackResult struct {
	Success bool    `json:"success"`
	Started *bool   `json:"started"`
	Output  *string `json:"output"`
	Error   string  `json:"error"`
}

// streamStack sends a request answered by a deploy stream and returns the
// status, the progress messages and the final payload.
func (h *harness) streamStack(method, path string, body any) (int, []string, stackResult) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ch, resp := h.openStream(ctx, method, path, body)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		h.t.Fatalf("%s %s = %d %s (%s), want an event stream", method, path, resp.StatusCode, b, resp.Header.Get("Content-Type"))
	}
	var (
		messages []string
		last     string
	)
	for ev := range ch {
		var m struct {
			Message string `json:"message"`
		}
		if json.Unmarshal([]byte(ev.Data), &m) == nil && m.Message != "" {
			messages = append(messages, m.Message)
		}
		last = ev.Data
	}
	var res stackResult
	if err := json.Unmarshal([]byte(last), &res); err != nil {
		h.t.Fatalf("final event %q: %v", last, err)
	}
	return resp.StatusCode, messages, res
}

// stackCompose is a two-service stack of locally built images with a named
// volume, a published port and two variables, everything labelled for
// cleanup.
func stackCompose(label string) string {
	return fmt.Sprintf(`services:
  web:
    image: %[1]s
    command: ["sleep", "3600"]
    environment:
      GREETING: ${GREETING}
      API_TOKEN: ${API_TOKEN}
    ports:
      - "127.0.0.1::8080"
    volumes:
      - data:/data
    labels:
      %[2]s: %[3]s
  worker:
    image: %[1]s
    command: ["sleep", "3600"]
    env_file: .env
    environment:
      - GREETING
    labels:
      %[2]s: %[3]s
volumes:
  data:
    labels:
      %[2]s: %[3]s
networks:
  default:
    labels:
      %[2]s: %[3]s
`, enginetest.Image(), enginetest.Label, label)
}

// containerEnv returns the environment of the stack service's container,
// read from the engine itself.
func containerEnv(t *testing.T, project, service string) map[string]string {
	t.Helper()
	var list []struct {
		ID string `json:"Id"`
	}
	q := fmt.Sprintf(`{"label":["com.docker.compose.project=%s","com.docker.compose.service=%s"]}`, project, service)
	engineJSON(t, "/containers/json?all=1&filters="+urlQuery(q), &list)
	if len(list) != 1 {
		t.Fatalf("containers of %s/%s: %d, want 1", project, service, len(list))
	}
	var doc struct {
		Config struct{ Env []string }
	}
	engineJSON(t, "/containers/"+list[0].ID+"/json", &doc)
	out := map[string]string{}
	for _, kv := range doc.Config.Env {
		k, v, _ := strings.Cut(kv, "=")
		out[k] = v
	}
	return out
}

func engineJSON(t *testing.T, path string, out any) {
	t.Helper()
	resp, err := enginetest.HTTPClient().Get("http://engine" + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("engine GET %s = %d %s", path, resp.StatusCode, b)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatal(err)
	}
}

func urlQuery(s string) string {
	r := strings.NewReplacer("{", "%7B", "}", "%7D", `"`, "%22", "[", "%5B", "]", "%5D", "=", "%3D", ",", "%2C", ":", "%3A", " ", "%20")
	return r.Replace(s)
}

// engineHas reports whether the engine knows the volume called name.
func engineHas(t *testing.T, kind, name string) bool {
	t.Helper()
	resp, err := enginetest.HTTPClient().Get("http://engine/" + kind + "/" + name)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode == 200
}

// removeStackAtCleanup force-deletes a stack after the test, whatever state
// the test left it in.
func (h *harness) removeStackAtCleanup(name string) {
	h.t.Cleanup(func() {
		h.do("DELETE", "/api/stacks/"+name+"?env=1&force=true", nil)
		enginetest.RemoveLabelledVolumes(h.t, h.label)
		enginetest.RemoveLabelledNetworks(h.t, h.label)
	})
}

type stackEntry struct {
	Name             string   `json:"name"`
	Containers       []string `json:"containers"`
	Status           string   `json:"status"`
	SourceType       string   `json:"sourceType"`
	ContainerDetails []struct {
		Name        string `json:"name"`
		Service     string `json:"service"`
		State       string `json:"state"`
		VolumeCount int    `json:"volumeCount"`
		Ports       []struct {
			PublicPort  int    `json:"publicPort"`
			PrivatePort int    `json:"privatePort"`
			Display     string `json:"display"`
		} `json:"ports"`
		Networks []struct {
			Name string `json:"name"`
		} `json:"networks"`
		Labels map[string]string `json:"labels"`
	} `json:"containerDetails"`
}

func (h *harness) stackEntry(name string) (stackEntry, bool) {
	h.t.Helper()
	var list []stackEntry
	h.must(200, "GET", "/api/stacks?env=1", nil, &list)
	for _, e := range list {
		if e.Name == name {
			return e, true
		}
	}
	return stackEntry{}, false
}

func TestStackDeployUpdateAndDeleteKeepingVolumes(t *testing.T) {
	h := newHarness(t)
	name := "st-" + h.label
	h.removeStackAtCleanup(name)

	status, messages, res := h.streamStack("POST", "/api/stacks?env=1", map[string]any{
		"name": name, "compose": stackCompose(h.label),
		"envVars": []map[string]any{
			{"key": "GREETING", "value": "hello world"},
			{"key": "API_TOKEN", "value": "tok-s3cret-value", "isSecret": true},
		},
	})
	if status != 200 || !res.Success || res.Started == nil || !*res.Started || res.Output == nil {
		t.Fatalf("deploy: %d %+v (messages %q)", status, res, messages)
	}
	if len(messages) == 0 {
		t.Error("deploy streamed no progress messages")
	}
	env := containerEnv(t, name, "web")
	if env["GREETING"] != "hello world" || env["API_TOKEN"] != "tok-s3cret-value" {
		t.Errorf("web env GREETING=%q API_TOKEN=%q, want both variables", env["GREETING"], env["API_TOKEN"])
	}
	if got := containerEnv(t, name, "worker")["GREETING"]; got != "hello world" {
		t.Errorf("worker GREETING = %q (key-only entry), want the stack's value", got)
	}
	dir := filepath.Join(h.dataDir, "stacks", "1", name)
	envFile, err := os.ReadFile(filepath.Join(dir, ".env"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(envFile), "GREETING=") || strings.Contains(string(envFile), "API_TOKEN") ||
		strings.Contains(string(envFile), "tok-s3cret-value") {
		t.Errorf(".env = %q, want only the non-secret variable", envFile)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "compose.yaml")); err != nil || string(data) != stackCompose(h.label) {
		t.Errorf("compose.yaml = %q, %v; want the submitted text", data, err)
	}

	// The secret reaches the container and nothing else: not the files, not
	// the database (sealed), not the log.
	for _, f := range []string{"berth.db", "berth.db-wal"} {
		if data, err := os.ReadFile(filepath.Join(h.dataDir, f)); err == nil && bytes.Contains(data, []byte("tok-s3cret-value")) {
			t.Errorf("%s holds the secret in plain text", f)
		}
	}
	if strings.Contains(h.logs.String(), "tok-s3cret-value") {
		t.Error("the log holds the secret")
	}

	e, ok := h.stackEntry(name)
	if !ok || e.Status != "running" || e.SourceType != "internal" || len(e.Containers) != 2 || len(e.ContainerDetails) != 2 {
		t.Fatalf("list entry = %+v, %v; want running internal stack of 2", e, ok)
	}
	var web = e.ContainerDetails[0]
	for _, c := range e.ContainerDetails {
		if c.Service == "web" {
			web = c
		}
	}
	if web.VolumeCount != 1 || len(web.Ports) != 1 || web.Ports[0].PrivatePort != 8080 || web.Ports[0].PublicPort == 0 ||
		web.Ports[0].Display != fmt.Sprintf("%d:8080/tcp", web.Ports[0].PublicPort) || len(web.Networks) != 1 {
		t.Errorf("web details = %+v", web)
	}
	// Issue 10 item 4: each container carries its labels (COMPAT), compose's
	// and the compose file's own.
	if web.Labels["com.docker.compose.project"] != name || web.Labels["com.docker.compose.service"] != "web" ||
		web.Labels[enginetest.Label] != h.label {
		t.Errorf("web labels = %v, want the compose project %q and the compose file's %s=%s", web.Labels, name, enginetest.Label, h.label)
	}

	var vars struct {
		Variables []struct {
			Key      string `json:"key"`
			Value    string `json:"value"`
			IsSecret bool   `json:"isSecret"`
		} `json:"variables"`
	}
	h.must(200, "GET", "/api/stacks/"+name+"/env?env=1", nil, &vars)
	if len(vars.Variables) != 2 || vars.Variables[0].Value != "hello world" || !vars.Variables[1].IsSecret ||
		vars.Variables[1].Value != "***" {
		t.Errorf("variables = %+v, want the secret masked as ***", vars.Variables)
	}

	// Change the non-secret variable in the env file (env/raw: PUT …/env
	// stores secrets only, COMPAT), keep the secret by sending back its
	// mask, then update with restart: the containers are recreated.
	h.must(200, "PUT", "/api/stacks/"+name+"/env/raw?env=1", map[string]string{"content": "GREETING=changed\n"}, nil)
	h.must(200, "PUT", "/api/stacks/"+name+"/env?env=1", vars, nil)
	before := e.Containers
	status, _, res = h.streamStack("PUT", "/api/stacks/"+name+"/compose?env=1", map[string]any{
		"content": stackCompose(h.label), "restart": true,
	})
	if status != 200 || !res.Success {
		t.Fatalf("update with restart: %+v", res)
	}
	env = containerEnv(t, name, "web")
	if env["GREETING"] != "changed" || env["API_TOKEN"] != "tok-s3cret-value" {
		t.Errorf("after update: GREETING=%q API_TOKEN=%q", env["GREETING"], env["API_TOKEN"])
	}
	if e, _ := h.stackEntry(name); len(e.Containers) != 2 || e.Containers[0] == before[0] || e.Containers[0] == before[1] {
		t.Errorf("containers %v after restart, want new ones (before %v)", e.Containers, before)
	}

	// Running without force is refused and changes nothing.
	code, body := h.do("DELETE", "/api/stacks/"+name+"?env=1", nil)
	if code != 400 || !strings.Contains(string(body), "is running") || !strings.Contains(string(body), name) {
		t.Errorf("delete running without force = %d %s", code, body)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Errorf("refused delete touched the files: %v", err)
	}
	h.must(200, "POST", "/api/stacks/"+name+"/stop?env=1", nil, nil)
	if e, _ := h.stackEntry(name); e.Status != "stopped" {
		t.Errorf("after stop: status %q", e.Status)
	}
	h.must(200, "DELETE", "/api/stacks/"+name+"?env=1", nil, nil)
	volume := name + "_data"
	if !engineHas(t, "volumes", volume) {
		t.Errorf("volume %s removed by a delete without force", volume)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("stack directory after delete: %v", err)
	}
	if _, ok := h.stackEntry(name); ok {
		t.Error("deleted stack still listed")
	}
	if engineHas(t, "networks", name+"_default") {
		t.Error("the stack's network survived its delete")
	}
}

func TestStackForceDeleteRemovesVolumesAndStartFalseWritesFilesOnly(t *testing.T) {
	h := newHarness(t)
	name := "sf-" + h.label
	h.removeStackAtCleanup(name)

	status, _, res := h.streamStack("POST", "/api/stacks?env=1", map[string]any{
		"name": name, "compose": stackCompose(h.label), "start": false,
		"rawEnvContent": "# greeting shown by web\nGREETING=hi there\n",
		"envVars":       []map[string]any{{"key": "API_TOKEN", "value": "x", "isSecret": true}},
	})
	if status != 200 || !res.Success || res.Started == nil || *res.Started || res.Output != nil {
		t.Fatalf("deploy with start false: %+v", res)
	}
	if e, ok := h.stackEntry(name); !ok || e.Status != "created" || len(e.Containers) != 0 {
		t.Errorf("entry = %+v, %v; want created without containers", e, ok)
	}
	var raw struct {
		Content string `json:"content"`
	}
	h.must(200, "GET", "/api/stacks/"+name+"/env/raw?env=1", nil, &raw)
	if raw.Content != "# greeting shown by web\nGREETING=hi there\n" {
		t.Errorf("raw env = %q, want the submitted text with its comment", raw.Content)
	}
	if engineHas(t, "volumes", name+"_data") {
		t.Error("start false created the volume")
	}

	h.must(200, "POST", "/api/stacks/"+name+"/start?env=1", nil, nil)
	if e, _ := h.stackEntry(name); e.Status != "running" {
		t.Fatalf("after start: %+v", e)
	}
	if got := containerEnv(t, name, "web")["GREETING"]; got != "hi there" {
		t.Errorf("GREETING = %q", got)
	}
	h.must(200, "DELETE", "/api/stacks/"+name+"?env=1&force=true", nil, nil)
	if engineHas(t, "volumes", name+"_data") {
		t.Error("force delete kept the named volume")
	}
	if _, err := os.Stat(filepath.Join(h.dataDir, "stacks", "1", name)); !os.IsNotExist(err) {
		t.Errorf("stack directory after delete: %v", err)
	}
}

func TestStackErrorsAnswerTheSpecStatusAndMessage(t *testing.T) {
	h := newHarness(t)
	name := "se-" + h.label
	h.removeStackAtCleanup(name)
	tests := []refusal{
		{"missing name", "POST", "/api/stacks?env=1", map[string]any{"compose": "services: {}"}, 400, "Stack name is required"},
		{"missing content", "POST", "/api/stacks?env=1", map[string]any{"name": name}, 400, "Compose file content is required"},
		{"invalid yaml", "POST", "/api/stacks?env=1", map[string]any{"name": name, "compose": "services:\n  web:\n image: [x\n"}, 400, "Invalid compose file"},
		{"invalid service", "POST", "/api/stacks?env=1", map[string]any{"name": name, "compose": "services:\n  web:\n    imagee: x\n"}, 400, "Invalid compose file"},
		{"traversal in name", "POST", "/api/stacks?env=1", map[string]any{"name": "../etc", "compose": "services: {}"}, 400, "Invalid stack name"},
		{"traversal in path", "POST", "/api/stacks?env=1", map[string]any{"name": name, "compose": "services: {}", "composePath": "/tmp/../etc/x.yaml"}, 400, "path traversal"},
		{"relative path", "POST", "/api/stacks?env=1", map[string]any{"name": name, "compose": "services: {}", "composePath": "x.yaml"}, 400, "absolute path"},
		{"compose of unknown stack", "GET", "/api/stacks/nope-" + h.label + "/compose?env=1", nil, 404, "Stack 'nope-" + h.label + "' not found"},
		{"update of unknown stack", "PUT", "/api/stacks/nope-" + h.label + "/compose?env=1", map[string]any{"content": "services: {}"}, 404, "not found"},
		{"update without content", "PUT", "/api/stacks/" + name + "/compose?env=1", map[string]any{"restart": false}, 400, "Compose file content is required"},
		{"delete of unknown stack", "DELETE", "/api/stacks/nope-" + h.label + "?env=1", nil, 404, "Stack 'nope-" + h.label + "' not found"},
		{"unknown environment", "GET", "/api/stacks?env=999", nil, 404, "Environment not found"},
	}
	h.expectRefusals(tests)
	var list []any
	h.must(200, "GET", "/api/stacks", nil, &list)
	if len(list) != 0 {
		t.Errorf("list without env = %v, want []", list)
	}
	if _, err := os.Stat(filepath.Join(h.dataDir, "stacks", "1", name)); !os.IsNotExist(err) {
		t.Errorf("refused deploys left files: %v", err)
	}
	if _, ok := h.stackEntry(name); ok {
		t.Error("refused deploys left a record")
	}
	// A duplicate name is refused once the stack exists.
	status, _, _ := h.streamStack("POST", "/api/stacks?env=1", map[string]any{"name": name, "compose": stackCompose(h.label), "start": false})
	if status != 200 {
		t.Fatal(status)
	}
	if code, body := h.do("POST", "/api/stacks?env=1", map[string]any{"name": name, "compose": stackCompose(h.label)}); code != 409 ||
		!strings.Contains(string(body), "already exists") {
		t.Errorf("duplicate = %d %s", code, body)
	}
}

func TestExternalStackIsListedAdoptedAndDeletedWithoutItsFiles(t *testing.T) {
	h := newHarness(t)
	name := "ext-" + h.label
	h.removeStackAtCleanup(name)
	dir := t.TempDir()
	h.allowStackRoots(dir)
	composePath := filepath.Join(dir, "compose.yaml")
	compose := fmt.Sprintf("services:\n  app:\n    image: %s\n    command: [\"sleep\", \"3600\"]\n", enginetest.Image())
	if err := os.WriteFile(composePath, []byte(compose), 0o644); err != nil {
		t.Fatal(err)
	}
	// A compose project started by someone else: only the engine's compose
	// labels say it is one.
	var created struct {
		ID string `json:"id"`
	}
	h.must(200, "POST", "/api/containers?env=1", map[string]any{
		"name": name + "-app-1", "image": enginetest.Image(), "command": []string{"sleep", "3600"}, "startAfterCreate": true,
		"labels": map[string]string{enginetest.Label: h.label, "com.docker.compose.project": name,
			"com.docker.compose.service": "app", "com.docker.compose.project.working_dir": dir,
			"com.docker.compose.project.config_files": composePath, "com.docker.compose.oneoff": "False"},
	}, &created)

	e, ok := h.stackEntry(name)
	if !ok || e.SourceType != "external" || e.Status != "running" || len(e.Containers) != 1 || e.Containers[0] != created.ID {
		t.Fatalf("entry = %+v, %v; want a running external stack", e, ok)
	}
	var scan struct {
		Stacks []struct {
			Name        string   `json:"name"`
			ConfigFiles []string `json:"configFiles"`
			Adoptable   bool     `json:"adoptable"`
		} `json:"stacks"`
	}
	h.must(200, "POST", "/api/stacks/scan?env=1", nil, &scan)
	found := false
	for _, s := range scan.Stacks {
		if s.Name == name {
			found = s.Adoptable && len(s.ConfigFiles) == 1 && s.ConfigFiles[0] == composePath
		}
	}
	if !found {
		t.Errorf("scan = %+v, want %s adoptable from %s", scan.Stacks, name, composePath)
	}

	h.must(200, "POST", "/api/stacks/adopt?env=1", map[string]any{"name": name}, nil)
	var file struct {
		Content     string `json:"content"`
		ComposePath string `json:"composePath"`
	}
	h.must(200, "GET", "/api/stacks/"+name+"/compose?env=1", nil, &file)
	if file.Content != compose || file.ComposePath != composePath {
		t.Errorf("compose of the adopted stack = %+v", file)
	}
	if code, _ := h.do("POST", "/api/stacks/adopt?env=1", map[string]any{"name": name}); code != 409 {
		t.Errorf("second adoption = %d, want 409", code)
	}
	h.must(200, "POST", "/api/stacks/"+name+"/restart?env=1", nil, nil)

	h.must(200, "DELETE", "/api/stacks/"+name+"?env=1", nil, nil)
	if data, err := os.ReadFile(composePath); err != nil || string(data) != compose {
		t.Errorf("the adopted stack's compose file after delete: %q, %v", data, err)
	}
	if e, ok := h.stackEntry(name); !ok || e.SourceType != "external" || e.Status != "running" {
		t.Errorf("after delete the project is %+v, %v; want it back as an unadopted external stack", e, ok)
	}
	if code, _ := h.do("GET", "/api/stacks/"+name+"/compose?env=1", nil); code != 404 {
		t.Errorf("compose after delete = %d, want 404 (no record)", code)
	}

	// The reference's form: a list in the body's environment, answered per
	// stack (an unknown project fails alone).
	var res struct {
		Adopted []string `json:"adopted"`
		Failed  []struct {
			Name  string `json:"name"`
			Error string `json:"error"`
		} `json:"failed"`
	}
	h.must(200, "POST", "/api/stacks/adopt", map[string]any{"environmentId": 1, "stacks": []map[string]string{
		{"name": name, "composePath": composePath}, {"name": "nope-" + h.label, "composePath": composePath}}}, &res)
	if !slices.Equal(res.Adopted, []string{name}) || len(res.Failed) != 1 || res.Failed[0].Name != "nope-"+h.label ||
		!strings.Contains(res.Failed[0].Error, "not found") {
		t.Errorf("adopt of a list = %+v", res)
	}
	h.must(200, "GET", "/api/stacks/"+name+"/compose?env=1", nil, &file)
	if file.ComposePath != composePath {
		t.Errorf("compose of the stack adopted from a list = %+v", file)
	}
	for _, tt := range []struct {
		body   any
		status int
		msg    string
	}{
		{map[string]any{"environmentId": 1, "stacks": []any{}}, 400, "No stacks provided"},
		{map[string]any{"environmentId": 1, "stacks": []map[string]string{{"composePath": composePath}}}, 400, "Each stack needs a name"},
		{map[string]any{"environmentId": 999, "stacks": []map[string]string{{"name": name}}}, 404, "Environment not found"},
	} {
		if code, body := h.do("POST", "/api/stacks/adopt", tt.body); code != tt.status || !strings.Contains(shErrorOf(body), tt.msg) {
			t.Errorf("adopt %v = %d %s, want %d %q", tt.body, code, body, tt.status, tt.msg)
		}
	}
	h.must(200, "DELETE", "/api/stacks/"+name+"?env=1", nil, nil)
}

func TestStackDeployFailureEndsTheStreamWithTheEngineError(t *testing.T) {
	h := newHarness(t)
	name := "sx-" + h.label
	h.removeStackAtCleanup(name)
	compose := fmt.Sprintf("services:\n  app:\n    image: 127.0.0.1:1/berth-missing/%s:1\n    labels:\n      %s: %s\n",
		h.label, enginetest.Label, h.label)
	status, _, res := h.streamStack("POST", "/api/stacks?env=1", map[string]any{"name": name, "compose": compose})
	if status != 200 || res.Success || res.Started == nil || *res.Started || !strings.Contains(res.Error, "Failed to deploy stack '"+name+"'") {
		t.Fatalf("deploy of an image that cannot be pulled = %+v", res)
	}
	// The files stay, so the stack can be fixed and deployed again.
	if e, ok := h.stackEntry(name); !ok || e.Status != "created" {
		t.Errorf("entry after a failed deploy = %+v, %v", e, ok)
	}
	code, body := h.doAccept("POST", "/api/stacks/"+name+"/deploy?env=1", "application/json")
	if err := json.Unmarshal(body, &res); err != nil || code != 200 || res.Success || res.Error == "" {
		t.Errorf("redeploy (JSON) = %d %s", code, body)
	}
}

// enginePost sends a bodiless POST to the engine itself (tag, push).
func enginePost(t *testing.T, path string, headers map[string]string) {
	t.Helper()
	req, _ := http.NewRequest("POST", "http://engine"+path, nil)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := enginetest.HTTPClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 || bytes.Contains(body, []byte(`"error"`)) {
		t.Fatalf("engine POST %s = %d %s", path, resp.StatusCode, body)
	}
}

func TestStackDeployPullsWithTheConfiguredRegistryOnly(t *testing.T) {
	reg := requireRegistry(t)
	h := newHarness(t)
	name := "sp-" + h.label
	h.removeStackAtCleanup(name)
	repo := reg.host + "/berth-test/stack-" + h.label
	remote := repo + ":1"
	removeImages(t, remote)
	auth, _ := json.Marshal(map[string]string{"username": reg.user, "password": reg.password, "serveraddress": reg.host})
	enginePost(t, "/images/"+enginetest.Image()+"/tag?repo="+repo+"&tag=1", nil)
	enginePost(t, "/images/"+repo+"/push?tag=1", map[string]string{"X-Registry-Auth": base64.URLEncoding.EncodeToString(auth)})
	req, _ := http.NewRequest("DELETE", "http://engine/images/"+remote, nil)
	if resp, err := enginetest.HTTPClient().Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("untag %s: %v", remote, err)
	}

	compose := fmt.Sprintf("services:\n  app:\n    image: %s\n    command: [\"sleep\", \"3600\"]\n    labels:\n      %s: %s\n",
		remote, enginetest.Label, h.label)
	_, _, res := h.streamStack("POST", "/api/stacks?env=1", map[string]any{"name": name, "compose": compose})
	if res.Success || !strings.Contains(strings.ToLower(res.Error), "auth") {
		t.Fatalf("deploy without a configured registry = %+v, want an authentication failure", res)
	}
	h.must(201, "POST", "/api/registries", map[string]any{"name": "stack-" + h.label, "url": reg.host,
		"username": reg.user, "password": reg.password}, nil)
	code, body := h.doAccept("POST", "/api/stacks/"+name+"/deploy?env=1", "application/json")
	if err := json.Unmarshal(body, &res); err != nil || code != 200 || !res.Success {
		t.Fatalf("deploy with the registry configured = %d %s", code, body)
	}
	if e, _ := h.stackEntry(name); e.Status != "running" {
		t.Errorf("after the pull: %+v", e)
	}
}

// TestStackDownRemoveVolumesAndDeployForceRecreate checks issue 21 item 7
// on the real engine: down keeps the named volumes unless removeVolumes,
// which removes them; deploy with forceRecreate makes new containers even
// when nothing changed (pull and build: stackdeploy_test.go).
func TestStackDownRemoveVolumesAndDeployForceRecreate(t *testing.T) {
	h := newHarness(t)
	name := "dv-" + h.label
	h.removeStackAtCleanup(name)
	status, _, res := h.streamStack("POST", "/api/stacks?env=1", map[string]any{"name": name, "compose": stackCompose(h.label),
		"envVars": []map[string]any{{"key": "GREETING", "value": "hi"}, {"key": "API_TOKEN", "value": "t", "isSecret": true}}})
	if status != 200 || !res.Success {
		t.Fatalf("deploy: %+v", res)
	}
	before, _ := h.stackEntry(name)
	status, _, res = h.streamStack("POST", "/api/stacks/"+name+"/deploy?env=1", map[string]any{"forceRecreate": true})
	if status != 200 || !res.Success {
		t.Fatalf("deploy with forceRecreate: %d %+v", status, res)
	}
	after, _ := h.stackEntry(name)
	if len(after.Containers) != len(before.Containers) || slices.ContainsFunc(after.Containers, func(id string) bool { return slices.Contains(before.Containers, id) }) {
		t.Errorf("containers after forceRecreate = %v, before %v: want all new", after.Containers, before.Containers)
	}
	// The reference's restart mode=recreate recreates them as well.
	h.must(200, "POST", "/api/stacks/"+name+"/restart?env=1&mode=recreate", nil, nil)
	if again, _ := h.stackEntry(name); len(again.Containers) != len(after.Containers) ||
		slices.ContainsFunc(again.Containers, func(id string) bool { return slices.Contains(after.Containers, id) }) {
		t.Errorf("containers after restart mode=recreate = %v, before %v: want all new", again.Containers, after.Containers)
	}
	if code, _ := h.do("POST", "/api/stacks/"+name+"/restart?env=1&mode=sometimes", nil); code != 400 {
		t.Errorf("restart with an unknown mode = %d, want 400", code)
	}
	volume := name + "_data"
	h.must(200, "POST", "/api/stacks/"+name+"/down?env=1", map[string]any{"removeVolumes": false}, nil)
	if !engineHas(t, "volumes", volume) {
		t.Fatalf("volume %s removed by a down without removeVolumes", volume)
	}
	status, _, res = h.streamStack("POST", "/api/stacks/"+name+"/deploy?env=1", nil)
	if status != 200 || !res.Success {
		t.Fatalf("deploy again: %+v", res)
	}
	h.must(200, "POST", "/api/stacks/"+name+"/down?env=1", map[string]any{"removeVolumes": true}, nil)
	if engineHas(t, "volumes", volume) {
		t.Errorf("volume %s survived a down with removeVolumes", volume)
	}
}
