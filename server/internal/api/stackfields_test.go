package api_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The reference's stack request fields Berth reads (issue 21): DELETE's
// volumes and files, default-path's location, path-hints' name, scan's
// path and env/validate's compose.

// stackFiles is the compose endpoint's answer, for a stack's paths.
type stackFiles struct {
	StackDir    string `json:"stackDir"`
	ComposePath string `json:"composePath"`
}

// TestStackDeleteReadsVolumesAndFilesAndPathHintsReadsName checks on the
// real engine: path-hints?name answers the working directory and compose
// file of the project's containers; DELETE with force and volumes=false
// keeps the named volume (force alone removes it, as before), files=false
// keeps the stack's files on disk while the stack goes, volumes=true
// removes the volume.
func TestStackDeleteReadsVolumesAndFilesAndPathHintsReadsName(t *testing.T) {
	h := newHarness(t)
	deploy := func(name string) stackFiles {
		t.Helper()
		h.removeStackAtCleanup(name)
		_, _, res := h.streamStack("POST", "/api/stacks?env=1", map[string]any{"name": name, "compose": stackCompose(h.label),
			"envVars": []map[string]any{{"key": "GREETING", "value": "hi"}, {"key": "API_TOKEN", "value": "t", "isSecret": true}}})
		if !res.Success {
			t.Fatalf("deploy %s: %+v", name, res)
		}
		var f stackFiles
		h.must(200, "GET", "/api/stacks/"+name+"/compose?env=1", nil, &f)
		return f
	}

	kept := "dk-" + h.label
	f := deploy(kept)
	var hints struct {
		StackName    string   `json:"stackName"`
		WorkingDir   *string  `json:"workingDir"`
		ConfigFiles  []string `json:"configFiles"`
		Directories  []string `json:"directories"`
		ComposeFiles []string `json:"composeFiles"`
	}
	h.must(200, "GET", "/api/stacks/path-hints?env=1&name="+kept, nil, &hints)
	if hints.StackName != kept || hints.WorkingDir == nil || *hints.WorkingDir != f.StackDir ||
		!slices.Equal(hints.ConfigFiles, []string{f.ComposePath}) || !slices.Contains(hints.Directories, f.StackDir) ||
		!slices.Contains(hints.ComposeFiles, f.ComposePath) {
		t.Errorf("path-hints?name = %+v, want the stack's %s and %s", hints, f.StackDir, f.ComposePath)
	}
	var none map[string]any
	h.must(200, "GET", "/api/stacks/path-hints?env=1&name=none-"+h.label, nil, &none)
	if cf, ok := none["configFiles"].([]any); none["workingDir"] != "" || !ok || len(cf) != 0 {
		t.Errorf("path-hints of a project without containers = %v, want workingDir \"\" and configFiles []", none)
	}
	if code, body := h.do("GET", "/api/stacks/path-hints?env=1&name=Bad%20Name", nil); code != 400 {
		t.Errorf("path-hints with an invalid name = %d %s, want 400", code, body)
	}

	if code, body := h.do("DELETE", "/api/stacks/"+kept+"?env=1&force=true&volumes=maybe", nil); code != 400 {
		t.Errorf("volumes=maybe = %d %s, want 400", code, body)
	}
	h.must(200, "DELETE", "/api/stacks/"+kept+"?env=1&force=true&volumes=false", nil, nil)
	if !engineHas(t, "volumes", kept+"_data") {
		t.Errorf("force with volumes=false removed the volume")
	}
	if _, err := os.Stat(f.StackDir); !os.IsNotExist(err) {
		t.Errorf("files after a delete (files defaults to true): %v", err)
	}

	files := "df-" + h.label
	f = deploy(files)
	h.must(200, "DELETE", "/api/stacks/"+files+"?env=1&force=true&volumes=true&files=false", nil, nil)
	if engineHas(t, "volumes", files+"_data") {
		t.Errorf("volumes=true kept the volume")
	}
	if _, err := os.Stat(f.ComposePath); err != nil {
		t.Errorf("files=false removed the compose file: %v", err)
	}
	if code, _ := h.do("GET", "/api/stacks/"+files+"/compose?env=1", nil); code != 404 {
		t.Errorf("the stack after a delete with files=false = %d, want 404", code)
	}
}

