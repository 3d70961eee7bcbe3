package api_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/berth-dev/berth/server/internal/apitest"
)

type navigationValues struct {
	LandingPage  *string `json:"landingPage"`
	EnvClickPage *string `json:"envClickPage"`
}

type navigationGot struct {
	Effective struct {
		LandingPage  string `json:"landingPage"`
		EnvClickPage string `json:"envClickPage"`
	} `json:"effective"`
	Global navigationValues  `json:"global"`
	User   *navigationValues `json:"user"`
}

// The navigation: defaults, the global values an admin sets, a user's own
// over them (a Viewer may set theirs but not the global ones), clearing,
// and refusals of unknown pages.
func TestNavigationSettingsGlobalAndPerUser(t *testing.T) {
	t.Parallel()
	h := newAuthHarness(t, apitest.Options{})
	user, pw := h.setupAdmin()
	admin := h.login(user, pw)
	h.as(admin)

	var got navigationGot
	h.must(200, "GET", "/api/settings/navigation", nil, &got)
	if got.Effective.LandingPage != "dashboard" || got.Effective.EnvClickPage != "containers" || got.User != nil ||
		got.Global.LandingPage != nil {
		t.Errorf("defaults = %+v", got)
	}
	h.must(200, "PUT", "/api/settings/navigation", map[string]any{"landingPage": "containers", "envClickPage": "logs"}, nil)
	h.expectRefusals([]refusal{
		{"unknown page", "PUT", "/api/settings/navigation", map[string]any{"landingPage": "../admin"}, 400, "Invalid landingPage"},
		{"wrong type", "PUT", "/api/settings/navigation", map[string]any{"envClickPage": 3}, 400, "envClickPage must be a string"},
		{"unknown scope", "PUT", "/api/settings/navigation?scope=team", map[string]any{}, 400, "scope must be global or user"},
	})

	h.userWithRole("vera", "Viewer")
	h.as(h.login("vera", "vera-password-1"))
	h.must(200, "GET", "/api/settings/navigation", nil, &got)
	if got.Effective.LandingPage != "containers" || got.Effective.EnvClickPage != "logs" || got.User != nil {
		t.Errorf("viewer sees %+v, want the global values", got)
	}
	h.expectRefusals([]refusal{{"viewer sets the global values", "PUT", "/api/settings/navigation",
		map[string]any{"landingPage": "stacks"}, 403, "Permission denied"}})
	h.must(200, "PUT", "/api/settings/navigation?scope=user", map[string]any{"landingPage": "stacks"}, nil)
	h.must(200, "GET", "/api/settings/navigation", nil, &got)
	if got.Effective.LandingPage != "stacks" || got.Effective.EnvClickPage != "logs" || got.User == nil ||
		*got.User.LandingPage != "stacks" || got.User.EnvClickPage != nil {
		t.Errorf("viewer's own = %+v", got)
	}
	// Clearing one's own value falls back to the global one.
	h.must(200, "PUT", "/api/settings/navigation?scope=user", map[string]any{"landingPage": nil}, nil)
	h.must(200, "GET", "/api/settings/navigation", nil, &got)
	if got.Effective.LandingPage != "containers" {
		t.Errorf("after clearing = %+v", got)
	}

	h.as(admin)
	h.must(200, "GET", "/api/settings/navigation", nil, &got)
	if got.Effective.LandingPage != "containers" || got.User != nil {
		t.Errorf("the admin sees the viewer's own values: %+v", got)
	}
	h.must(200, "PUT", "/api/settings/navigation", map[string]any{"landingPage": ""}, nil)
	h.must(200, "GET", "/api/settings/navigation", nil, &got)
	if got.Effective.LandingPage != "dashboard" || got.Global.LandingPage != nil || *got.Global.EnvClickPage != "logs" {
		t.Errorf("after clearing the global landing page = %+v", got)
	}
}

// Without authentication the global values are everyone's, and the user
// scope is refused.
func TestNavigationUserScopeNeedsAuthentication(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.expectRefusals([]refusal{{"user scope", "PUT", "/api/settings/navigation?scope=user",
		map[string]any{"landingPage": "stacks"}, 400, "need authentication"}})
	h.must(200, "PUT", "/api/settings/navigation", map[string]any{"landingPage": "stacks"}, nil)
	var got navigationGot
	h.must(200, "GET", "/api/settings/navigation", nil, &got)
	if got.Effective.LandingPage != "stacks" {
		t.Errorf("got %+v", got)
	}
}

