package api_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/berth-dev/berth/server/internal/apitest"
)

// authRecorder is another host (another port is another origin) that
// records the Authorization headers it receives.
type authRecorder struct {
	*httptest.Server
	mu    sync.Mutex
	hits  int
	auths []string
}

func newAuthRecorder(t *testing.T) *authRecorder {
	t.Helper()
	r := &authRecorder{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.hits++
		if a := req.Header.Get("Authorization"); a != "" {
			r.auths = append(r.auths, a)
		}
		r.mu.Unlock()
		w.Header().Set("WWW-Authenticate", `Basic realm="x"`)
		http.Error(w, "who are you", http.StatusUnauthorized)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *authRecorder) seen() (hits int, auths []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.hits, append([]string(nil), r.auths...)
}

// signInWithRole creates a user holding role everywhere and signs the
// harness in as them (the harness is signed in as an admin).
func (h *harness) signInWithRole(name, role string) {
	h.t.Helper()
	h.userWithRole(name, role)
	h.as(h.login(name, name+"-password-1"))
}

// An Operator (git:create, git:edit) cannot make Berth send an admin's git
// credential anywhere but the host it was saved for: not by testing another
// URL, nor by saving a repository there, nor by moving the credential
// without its password; the other host receives no Authorization.
func TestOperatorCannotSendAnAdminsGitCredentialToAnotherHost(t *testing.T) {
	h := newAuthHarness(t, apitest.Options{})
	user, pw := h.setupAdmin()
	admin := h.login(user, pw)
	h.as(admin)
	g := newGitServer(t)
	head := g.commit("main", map[string]string{"compose.yaml": gitCompose(h.label, "1")})
	other := newAuthRecorder(t)
	otherURL := other.URL + "/app.git"

	var cred struct {
		ID   int64
		Host string
	}
	h.must(201, "POST", "/api/git/credentials", map[string]any{"name": "admin-cred", "authType": "password",
		"username": gitUser, "password": gitPassword, "host": g.URL}, &cred)
	wantHost := strings.TrimSuffix(strings.Replace(g.URL, "/app.git", "", 1), "/")
	if cred.Host != wantHost {
		t.Fatalf("credential host = %q, want %q", cred.Host, wantHost)
	}
	h.signInWithRole("olive", "Operator")

	status, body := h.do("POST", "/api/git/repositories/test", map[string]any{"url": otherURL, "credentialId": cred.ID})
	want := fmt.Sprintf("Credential admin-cred is saved for %s, not for %s", wantHost, other.URL)
	if status != 403 || !strings.Contains(string(body), want) {
		t.Errorf("test of another host with the admin's credential = %d %s, want 403 %q", status, body, want)
	}
	status, body = h.do("POST", "/api/git/repositories", map[string]any{"name": "exfil", "url": otherURL, "credentialId": cred.ID})
	if status != 403 || !strings.Contains(string(body), want) {
		t.Errorf("saving a repository at another host with the admin's credential = %d %s, want 403", status, body)
	}
	status, body = h.do("PUT", fmt.Sprintf("/api/git/credentials/%d", cred.ID), map[string]any{"name": "admin-cred", "host": otherURL})
	if status != 403 || !strings.Contains(string(body), "needs its password or key again") {
		t.Errorf("moving the credential without its password = %d %s, want 403", status, body)
	}
	if hits, auths := other.seen(); len(auths) != 0 {
		t.Fatalf("the other host received %d requests, with Authorization %q", hits, auths)
	}

	// The host it was saved for: it works.
	var res probeResult
	h.must(200, "POST", "/api/git/repositories/test", map[string]any{"url": g.URL, "credentialId": cred.ID}, &res)
	if !res.Success || res.Commit != head {
		t.Errorf("test of the credential's own host = %+v", res)
	}

	// A repository on the credential's host that redirects to another host:
	// the redirect carries no credential.
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.RequestURI(), http.StatusFound)
	}))
	t.Cleanup(redirector.Close)
	h.as(admin)
	h.must(201, "POST", "/api/git/credentials", map[string]any{"name": "redirected-cred", "authType": "password",
		"username": gitUser, "password": gitPassword, "host": redirector.URL}, &cred)
	h.must(200, "POST", "/api/git/repositories/test", map[string]any{"url": redirector.URL + "/app.git", "credentialId": cred.ID}, &res)
	hits, auths := other.seen()
	if hits == 0 || len(auths) != 0 {
		t.Fatalf("after a redirect the other host got %d requests with Authorization %q, want some without", hits, auths)
	}
}

// A test of unsaved settings naming a stored credential sends it: it needs
// the permission to edit credentials, not only git:create.
func TestTestingWithAStoredCredentialNeedsGitEdit(t *testing.T) {
	h, _ := enterpriseAdmin(t) // a custom role
	g := newGitServer(t)
	g.commit("main", map[string]string{"README": "x\n"})
	var cred, role, u struct{ ID int64 }
	h.must(201, "POST", "/api/git/credentials", map[string]any{"name": "c", "authType": "password",
		"username": gitUser, "password": gitPassword, "host": g.URL}, &cred)
	h.must(201, "POST", "/api/roles", map[string]any{"name": "git-creator", "permissions": map[string][]string{"git": {"view", "create"}}}, &role)
	h.must(201, "POST", "/api/users", map[string]any{"username": "gina", "password": "gina-password-1"}, &u)
	h.must(201, "POST", fmt.Sprintf("/api/users/%d/roles", u.ID), map[string]any{"roleId": role.ID}, nil)
	h.as(h.login("gina", "gina-password-1"))
	status, body := h.do("POST", "/api/git/repositories/test", map[string]any{"url": g.URL, "credentialId": cred.ID})
	if status != 403 {
		t.Errorf("git:create without git:edit testing with a stored credential = %d %s, want 403", status, body)
	}
	var res probeResult
	h.must(200, "POST", "/api/git/repositories/test", map[string]any{"url": g.URL, "authType": "password",
		"username": gitUser, "password": gitPassword}, &res)
	if !res.Success {
		t.Errorf("test with an inline credential = %+v", res)
	}
}

