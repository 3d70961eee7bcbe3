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
