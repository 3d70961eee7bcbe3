package api_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image/png"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"github.com/berth-dev/berth/server/internal/apitest"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/clocktest"
)

// mfaLogin is the answer of a login request: status, body, and the session
// cookie if one was set.
type mfaLogin struct {
	status int
	body   string
	cookie *http.Cookie
}

// loginWithCode sends a login request with an MFA code ("" for none).
func (h *harness) loginWithCode(user, password, code string) mfaLogin {
	h.t.Helper()
	body := map[string]string{"username": user, "password": password}
	if code != "" {
		body["mfaToken"] = code
	}
	data, _ := json.Marshal(body)
	resp, err := h.http.Post(h.url+"/api/auth/login", "application/json", bytes.NewReader(data))
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	a := mfaLogin{status: resp.StatusCode, body: strings.TrimSpace(string(out))}
	for _, c := range resp.Cookies() {
		if c.Name == "dockhand_session" && c.Value != "" {
			a.cookie = c
		}
	}
	return a
}

// enrolment is the answer of POST /api/users/{id}/mfa {}.
type enrolment struct {
	Secret     string `json:"secret"`
	QRDataURL  string `json:"qrDataUrl"`
	OTPAuthURL string `json:"otpauthUrl"`
}

// verified is the answer of POST /api/users/{id}/mfa {action: "verify"}.
type verified struct {
	Success     bool     `json:"success"`
	Message     string   `json:"message"`
	BackupCodes []string `json:"backupCodes"`
}

