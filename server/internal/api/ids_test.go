package api_test

import (
	"strings"
	"testing"
)

// A non-numeric id of a numeric resource is the reference's 400 "Invalid …
// ID", not a 404 that reads as "it was deleted"; a number no record has is
// still 404.
func TestNonNumericIDsAreInvalid(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for path, noun := range map[string]string{
		"registries": "registry", "git/credentials": "credential", "git/repositories": "repository",
		"git/stacks": "git stack", "config-sets": "config set", "notifications": "notification",
		"users": "user", "roles": "role", "auth/oidc": "OIDC provider", "auth/ldap": "LDAP configuration",
	} {
		status, body := h.do("GET", "/api/"+path+"/abc", nil)
		if want := "Invalid " + noun + " ID"; status != 400 || !strings.Contains(string(body), want) {
			t.Errorf("GET /api/%s/abc = %d %s, want 400 %q", path, status, body, want)
		}
		if status, body := h.do("GET", "/api/"+path+"/0", nil); status != 404 {
			t.Errorf("GET /api/%s/0 = %d %s, want 404", path, status, body)
		}
	}
}
