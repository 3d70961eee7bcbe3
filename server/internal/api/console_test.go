package api

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// consoleAreas is web/src/lib/areas.json: the console's screens per area of
// the route table, and the areas that deliberately have none.
type consoleAreas struct {
	Screens       map[string][]string `json:"screens"`
	WithoutScreen map[string]string   `json:"withoutScreen"`
}

// The web console covers every area of the route table: an area (the first
// path segment after /api/) added without a screen fails here until
// web/src/lib/areas.json names the screens that serve it (which the console's
// own tests check exist, and the browser tests open).
func TestConsoleCoversEveryRouteArea(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "web", "src", "lib", "areas.json"))
	if err != nil {
		t.Fatal(err)
	}
	var areas consoleAreas
	if err := json.Unmarshal(raw, &areas); err != nil {
		t.Fatalf("areas.json: %v", err)
	}

	inTable := map[string]bool{}
	for _, rt := range (&Server{}).routes() {
		rest, ok := strings.CutPrefix(rt.Path, "/api/")
		if rt.Path == "/metrics" {
			continue // Prometheus' default path for /api/metrics
		}
		if !ok {
			t.Fatalf("route outside /api: %s %s", rt.Method, rt.Path)
		}
		inTable[strings.SplitN(rest, "/", 2)[0]] = true
	}

	var missing, stale []string
	for area := range inTable {
		paths := areas.Screens[area]
		_, exempt := areas.WithoutScreen[area]
		switch {
		case exempt && len(paths) > 0:
			t.Errorf("area %q is both served by screens and listed without one", area)
		case !exempt && len(paths) == 0:
			missing = append(missing, area)
		}
	}
	for area := range areas.Screens {
		if !inTable[area] {
			stale = append(stale, area)
		}
	}
	for area, why := range areas.WithoutScreen {
		if !inTable[area] {
			stale = append(stale, area)
		}
		if strings.TrimSpace(why) == "" {
			t.Errorf("area %q is without a screen but areas.json gives no reason", area)
		}
	}
	sort.Strings(missing)
	sort.Strings(stale)
	if len(missing) > 0 {
		t.Errorf("the console has no screen for these areas of the route table: %s (add the screens and list them in web/src/lib/areas.json)", strings.Join(missing, ", "))
	}
	if len(stale) > 0 {
		t.Errorf("web/src/lib/areas.json names areas the route table does not have: %s", strings.Join(stale, ", "))
	}
}

// consoleAPIPath is the console's copy of the OpenAPI document, from which
// web/src/lib/api-schema.d.ts is generated (openapi-typescript; the console's
// own test checks that the two agree).
var consoleAPIPath = filepath.Join("..", "..", "..", "web", "src", "lib", "openapi.json")

// consoleAPIDoc is the served document with a fixed version (the console's
// types do not change with a release number), indented for reviewable diffs.
func consoleAPIDoc(t *testing.T) []byte {
	t.Helper()
	doc := buildOpenAPI((&Server{}).routes(), apiOps)
	doc["info"].(map[string]any)["version"] = "console"
	body, err := json.MarshalIndent(doc, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return append(body, '\n')
}

// The console's typed API client is generated from the route table: a route
// or an answer type changed without regenerating it (make api-types) fails
// here, so the console never compiles against a shape the server no longer has.
func TestConsoleAPISnapshotIsCurrent(t *testing.T) {
	want := consoleAPIDoc(t)
	if os.Getenv("BERTH_UPDATE_CONSOLE_API") == "1" {
		tmp := consoleAPIPath + ".tmp"
		if err := os.WriteFile(tmp, want, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, consoleAPIPath); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(consoleAPIPath)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("%s is stale: run `make api-types` and commit web/src/lib/openapi.json and api-schema.d.ts", consoleAPIPath)
	}
}
