package api_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/apitest"
	"github.com/berth-dev/berth/server/internal/license"
	"github.com/berth-dev/berth/shared/clocktest"
)

// setupAdmin creates the first admin with the setup token from the data
// directory and returns its credentials.
func (h *harness) setupAdmin() (user, password string) {
	h.t.Helper()
	tok, err := os.ReadFile(filepath.Join(h.dataDir, "setup-token"))
	if err != nil {
		h.t.Fatalf("setup token: %v", err)
	}
	h.headers["X-Setup-Token"] = strings.TrimSpace(string(tok))
	defer delete(h.headers, "X-Setup-Token")
	h.must(201, "POST", "/api/users", map[string]any{"username": "root", "password": "root-password-1"}, nil)
	return "root", "root-password-1"
}

// login signs in and returns the session cookie.
func (h *harness) login(user, password string) *http.Cookie {
	h.t.Helper()
	body, _ := json.Marshal(map[string]string{"username": user, "password": password})
	resp, err := h.http.Post(h.url+"/api/auth/login", "application/json", bytes.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		h.t.Fatalf("login %s = %d %s", user, resp.StatusCode, data)
	}
	for _, c := range resp.Cookies() {
		if c.Name == "dockhand_session" {
			return c
		}
	}
	h.t.Fatalf("login %s: no dockhand_session cookie", user)
	return nil
}

func (h *harness) as(c *http.Cookie) {
	h.headers = map[string]string{"Cookie": c.Name + "=" + c.Value}
}

func TestFirstStartIsSecureAndNeedsTheSetupToken(t *testing.T) {
	t.Parallel()
	h := newAuthHarness(t, apitest.Options{})
	var sess map[string]any
	h.must(200, "GET", "/api/auth/session", nil, &sess)
	if sess["authenticated"] != false || sess["authEnabled"] != true || sess["setupRequired"] != true {
		t.Fatalf("session before setup = %v", sess)
	}
	for _, path := range []string{"/api/environments", "/api/containers?env=1", "/api/users"} {
		status, body := h.do("GET", path, nil)
		if status != 401 || !strings.Contains(string(body), `"error":"Unauthorized"`) || !strings.Contains(string(body), `"message":"Authentication required"`) {
			t.Errorf("GET %s before setup = %d %s, want 401 Unauthorized", path, status, body)
		}
	}
	if status, _ := h.do("POST", "/api/users", map[string]any{"username": "x", "password": "xxxxxxxxxx"}); status != 401 {
		t.Errorf("first admin without the setup token = %d, want 401", status)
	}
	h.headers["X-Setup-Token"] = "not-the-token"
	if status, _ := h.do("POST", "/api/users", map[string]any{"username": "x", "password": "xxxxxxxxxx"}); status != 401 {
		t.Errorf("first admin with a wrong setup token = %d, want 401", status)
	}
	delete(h.headers, "X-Setup-Token")
	user, pw := h.setupAdmin()
	// The token is spent: the same request now needs a session.
	tok := "irrelevant"
	h.headers["X-Setup-Token"] = tok
	if status, _ := h.do("POST", "/api/users", map[string]any{"username": "y", "password": "yyyyyyyyyy"}); status != 401 {
		t.Errorf("second setup = %d, want 401", status)
	}
	delete(h.headers, "X-Setup-Token")
	h.as(h.login(user, pw))
	var u map[string]any
	h.must(200, "GET", "/api/users/1", nil, &u)
	if u["isAdmin"] != true || u["authProvider"] != "local" || u["username"] != "root" {
		t.Errorf("first user = %v", u)
	}
	if _, ok := u["passwordHash"]; ok {
		t.Error("user object carries the password hash")
	}
}