// The sidebar preferences are each user's: saved, read back, reset; both
// lists are required.
func TestSidebarPreferencesArePerUser(t *testing.T) {
	t.Parallel()
	h := newAuthHarness(t, apitest.Options{})
	user, pw := h.setupAdmin()
	admin := h.login(user, pw)
	h.as(admin)
	type prefs struct {
		Preferences struct {
			Order  []string `json:"order"`
			Hidden []string `json:"hidden"`
		} `json:"preferences"`
	}
	var got prefs
	h.must(200, "GET", "/api/preferences/sidebar", nil, &got)
	if got.Preferences.Order == nil || len(got.Preferences.Order) != 0 || len(got.Preferences.Hidden) != 0 {
		t.Errorf("default = %+v", got)
	}
	h.expectRefusals([]refusal{
		{"no order", "POST", "/api/preferences/sidebar", map[string]any{"hidden": []string{}}, 400, "order must be an array of strings"},
		{"no hidden", "POST", "/api/preferences/sidebar", map[string]any{"order": []string{}}, 400, "hidden must be an array of strings"},
		{"null order", "POST", "/api/preferences/sidebar", map[string]any{"order": nil, "hidden": []string{}}, 400, "order must be an array of strings"},
		{"bad entry", "POST", "/api/preferences/sidebar", map[string]any{"order": []string{"<x>"}, "hidden": []string{}}, 400, "Invalid order entry"},
	})
	h.must(200, "POST", "/api/preferences/sidebar", map[string]any{"order": []string{"stacks", "containers", "stacks"},
		"hidden": []string{"volumes"}}, &got)
	h.must(200, "GET", "/api/preferences/sidebar", nil, &got)
	if strings.Join(got.Preferences.Order, ",") != "stacks,containers" || strings.Join(got.Preferences.Hidden, ",") != "volumes" {
		t.Errorf("saved = %+v", got)
	}

	h.userWithRole("vera", "Viewer")
	h.as(h.login("vera", "vera-password-1"))
	h.must(200, "GET", "/api/preferences/sidebar", nil, &got)
	if len(got.Preferences.Order) != 0 {
		t.Errorf("another user sees the admin's sidebar: %+v", got)
	}
	h.must(200, "POST", "/api/preferences/sidebar", map[string]any{"order": []string{"images"}, "hidden": []string{}}, nil)

	h.as(admin)
	h.must(200, "DELETE", "/api/preferences/sidebar", nil, &got)
	h.must(200, "GET", "/api/preferences/sidebar", nil, &got)
	if len(got.Preferences.Order) != 0 || len(got.Preferences.Hidden) != 0 {
		t.Errorf("after reset = %+v", got)
	}
}

// The legal texts: the privacy statement as JSON and as text; the memory
// diagnostics for administrators only.
func TestLegalTextsAndMemoryDiagnostics(t *testing.T) {
	t.Parallel()
	h := newAuthHarness(t, apitest.Options{})
	admin, operator := h.withOperator()
	var text struct {
		Content string `json:"content"`
	}
	h.must(200, "GET", "/api/legal/privacy", nil, &text)
	if !strings.Contains(text.Content, "sends nothing home") {
		t.Errorf("privacy = %q", text.Content)
	}
	status, body := h.do("GET", "/api/legal/privacy?format=text", nil)
	if status != 200 || !strings.HasPrefix(string(body), "Berth privacy statement") {
		t.Errorf("privacy as text = %d %.60s", status, body)
	}
	// The license: the repository's, or a clear 404 while it has none.
	if status, body := h.do("GET", "/api/legal/license", nil); status != 200 && !(status == 404 && strings.Contains(string(body), "this build carries none")) {
		t.Errorf("license = %d %s", status, body)
	}

	var mem struct {
		Goroutines int `json:"goroutines"`
		GCForced   bool
		V8Heap     struct {
			HeapAlloc uint64 `json:"heapAlloc"`
		} `json:"v8Heap"`
		System struct {
			CPUs int `json:"cpus"`
		} `json:"system"`
		Uptime map[string]any `json:"uptime"`
	}
	h.must(200, "GET", "/api/debug/memory?gc=true", nil, &mem)
	if mem.Goroutines == 0 || mem.V8Heap.HeapAlloc == 0 || mem.System.CPUs == 0 || !mem.GCForced || mem.Uptime["human"] == nil {
		raw, _ := json.Marshal(mem)
		t.Errorf("memory = %s", raw)
	}
	h.as(operator)
	h.expectRefusals([]refusal{{"operator", "GET", "/api/debug/memory", nil, 403, "Permission denied"}})
	h.as(admin)
}
