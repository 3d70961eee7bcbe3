package api_test

import (
	"strings"
	"testing"
)

// TestBodyEnvironmentIsOneRule checks that the routes which take their
// environment from the body (adopt, template deploy: environmentId, else
// ?env=, else 1) resolve it as every ?env= route does: a malformed ?env= is
// 400 (it was 404 on these two), an unknown environment 404, a negative
// environmentId 400, and a body and a query that disagree 400.
func TestBodyEnvironmentIsOneRule(t *testing.T) {
	h := newHarness(t)
	adopt := map[string]any{"stacks": []map[string]any{{"name": "nope-" + h.label}}}
	for _, tc := range []struct {
		path string
		body map[string]any
		want int
		msg  string
	}{
		{"/api/stacks/adopt?env=abc", adopt, 400, "Invalid environment ID"},
		{"/api/stacks/adopt?env=-2", adopt, 400, "Invalid environment ID"},
		{"/api/stacks/adopt?env=999999", adopt, 404, "Environment not found"},
		{"/api/stacks/adopt", map[string]any{"environmentId": 999999, "stacks": adopt["stacks"]}, 404, "Environment not found"},
		{"/api/stacks/adopt", map[string]any{"environmentId": -1, "stacks": adopt["stacks"]}, 400, "environmentId must be a positive integer"},
		{"/api/stacks/adopt?env=1", map[string]any{"environmentId": 999999, "stacks": adopt["stacks"]}, 400, "different environments"},
		{"/api/templates/deploy?env=abc", map[string]any{"templateId": "nginx", "stackName": "t-" + h.label}, 400, "Invalid environment ID"},
		{"/api/templates/deploy?env=999999", map[string]any{"templateId": "nginx", "stackName": "t-" + h.label}, 404, "Environment not found"},
	} {
		code, body := h.do("POST", tc.path, tc.body)
		if code != tc.want || !strings.Contains(shErrorOf(body), tc.msg) {
			t.Errorf("POST %s %v = %d %s, want %d %q", tc.path, tc.body, code, body, tc.want, tc.msg)
		}
	}
	// The environment in the query or the body, when it exists, is used.
	var out struct {
		Adopted []string `json:"adopted"`
		Failed  []struct {
			Name string `json:"name"`
		} `json:"failed"`
	}
	h.must(200, "POST", "/api/stacks/adopt?env=1", adopt, &out)
	h.must(200, "POST", "/api/stacks/adopt", map[string]any{"environmentId": 1, "stacks": adopt["stacks"]}, &out)
	if len(out.Failed) != 1 {
		t.Errorf("adopt of an unknown project = %+v, want it failed", out)
	}
}
