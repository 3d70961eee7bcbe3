package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/berth-dev/berth/server/internal/apitest"
)

// TestEveryAnswerCarriesTheSecurityHeaders: the console's pages, the API
// docs page, JSON answers, refusals and unknown paths all forbid framing,
// sniffing and inline script.
func TestEveryAnswerCarriesTheSecurityHeaders(t *testing.T) {
	h := newAuthHarness(t, apitest.Options{})
	for _, c := range []struct{ method, path string }{
		{"GET", "/"},
		{"GET", "/containers"},
		{"GET", "/api/docs"},
		{"GET", "/api/health"},
		{"GET", "/api/containers"}, // 401: no session
		{"GET", "/api/no-such-route"},
		{"DELETE", "/api/health"},   // 405
		{"POST", "/api/auth/login"}, // 400: no body
	} {
		req, err := http.NewRequest(c.method, h.url+c.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := h.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		hdr := resp.Header
		csp := hdr.Get("Content-Security-Policy")
		script := directive(csp, "script-src")
		if script == "" || strings.Contains(script, "unsafe-inline") || strings.Contains(script, "unsafe-eval") ||
			directive(csp, "frame-ancestors") != "frame-ancestors 'none'" || directive(csp, "object-src") != "object-src 'none'" {
			t.Errorf("%s %s (%d): Content-Security-Policy %q", c.method, c.path, resp.StatusCode, csp)
		}
		if hdr.Get("X-Frame-Options") != "DENY" || hdr.Get("X-Content-Type-Options") != "nosniff" ||
			hdr.Get("Referrer-Policy") == "" {
			t.Errorf("%s %s (%d): X-Frame-Options %q, X-Content-Type-Options %q, Referrer-Policy %q", c.method, c.path,
				resp.StatusCode, hdr.Get("X-Frame-Options"), hdr.Get("X-Content-Type-Options"), hdr.Get("Referrer-Policy"))
		}
	}
}

// directive returns the directive called name of a policy, or "".
func directive(policy, name string) string {
	for _, d := range strings.Split(policy, ";") {
		if d = strings.TrimSpace(d); d == name || strings.HasPrefix(d, name+" ") {
			return d
		}
	}
	return ""
}