func TestLoginSessionCookieAndLogout(t *testing.T) {
	t.Parallel()
	h := newAuthHarness(t, apitest.Options{})
	user, pw := h.setupAdmin()
	c := h.login(user, pw)
	if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/" || c.Secure || c.MaxAge < 86000 {
		t.Errorf("cookie = %+v, want HttpOnly, SameSite=Lax, Path=/, not Secure over http, ~1 day", c)
	}
	h.as(c)
	var sess struct {
		Authenticated, AuthEnabled bool
		User                       struct {
			ID          int64
			Username    string
			IsAdmin     bool
			Provider    string
			Permissions map[string][]string
		}
	}
	h.must(200, "GET", "/api/auth/session", nil, &sess)
	if !sess.Authenticated || !sess.AuthEnabled || sess.User.Username != user || !sess.User.IsAdmin ||
		sess.User.Provider != "local" || len(sess.User.Permissions["containers"]) == 0 {
		t.Fatalf("session = %+v", sess)
	}
	h.must(200, "GET", "/api/environments", nil, nil)
	h.must(200, "POST", "/api/auth/logout", nil, nil)
	if status, _ := h.do("GET", "/api/environments", nil); status != 401 {
		t.Errorf("after logout the old cookie still works: %d", status)
	}
}

func TestUnknownUserAndWrongPasswordAnswerIdentically(t *testing.T) {
	t.Parallel()
	h := newAuthHarness(t, apitest.Options{})
	h.setupAdmin()
	s1, b1 := h.do("POST", "/api/auth/login", map[string]string{"username": "root", "password": "wrong-password"})
	s2, b2 := h.do("POST", "/api/auth/login", map[string]string{"username": "nobody", "password": "wrong-password"})
	if s1 != 401 || s2 != 401 || string(b1) != string(b2) || !strings.Contains(string(b1), "Invalid username or password") {
		t.Fatalf("wrong password = %d %s; unknown user = %d %s", s1, b1, s2, b2)
	}
	if status, _ := h.do("POST", "/api/auth/login", map[string]string{"username": "root"}); status != 400 {
		t.Errorf("login without password = %d, want 400", status)
	}
}

// The spec allows 5 failed attempts per IP and username, then 429 with a
// retry-after message: five wrong passwords are answered 401 each, the sixth
// attempt (even with the right password) 429 with a Retry-After header.
func TestLoginAllowsFiveFailedAttemptsThenAnswers429(t *testing.T) {
	t.Parallel()
	h := newAuthHarness(t, apitest.Options{})
	user, pw := h.setupAdmin()
	for i := 1; i <= 5; i++ {
		status, body := h.do("POST", "/api/auth/login", map[string]string{"username": user, "password": "wrong-password"})
		if status != 401 || strings.TrimSpace(string(body)) != `{"error":"Invalid username or password"}` {
			t.Fatalf("wrong password %d = %d %s, want 401 Invalid username or password", i, status, body)
		}
	}
	resp := h.loginAttempt(`{"username":"root","password":"` + pw + `"}`)
	if resp.status != 429 || resp.retryAfter != "5" ||
		resp.body != `{"error":"Too many failed login attempts. Try again in 5 seconds."}` {
		t.Fatalf("sixth attempt, right password = %d Retry-After %q %s; want 429, 5, the retry-after message",
			resp.status, resp.retryAfter, resp.body)
	}
}

// loginAnswer is a login response's status, Retry-After header and body.
type loginAnswer struct {
	status     int
	retryAfter string
	body       string
}

