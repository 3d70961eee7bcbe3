package api_test

import (
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/berth-dev/berth/server/internal/api"
	"github.com/berth-dev/berth/server/internal/apitest"
	"github.com/berth-dev/berth/server/internal/store"
)

// behindProxy is a test Berth whose loopback peers (the test client) are
// trusted proxies, so that a forwarding header names the client.
func behindProxy() apitest.Options {
	return apitest.Options{Boundaries: api.Boundaries{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}}
}

// loginWith sends a login request with extra headers (X-Forwarded-For …)
// and returns the answer and the session cookie, if one was set.
func (h *harness) loginWith(headers map[string]string, user, password string) (loginAnswer, *http.Cookie) {
	h.t.Helper()
	req, err := http.NewRequest("POST", h.url+"/api/auth/login",
		strings.NewReader(fmt.Sprintf(`{"username":%q,"password":%q}`, user, password)))
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := h.http.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "dockhand_session" && c.Value != "" {
			cookie = c
		}
	}
	return loginAnswer{resp.StatusCode, resp.Header.Get("Retry-After"), strings.TrimSpace(string(data))}, cookie
}

func xff(v string) map[string]string { return map[string]string{"X-Forwarded-For": v} }

// Without TRUSTED_PROXIES a client writing X-Forwarded-For does not get a
// fresh address per attempt: the five failures count against the peer.
func TestSpoofedForwardedForDoesNotResetTheLoginLimit(t *testing.T) {
	t.Parallel()
	h := newAuthHarness(t, apitest.Options{})
	user, pw := h.setupAdmin()
	for i := 1; i <= 5; i++ {
		if a, _ := h.loginWith(xff(fmt.Sprintf("203.0.113.%d", i)), user, "wrong-password"); a.status != 401 {
			t.Fatalf("failure %d = %d %s, want 401", i, a.status, a.body)
		}
	}
	a, _ := h.loginWith(map[string]string{"X-Forwarded-For": "203.0.113.99", "Forwarded": "for=198.51.100.99"}, user, pw)
	if a.status != 429 || a.retryAfter != "5" {
		t.Fatalf("right password from a new spoofed address = %d %q %s, want 429 after 5 s", a.status, a.retryAfter, a.body)
	}
}

// Behind a trusted proxy the header's client address is the one limited,
// read from the right: what the client wrote itself (leftmost) changes
// nothing, another client is not affected, and the audit log names it.
func TestTrustedProxyForwardedForNamesTheClient(t *testing.T) {
	t.Parallel()
	h := newAuthHarness(t, behindProxy())
	user, pw := h.setupAdmin()
	for i := 1; i <= 5; i++ {
		// The proxy appends the address it saw to what the client sent.
		if a, _ := h.loginWith(xff(fmt.Sprintf("198.51.100.%d, 203.0.113.9", i)), user, "wrong-password"); a.status != 401 {
			t.Fatalf("failure %d = %d %s, want 401", i, a.status, a.body)
		}
	}
	if a, _ := h.loginWith(xff("203.0.113.9"), user, pw); a.status != 429 {
		t.Fatalf("the locked client = %d %s, want 429", a.status, a.body)
	}
	if a, c := h.loginWith(xff("203.0.113.10"), user, pw); a.status != 200 || c == nil {
		t.Fatalf("another client behind the proxy = %d %s, want a session", a.status, a.body)
	}
	// RFC 7239 Forwarded when no X-Forwarded-For is sent; an IPv6 client with a port.
	if a, c := h.loginWith(map[string]string{"Forwarded": `for=192.0.2.60;proto=http, for="[2001:db8::7]:4711"`}, user, pw); a.status != 200 || c == nil {
		t.Fatalf("login through Forwarded = %d %s", a.status, a.body)
	}
	entries, _, err := h.store.ListAudit(t.Context(), store.AuditFilter{Action: "login", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	ips := map[string]bool{}
	for _, e := range entries {
		ips[e.IP] = true
	}
	if !ips["203.0.113.10"] || !ips["2001:db8::7"] {
		t.Errorf("audit addresses of the sign-ins = %v, want 203.0.113.10 and 2001:db8::7", ips)
	}
}

// One address trying many names is limited across them (20 failures), and
// the owner still signs in from another address.
func TestSprayingNamesFromOneAddressIsLimitedButNotTheOwnerElsewhere(t *testing.T) {
	t.Parallel()
	h := newAuthHarness(t, behindProxy())
	user, pw := h.setupAdmin()
	for i := 1; i <= 30; i++ {
		a, _ := h.loginWith(xff("203.0.113.66"), fmt.Sprintf("user-%d", i), "wrong-password")
		switch {
		case i <= 20 && a.status != 401:
			t.Fatalf("name %d = %d %s, want 401", i, a.status, a.body)
		case i > 20 && (a.status != 429 || a.body != `{"error":"Too many failed login attempts. Try again in 5 seconds."}` || a.retryAfter != "5"):
			t.Fatalf("name %d = %d %q %s, want 429 with the retry-after message", i, a.status, a.retryAfter, a.body)
		}
	}
	if a, c := h.loginWith(xff("198.51.100.20"), user, pw); a.status != 200 || c == nil {
		t.Fatalf("the owner from another address = %d %s, want a session", a.status, a.body)
	}
}

// Bad API tokens are limited per client address under the same rule.
func TestBadTokensAreLimitedPerClientBehindATrustedProxy(t *testing.T) {
	t.Parallel()
	h := newAuthHarness(t, behindProxy())
	h.setupAdmin()
	h.headers = map[string]string{"Authorization": "Bearer bth_not-a-real-token", "X-Forwarded-For": "203.0.113.5"}
	for i := 1; i <= 10; i++ {
		if status, _ := h.do("GET", "/api/environments", nil); status != 401 {
			t.Fatalf("bad token %d = %d, want 401", i, status)
		}
	}
	if status, _ := h.do("GET", "/api/environments", nil); status != 429 {
		t.Fatalf("11th bad token = %d, want 429", status)
	}
	h.headers["X-Forwarded-For"] = "203.0.113.6"
	if status, body := h.do("GET", "/api/environments", nil); status != 401 {
		t.Fatalf("bad token of another client = %d %s, want 401", status, body)
	}
}

// The session cookie is Secure when a trusted proxy says the client used
// HTTPS, and only then: a loopback peer is no proxy unless it is listed.
func TestSecureCookieTrustsOnlyTrustedProxies(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		opts       apitest.Options
		wantSecure bool
	}{
		{"no trusted proxy", apitest.Options{}, false},
		{"loopback trusted", behindProxy(), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newAuthHarness(t, tc.opts)
			user, pw := h.setupAdmin()
			a, c := h.loginWith(map[string]string{"X-Forwarded-Proto": "https"}, user, pw)
			if a.status != 200 || c == nil {
				t.Fatalf("login = %d %s", a.status, a.body)
			}
			if c.Secure != tc.wantSecure {
				t.Errorf("cookie Secure = %v, want %v", c.Secure, tc.wantSecure)
			}
		})
	}
}