// code is the TOTP code of secret at t.
func code(t *testing.T, secret string, at time.Time) string {
	t.Helper()
	c, err := totp.GenerateCode(secret, at)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// otherCode is a six-digit code that is not the code of secret for the time
// step of at or either neighbour.
func otherCode(t *testing.T, secret string, at time.Time) string {
	t.Helper()
	taken := map[string]bool{}
	for _, d := range []time.Duration{-30 * time.Second, 0, 30 * time.Second} {
		taken[code(t, secret, at.Add(d))] = true
	}
	for _, c := range []string{"000000", "111111", "222222", "333333"} {
		if !taken[c] {
			return c
		}
	}
	t.Fatal("three codes cannot take four values")
	return ""
}

func TestMFAEnrolmentSignInReplayBackupCodesAndDisable(t *testing.T) {
	t.Parallel()
	clock := clocktest.New(time.Now().UTC().Truncate(time.Second))
	h := newAuthHarness(t, apitest.Options{Now: clock.Now})
	user, pw := h.setupAdmin()
	h.as(h.login(user, pw))

	var e enrolment
	h.must(200, "POST", "/api/users/1/mfa", map[string]any{}, &e)
	png64, ok := strings.CutPrefix(e.QRDataURL, "data:image/png;base64,")
	if !ok || len(e.Secret) < 32 {
		t.Fatalf("enrolment = secret %q, qrDataUrl %.40q…; want a base32 secret and a PNG data URL", e.Secret, e.QRDataURL)
	}
	raw, err := base64.StdEncoding.DecodeString(png64)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(bytes.NewReader(raw)); err != nil {
		t.Fatalf("qrDataUrl is not a PNG: %v", err)
	}
	if !strings.HasPrefix(e.OTPAuthURL, "otpauth://totp/Berth:root?") || !strings.Contains(e.OTPAuthURL, e.Secret) {
		t.Errorf("otpauthUrl = %q", e.OTPAuthURL)
	}
	var u struct{ MFAEnabled bool }
	h.must(200, "GET", "/api/users/1", nil, &u)
	if u.MFAEnabled {
		t.Fatal("mfaEnabled before verification")
	}

	status, body := h.do("POST", "/api/users/1/mfa", map[string]any{"action": "verify", "token": otherCode(t, e.Secret, clock.Now())})
	if status != 400 || strings.TrimSpace(string(body)) != `{"error":"Invalid MFA code"}` {
		t.Fatalf("verify with a wrong code = %d %s, want 400 Invalid MFA code", status, body)
	}
	enrolCode := code(t, e.Secret, clock.Now())
	var v verified
	h.must(200, "POST", "/api/users/1/mfa", map[string]any{"action": "verify", "token": enrolCode}, &v)
	if !v.Success || v.Message == "" || len(v.BackupCodes) != 10 {
		t.Fatalf("verify = %+v, want success, a message and 10 backup codes", v)
	}
	h.must(200, "GET", "/api/users/1", nil, &u)
	if !u.MFAEnabled {
		t.Fatal("GET /api/users/1: mfaEnabled false after verification")
	}
	var sess struct{ User struct{ MFAEnabled bool } }
	h.must(200, "GET", "/api/auth/session", nil, &sess)
	if !sess.User.MFAEnabled {
		t.Fatal("session: mfaEnabled false after verification")
	}

	// Without a code: asked for one, no session.
	if a := h.loginWithCode(user, pw, ""); a.status != 200 || a.body != `{"requiresMfa":true}` || a.cookie != nil {
		t.Fatalf("login without a code = %d %s cookie %v; want 200 {requiresMfa:true} and no session", a.status, a.body, a.cookie)
	}
	// Four failures (five lock the account for a while).
	for name, c := range map[string]string{
		"a wrong code":                       otherCode(t, e.Secret, clock.Now()),
		"the code the verification spent":    enrolCode,
		"a code that is no code at all":      "hello",
		"a code two steps ahead (too early)": code(t, e.Secret, clock.Now().Add(60*time.Second)),
	} {
		if a := h.loginWithCode(user, pw, c); a.status != 401 || a.body != `{"error":"Invalid MFA code"}` || a.cookie != nil {
			t.Fatalf("login with %s = %d %s cookie %v; want 401 Invalid MFA code", name, a.status, a.body, a.cookie)
		}
	}

	clock.Advance(30 * time.Second)
	fresh := code(t, e.Secret, clock.Now())
	a := h.loginWithCode(user, pw, fresh)
	if a.status != 200 || a.cookie == nil || !strings.Contains(a.body, `"success":true`) {
		t.Fatalf("login with a fresh code = %d %s cookie %v; want a session", a.status, a.body, a.cookie)
	}
	if a := h.loginWithCode(user, pw, fresh); a.status != 401 || a.body != `{"error":"Invalid MFA code"}` {
		t.Fatalf("replayed code = %d %s, want 401 Invalid MFA code", a.status, a.body)
	}
	// A code of the step before the one accepted is older: refused.
	if a := h.loginWithCode(user, pw, enrolCode); a.status != 401 || a.body != `{"error":"Invalid MFA code"}` {
		t.Fatalf("code of the step before = %d %s, want 401 Invalid MFA code", a.status, a.body)
	}
	// A wrong password is still the password's error.
	if a := h.loginWithCode(user, "wrong-password", code(t, e.Secret, clock.Now())); a.status != 401 ||
		a.body != `{"error":"Invalid username or password"}` || a.cookie != nil {
		t.Fatalf("wrong password with a code = %d %s", a.status, a.body)
	}
	h.as(a.cookie)
	h.must(200, "GET", "/api/environments", nil, nil)

	backup := v.BackupCodes[0]
	if a := h.loginWithCode(user, pw, backup); a.status != 200 || a.cookie == nil {
		t.Fatalf("login with a backup code = %d %s", a.status, a.body)
	}
	if a := h.loginWithCode(user, pw, backup); a.status != 401 || a.body != `{"error":"Invalid MFA code"}` {
		t.Fatalf("login with a spent backup code = %d %s, want 401 Invalid MFA code", a.status, a.body)
	}

	h.must(200, "DELETE", "/api/users/1/mfa", map[string]string{"password": pw}, nil)
	h.must(200, "GET", "/api/users/1", nil, &u)
	if u.MFAEnabled {
		t.Fatal("mfaEnabled after DELETE")
	}
	if a := h.loginWithCode(user, pw, ""); a.status != 200 || a.cookie == nil {
		t.Fatalf("login after disabling MFA = %d %s, want a session without a code", a.status, a.body)
	}
	if a := h.loginWithCode(user, pw, v.BackupCodes[1]); a.status != 200 || a.cookie == nil {
		t.Fatalf("login after disabling MFA, with an old backup code = %d %s; want the code ignored", a.status, a.body)
	}

	// The audit log names the changes; neither it nor the server log holds a secret.
	audit, _, err := h.store.ListAudit(t.Context(), store.AuditFilter{Action: "user.mfa*"})
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, l := range audit {
		actions = append(actions, l.Action)
		if l.EntityID != "1" || l.EntityName != "root" {
			t.Errorf("audit %s names %s %q, want user 1 root", l.Action, l.EntityID, l.EntityName)
		}
	}
	got := strings.Join(actions, ",")
	for _, want := range []string{"user.mfa_setup", "user.mfa_enable", "user.mfa_disable"} {
		if !strings.Contains(got, want) {
			t.Errorf("audit actions %s lack %s", got, want)
		}
	}
	all, _, err := h.store.ListAudit(t.Context(), store.AuditFilter{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	everything, _ := json.Marshal(all)
	for _, secret := range append([]string{e.Secret}, v.BackupCodes...) {
		if strings.Contains(string(everything), secret) || strings.Contains(h.logs.String(), secret) {
			t.Errorf("secret %q appears in the audit log or the server log", secret)
		}
	}
}

func TestMFAOfSomeoneElseNeedsUsersEditAndAnAdminForAnAdmin(t *testing.T) {
	t.Parallel()
	h := newAuthHarness(t, apitest.Options{})
	user, pw := h.setupAdmin()
	admin := h.login(user, pw)
	h.as(admin)
	var bob, carol struct{ ID int64 }
	h.must(201, "POST", "/api/users", map[string]any{"username": "bob", "password": "bob-password-1"}, &bob)
	h.must(201, "POST", "/api/users", map[string]any{"username": "carol", "password": "carol-password-1"}, &carol)
	// The Admin role grants every permission, users:edit too, without making carol an admin (isAdmin).
	var roles []struct {
		ID   int64
		Name string
	}
	h.must(200, "GET", "/api/roles", nil, &roles)
	for _, r := range roles {
		if r.Name == "Admin" {
			h.must(201, "POST", fmt.Sprintf("/api/users/%d/roles", carol.ID), map[string]any{"roleId": r.ID}, nil)
		}
	}

	// bob, without users:edit: his own MFA only; refused alike for any other id, existing or not.
	h.as(h.login("bob", "bob-password-1"))
	for _, path := range []string{"/api/users/1/mfa", fmt.Sprintf("/api/users/%d/mfa", carol.ID), "/api/users/999/mfa"} {
		for _, method := range []string{"POST", "DELETE"} {
			status, body := h.do(method, path, map[string]any{})
			if status != 403 || strings.TrimSpace(string(body)) != `{"error":"Permission denied"}` {
				t.Errorf("bob: %s %s = %d %s, want 403 Permission denied", method, path, status, body)
			}
		}
	}
	bobMFA := fmt.Sprintf("/api/users/%d/mfa", bob.ID)
	var e enrolment
	h.must(200, "POST", bobMFA, map[string]any{}, &e)
	h.must(200, "POST", bobMFA, map[string]any{"action": "verify", "token": code(t, e.Secret, time.Now())}, nil)
	if m, err := h.store.GetMFA(t.Context(), bob.ID); err != nil || !m.Enabled() {
		t.Fatalf("bob's MFA after verification = %+v, %v", m, err)
	}

	// carol, with users:edit: bob's MFA, not the admin's.
	c := h.loginWithCode("carol", "carol-password-1", "")
	if c.cookie == nil {
		t.Fatalf("carol login = %d %s", c.status, c.body)
	}
	h.as(c.cookie)
	if status, body := h.do("DELETE", "/api/users/1/mfa", nil); status != 403 {
		t.Errorf("carol: DELETE the admin's MFA = %d %s, want 403", status, body)
	}
	h.must(404, "DELETE", "/api/users/999/mfa", nil, nil)
	h.must(200, "DELETE", bobMFA, map[string]string{"password": "carol-password-1"}, nil) // carol's own password
	if m, err := h.store.GetMFA(t.Context(), bob.ID); err != nil || m.Enabled() {
		t.Fatalf("bob's MFA after carol disabled it = %+v, %v", m, err)
	}
	// The admin enrols anyone.
	h.as(admin)
	h.must(200, "POST", bobMFA, map[string]any{}, nil)
}

func TestMFARefusesBadRequestsAndChangesNothing(t *testing.T) {
	t.Parallel()
	h := newAuthHarness(t, apitest.Options{})
	user, pw := h.setupAdmin()
	h.as(h.login(user, pw))
	dirk := store.User{Username: "dirk", AuthProvider: "ldap:corp", IsActive: true}
	if err := h.store.CreateUser(t.Context(), &dirk); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, method, path string
		body               any
		status             int
		msg                string
	}{
		{"an LDAP account", "POST", fmt.Sprintf("/api/users/%d/mfa", dirk.ID), map[string]any{}, 400,
			"MFA is available for local accounts only: LDAP and single sign-on accounts are protected by their identity provider"},
		{"verify before any setup", "POST", "/api/users/1/mfa", map[string]any{"action": "verify", "token": "123456"}, 400,
			"No MFA setup is in progress: start the setup again"},
		{"an unknown action", "POST", "/api/users/1/mfa", map[string]any{"action": "enable-please"}, 400, ""},
		{"malformed JSON", "POST", "/api/users/1/mfa", `{"action":`, 400, "Invalid JSON body"},
		{"a token that is not a string", "POST", "/api/users/1/mfa", `{"action":"verify","token":123456}`, 400, "Invalid JSON body"},
		{"an unknown user", "POST", "/api/users/999/mfa", map[string]any{}, 404, ""},
		{"a non-numeric id", "DELETE", "/api/users/abc/mfa", nil, 400, "Invalid user ID"},
	}
	for _, tc := range cases {
		status, body := h.do(tc.method, tc.path, tc.body)
		var got struct{ Error string }
		_ = json.Unmarshal(body, &got)
		if status != tc.status || (tc.msg != "" && got.Error != tc.msg) || got.Error == "" {
			t.Errorf("%s: %s %s = %d %s, want %d %q", tc.name, tc.method, tc.path, status, body, tc.status, tc.msg)
		}
	}
	for _, id := range []int64{1, dirk.ID} {
		if m, err := h.store.GetMFA(t.Context(), id); err != nil || m.Enabled() || m.PendingSecret != "" {
			t.Errorf("user %d after refused requests: MFA %+v, %v; want untouched", id, m, err)
		}
	}
}

// Turning MFA off needs the caller's current password or a current code of
// their MFA: a session (or a stolen cookie) alone does not strip the second
// factor, and wrong answers count against the login limit.
func TestDisablingMFANeedsTheCurrentPasswordOrACode(t *testing.T) {
	t.Parallel()
	clock := clocktest.New(time.Now().UTC().Truncate(time.Second))
	h := newAuthHarness(t, apitest.Options{Now: clock.Now})
	user, pw := h.setupAdmin()
	h.as(h.login(user, pw))
	var e enrolment
	h.must(200, "POST", "/api/users/1/mfa", map[string]any{}, &e)
	h.must(200, "POST", "/api/users/1/mfa", map[string]any{"action": "verify", "token": code(t, e.Secret, clock.Now())}, nil)
	clock.Advance(30 * time.Second)

	h.expectRefusals([]refusal{
		{"no body", "DELETE", "/api/users/1/mfa", nil, 400, "current password or a current MFA code is required"},
		{"empty fields", "DELETE", "/api/users/1/mfa", map[string]string{"password": "", "token": " "}, 400, "is required"},
		{"a wrong password", "DELETE", "/api/users/1/mfa", map[string]string{"password": "wrong-password"}, 403, "is incorrect"},
		{"a wrong code", "DELETE", "/api/users/1/mfa", map[string]string{"token": otherCode(t, e.Secret, clock.Now())}, 403, "is incorrect"},
	})
	if m, err := h.store.GetMFA(t.Context(), 1); err != nil || !m.Enabled() {
		t.Fatalf("MFA after the refusals = %+v, %v; want still on", m, err)
	}
	h.must(200, "DELETE", "/api/users/1/mfa", map[string]string{"token": code(t, e.Secret, clock.Now())}, nil)
	if m, err := h.store.GetMFA(t.Context(), 1); err != nil || m.Enabled() {
		t.Fatalf("MFA after a current code = %+v, %v; want off", m, err)
	}
	// Without MFA a code proves nothing; the password does.
	h.must(200, "POST", "/api/users/1/mfa", map[string]any{}, &e)
	h.must(200, "POST", "/api/users/1/mfa", map[string]any{"action": "verify", "token": code(t, e.Secret, clock.Now())}, nil)
	h.must(200, "DELETE", "/api/users/1/mfa", map[string]string{"password": pw}, nil)
	if status, body := h.do("DELETE", "/api/users/1/mfa", map[string]string{"token": "123456"}); status != 403 {
		t.Errorf("a code while MFA is off = %d %s, want 403", status, body)
	}
}