// loginAttempt sends a login request with body.
func (h *harness) loginAttempt(body string) loginAnswer {
	h.t.Helper()
	resp, err := h.http.Post(h.url+"/api/auth/login", "application/json", strings.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return loginAnswer{resp.StatusCode, resp.Header.Get("Retry-After"), strings.TrimSpace(string(data))}
}

func TestLoginLockoutBacksOffFrom5To60Seconds(t *testing.T) {
	t.Parallel()
	clock := clocktest.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	h := newAuthHarness(t, apitest.Options{Now: clock.Now})
	user, pw := h.setupAdmin()
	bad := map[string]string{"username": user, "password": "wrong-password"}
	for i := 1; i <= 5; i++ {
		if status, _ := h.do("POST", "/api/auth/login", bad); status != 401 {
			t.Fatalf("failure %d = %d, want 401", i, status)
		}
	}
	wantLock := func(step string, secs int) {
		t.Helper()
		resp := h.loginAttempt(`{"username":"root","password":"wrong-password"}`)
		if resp.status != 429 || resp.retryAfter != fmt.Sprint(secs) ||
			!strings.Contains(resp.body, fmt.Sprintf("Try again in %d seconds", secs)) {
			t.Fatalf("%s = %d Retry-After %q %s, want 429 after %d s", step, resp.status, resp.retryAfter, resp.body, secs)
		}
	}
	wantLock("attempt after the 5th failure", 5)
	// While locked even the right password is refused.
	if status, _ := h.do("POST", "/api/auth/login", map[string]string{"username": user, "password": pw}); status != 429 {
		t.Fatalf("right password while locked = %d, want 429", status)
	}
	// Another IP+username pair is not affected: another username here.
	if status, _ := h.do("POST", "/api/auth/login", map[string]string{"username": "other", "password": "x"}); status != 401 {
		t.Fatalf("other username while root is locked = %d, want 401", status)
	}
	prev := 5
	for _, secs := range []int{10, 20, 40, 60, 60} {
		clock.Advance(time.Duration(prev)*time.Second - time.Millisecond)
		if status, _ := h.do("POST", "/api/auth/login", bad); status != 429 {
			t.Fatalf("1 ms before the %d s lock ends = %d, want 429", prev, status)
		}
		clock.Advance(time.Millisecond) // the previous lock ends
		// The failure after a lock is answered as such, and locks again, longer.
		if status, _ := h.do("POST", "/api/auth/login", bad); status != 401 {
			t.Fatalf("failure after the %d s lock = %d, want 401", prev, status)
		}
		wantLock(fmt.Sprintf("attempt after the failure after the %d s lock", prev), secs)
		prev = secs
	}
	clock.Advance(60 * time.Second)
	h.login(user, pw) // success clears the count
	for i := 1; i <= 5; i++ {
		if status, _ := h.do("POST", "/api/auth/login", bad); status != 401 {
			t.Fatalf("after success, failure %d = %d, want 401", i, status)
		}
	}
}

func TestLocalLoginCanBeDisabled(t *testing.T) {
	t.Parallel()
	h := newAuthHarness(t, apitest.Options{DisableLocalLogin: true})
	user, pw := h.setupAdmin()
	status, body := h.do("POST", "/api/auth/login", map[string]string{"username": user, "password": pw})
	if status != 403 || !strings.Contains(string(body), "Local login is disabled") {
		t.Fatalf("local login with DISABLE_LOCAL_LOGIN = %d %s", status, body)
	}
	var p struct {
		Providers []struct{ ID string }
	}
	h.must(200, "GET", "/api/auth/providers", nil, &p)
	for _, x := range p.Providers {
		if x.ID == "local" {
			t.Error("providers list local while it is disabled")
		}
	}
}

func TestAPITokensAreShownOnceAndWorkAsBearer(t *testing.T) {
	t.Parallel()
	h := newAuthHarness(t, apitest.Options{})
	user, pw := h.setupAdmin()
	h.as(h.login(user, pw))
	// A wrong password is 403 (a 401 would make cookie clients sign in
	// again); a missing one is 400.
	if status, _ := h.do("POST", "/api/auth/tokens", map[string]string{"name": "ci", "password": "wrong"}); status != 403 {
		t.Errorf("token with a wrong password = %d, want 403", status)
	}
	if status, body := h.do("POST", "/api/auth/tokens", map[string]string{"name": "ci"}); status != 400 || !strings.Contains(string(body), "Password is required") {
		t.Errorf("token without a password = %d %s, want 400 Password is required", status, body)
	}
	var created struct {
		ID          int64
		Token       string
		TokenPrefix string
	}
	h.must(201, "POST", "/api/auth/tokens", map[string]string{"name": "ci", "password": pw}, &created)
	if !strings.HasPrefix(created.Token, "bth_") || !strings.HasPrefix(created.Token, created.TokenPrefix) {
		t.Fatalf("created token = %+v", created)
	}
	status, list := h.do("GET", "/api/auth/tokens", nil)
	if status != 200 || strings.Contains(string(list), created.Token) || !strings.Contains(string(list), created.TokenPrefix) {
		t.Fatalf("token list = %d %s", status, list)
	}
	h.headers = map[string]string{"Authorization": "Bearer " + created.Token}
	h.must(200, "GET", "/api/environments", nil, nil)
	// A bearer request is not subject to the cross-site check.
	h.headers["Origin"] = "https://elsewhere.example"
	h.must(201, "POST", "/api/environments", map[string]any{"name": "via-token", "socketPath": "/x.sock"}, nil)
	h.headers = map[string]string{"Authorization": "Bearer " + created.Token}
	h.must(200, "DELETE", fmt.Sprintf("/api/auth/tokens/%d", created.ID), nil, nil)
	if status, _ := h.do("GET", "/api/environments", nil); status != 401 {
		t.Errorf("revoked token = %d, want 401", status)
	}
}

func TestRepeatedBadTokensFromOneIPAreThrottled(t *testing.T) {
	t.Parallel()
	h := newAuthHarness(t, apitest.Options{})
	h.setupAdmin()
	h.headers = map[string]string{"Authorization": "Bearer bth_not-a-real-token"}
	for i := 1; i <= 10; i++ {
		if status, _ := h.do("GET", "/api/environments", nil); status != 401 {
			t.Fatalf("bad token %d = %d, want 401", i, status)
		}
	}
	if status, _ := h.do("GET", "/api/environments", nil); status != 429 {
		t.Fatalf("11th bad token = %d, want 429", status)
	}
}

func TestCrossSiteCookieRequestsAreRefused(t *testing.T) {
	t.Parallel()
	h := newAuthHarness(t, apitest.Options{})
	user, pw := h.setupAdmin()
	h.as(h.login(user, pw))
	cookie := h.headers["Cookie"]
	cases := []struct {
		origin, referer string
		want            int
	}{
		{"https://evil.example", "", 403},
		{"", "https://evil.example/page", 403},
		{h.url, "", 201},
		{"", h.url + "/settings", 201},
		{"", "", 201}, // scripts send neither
	}
	for i, c := range cases {
		h.headers = map[string]string{"Cookie": cookie}
		if c.origin != "" {
			h.headers["Origin"] = c.origin
		}
		if c.referer != "" {
			h.headers["Referer"] = c.referer
		}
		status, body := h.do("POST", "/api/environments", map[string]any{"name": fmt.Sprint("x", i), "socketPath": "/x.sock"})
		if status != c.want {
			t.Errorf("origin %q referer %q = %d %s, want %d", c.origin, c.referer, status, body, c.want)
		}
	}
	// Reads are not refused.
	h.headers = map[string]string{"Cookie": cookie, "Origin": "https://evil.example"}
	h.must(200, "GET", "/api/environments", nil, nil)
}

func TestEnvironmentListIsFilteredForNonAdmins(t *testing.T) {
	t.Parallel()
	h := newAuthHarness(t, apitest.Options{})
	user, pw := h.setupAdmin()
	h.as(h.login(user, pw))
	var env2 struct{ ID int64 }
	h.must(201, "POST", "/api/environments", map[string]any{"name": "second", "socketPath": "/x.sock"}, &env2)
	var bob struct{ ID int64 }
	h.must(201, "POST", "/api/users", map[string]any{"username": "bob", "password": "bob-password-1"}, &bob)
	var roles []struct {
		ID   int64
		Name string
	}
	h.must(200, "GET", "/api/roles", nil, &roles)
	var viewer int64
	for _, r := range roles {
		if r.Name == "Viewer" {
			viewer = r.ID
		}
	}
	h.must(201, "POST", fmt.Sprintf("/api/users/%d/roles", bob.ID), map[string]any{"roleId": viewer, "environmentId": env2.ID}, nil)

	h.as(h.login("bob", "bob-password-1"))
	var envs []struct{ ID int64 }
	h.must(200, "GET", "/api/environments", nil, &envs)
	if len(envs) != 1 || envs[0].ID != env2.ID {
		t.Fatalf("bob sees %+v, want only environment %d", envs, env2.ID)
	}
	status, body := h.do("GET", "/api/containers?env=1", nil)
	if status != 403 || !strings.Contains(string(body), "Access denied to this environment") {
		t.Errorf("bob on environment 1 = %d %s", status, body)
	}
	status, body = h.do("POST", "/api/users", map[string]any{"username": "eve", "password": "eve-password-1", "isAdmin": true})
	if status != 403 || !strings.Contains(string(body), "Permission denied") {
		t.Errorf("viewer creating an admin = %d %s", status, body)
	}
}

func TestAuthCanBeDisabledByAnAdmin(t *testing.T) {
	t.Parallel()
	h := newAuthHarness(t, apitest.Options{})
	user, pw := h.setupAdmin()
	h.as(h.login(user, pw))
	var st map[string]any
	h.must(200, "PUT", "/api/auth/settings", map[string]any{"authEnabled": false}, &st)
	if st["authEnabled"] != false {
		t.Fatalf("settings = %v", st)
	}
	h.headers = map[string]string{}
	h.must(200, "GET", "/api/environments", nil, nil)
	var sess map[string]any
	h.must(200, "GET", "/api/auth/session", nil, &sess)
	if sess["authenticated"] != false || sess["authEnabled"] != false {
		t.Errorf("session with auth disabled = %v", sess)
	}
}

func TestTheLastAdminStays(t *testing.T) {
	t.Parallel()
	h := newAuthHarness(t, apitest.Options{})
	user, pw := h.setupAdmin()
	h.as(h.login(user, pw))
	for _, req := range []struct {
		method string
		body   any
	}{{"PUT", map[string]any{"isAdmin": false}}, {"PUT", map[string]any{"isActive": false}}, {"DELETE", nil}} {
		// 409 without confirmDisableAuth (TestLastAdminNeedsConfirmDisableAuth
		// has the confirmed path).
		if status, body := h.do(req.method, "/api/users/1", req.body); status != 409 || !strings.Contains(string(body), "This is the last admin user") {
			t.Errorf("%s of the last admin = %d %s, want 409", req.method, status, body)
		}
	}
	if status, _ := h.do("POST", "/api/users", map[string]any{"username": "short", "password": "1234567"}); status != 400 {
		t.Errorf("7-character password accepted")
	}
}

func TestNoSecretInResponsesLogsOrTheDatabaseFile(t *testing.T) {
	t.Parallel()
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	h := newAuthHarness(t, apitest.Options{LicenseKeys: []ed25519.PublicKey{pub}})
	user, pw := h.setupAdmin()
	h.as(h.login(user, pw))
	doc, _ := license.Sign(license.License{ID: "t", Customer: "t", Edition: "enterprise", IssuedAt: time.Now()}, priv)
	h.must(200, "POST", "/api/license", map[string]string{"license": doc}, nil)
	secrets := map[string]string{
		"admin password": pw,
		"user password":  "Sup3r-secret-user-pw",
		"TLS key":        "-----BEGIN PRIVATE KEY-----MIIEvQ-unique-tls-key-material",
		"agent token":    "agent-token-7f3e9c2a1b",
		"client secret":  "oidc-client-secret-4d2c8e",
		"bind password":  "ldap-bind-password-91ab3f",
	}
	var bodies []string
	record := func(method, path string, body any) {
		t.Helper()
		status, b := h.do(method, path, body)
		if status >= 400 {
			t.Fatalf("%s %s = %d %s", method, path, status, b)
		}
		bodies = append(bodies, string(b))
	}
	// Responses that show a secret by design (the token's creation, and the
	// create-environment echo of the spec) are made but not collected.
	var tok struct{ Token string }
	h.must(201, "POST", "/api/auth/tokens", map[string]string{"name": "t", "password": pw}, &tok)
	secrets["API token"] = tok.Token
	h.must(201, "POST", "/api/environments", map[string]any{"name": "tls", "connectionType": "direct", "host": "192.0.2.7",
		"protocol": "https", "tlsCert": "cert", "tlsKey": secrets["TLS key"], "agentToken": secrets["agent token"]}, nil)
	record("POST", "/api/users", map[string]any{"username": "carol", "password": secrets["user password"]})
	record("POST", "/api/auth/oidc", map[string]any{"name": "idp", "issuerUrl": "https://idp.example", "clientId": "c",
		"clientSecret": secrets["client secret"], "redirectUri": "https://berth.example/api/auth/oidc/callback"})
	record("PATCH", "/api/auth/oidc/1", map[string]any{"clientSecret": "********", "enabled": true})
	record("POST", "/api/auth/ldap", map[string]any{"name": "dir", "serverUrl": "ldap://127.0.0.1:1", "baseDn": "dc=x",
		"bindDn": "cn=reader,dc=x", "bindPassword": secrets["bind password"]})
	if p, err := h.store.GetOIDCProvider(context.Background(), 1); err != nil || p.ClientSecret != secrets["client secret"] {
		t.Errorf("a PATCH with the mask changed the stored client secret: %q %v", p.ClientSecret, err)
	}
	record("PUT", "/api/users/2", map[string]any{"password": secrets["user password"] + "2"})
	secrets["changed password"] = secrets["user password"] + "2"
	h.headers = map[string]string{"Authorization": "Bearer " + tok.Token}
	for _, path := range []string{"/api/users", "/api/users/2", "/api/environments", "/api/environments/2", "/api/auth/oidc", "/api/auth/oidc/1", "/api/auth/ldap", "/api/auth/ldap/1",
		"/api/auth/tokens", "/api/auth/session", "/api/roles", "/api/users/2/roles"} {
		record("GET", path, nil)
	}
	h.headers = map[string]string{}
	record("POST", "/api/auth/login", map[string]string{"username": "carol", "password": secrets["changed password"]})
	h.do("POST", "/api/auth/login", map[string]string{"username": "carol", "password": "wrong-" + secrets["user password"]})

	var files []string
	for _, suffix := range []string{"", "-wal", "-shm"} {
		data, err := os.ReadFile(filepath.Join(h.dataDir, "berth.db"+suffix))
		if err == nil {
			files = append(files, string(data))
		}
	}
	for name, secret := range secrets {
		for i, b := range bodies {
			if strings.Contains(b, secret) {
				t.Errorf("%s appears in response %d: %s", name, i, b)
			}
		}
		if strings.Contains(h.logs.String(), secret) {
			t.Errorf("%s appears in the log", name)
		}
		for i, f := range files {
			if strings.Contains(f, secret) {
				t.Errorf("%s appears in plaintext in database file %d", name, i)
			}
		}
	}
	if len(files) == 0 || !strings.Contains(h.logs.String(), "/api/auth/login") {
		t.Fatal("the test saw no database file or no request log: it would prove nothing")
	}
}

func TestJobsAreReadableByTheirStarterOnly(t *testing.T) {
	t.Parallel()
	h := newAuthHarness(t, apitest.Options{})
	user, pw := h.setupAdmin()
	admin := h.login(user, pw)
	h.as(admin)
	var viewer struct{ ID int64 }
	h.must(201, "POST", "/api/users", map[string]any{"username": "vera", "password": "vera-password-1"}, &viewer)
	var roles []struct {
		ID   int64
		Name string
	}
	h.must(200, "GET", "/api/roles", nil, &roles)
	for _, r := range roles {
		if r.Name == "Operator" {
			h.must(201, "POST", fmt.Sprintf("/api/users/%d/roles", viewer.ID), map[string]any{"roleId": r.ID}, nil)
		}
	}
	var job struct{ JobID string }
	h.must(200, "POST", "/api/images/pull?env=1", map[string]any{"image": "127.0.0.1:1/nothing:here", "scanAfterPull": false}, &job)

	h.as(h.login("vera", "vera-password-1"))
	if status, _ := h.do("GET", "/api/jobs/"+job.JobID, nil); status != 404 {
		t.Errorf("another user's job = %d, want 404", status)
	}
	var own struct{ JobID string }
	h.must(200, "POST", "/api/images/pull?env=1", map[string]any{"image": "127.0.0.1:1/nothing:here", "scanAfterPull": false}, &own)
	h.must(200, "GET", "/api/jobs/"+own.JobID, nil, nil)
	h.as(admin)
	h.must(200, "GET", "/api/jobs/"+own.JobID, nil, nil) // admins read every job
	if status, _ := h.do("GET", "/api/jobs/no-such-job", nil); status != 404 {
		t.Errorf("unknown job = %d", status)
	}
}