// TestStackDefaultPathReadsLocationConfined checks default-path's location:
// a directory under the stack roots is the base of the stack's directory;
// a relative path or ".." is 400, a place outside the roots or Berth's data
// directory 403.
func TestStackDefaultPathReadsLocationConfined(t *testing.T) {
	h := newHarness(t)
	root := t.TempDir()
	h.allowStackRoots(root)
	type defaultPath struct {
		Directory   string `json:"directory"`
		StackDir    string `json:"stackDir"`
		Source      string `json:"source"`
		ComposePath string `json:"composePath"`
		EnvPath     string `json:"envPath"`
	}
	var got defaultPath
	h.must(200, "GET", "/api/stacks/default-path?env=1&name=web&location="+root, nil, &got)
	if got.Directory != filepath.Join(root, "web") || got.StackDir != got.Directory || got.Source != "custom" ||
		got.ComposePath != filepath.Join(root, "web", "compose.yaml") || got.EnvPath != filepath.Join(root, "web", ".env") {
		t.Errorf("default-path with location = %+v, want under %s", got, root)
	}
	// Without a location: the environment's stack directory, the
	// reference's stackDir and source too.
	var def defaultPath
	h.must(200, "GET", "/api/stacks/default-path?env=1&name=web", nil, &def)
	if def.StackDir == "" || def.StackDir != def.Directory || def.Source != "default" || def.ComposePath != filepath.Join(def.StackDir, "compose.yaml") {
		t.Errorf("default-path without location = %+v", def)
	}
	for _, tc := range []struct {
		location string
		want     int
	}{
		{"stacks", 400},
		{root + "/../x", 400},
		{t.TempDir(), 403},
		{h.dataDir, 403},
	} {
		if code, body := h.do("GET", "/api/stacks/default-path?env=1&name=web&location="+tc.location, nil); code != tc.want {
			t.Errorf("location %s = %d %s, want %d", tc.location, code, body, tc.want)
		}
	}
}

