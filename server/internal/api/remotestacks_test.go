package api_test

import (
	"fmt"
	"strings"
	"testing"
)

// TestRemoteStacksDirIsRecordedPerEnvironmentWithConfinedPaths checks GET
// and POST /api/environments/{id}/remote-stacks-dir (issue 21, reference
// 1.0.42): unset is null; an absolute path without ".." is recorded
// (cleaned) and answered back, for that environment only; a relative path,
// a ".." element, a non-string or a missing field is 400; null clears it;
// a socket environment has none (400); an unknown environment is 404.
func TestRemoteStacksDirIsRecordedPerEnvironmentWithConfinedPaths(t *testing.T) {
	h := newHarness(t)
	direct := h.addEnvironment(map[string]any{"name": "rsd", "connectionType": "direct", "host": "192.0.2.7", "port": 2375})
	other := h.addEnvironment(map[string]any{"name": "rsd-other", "connectionType": "direct", "host": "192.0.2.8", "port": 2375})
	path := func(id int64) string { return fmt.Sprintf("/api/environments/%d/remote-stacks-dir", id) }
	type dirJSON struct {
		Success         bool    `json:"success"`
		RemoteStacksDir *string `json:"remoteStacksDir"`
	}
	get := func(id int64) *string {
		t.Helper()
		var got dirJSON
		h.must(200, "GET", path(id), nil, &got)
		return got.RemoteStacksDir
	}
	if got := get(direct); got != nil {
		t.Fatalf("unset remoteStacksDir = %q, want null", *got)
	}
	var set dirJSON
	h.must(200, "POST", path(direct), map[string]any{"remoteStacksDir": " /srv/stacks/ "}, &set)
	if !set.Success || set.RemoteStacksDir == nil || *set.RemoteStacksDir != "/srv/stacks" {
		t.Fatalf("set answer = %+v", set)
	}
	if got := get(direct); got == nil || *got != "/srv/stacks" {
		t.Errorf("remoteStacksDir after set = %v, want /srv/stacks", got)
	}
	if got := get(other); got != nil {
		t.Errorf("another environment's remoteStacksDir = %q, want null", *got)
	}
	for _, body := range []map[string]any{
		{"remoteStacksDir": "stacks"},
		{"remoteStacksDir": "/srv/../etc"},
		{"remoteStacksDir": 5},
		{"remoteStacksDir": []string{"/srv"}},
		{},
	} {
		code, resp := h.do("POST", path(direct), body)
		if code != 400 {
			t.Errorf("POST %v = %d %s, want 400", body, code, resp)
		}
	}
	if got := get(direct); got == nil || *got != "/srv/stacks" {
		t.Errorf("remoteStacksDir after refused changes = %v, want it kept", got)
	}
	h.must(200, "POST", path(direct), map[string]any{"remoteStacksDir": nil}, &set)
	if set.RemoteStacksDir != nil || get(direct) != nil {
		t.Errorf("after null: answer %+v, stored %v; want cleared", set, get(direct))
	}
	if code, resp := h.do("POST", path(1), map[string]any{"remoteStacksDir": "/srv/stacks"}); code != 400 || !strings.Contains(string(resp), "socket") {
		t.Errorf("POST on the socket environment = %d %s, want 400", code, resp)
	}
	if code, _ := h.do("GET", path(999999), nil); code != 404 {
		t.Errorf("GET of an unknown environment = %d, want 404", code)
	}
}
