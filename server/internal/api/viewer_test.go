package api_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/berth-dev/berth/server/internal/api"
	"github.com/berth-dev/berth/server/internal/apitest"
)

// viewerMayChange are the only routes that change something a Viewer is
// admitted to, each with why: they are the Viewer's own things, sign-in
// itself, or routes whose handler checks the permission of what is asked.
var viewerMayChange = map[string]string{
	"POST /api/auth/login":                    "signing in",
	"POST /api/auth/logout":                   "ends one's own session",
	"POST /api/auth/oidc/{id}/initiate":       "starts a sign-in",
	"POST /api/git/webhook/{id}":              "public, authenticated by the webhook's secret",
	"POST /api/git/stacks/{id}/webhook":       "public, authenticated by the webhook's secret",
	"POST /api/auth/tokens":                   "one's own API tokens",
	"DELETE /api/auth/tokens/{id}":            "one's own API tokens (others' need an admin)",
	"POST /api/users/{id}/mfa":                "one's own MFA (someone else's needs users:edit, checked by the handler)",
	"DELETE /api/users/{id}/mfa":              "one's own MFA, with one's password or code",
	"PUT /api/profile":                        "one's own profile",
	"POST /api/profile/avatar":                "one's own avatar",
	"DELETE /api/profile/avatar":              "one's own avatar",
	"PUT /api/profile/preferences":            "one's own preferences",
	"POST /api/profile/preferences":           "one's own preferences",
	"POST /api/dashboard/preferences":         "one's own preferences",
	"PUT /api/dashboard/preferences":          "one's own preferences",
	"POST /api/preferences/favorites":         "one's own preferences",
	"POST /api/preferences/favorite-groups":   "one's own preferences",
	"POST /api/preferences/grid":              "one's own preferences",
	"DELETE /api/preferences/grid":            "one's own preferences",
	"POST /api/preferences/sidebar":           "one's own preferences",
	"DELETE /api/preferences/sidebar":         "one's own preferences",
	"PUT /api/settings/navigation":            "scope=user is one's own; the global scope needs settings:edit, checked by the handler (asserted in navigation_test.go)",
	"POST /api/volumes/{name}/browse/release": "ends a volume browse helper, which browsing (volumes:inspect) started",
	"POST /api/batch":                         "each action's own permission is checked by the handler (asserted below)",
	"DELETE /api/jobs/{jobId}":                "cancels one's own job (another user's is not found)",
	"POST /api/hawser/connect":                "changes nothing: advises the Hawser agents' WebSocket endpoint",
	"POST /api/backup/restore/preview":        "changes nothing: reads a snapshot (backups:view)",
}

var pathParam = regexp.MustCompile(`\{[^}]+\}`)

// A Viewer starts no work and records nothing: every route that changes
// state answers 403 to a real Viewer, but for the short list above.
func TestViewerIsRefusedEveryChange(t *testing.T) {
	t.Parallel()
	h := newAuthHarness(t, apitest.Options{})
	user, pw := h.setupAdmin()
	h.as(h.login(user, pw))
	h.userWithRole("vera", "Viewer")
	h.as(h.login("vera", "vera-password-1"))

	seen := map[string]bool{}
	for _, rt := range api.RouteTable() {
		key := rt.Method + " " + rt.Path
		seen[key] = true
		if rt.Method == "GET" || rt.Method == "HEAD" {
			continue
		}
		if _, ok := viewerMayChange[key]; ok {
			continue
		}
		path := pathParam.ReplaceAllString(rt.Path, "1") + "?env=1&envId=1"
		status, body := h.do(rt.Method, path, "{}")
		if status != 403 || !strings.Contains(string(body), "Permission denied") {
			t.Errorf("%s as a Viewer (permission %s) = %d %s, want 403 Permission denied", key, rt.Perm, status, body)
		}
	}
	for key := range viewerMayChange {
		if !seen[key] {
			t.Errorf("allowed route %s is not in the route table", key)
		}
	}
	// The batch asks for the permission of its action.
	status, body := h.do("POST", "/api/batch?env=1", map[string]any{"action": "stop", "containers": []string{"x"}})
	if status != 403 || !strings.Contains(string(body), "Permission denied") {
		t.Errorf("batch stop as a Viewer = %d %s, want 403 Permission denied", status, body)
	}
}