// TestStackScanReadsPath checks scan's path: the directories holding a
// compose file under it (compose.yaml preferred) are listed, a hidden
// directory and a compose file linked from outside the roots are not; a
// path outside the roots is 403, a relative one 400.
func TestStackScanReadsPath(t *testing.T) {
	h := newHarness(t)
	root, outside := t.TempDir(), t.TempDir()
	h.allowStackRoots(root)
	write := func(p string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("services:\n  app:\n    image: busybox\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(root, "alpha", "compose.yaml"))
	write(filepath.Join(root, "beta", "docker-compose.yml"))
	write(filepath.Join(root, "beta", "compose.yaml"))
	write(filepath.Join(root, ".hidden", "compose.yaml"))
	write(filepath.Join(outside, "compose.yaml"))
	if err := os.MkdirAll(filepath.Join(root, "gamma"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "compose.yaml"), filepath.Join(root, "gamma", "compose.yaml")); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Stacks []struct {
			Name        string   `json:"name"`
			WorkingDir  string   `json:"workingDir"`
			ConfigFiles []string `json:"configFiles"`
			Adoptable   bool     `json:"adoptable"`
		} `json:"stacks"`
		// The reference's keys.
		Discovered []struct {
			Name string `json:"name"`
		} `json:"discovered"`
		Adopted, Skipped []string
		Errors           []any
	}
	h.must(200, "POST", "/api/stacks/scan?env=1", map[string]any{"path": root}, &got)
	if len(got.Discovered) != len(got.Stacks) || got.Adopted == nil || got.Skipped == nil || got.Errors == nil {
		t.Errorf("scan answer lacks the reference's keys: %+v", got)
	}
	var names []string
	for _, s := range got.Stacks {
		names = append(names, s.Name)
		if s.Name == "beta" && (!slices.Equal(s.ConfigFiles, []string{filepath.Join(root, "beta", "compose.yaml")}) || !s.Adoptable ||
			s.WorkingDir != filepath.Join(root, "beta")) {
			t.Errorf("beta = %+v", s)
		}
	}
	if !slices.Equal(names, []string{"alpha", "beta"}) {
		t.Errorf("scan of %s = %v, want [alpha beta]", root, names)
	}
	if code, body := h.do("POST", "/api/stacks/scan?env=1", map[string]any{"path": outside}); code != 403 {
		t.Errorf("scan outside the roots = %d %s, want 403", code, body)
	}
	if code, body := h.do("POST", "/api/stacks/scan?env=1", map[string]any{"path": "stacks"}); code != 400 {
		t.Errorf("scan of a relative path = %d %s, want 400", code, body)
	}
	// Without a path, the engine's projects as before.
	if code, body := h.do("POST", "/api/stacks/scan?env=1", nil); code != 200 || !strings.Contains(string(body), `"stacks"`) {
		t.Errorf("scan without a path = %d %s", code, body)
	}
}

// TestStackEnvValidateReadsCompose checks env/validate's compose: the
// variables are checked against the compose text sent, not the stored file.
func TestStackEnvValidateReadsCompose(t *testing.T) {
	h := newHarness(t)
	name := "ec-" + h.label
	h.createStoppedStack(name, stackCompose(h.label), map[string]any{"rawEnvContent": "GREETING=hi\n"})
	h.removeStackAtCleanup(name)
	compose := "services:\n  app:\n    image: busybox\n    environment:\n      NEW_ONE: ${NEW_ONE}\n      PORT: ${PORT:-80}\n"
	var r envReport
	h.must(200, "POST", "/api/stacks/"+name+"/env/validate?env=1", map[string]any{"compose": compose}, &r)
	var refs []string
	for _, v := range r.Referenced {
		refs = append(refs, v.Name)
	}
	slices.Sort(refs)
	if r.Valid || !slices.Equal(r.Missing, []string{"NEW_ONE"}) || !slices.Equal(refs, []string{"NEW_ONE", "PORT"}) ||
		!slices.Contains(r.Unused, "GREETING") {
		t.Errorf("report against the sent compose = %+v", r)
	}
	if !slices.Equal(r.Required, []string{"NEW_ONE"}) || !slices.Equal(r.Optional, []string{"PORT"}) {
		t.Errorf("required %v, optional %v; want [NEW_ONE], [PORT]", r.Required, r.Optional)
	}
	// The reference's clients send the defined names as strings.
	h.must(200, "POST", "/api/stacks/"+name+"/env/validate?env=1", map[string]any{"compose": compose,
		"variables": []string{"NEW_ONE", "EXTRA"}}, &r)
	if !r.Valid || len(r.Missing) != 0 || !slices.Contains(r.Unused, "EXTRA") || !slices.Contains(r.Defined, "NEW_ONE") {
		t.Errorf("report with variables as names = %+v", r)
	}
	if code, body := h.do("POST", "/api/stacks/"+name+"/env/validate?env=1", map[string]any{"variables": []any{7}}); code != 400 {
		t.Errorf("variables [7] = %d %s, want 400", code, body)
	}
	// Without it, the stored file's variables.
	h.must(200, "POST", "/api/stacks/"+name+"/env/validate?env=1", map[string]any{}, &r)
	if slices.Contains(r.Missing, "NEW_ONE") || !slices.Contains(r.Missing, "API_TOKEN") {
		t.Errorf("report against the stored compose = %+v", r)
	}
}
