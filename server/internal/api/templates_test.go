package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/apitest"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/enginetest"
)

// templateList is a Portainer-format list whose templates run the local
// test image: a container template with variables (one secret, one
// select) and a compose template written inline (Berth's extension).
func templateList(label string) string {
	compose := fmt.Sprintf("services:\n  app:\n    image: %s\n    command: [\"sleep\", \"3600\"]\n    environment:\n      COLOR: ${COLOR}\n    labels:\n      %s: %s\n", enginetest.Image(), enginetest.Label, label)
	composeJSON, _ := json.Marshal(compose)
	return fmt.Sprintf(`{
  "version": "2",
  "templates": [
    {
      "type": 1,
      "title": "Sleeper %[1]s",
      "name": "sleeper",
      "description": "A busybox that sleeps",
      "categories": ["testing", "tools"],
      "platform": "linux",
      "logo": "{{BASE}}/logo.svg",
      "image": %[2]q,
      "command": "sleep 3600",
      "env": [
        {"name": "GREETING", "label": "Greeting", "default": "hello"},
        {"name": "API_TOKEN", "label": "API token"},
        {"name": "LEVEL", "label": "Level", "select": [{"text": "Low", "value": "low"}, {"text": "High", "value": "high", "default": true}]}
      ],
      "labels": [{"name": %[3]q, "value": %[1]q}],
      "restart_policy": "no"
    },
    {
      "type": 3,
      "title": "Inline compose %[1]s",
      "description": "Compose written in the list",
      "categories": ["testing"],
      "env": [{"name": "COLOR", "label": "Color", "default": "blue"}],
      "compose": %[4]s
    },
    {
      "type": 3,
      "title": "Repository stack %[1]s",
      "description": "From git",
      "categories": ["testing"],
      "repository": {"url": "http://127.0.0.1:1/none.git", "stackfile": "stacks/x/docker-compose.yml"}
    }
  ]
}`, label, enginetest.Image(), enginetest.Label, composeJSON)
}

type templateJSON struct {
	ID         string   `json:"id"`
	LogoURL    string   `json:"logoUrl"`
	SourceID   string   `json:"sourceId"`
	Type       int      `json:"type"`
	Title      string   `json:"title"`
	Categories []string `json:"categories"`
	Env        []struct {
		Name    string `json:"name"`
		Default string `json:"default"`
	} `json:"env"`
}

type sourceJSON struct {
	ID            int64   `json:"id"`
	Name          string  `json:"name"`
	URL           string  `json:"url"`
	Enabled       bool    `json:"enabled"`
	LastError     *string `json:"lastError"`
	TemplateCount int     `json:"templateCount"`
}

// serveTemplates serves a template list file over real HTTP.
func serveTemplates(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "templates.json")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/logo.svg": // the list's logos point here ({{BASE}})
			w.Header().Set("Content-Type", "image/svg+xml")
			_, _ = w.Write([]byte(testLogoSVG))
		case "/templates.json":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(strings.ReplaceAll(content, "{{BASE}}", srv.URL)))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/templates.json"
}

// testLogoSVG is the logo serveTemplates serves.
const testLogoSVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 4 4"><rect width="4" height="4" fill="#0a0"/></svg>`

