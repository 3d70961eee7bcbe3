package api_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/apitest"
	"github.com/berth-dev/berth/server/internal/license"
	"github.com/berth-dev/berth/shared/enginetest"
)

// oidcEnv is the real provider (Dex) that scripts/test-env.sh starts.
type oidcEnv struct {
	issuer, clientID, clientSecret, port string
	logins                               map[string]string // user → "email:password"
}

func requireOIDC(t *testing.T) oidcEnv {
	t.Helper()
	e := oidcEnv{issuer: os.Getenv("BERTH_TEST_OIDC_ISSUER"), clientID: os.Getenv("BERTH_TEST_OIDC_CLIENT_ID"),
		clientSecret: os.Getenv("BERTH_TEST_OIDC_CLIENT_SECRET"), port: os.Getenv("BERTH_TEST_OIDC_REDIRECT_PORT"),
		logins: map[string]string{}}
	enginetest.RequireEnv(t, "OIDC provider", "BERTH_TEST_OIDC_ISSUER", "BERTH_TEST_OIDC_LOGINS")
	for _, pair := range strings.Split(os.Getenv("BERTH_TEST_OIDC_LOGINS"), ",") {
		email, _, _ := strings.Cut(pair, ":")
		user, _, _ := strings.Cut(email, "@")
		e.logins[user] = pair
	}
	return e
}

// browser is a client that keeps cookies and follows redirects like a browser.
func browser(t *testing.T) *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, Timeout: 30 * time.Second}
}

var formAction = regexp.MustCompile(`<form[^>]*method="post"[^>]*action="([^"]+)"`)

// signIn runs the whole redirect flow from start (Berth's initiate URL, or a
// provider URL) through the provider's login form, and returns the final
// response (its body read) of the browser.
func signIn(t *testing.T, c *http.Client, start, login string) (*http.Response, string) {
	t.Helper()
	resp, err := c.Get(start)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := formAction.FindSubmatch(page)
	if resp.StatusCode != 200 || m == nil {
		return resp, string(page) // no login form: the provider refused, or Berth answered
	}
	action, err := resp.Request.URL.Parse(html.UnescapeString(string(m[1])))
	if err != nil {
		t.Fatal(err)
	}
	email, password, _ := strings.Cut(login, ":")
	resp, err = c.PostForm(action.String(), url.Values{"login": {email}, "password": {password}})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(body)
}