// Outbound requests made on a user's behalf refuse link-local and metadata
// addresses whatever the setting, and private and loopback ones unless an
// admin allows them; a name is judged by the address it resolves to.
func TestOutboundPolicyRefusesMetadataAlwaysAndPrivateOrLoopbackPerSetting(t *testing.T) {
	h := newHarness(t)
	webhook := func(u string) (int, string) {
		status, body := h.do("POST", "/api/notifications/test", map[string]any{"type": "webhook", "name": "probe",
			"config": map[string]any{"url": u}})
		return status, string(body)
	}
	var got struct{ AllowPrivate, AllowLoopback bool }
	h.must(200, "GET", "/api/settings/outbound", nil, &got)
	if !got.AllowPrivate || !got.AllowLoopback {
		t.Fatalf("test default policy = %+v, want private and loopback allowed", got)
	}

	for _, u := range []string{"http://169.254.169.254/latest/meta-data/", "http://metadata.google.internal/computeMetadata/v1/",
		"http://[fe80::1]/", "http://100.100.100.200/"} {
		if status, body := webhook(u); status != 403 || !strings.Contains(body, "never allowed") {
			t.Errorf("webhook at %s = %d %s, want 403 (never allowed)", u, status, body)
		}
	}

	var received sync.WaitGroup
	received.Add(1)
	var once sync.Once
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		once.Do(received.Done)
	}))
	t.Cleanup(receiver.Close)
	viaName := strings.Replace(receiver.URL, "127.0.0.1", "localhost", 1)

	h.must(200, "PUT", "/api/settings/outbound", map[string]any{"allowPrivate": false, "allowLoopback": false}, &got)
	if got.AllowPrivate || got.AllowLoopback {
		t.Fatalf("policy after PUT = %+v", got)
	}
	if status, body := webhook("http://10.255.255.1/hook"); status != 403 || !strings.Contains(body, "private addresses are not allowed") {
		t.Errorf("webhook at a private address = %d %s, want 403", status, body)
	}
	if status, body := webhook(viaName); status != 403 || !strings.Contains(body, "loopback addresses are not allowed") ||
		!strings.Contains(body, "localhost (") {
		t.Errorf("webhook at localhost = %d %s, want 403 naming the loopback rule", status, body)
	}
	status, body := h.do("POST", "/api/templates/sources", map[string]any{"name": "meta", "url": "http://169.254.169.254/templates.json"})
	if status != 403 || !strings.Contains(string(body), "never allowed") {
		t.Errorf("template source at a metadata address = %d %s, want 403", status, body)
	}

	h.must(200, "PUT", "/api/settings/outbound", map[string]any{"allowLoopback": true}, &got)
	var res struct {
		Success bool
		Error   string
	}
	h.must(200, "POST", "/api/notifications/test", map[string]any{"type": "webhook", "name": "probe",
		"config": map[string]any{"url": viaName}}, &res)
	if !res.Success {
		t.Fatalf("webhook at localhost with loopback allowed = %+v", res)
	}
	received.Wait()
}

// A channel's stored secrets are sent only where they were saved for: a
// test or an update that keeps them masked while naming another host is
// refused.
func TestNotificationSecretsStayWithTheirHost(t *testing.T) {
	h := newHarness(t)
	home := newAuthRecorder(t)
	other := newAuthRecorder(t)
	var ch struct{ ID int64 }
	h.must(201, "POST", "/api/notifications", map[string]any{"type": "webhook", "name": "hook-" + h.label,
		"config": map[string]any{"url": home.URL + "/hook", "headers": map[string]string{"Authorization": "Bearer s3cret"}}}, &ch)
	masked := map[string]any{"url": other.URL + "/hook", "headers": map[string]string{"Authorization": "********"}}
	status, body := h.do("POST", "/api/notifications/test", map[string]any{"id": ch.ID, "config": masked})
	if status != 403 || !strings.Contains(string(body), "saved for") {
		t.Errorf("test of the stored secret at another host = %d %s, want 403", status, body)
	}
	status, body = h.do("PUT", fmt.Sprintf("/api/notifications/%d", ch.ID), map[string]any{"config": masked})
	if status != 403 {
		t.Errorf("update moving the stored secret to another host = %d %s, want 403", status, body)
	}
	if hits, auths := other.seen(); hits != 0 || len(auths) != 0 {
		t.Fatalf("the other host got %d requests (%q)", hits, auths)
	}
}

// OIDC discovery at a link-local address is refused.
func TestOIDCDiscoveryAtLinkLocalIsRefused(t *testing.T) {
	h := newHarness(t)
	var p struct{ ID int64 }
	h.must(201, "POST", "/api/auth/oidc", map[string]any{"name": "meta", "enabled": true, "issuerUrl": "http://169.254.169.254/",
		"clientId": "x", "clientSecret": "y", "redirectUri": "http://127.0.0.1:1/api/auth/oidc/callback"}, &p)
	status, body := h.do("POST", fmt.Sprintf("/api/auth/oidc/%d/test", p.ID), nil)
	if status != 403 || !strings.Contains(string(body), "never allowed") {
		t.Errorf("OIDC test at 169.254.169.254 = %d %s, want 403", status, body)
	}
}