// getLogo fetches a logo from Berth and checks how it is served: 200, an
// image type, nosniff, and a sandboxing policy.
func (h *harness) getLogo(path string) (string, []byte) {
	h.t.Helper()
	req, err := http.NewRequest("GET", h.url+path, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	resp, data := h.roundTrip(req)
	ct := resp.Header.Get("Content-Type")
	if resp.StatusCode != 200 || !strings.HasPrefix(ct, "image/") || resp.Header.Get("X-Content-Type-Options") != "nosniff" ||
		!strings.Contains(resp.Header.Get("Content-Security-Policy"), "sandbox") {
		h.t.Fatalf("GET %s = %d %q %v", path, resp.StatusCode, data, resp.Header)
	}
	return ct, data
}

func (h *harness) templates(query string) []templateJSON {
	h.t.Helper()
	var list []templateJSON
	h.must(200, "GET", "/api/templates"+query, nil, &list)
	return list
}

func findTemplate(list []templateJSON, title string) (templateJSON, bool) {
	for _, t := range list {
		if t.Title == title {
			return t, true
		}
	}
	return templateJSON{}, false
}

// TestRepositoryTemplateDeploysAGitStack deploys a stack template whose
// compose file is in a git repository (Portainer's repository {url,
// stackfile}) from a real git server: a running git stack with the
// template's variables; a stack file the repository lacks is a 400 that
// leaves nothing.
func TestRepositoryTemplateDeploysAGitStack(t *testing.T) {
	h := newHarness(t)
	g := newPublicGitServer(t)
	g.commit("main", map[string]string{"stacks/app/docker-compose.yml": gitCompose(h.label, "7")})
	list := fmt.Sprintf(`{"version": "2", "templates": [
  {"type": 3, "title": "Git app %[1]s", "description": "From git",
   "env": [{"name": "REGION", "label": "Region", "default": "us"}, {"name": "TOKEN", "label": "Token"}],
   "repository": {"url": %[2]q, "stackfile": "stacks/app/docker-compose.yml"}},
  {"type": 3, "title": "Git missing %[1]s", "description": "No such file",
   "repository": {"url": %[2]q, "stackfile": "stacks/none/docker-compose.yml"}}
]}`, h.label, g.URL)
	var src sourceJSON
	h.must(201, "POST", "/api/templates/sources", map[string]any{"name": "git " + h.label, "url": serveTemplates(t, list)}, &src)
	tp, ok := findTemplate(h.templates(""), "Git app "+h.label)
	if !ok {
		t.Fatal("repository template not listed")
	}
	missing, _ := findTemplate(h.templates(""), "Git missing "+h.label)

	name := "tplgit-" + h.label
	h.removeStackAtCleanup(name)
	status, _, res := h.streamStack("POST", "/api/templates/deploy", map[string]any{
		"templateId": tp.ID, "stackName": name, "environmentId": 1,
		"env": map[string]string{"REGION": "eu", "TOKEN": "tok-" + h.label},
	})
	if status != 200 || !res.Success || res.Started == nil || !*res.Started {
		t.Fatalf("deploy = %d %+v", status, res)
	}
	if e, ok := h.stackEntry(name); !ok || e.SourceType != "git" || e.Status != "running" {
		t.Fatalf("stack = %+v (found %v)", e, ok)
	}
	env := containerEnv(t, name, "app")
	if env["VERSION"] != "7" || env["REGION"] != "eu" || env["TOKEN"] != "tok-"+h.label {
		t.Errorf("container env = %v, want VERSION from the repository, REGION and TOKEN from the deploy", env)
	}

	h.fbMustFail(400, "Compose file 'stacks/none/docker-compose.yml' not found", "POST", "/api/templates/deploy",
		map[string]any{"templateId": missing.ID, "stackName": "tplgit2-" + h.label})
	if _, ok := h.stackEntry("tplgit2-" + h.label); ok {
		t.Error("a refused repository template left a stack")
	}
}

func TestTemplateFromAURLSourceDeploysARunningStack(t *testing.T) {
	h := newHarness(t)
	url := serveTemplates(t, templateList(h.label))
	var src sourceJSON
	h.must(201, "POST", "/api/templates/sources", map[string]any{"name": "test " + h.label, "url": url}, &src)
	if src.LastError != nil || src.TemplateCount != 3 || !src.Enabled {
		t.Fatalf("source = %+v", src)
	}
	list := h.templates("?q=sleeper+" + h.label)
	if len(list) != 1 {
		t.Fatalf("q filter: %d templates", len(list))
	}
	tp := list[0]
	if tp.ID != fmt.Sprintf("%d:0", src.ID) || tp.Type != 1 || tp.SourceID != fmt.Sprint(src.ID) {
		t.Fatalf("template = %+v", tp)
	}
	builtin := h.templates("?category=database")
	if len(builtin) == 0 {
		t.Error("no built-in database templates")
	}
	// Logos come from Berth's own origin (issue 22): the source's, fetched
	// in the background when the source was read (the list shows the
	// placeholder until then), and a built-in one's, shipped in the binary.
	for deadline := time.Now().Add(5 * time.Second); tp.LogoURL == "" && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		tp = h.templates("?q=sleeper+" + h.label)[0]
	}
	if tp.LogoURL != fmt.Sprintf("/api/templates/%d:0/logo", src.ID) {
		t.Fatalf("logoUrl = %q", tp.LogoURL)
	}
	if ct, data := h.getLogo(tp.LogoURL); ct != "image/svg+xml" || string(data) != testLogoSVG {
		t.Errorf("source logo = %q %q", ct, data)
	}
	if len(builtin) > 0 {
		if ct, _ := h.getLogo(builtin[0].LogoURL); ct != "image/svg+xml" {
			t.Errorf("built-in logo type %q", ct)
		}
	}
	h.must(404, "GET", "/api/templates/builtin:none/logo", nil, nil)

	name := "tpl-" + h.label
	h.removeStackAtCleanup(name)
	status, _, res := h.streamStack("POST", "/api/templates/deploy", map[string]any{
		"templateId": tp.ID, "stackName": name, "environmentId": 1,
		"env": map[string]string{"API_TOKEN": "tok-" + h.label},
	})
	if status != 200 || !res.Success || res.Started == nil || !*res.Started {
		t.Fatalf("deploy = %d %+v", status, res)
	}
	e, ok := h.stackEntry(name)
	if !ok || e.Status != "running" || e.SourceType != "internal" || len(e.ContainerDetails) != 1 {
		t.Fatalf("stack = %+v (found %v)", e, ok)
	}
	env := containerEnv(t, name, "sleeper")
	if env["GREETING"] != "hello" || env["API_TOKEN"] != "tok-"+h.label || env["LEVEL"] != "high" {
		t.Errorf("container env = %v", env)
	}
	// The secret is a stack secret: masked when read, never in the env file.
	var vars struct {
		Variables []struct {
			Key      string `json:"key"`
			Value    string `json:"value"`
			IsSecret bool   `json:"isSecret"`
		} `json:"variables"`
	}
	h.must(200, "GET", "/api/stacks/"+name+"/env?env=1", nil, &vars)
	for _, v := range vars.Variables {
		if v.Key == "API_TOKEN" && (!v.IsSecret || v.Value == "tok-"+h.label) {
			t.Errorf("API_TOKEN = %+v, want a masked secret", v)
		}
	}
	envFile, err := os.ReadFile(filepath.Join(h.dataDir, "stacks", "1", name, ".env"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(envFile), "tok-") || !strings.Contains(string(envFile), "GREETING=hello") {
		t.Errorf(".env = %q", envFile)
	}
	var compose struct{ Content string }
	h.must(200, "GET", "/api/stacks/"+name+"/compose?env=1", nil, &compose)
	if !strings.Contains(compose.Content, `"${API_TOKEN}"`) || !strings.Contains(compose.Content, `restart: "no"`) {
		t.Errorf("compose = %s", compose.Content)
	}
	// A second deploy under the same name is the stacks' 409.
	if code, body := h.do("POST", "/api/templates/deploy", map[string]any{"templateId": tp.ID, "stackName": name}); code != 409 {
		t.Errorf("duplicate = %d %s", code, body)
	}

	// The inline compose template, answered as JSON.
	inline, ok := findTemplate(h.templates("?type=3&category=TESTING"), "Inline compose "+h.label)
	if !ok {
		t.Fatal("inline compose template not listed")
	}
	name2 := "tpl2-" + h.label
	h.removeStackAtCleanup(name2)
	req, _ := json.Marshal(map[string]any{"templateId": inline.ID, "stackName": name2, "env": map[string]string{"COLOR": "red"}})
	hr, _ := http.NewRequest("POST", h.url+"/api/templates/deploy?env=1", strings.NewReader(string(req)))
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json")
	resp, err := h.http.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	var final struct {
		Success bool   `json:"success"`
		Name    string `json:"name"`
		Error   string `json:"error"`
	}
	err = json.NewDecoder(resp.Body).Decode(&final)
	resp.Body.Close()
	if err != nil || !final.Success || final.Name != name2 {
		t.Fatalf("inline deploy = %+v %v", final, err)
	}
	if e, ok := h.stackEntry(name2); !ok || e.Status != "running" {
		t.Errorf("inline stack = %+v", e)
	}
	if got := containerEnv(t, name2, "app")["COLOR"]; got != "red" {
		t.Errorf("COLOR = %q", got)
	}
}

func TestTemplateSourcesFileMalformedAndRefusals(t *testing.T) {
	h := newHarness(t)
	dir := filepath.Join(h.dataDir, "templates") // the only directory file sources are read from
	if err := os.MkdirAll(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "outside.json")
	if err := os.WriteFile(outside, []byte(templateList(h.label)), 0o600); err != nil {
		t.Fatal(err)
	}
	// A link inside the directory leading to Berth's own key, and a
	// directory where a file is expected (issue 20: host paths).
	keyLink := filepath.Join(dir, "key.json")
	if err := os.Symlink(filepath.Join(h.dataDir, ".encryption_key"), keyLink); err != nil {
		t.Fatal(err)
	}
	subdir := filepath.Join(dir, "sub.json")
	if err := os.MkdirAll(subdir, 0o750); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "good.json")
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(good, []byte(templateList(h.label)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte(`{"version": "2", "templates": [{"title": `), 0o600); err != nil {
		t.Fatal(err)
	}
	var file, broken sourceJSON
	h.must(201, "POST", "/api/templates/sources", map[string]any{"name": "file", "url": good}, &file)
	if file.LastError != nil || file.TemplateCount != 3 {
		t.Fatalf("file source = %+v", file)
	}
	h.must(201, "POST", "/api/templates/sources", map[string]any{"name": "broken", "url": bad}, &broken)
	if broken.LastError == nil || !strings.Contains(*broken.LastError, "invalid template list JSON") {
		t.Fatalf("broken source = %+v", broken)
	}
	// The broken source hides nothing else.
	if _, ok := findTemplate(h.templates(""), "Sleeper "+h.label); !ok {
		t.Error("file source's template missing beside a broken source")
	}
	var sources []sourceJSON
	h.must(200, "GET", "/api/templates/sources", nil, &sources)
	if len(sources) != 2 || sources[1].LastError == nil {
		t.Errorf("sources = %+v", sources)
	}
	// Disabling through PUT (id in the body) drops its templates.
	var upd sourceJSON
	h.must(200, "PUT", "/api/templates/sources", map[string]any{"id": file.ID, "enabled": false}, &upd)
	if upd.Enabled || upd.Name != "file" {
		t.Errorf("updated = %+v", upd)
	}
	if _, ok := findTemplate(h.templates(""), "Sleeper "+h.label); ok {
		t.Error("disabled source's template still listed")
	}
	h.must(200, "PUT", "/api/templates/sources?id="+fmt.Sprint(file.ID), map[string]any{"enabled": true}, nil)
	repo, _ := findTemplate(h.templates(""), "Repository stack "+h.label)

	cases := []refusal{
		{"source without name", "POST", "/api/templates/sources", map[string]any{"url": good}, 400, "Source name is required"},
		{"source without url", "POST", "/api/templates/sources", map[string]any{"name": "x"}, 400, "Source URL or file path is required"},
		{"source bad scheme", "POST", "/api/templates/sources", map[string]any{"name": "x", "url": "ftp://h/x"}, 400, "Source must be an http(s) URL or an absolute file path"},
		{"source outside the templates directory", "POST", "/api/templates/sources", map[string]any{"name": "x", "url": outside}, 403, "a template file source must be a file in " + dir},
		{"source file URL outside the templates directory", "POST", "/api/templates/sources", map[string]any{"name": "x", "url": "file:///etc/passwd"}, 403, "a template file source must be a file in " + dir},
		{"source climbing out of the templates directory", "POST", "/api/templates/sources", map[string]any{"name": "x", "url": dir + "/../berth.db"}, 400, "path traversal is not allowed"},
		{"source that is Berth's database", "POST", "/api/templates/sources", map[string]any{"name": "x", "url": filepath.Join(h.dataDir, "berth.db")}, 403, "a template file source must be a file in " + dir},
		{"source linked to the encryption key", "POST", "/api/templates/sources", map[string]any{"name": "x", "url": keyLink}, 403, "a template file source must be a file in " + dir},
		{"source that is a directory", "POST", "/api/templates/sources", map[string]any{"name": "x", "url": subdir}, 400, "it is a directory"},
		{"source that is the directory itself", "POST", "/api/templates/sources", map[string]any{"name": "x", "url": dir}, 400, "it is a directory"},
		{"source moved outside the templates directory", "PUT", "/api/templates/sources?id=" + fmt.Sprint(broken.ID), map[string]any{"url": outside}, 403, "a template file source must be a file in " + dir},
		{"source duplicate", "POST", "/api/templates/sources", map[string]any{"name": "file", "url": good}, 409, "A template source named 'file' already exists"},
		{"source wrong type", "POST", "/api/templates/sources", `{"name": 5}`, 400, "Invalid JSON body"},
		{"update without id", "PUT", "/api/templates/sources", map[string]any{"name": "y"}, 400, "Source ID is required"},
		{"update unknown", "PUT", "/api/templates/sources", map[string]any{"id": 9999, "name": "y"}, 404, "Template source 9999 not found"},
		{"delete unknown", "DELETE", "/api/templates/sources?id=9999", nil, 404, "Template source 9999 not found"},
		{"bad type filter", "GET", "/api/templates?type=7", nil, 400, "Query parameter type must be 1 (container), 2 (swarm stack) or 3 (compose stack)"},
		{"deploy without template", "POST", "/api/templates/deploy", map[string]any{"stackName": "x"}, 400, "Template ID is required"},
		{"deploy without name", "POST", "/api/templates/deploy", map[string]any{"templateId": "builtin:nginx"}, 400, "Stack name is required"},
		{"deploy bad name", "POST", "/api/templates/deploy", map[string]any{"templateId": "builtin:nginx", "stackName": "../x"}, 400, "Invalid stack name"},
		{"deploy unknown template", "POST", "/api/templates/deploy", map[string]any{"templateId": "nope:1", "stackName": "x-" + h.label}, 404, "Template 'nope:1' not found"},
		{"deploy unknown environment", "POST", "/api/templates/deploy", map[string]any{"templateId": "builtin:nginx", "stackName": "x-" + h.label, "environmentId": 999}, 404, "Environment not found"},
		{"deploy repository template of an unreachable repository", "POST", "/api/templates/deploy", map[string]any{"templateId": repo.ID, "stackName": "x-" + h.label}, 400, "Cannot read the repository http://127.0.0.1:1/none.git"},
		{"deploy select outside options", "POST", "/api/templates/deploy", map[string]any{"templateId": fmt.Sprintf("%d:0", file.ID), "stackName": "x-" + h.label, "env": map[string]string{"LEVEL": "max"}}, 400, "Invalid value for LEVEL: choose one of the template's options"},
		{"deploy bad variable name", "POST", "/api/templates/deploy", map[string]any{"templateId": fmt.Sprintf("%d:0", file.ID), "stackName": "x-" + h.label, "env": map[string]string{"1BAD": "v"}}, 400, "Invalid variable name"},
	}
	h.expectRefusals(cases)
	if _, ok := h.stackEntry("x-" + h.label); ok {
		t.Error("a refused deploy left a stack")
	}
	if _, err := os.Stat(filepath.Join(h.dataDir, "stacks", "1", "x-"+h.label)); !os.IsNotExist(err) {
		t.Errorf("a refused deploy left files: %v", err)
	}
	h.must(200, "DELETE", "/api/templates/sources?id="+fmt.Sprint(broken.ID), nil, nil)
	h.must(200, "DELETE", "/api/templates/sources", map[string]any{"id": file.ID}, nil)
	h.must(200, "GET", "/api/templates/sources", nil, &sources)
	if len(sources) != 0 {
		t.Errorf("sources after delete = %+v", sources)
	}
}

type configSetJSON struct {
	ID          int64  `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	EnvVars     []struct {
		Key      string `json:"key"`
		Value    string `json:"value"`
		IsSecret bool   `json:"isSecret"`
	} `json:"envVars"`
	Labels        []map[string]string `json:"labels"`
	Ports         []map[string]any    `json:"ports"`
	Volumes       []map[string]string `json:"volumes"`
	NetworkMode   string              `json:"networkMode"`
	RestartPolicy string              `json:"restartPolicy"`
	CreatedAt     string              `json:"createdAt"`
	UpdatedAt     string              `json:"updatedAt"`
}

func TestConfigSetsKeepSecretsSealedAndMasked(t *testing.T) {
	h := newHarness(t)
	secret := "pw-" + h.label
	body := map[string]any{
		"name": "web defaults", "description": "for web apps",
		"envVars":     []map[string]any{{"key": "TZ", "value": "UTC"}, {"key": "DB_PASSWORD", "value": secret, "isSecret": true}},
		"labels":      map[string]string{"team": "web"},
		"ports":       []map[string]any{{"containerPort": "80", "hostPort": "8080", "protocol": "tcp"}},
		"volumes":     []string{"data:/data", "/srv/conf:/etc/conf:ro"},
		"networkMode": "bridge", "restartPolicy": "unless-stopped",
	}
	var created configSetJSON
	h.must(201, "POST", "/api/config-sets", body, &created)
	if created.ID == 0 || created.Name != "web defaults" || len(created.EnvVars) != 2 || created.EnvVars[1].Value != "***" ||
		created.EnvVars[0].Value != "UTC" || len(created.Labels) != 1 || created.Labels[0]["key"] != "team" || created.Labels[0]["value"] != "web" || len(created.Ports) != 1 || len(created.Volumes) != 2 ||
		created.RestartPolicy != "unless-stopped" || created.NetworkMode != "bridge" || created.CreatedAt == "" {
		t.Fatalf("created = %+v", created)
	}
	// The raw row holds the secret sealed.
	var raw string
	if err := h.store.DB().QueryRow("SELECT env_vars FROM config_sets WHERE id = ?", created.ID).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(raw, secret) || !strings.Contains(raw, "enc:v1:") {
		t.Errorf("raw env_vars = %s", raw)
	}
	var got configSetJSON
	h.must(200, "GET", fmt.Sprintf("/api/config-sets/%d", created.ID), nil, &got)
	if got.EnvVars[1].Value != "***" {
		t.Errorf("get: secret = %q", got.EnvVars[1].Value)
	}
	var list []configSetJSON
	h.must(200, "GET", "/api/config-sets", nil, &list)
	if len(list) != 1 || list[0].EnvVars[1].Value != "***" {
		t.Errorf("list = %+v", list)
	}
	// Sending the mask back keeps the secret; the store still opens it.
	body["description"] = "changed"
	body["envVars"] = []map[string]any{{"key": "DB_PASSWORD", "value": "***", "isSecret": true}}
	h.must(200, "PUT", fmt.Sprintf("/api/config-sets/%d", created.ID), body, &got)
	if got.Description != "changed" || len(got.EnvVars) != 1 {
		t.Errorf("updated = %+v", got)
	}
	stored, err := h.store.GetConfigSet(t.Context(), created.ID)
	if err != nil || stored.EnvVars[0].Value != secret {
		t.Errorf("stored after masked update = %+v, %v", stored.EnvVars, err)
	}
	if strings.Contains(h.logs.String(), secret) {
		t.Error("the secret reached the log")
	}

	cases := []refusal{
		{"no name", "POST", "/api/config-sets", map[string]any{"name": " "}, 400, "Config set name is required"},
		{"duplicate", "POST", "/api/config-sets", map[string]any{"name": "web defaults"}, 409, "A config set named 'web defaults' already exists"},
		{"bad key", "POST", "/api/config-sets", map[string]any{"name": "x", "envVars": []map[string]any{{"key": "A-B", "value": "1"}}}, 400, `Invalid variable name "A-B"`},
		{"bad port", "POST", "/api/config-sets", map[string]any{"name": "x", "ports": []map[string]any{{"containerPort": "http"}}}, 400, `Invalid container port "http"`},
		{"bad volume", "POST", "/api/config-sets", map[string]any{"name": "x", "volumes": []string{"data"}}, 400, `Invalid volume "data"`},
		{"bad restart", "POST", "/api/config-sets", map[string]any{"name": "x", "restartPolicy": "sometimes"}, 400, `Invalid restart policy "sometimes"`},
		{"masked new secret", "POST", "/api/config-sets", map[string]any{"name": "x", "envVars": []map[string]any{{"key": "K", "value": "***", "isSecret": true}}}, 400, "Variable K: a new secret needs its value"},
		{"get unknown", "GET", "/api/config-sets/9999", nil, 404, "Config set 9999 not found"},
		{"get bad id", "GET", "/api/config-sets/abc", nil, 400, "Invalid config set ID"},
		{"put unknown", "PUT", "/api/config-sets/9999", map[string]any{"name": "y"}, 404, "Config set 9999 not found"},
		{"delete unknown", "DELETE", "/api/config-sets/9999", nil, 404, "Config set 9999 not found"},
	}
	h.expectRefusals(cases)
	h.must(200, "GET", "/api/config-sets", nil, &list)
	if len(list) != 1 {
		t.Errorf("refused creates stored something: %+v", list)
	}
	h.must(200, "DELETE", fmt.Sprintf("/api/config-sets/%d", created.ID), nil, nil)
	h.must(404, "GET", fmt.Sprintf("/api/config-sets/%d", created.ID), nil, nil)
}

// TestConfigSetsReferenceShapeDefaultsAndPartialUpdate checks config sets
// as the reference's clients use them (issue 21 item 8): a set made with
// only a name has network mode bridge, restart policy no and empty lists
// (never null); labels [{key, value}] and volumes [{hostPath,
// containerPath, mode}] round-trip in order; PUT changes only the fields
// it carries (a PUT {description} keeps the name, the network mode, the
// restart policy and the lists); wrong types are refused with 400.
func TestConfigSetsReferenceShapeDefaultsAndPartialUpdate(t *testing.T) {
	h := newHarness(t)
	code, raw := h.do("POST", "/api/config-sets", map[string]any{"name": "bare"})
	if code != 201 {
		t.Fatalf("create bare = %d %s", code, raw)
	}
	var bare map[string]any
	if err := json.Unmarshal(raw, &bare); err != nil {
		t.Fatal(err)
	}
	if bare["networkMode"] != "bridge" || bare["restartPolicy"] != "no" || bare["description"] != "" {
		t.Errorf("defaults = %s", raw)
	}
	for _, k := range []string{"envVars", "labels", "ports", "volumes"} {
		if l, ok := bare[k].([]any); !ok || len(l) != 0 {
			t.Errorf("%s = %#v, want []", k, bare[k])
		}
	}

	labels := []map[string]string{{"key": "z.team", "value": "web"}, {"key": "a.tier", "value": "front"}}
	volumes := []map[string]string{{"hostPath": "/srv/conf", "containerPath": "/etc/conf", "mode": "ro"},
		{"hostPath": "data-" + h.label, "containerPath": "/data", "mode": "rw"}}
	full := map[string]any{"name": "full", "description": "all of it",
		"envVars": []map[string]any{{"key": "TZ", "value": "UTC"}}, "labels": labels,
		"ports":   []map[string]any{{"hostPort": "8080", "containerPort": "80", "protocol": "udp"}, {"hostPort": 9090, "containerPort": 90}},
		"volumes": volumes, "networkMode": "host", "restartPolicy": "always"}
	var created configSetJSON
	h.must(201, "POST", "/api/config-sets", full, &created)
	wantPorts := `[{"containerPort":"80","hostPort":"8080","protocol":"udp"},{"containerPort":"90","hostPort":"9090","protocol":"tcp"}]`
	check := func(what string, got configSetJSON, description string) {
		t.Helper()
		ports, _ := json.Marshal(got.Ports)
		if got.Name != "full" || got.Description != description || !reflect.DeepEqual(got.Labels, labels) ||
			!reflect.DeepEqual(got.Volumes, volumes) || string(ports) != wantPorts || got.NetworkMode != "host" ||
			got.RestartPolicy != "always" || len(got.EnvVars) != 1 || got.EnvVars[0].Value != "UTC" {
			t.Errorf("%s = %+v (ports %s)", what, got, ports)
		}
	}
	check("created", created, "all of it")
	path := fmt.Sprintf("/api/config-sets/%d", created.ID)
	var got configSetJSON
	h.must(200, "GET", path, nil, &got)
	check("read back", got, "all of it")

	h.must(200, "PUT", path, map[string]any{"description": "only this"}, &got)
	check("after PUT {description}", got, "only this")
	h.must(200, "GET", path, nil, &got)
	check("read after PUT {description}", got, "only this")

	h.must(200, "PUT", path, map[string]any{"restartPolicy": "on-failure", "labels": []map[string]string{}}, &got)
	if got.RestartPolicy != "on-failure" || len(got.Labels) != 0 || got.NetworkMode != "host" || len(got.Volumes) != 2 || got.Name != "full" {
		t.Errorf("after PUT {restartPolicy, labels: []} = %+v", got)
	}

	var list []configSetJSON
	h.must(200, "GET", "/api/config-sets", nil, &list)
	if len(list) != 2 {
		t.Fatalf("list = %+v", list)
	}
	h.expectRefusals([]refusal{
		{"labels as a string", "POST", "/api/config-sets", map[string]any{"name": "x", "labels": "a=b"}, 400, ""},
		{"volumes as an object", "POST", "/api/config-sets", map[string]any{"name": "x", "volumes": map[string]any{"/data": map[string]any{}}}, 400, ""},
		{"name as a number", "POST", "/api/config-sets", map[string]any{"name": 5}, 400, ""},
		{"networkMode as a number", "PUT", path, map[string]any{"networkMode": 1}, 400, ""},
		{"envVars as an object", "PUT", path, map[string]any{"envVars": map[string]string{"A": "1"}}, 400, ""},
		{"port as a word", "PUT", path, map[string]any{"ports": []map[string]any{{"containerPort": true}}}, 400, ""},
		{"volume without container path", "POST", "/api/config-sets", map[string]any{"name": "x", "volumes": []map[string]string{{"hostPath": "/srv"}}}, 400, "Invalid volume"},
		{"volume relative host path", "POST", "/api/config-sets", map[string]any{"name": "x", "volumes": []map[string]string{{"hostPath": "../etc", "containerPath": "/etc"}}}, 400, "Invalid volume"},
		{"volume bad mode", "POST", "/api/config-sets", map[string]any{"name": "x", "volumes": []map[string]string{{"hostPath": "/srv", "containerPath": "/srv", "mode": "rwx"}}}, 400, "Invalid volume"},
		{"duplicate label", "POST", "/api/config-sets", map[string]any{"name": "x", "labels": []map[string]string{{"key": "a", "value": "1"}, {"key": "a", "value": "2"}}}, 400, `Label "a" is given twice`},
		{"rename to a taken name", "PUT", path, map[string]any{"name": "bare"}, 409, "A config set named 'bare' already exists"},
	})
	h.must(200, "GET", path, nil, &got)
	if got.RestartPolicy != "on-failure" || got.NetworkMode != "host" || got.Name != "full" || len(got.Volumes) != 2 {
		t.Errorf("refused PUTs changed the set: %+v", got)
	}
	h.must(200, "GET", "/api/config-sets", nil, &list)
	if len(list) != 2 {
		t.Errorf("refused creates stored something: %+v", list)
	}
}

// labelsList is GET /api/labels as the reference answers it.
type labelsList struct {
	Labels []struct {
		Label        string `json:"label"`
		Environments []struct {
			EnvID   int64  `json:"envId"`
			EnvName string `json:"envName"`
		} `json:"environments"`
		Count int     `json:"count"`
		Color *string `json:"color"`
		ID    *int64  `json:"id"`
	} `json:"labels"`
	Colors map[string]string `json:"colors"`
}

// summary is "count color defined [env ids]" per label.
func (l labelsList) summary() map[string]string {
	out := map[string]string{}
	for _, x := range l.Labels {
		color := "-"
		if x.Color != nil {
			color = *x.Color
		}
		ids := []string{}
		for _, e := range x.Environments {
			ids = append(ids, fmt.Sprint(e.EnvID))
		}
		out[x.Label] = fmt.Sprintf("%d %s %v [%s]", x.Count, color, x.ID != nil, strings.Join(ids, " "))
	}
	return out
}

// TestLabelsListDefinedAndEnvironmentLabelsWithCounts checks GET
// /api/labels (the reference's {labels: [{label, environments, count,
// color}], colors}, plus Berth's defined labels) and Berth's definition of
// a label, POST {name, color} without an action.
func TestLabelsListDefinedAndEnvironmentLabelsWithCounts(t *testing.T) {
	h := newHarness(t)
	ctx := t.Context()
	var ids []int64
	for i, labels := range [][]string{{"prod", "eu"}, {"prod"}} {
		e := store.Environment{Name: fmt.Sprintf("env-%d-%s", i, h.label), ConnectionType: "direct", Host: "203.0.113.1", Port: 2375,
			Protocol: "http", Labels: labels}
		if err := h.store.CreateEnvironment(ctx, &e); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e.ID)
	}
	var created struct {
		ID    *int64 `json:"id"`
		Name  string `json:"name"`
		Color string `json:"color"`
	}
	h.must(201, "POST", "/api/labels", map[string]any{"name": "prod", "color": "#ef4444"}, &created)
	if created.ID == nil || created.Name != "prod" || created.Color != "#ef4444" {
		t.Fatalf("created = %+v", created)
	}
	h.must(201, "POST", "/api/labels", map[string]any{"name": "staging", "color": "#3b82f6"}, nil)
	var list labelsList
	h.must(200, "GET", "/api/labels", nil, &list)
	got := list.summary()
	want := map[string]string{"eu": fmt.Sprintf("1 - false [%d]", ids[0]), "prod": fmt.Sprintf("2 #ef4444 true [%d %d]", ids[0], ids[1]),
		"staging": "0 #3b82f6 true []"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("label %s = %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
	if list.Colors["prod"] != "#ef4444" || list.Colors["staging"] != "#3b82f6" || len(list.Colors) != 2 {
		t.Errorf("colors = %v", list.Colors)
	}
	h.expectRefusals([]refusal{
		{"no name", "POST", "/api/labels", map[string]any{"name": ""}, 400, "Label name is required"},
		{"bad color", "POST", "/api/labels", map[string]any{"name": "x", "color": "red"}, 400, `Invalid color "red"`},
		{"taken", "POST", "/api/labels", map[string]any{"name": "prod"}, 409, "Label 'prod' already exists"},
	})
}

// TestLabelsBulkOperationsOnEnvironments checks POST /api/labels as the
// reference reads it (issue 21 item 9): add a label to two environments,
// rename it (the colour follows), set-color shows in GET's colors, delete
// removes it from every environment; each answers {success, affected}; an
// unknown action, missing fields, a field the action does not read, an
// unknown environment and an 11th label are 400/404 and change nothing; a
// Viewer gets 403.
func TestLabelsBulkOperationsOnEnvironments(t *testing.T) {
	t.Parallel()
	h := newAuthHarness(t, apitest.Options{})
	user, pw := h.setupAdmin()
	h.as(h.login(user, pw))
	ctx := t.Context()
	var ids []int64
	for i, labels := range [][]string{{"eu"}, {}, {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}} {
		e := store.Environment{Name: fmt.Sprintf("bulk-%d-%s", i, h.label), ConnectionType: "direct", Host: "203.0.113.1", Port: 2375,
			Protocol: "http", Labels: labels}
		if err := h.store.CreateEnvironment(ctx, &e); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e.ID)
	}
	labelsOf := func(id int64) []string {
		t.Helper()
		e, err := h.store.GetEnvironment(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return e.Labels
	}
	var changed struct {
		Success  bool `json:"success"`
		Affected int  `json:"affected"`
	}
	h.must(200, "POST", "/api/labels", map[string]any{"action": "add", "label": " web ", "environmentIds": []int64{ids[0], ids[1]}}, &changed)
	if !changed.Success || changed.Affected != 2 {
		t.Errorf("add = %+v", changed)
	}
	if a, b := labelsOf(ids[0]), labelsOf(ids[1]); !reflect.DeepEqual(a, []string{"eu", "web"}) || !reflect.DeepEqual(b, []string{"web"}) {
		t.Errorf("after add: %v %v", a, b)
	}
	h.must(200, "POST", "/api/labels", map[string]any{"action": "add", "label": "web", "environmentIds": []int64{ids[0]}}, &changed)
	if changed.Affected != 0 {
		t.Errorf("add again = %+v, want 0 affected", changed)
	}
	var list labelsList
	list = labelsList{}
	h.must(200, "GET", "/api/labels", nil, &list)
	if got := list.summary()["web"]; got != fmt.Sprintf("2 - false [%d %d]", ids[0], ids[1]) {
		t.Errorf("web after add = %q", got)
	}

	h.must(200, "POST", "/api/labels", map[string]any{"action": "set-color", "label": "web", "color": "#22c55e"}, &changed)
	list = labelsList{}
	h.must(200, "GET", "/api/labels", nil, &list)
	if list.Colors["web"] != "#22c55e" || list.summary()["web"] != fmt.Sprintf("2 #22c55e true [%d %d]", ids[0], ids[1]) {
		t.Errorf("after set-color: colors %v, web %q", list.Colors, list.summary()["web"])
	}

	h.must(200, "POST", "/api/labels", map[string]any{"action": "rename", "oldLabel": "web", "newLabel": "frontend"}, &changed)
	if changed.Affected != 2 {
		t.Errorf("rename = %+v", changed)
	}
	list = labelsList{}
	h.must(200, "GET", "/api/labels", nil, &list)
	got := list.summary()
	if _, ok := got["web"]; ok || got["frontend"] != fmt.Sprintf("2 #22c55e true [%d %d]", ids[0], ids[1]) || list.Colors["frontend"] != "#22c55e" || list.Colors["web"] != "" {
		t.Errorf("after rename: %v, colors %v", got, list.Colors)
	}
	if a := labelsOf(ids[0]); !reflect.DeepEqual(a, []string{"eu", "frontend"}) {
		t.Errorf("env 0 after rename: %v", a)
	}
	// Renaming onto a label an environment already has merges the two.
	h.must(200, "POST", "/api/labels", map[string]any{"action": "rename", "oldLabel": "eu", "newLabel": "frontend"}, &changed)
	if a := labelsOf(ids[0]); changed.Affected != 1 || !reflect.DeepEqual(a, []string{"frontend"}) {
		t.Errorf("merge rename: %+v, env 0 %v", changed, a)
	}

	before := fmt.Sprint(labelsOf(ids[0]), labelsOf(ids[1]), labelsOf(ids[2]))
	h.expectRefusals([]refusal{
		{"unknown action", "POST", "/api/labels", map[string]any{"action": "merge", "label": "x"}, 400, `Invalid action. Use "rename", "delete", "add", or "set-color"`},
		{"add without label", "POST", "/api/labels", map[string]any{"action": "add", "environmentIds": []int64{ids[0]}}, 400, "label is required"},
		{"add without environments", "POST", "/api/labels", map[string]any{"action": "add", "label": "x", "environmentIds": []int64{}}, 400, "environmentIds array is required"},
		{"add to an unknown environment", "POST", "/api/labels", map[string]any{"action": "add", "label": "x", "environmentIds": []int64{ids[0], 999999}}, 404, "Environment 999999 not found"},
		{"an 11th label", "POST", "/api/labels", map[string]any{"action": "add", "label": "x", "environmentIds": []int64{ids[1], ids[2]}}, 400, "the most an environment can have"},
		{"rename without newLabel", "POST", "/api/labels", map[string]any{"action": "rename", "oldLabel": "frontend"}, 400, "oldLabel and newLabel are required"},
		{"delete without label", "POST", "/api/labels", map[string]any{"action": "delete"}, 400, "label is required"},
		{"bad color", "POST", "/api/labels", map[string]any{"action": "set-color", "label": "frontend", "color": "green"}, 400, `Invalid color "green"`},
		{"a field the action does not read", "POST", "/api/labels", map[string]any{"action": "delete", "label": "frontend", "color": "#000000"}, 400, "color is not read by the action delete"},
		{"environmentIds not numbers", "POST", "/api/labels", map[string]any{"action": "add", "label": "x", "environmentIds": []string{"a"}}, 400, ""},
	})
	if after := fmt.Sprint(labelsOf(ids[0]), labelsOf(ids[1]), labelsOf(ids[2])); after != before {
		t.Errorf("refused operations changed labels: %s -> %s", before, after)
	}

	// A Viewer may list the labels but not change them.
	h.userWithRole("vera", "Viewer")
	h.as(h.login("vera", "vera-password-1"))
	h.must(200, "GET", "/api/labels", nil, nil)
	h.must(403, "POST", "/api/labels", map[string]any{"action": "delete", "label": "frontend"}, nil)
	h.as(h.login(user, pw))

	h.must(200, "POST", "/api/labels", map[string]any{"action": "delete", "label": "frontend"}, &changed)
	if changed.Affected != 2 {
		t.Errorf("delete = %+v", changed)
	}
	if a, b := labelsOf(ids[0]), labelsOf(ids[1]); len(a) != 0 || len(b) != 0 {
		t.Errorf("after delete: %v %v", a, b)
	}
	list = labelsList{}
	h.must(200, "GET", "/api/labels", nil, &list)
	if _, ok := list.summary()["frontend"]; ok || list.Colors["frontend"] != "" {
		t.Errorf("after delete: %v, colors %v", list.summary(), list.Colors)
	}
	// set-color with no colour clears it (the label stays defined).
	h.must(200, "POST", "/api/labels", map[string]any{"action": "set-color", "label": "a", "color": "#123456"}, nil)
	h.must(200, "POST", "/api/labels", map[string]any{"action": "set-color", "label": "a"}, nil)
	list = labelsList{}
	h.must(200, "GET", "/api/labels", nil, &list)
	if _, ok := list.Colors["a"]; ok || list.summary()["a"] != fmt.Sprintf("1 - true [%d]", ids[2]) {
		t.Errorf("after clearing a's colour: %v, colors %v", list.summary()["a"], list.Colors)
	}
}

// TestTemplateComposeAnswersTheComposeFileOnly checks POST
// /api/templates/compose {template} as the reference answers it: {compose}
// and nothing else, for a catalogue template (by id), a container template
// the client describes, and a repository stack template read from a real
// git server; no stack is made. Deploying moved to POST
// /api/templates/deploy, which the old body is pointed to.
func TestTemplateComposeAnswersTheComposeFileOnly(t *testing.T) {
	h := newHarness(t)
	var src sourceJSON
	h.must(201, "POST", "/api/templates/sources", map[string]any{"name": "compose " + h.label, "url": serveTemplates(t, templateList(h.label))}, &src)
	sleeper, ok := findTemplate(h.templates("?refresh=true"), "Sleeper "+h.label)
	if !ok {
		t.Fatal("the source's container template is not in the catalogue")
	}
	compose := func(body any) string {
		t.Helper()
		var out map[string]any
		h.must(200, "POST", "/api/templates/compose", body, &out)
		c, _ := out["compose"].(string)
		if len(out) != 1 || c == "" {
			t.Fatalf("POST /api/templates/compose %v = %v, want only {compose}", body, out)
		}
		return c
	}
	if c := compose(map[string]any{"template": map[string]any{"id": sleeper.ID}}); !strings.Contains(c, enginetest.Image()) ||
		!strings.Contains(c, "${GREETING}") {
		t.Errorf("compose of the catalogue template =\n%s", c)
	}
	if c := compose(map[string]any{"templateId": sleeper.ID}); !strings.Contains(c, enginetest.Image()) {
		t.Errorf("compose by templateId =\n%s", c)
	}
	if c := compose(map[string]any{"template": map[string]any{"id": "a1b2c3", "type": "container", "title": "Nginx", "image": "nginx:latest"}}); !strings.Contains(c, "nginx:latest") {
		t.Errorf("compose of the reference's container template =\n%s", c)
	}
	g := newPublicGitServer(t)
	want := gitCompose(h.label, "3")
	g.commit("main", map[string]string{"stacks/app/docker-compose.yml": want})
	if c := compose(map[string]any{"template": map[string]any{"type": "stack", "title": "Git app",
		"repository": map[string]string{"url": g.URL, "stackfile": "stacks/app/docker-compose.yml"}}}); c != want {
		t.Errorf("compose of the repository template = %q, want %q", c, want)
	}
	var list []map[string]any
	h.must(200, "GET", "/api/stacks?env=1", nil, &list)
	for _, st := range list {
		if n, _ := st["name"].(string); strings.Contains(n, "sleeper") || strings.Contains(n, "nginx") {
			t.Errorf("POST /api/templates/compose made a stack: %v", st)
		}
	}
	for _, tt := range []struct {
		name   string
		body   any
		status int
		msg    string
	}{
		{"no template", map[string]any{}, 400, "Template is required"},
		{"old deploy body", map[string]any{"templateId": sleeper.ID, "stackName": "x"}, 400, "POST /api/templates/deploy"},
		{"container without image", map[string]any{"template": map[string]any{"type": "container", "title": "x"}}, 400, "needs an image"},
		{"file repository", map[string]any{"template": map[string]any{"type": "stack", "title": "x",
			"repository": map[string]string{"url": "file:///etc", "stackfile": "passwd"}}}, 400, "use https, ssh or git"},
		{"stack file climbing out", map[string]any{"template": map[string]any{"type": "stack", "title": "x",
			"repository": map[string]string{"url": g.URL, "stackfile": "../x.yml"}}}, 400, "a path inside the repository is required"},
		{"unknown id without a template", map[string]any{"templateId": "nope:1"}, 404, "Template 'nope:1' not found"},
	} {
		if code, body := h.do("POST", "/api/templates/compose", tt.body); code != tt.status || !strings.Contains(shErrorOf(body), tt.msg) {
			t.Errorf("%s: %d %s, want %d %q", tt.name, code, body, tt.status, tt.msg)
		}
	}
}