func TestOIDCSignInAgainstARealProvider(t *testing.T) {
	env := requireOIDC(t)
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	h := newAuthHarness(t, apitest.Options{Addr: "127.0.0.1:" + env.port, LicenseKeys: []ed25519.PublicKey{pub}})
	root, rootPW := h.setupAdmin()
	admin := h.login(root, rootPW)
	h.as(admin)
	doc, _ := license.Sign(license.License{ID: "t", Customer: "t", Edition: "enterprise", IssuedAt: time.Now()}, priv)
	h.must(200, "POST", "/api/license", map[string]string{"license": doc}, nil)
	var roles []struct {
		ID   int64
		Name string
	}
	h.must(200, "GET", "/api/roles", nil, &roles)
	operator := int64(0)
	for _, r := range roles {
		if r.Name == "Operator" {
			operator = r.ID
		}
	}

	callback := "http://127.0.0.1:" + env.port + "/api/auth/oidc/callback"
	var prov struct {
		ID           int64
		ClientSecret string
	}
	h.must(201, "POST", "/api/auth/oidc", map[string]any{"name": "dex", "enabled": true, "issuerUrl": env.issuer,
		"clientId": env.clientID, "clientSecret": env.clientSecret, "redirectUri": callback,
		"scopes": "openid profile email groups", "adminClaim": "groups", "adminValue": "berth-admins",
		"roleMappings": []map[string]any{{"claimValue": "ops", "roleId": operator}}}, &prov)
	if prov.ClientSecret != "********" {
		t.Errorf("client secret answered as %q, want the mask", prov.ClientSecret)
	}
	var test struct {
		Success   bool
		Issuer    string
		Endpoints map[string]string
	}
	h.must(200, "POST", fmt.Sprintf("/api/auth/oidc/%d/test", prov.ID), nil, &test)
	if !test.Success || test.Issuer != env.issuer || test.Endpoints["authorization"] == "" || test.Endpoints["userinfo"] == "" {
		t.Errorf("test = %+v", test)
	}
	var providers struct {
		Providers []struct{ ID, Type, InitiateURL string }
	}
	h.must(200, "GET", "/api/auth/providers", nil, &providers)
	initiate := ""
	for _, p := range providers.Providers {
		if p.Type == "oidc" {
			initiate = h.url + p.InitiateURL
		}
	}
	if initiate == "" {
		t.Fatalf("providers = %+v", providers)
	}
	session := func(c *http.Client) map[string]any {
		t.Helper()
		resp, err := c.Get(h.url + "/api/auth/session")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var s map[string]any
		_ = jsonDecode(resp.Body, &s)
		return s
	}
	userOf := func(s map[string]any) map[string]any { u, _ := s["user"].(map[string]any); return u }

	t.Run("alice signs in and is admin by claim", func(t *testing.T) {
		c := browser(t)
		resp, body := signIn(t, c, initiate+"?redirect=/containers", env.logins["alice"])
		if resp.Request.URL.Path != "/containers" {
			t.Fatalf("landed on %s (%d %.200s), want /containers", resp.Request.URL, resp.StatusCode, body)
		}
		u := userOf(session(c))
		if u["username"] != "alice" || u["isAdmin"] != true || u["provider"] != "oidc" || u["email"] != "alice@berth.test" || u["displayName"] != "Alice Admin" {
			t.Errorf("alice's session = %v", u)
		}
		var users []map[string]any
		h.as(admin)
		h.must(200, "GET", "/api/users", nil, &users)
		found := false
		for _, x := range users {
			if x["username"] == "alice" {
				found = x["authProvider"] == "oidc:dex"
			}
		}
		if !found {
			t.Errorf("no local user alice with authProvider oidc:dex in %v", users)
		}
	})

	var bobID float64
	t.Run("bob gets the mapped role, which goes when the mapping no longer matches", func(t *testing.T) {
		c := browser(t)
		signIn(t, c, initiate, env.logins["bob"])
		u := userOf(session(c))
		if u["username"] != "bob" || u["isAdmin"] != false {
			t.Fatalf("bob's session = %v", u)
		}
		bobID = u["id"].(float64)
		rolesOf := func() []map[string]any {
			var a []map[string]any
			h.as(admin)
			h.must(200, "GET", fmt.Sprintf("/api/users/%d/roles", int64(bobID)), nil, &a)
			return a
		}
		if a := rolesOf(); len(a) != 1 || a[0]["roleName"] != "Operator" || a[0]["source"] != fmt.Sprintf("oidc:%d", prov.ID) {
			t.Fatalf("bob's roles = %v", a)
		}
		h.must(200, "PATCH", fmt.Sprintf("/api/auth/oidc/%d", prov.ID), map[string]any{
			"roleMappings": []map[string]any{{"claimValue": "developers", "roleId": operator}}}, nil)
		signIn(t, browser(t), initiate, env.logins["bob"])
		if a := rolesOf(); len(a) != 0 {
			t.Errorf("after the mapping changed bob still has %v", a)
		}
	})

	t.Run("a replayed state fails", func(t *testing.T) {
		c := browser(t)
		var cb *url.URL
		c.CheckRedirect = func(req *http.Request, _ []*http.Request) error {
			if req.URL.Path == "/api/auth/oidc/callback" {
				cb = req.URL
				return http.ErrUseLastResponse
			}
			return nil
		}
		signIn(t, c, initiate, env.logins["alice"])
		if cb == nil {
			t.Fatal("never reached the callback")
		}
		c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		first, err := c.Get(cb.String())
		if err != nil {
			t.Fatal(err)
		}
		first.Body.Close()
		second, err := c.Get(cb.String())
		if err != nil {
			t.Fatal(err)
		}
		second.Body.Close()
		if loc := first.Header.Get("Location"); first.StatusCode != 302 || strings.HasPrefix(loc, "/login") {
			t.Errorf("first use of the callback = %d → %s", first.StatusCode, loc)
		}
		if loc := second.Header.Get("Location"); second.StatusCode != 302 || !strings.Contains(loc, url.QueryEscape("Invalid or expired OIDC state")) {
			t.Errorf("replay = %d → %s, want the state error", second.StatusCode, loc)
		}
	})

	t.Run("the provider's refusal is shown with its description", func(t *testing.T) {
		c := browser(t)
		c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		resp, err := c.Get(callback + "?error=access_denied&error_description=" + url.QueryEscape("The user cancelled\n the sign-in"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		loc, _ := url.Parse(resp.Header.Get("Location"))
		if got := loc.Query().Get("error"); resp.StatusCode != 302 || loc.Path != "/login" ||
			got != "The identity provider answered access_denied: The user cancelled the sign-in" {
			t.Errorf("refusal = %d → %s (error %q)", resp.StatusCode, loc, got)
		}
	})

	t.Run("a wrong nonce fails", func(t *testing.T) {
		c := browser(t)
		c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		resp, err := c.Get(initiate)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		authURL, _ := url.Parse(resp.Header.Get("Location"))
		q := authURL.Query()
		if len(q.Get("nonce")) != 22 || len(q.Get("state")) != 43 || q.Get("code_challenge_method") != "S256" || len(q.Get("code_challenge")) != 43 {
			t.Errorf("authorization request = %v (nonce 16 B, state 32 B, S256 challenge expected)", q)
		}
		q.Set("nonce", "tampered-nonce-value")
		authURL.RawQuery = q.Encode()
		c.CheckRedirect = nil
		final, _ := signIn(t, c, authURL.String(), env.logins["alice"])
		if final.Request.URL.Path != "/login" || !strings.Contains(final.Request.URL.RawQuery, url.QueryEscape("Invalid OIDC nonce")) {
			t.Errorf("wrong nonce landed on %s", final.Request.URL)
		}
		if s := session(c); s["authenticated"] != false {
			t.Errorf("a wrong nonce opened a session: %v", s)
		}
	})

	t.Run("a missing username claim fails", func(t *testing.T) {
		h.as(admin)
		h.must(200, "PATCH", fmt.Sprintf("/api/auth/oidc/%d", prov.ID), map[string]any{"usernameClaim": "no_such_claim"}, nil)
		defer h.must(200, "PATCH", fmt.Sprintf("/api/auth/oidc/%d", prov.ID), map[string]any{"usernameClaim": "preferred_username"}, nil)
		final, _ := signIn(t, browser(t), initiate, env.logins["alice"])
		if !strings.Contains(final.Request.URL.RawQuery, url.QueryEscape("Username claim not found in token")) {
			t.Errorf("landed on %s", final.Request.URL)
		}
	})

	t.Run("a redirect the provider does not know is refused by the provider", func(t *testing.T) {
		h.as(admin)
		var other struct{ ID int64 }
		h.must(201, "POST", "/api/auth/oidc", map[string]any{"name": "dex-wrong-redirect", "enabled": true,
			"issuerUrl": env.issuer, "clientId": env.clientID, "clientSecret": env.clientSecret,
			"redirectUri": "http://localhost:1/api/auth/oidc/callback"}, &other)
		c := browser(t)
		final, body := signIn(t, c, fmt.Sprintf("%s/api/auth/oidc/%d/initiate", h.url, other.ID), env.logins["alice"])
		if final.StatusCode != 400 || !strings.Contains(body, "Unregistered redirect_uri") {
			t.Errorf("unregistered redirect = %d %.300s", final.StatusCode, body)
		}
		if s := session(c); s["authenticated"] != false {
			t.Errorf("session opened: %v", s)
		}
	})

	t.Run("an unreachable discovery document is reported", func(t *testing.T) {
		h.as(admin)
		var broken struct{ ID int64 }
		h.must(201, "POST", "/api/auth/oidc", map[string]any{"name": "gone", "enabled": true, "issuerUrl": "http://127.0.0.1:1/dex",
			"clientId": "x", "clientSecret": "y", "redirectUri": callback}, &broken)
		var res struct {
			Success bool
			Error   string
		}
		h.must(200, "POST", fmt.Sprintf("/api/auth/oidc/%d/test", broken.ID), nil, &res)
		if res.Success || res.Error != "Failed to fetch OIDC discovery document" {
			t.Errorf("test of an unreachable issuer = %+v", res)
		}
		status, body := h.do("GET", fmt.Sprintf("/api/auth/oidc/%d/initiate", broken.ID), nil)
		if status != 500 || !strings.Contains(string(body), "Failed to fetch OIDC discovery document") {
			t.Errorf("initiate = %d %s", status, body)
		}
	})

	t.Run("a local account is never taken over", func(t *testing.T) {
		h.as(admin)
		h.must(200, "DELETE", fmt.Sprintf("/api/users/%d", int64(bobID)), nil, nil)
		h.must(201, "POST", "/api/users", map[string]any{"username": "bob", "password": "local-bob-password"}, nil)
		c := browser(t)
		final, _ := signIn(t, c, initiate, env.logins["bob"])
		if final.Request.URL.Path != "/login" || session(c)["authenticated"] != false {
			t.Errorf("OIDC bob took over the local account: landed on %s", final.Request.URL)
		}
	})
}
