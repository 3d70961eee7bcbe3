package api_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/berth-dev/berth/server/internal/apitest"
)

// userWithRole creates a local user holding the built-in role (every
// environment; "" for none) as the signed-in admin, and returns its id.
func (h *harness) userWithRole(name, role string) int64 {
	h.t.Helper()
	var u struct{ ID int64 }
	h.must(201, "POST", "/api/users", map[string]any{"username": name, "password": name + "-password-1"}, &u)
	if role == "" {
		return u.ID
	}
	var roles []struct {
		ID   int64
		Name string
	}
	h.must(200, "GET", "/api/roles", nil, &roles)
	for _, r := range roles {
		if r.Name == role {
			h.must(201, "POST", fmt.Sprintf("/api/users/%d/roles", u.ID), map[string]any{"roleId": r.ID}, nil)
			return u.ID
		}
	}
	h.t.Fatalf("no role %q", role)
	return 0
}

// tokenOf creates an API token of the signed-in user.
func (h *harness) tokenOf(password string) string {
	h.t.Helper()
	var tok struct{ Token string }
	h.must(201, "POST", "/api/auth/tokens", map[string]any{"name": "script", "password": password}, &tok)
	return tok.Token
}

// statusAs is the status of GET /api/profile with a cookie or a token.
func (h *harness) statusAs(cookie *http.Cookie, token string) int {
	h.t.Helper()
	saved := h.headers
	defer func() { h.headers = saved }()
	if cookie != nil {
		h.as(cookie)
	} else {
		h.headers = map[string]string{"Authorization": "Bearer " + token}
	}
	status, _ := h.do("GET", "/api/profile", nil)
	return status
}

// A password change, one's own or an admin's reset, ends the user's other
// sessions and API tokens; the session that made one's own change stays.
func TestPasswordChangeRevokesOtherSessionsAndTokens(t *testing.T) {
	t.Parallel()
	h := newAuthHarness(t, apitest.Options{})
	user, pw := h.setupAdmin()
	admin := h.login(user, pw)
	h.as(admin)
	bob := h.userWithRole("bob", "")

	s1, s2 := h.login("bob", "bob-password-1"), h.login("bob", "bob-password-1")
	h.as(s1)
	tok := h.tokenOf("bob-password-1")
	h.must(200, "PUT", "/api/profile", map[string]any{"currentPassword": "bob-password-1", "newPassword": "bob-password-2"}, nil)
	if got := h.statusAs(s1, ""); got != 200 {
		t.Errorf("the session that changed the password = %d, want 200", got)
	}
	if got := h.statusAs(s2, ""); got != 401 {
		t.Errorf("bob's other session after his change = %d, want 401", got)
	}
	if got := h.statusAs(nil, tok); got != 401 {
		t.Errorf("bob's token after his change = %d, want 401", got)
	}

	s3 := h.login("bob", "bob-password-2")
	h.as(s3)
	tok2 := h.tokenOf("bob-password-2")
	h.as(admin)
	h.must(200, "PUT", fmt.Sprintf("/api/users/%d", bob), map[string]any{"password": "bob-password-3"}, nil)
	for name, got := range map[string]int{"s1": h.statusAs(s1, ""), "s3": h.statusAs(s3, ""), "token": h.statusAs(nil, tok2)} {
		if got != 401 {
			t.Errorf("bob's %s after the admin's reset = %d, want 401", name, got)
		}
	}
	if got := h.statusAs(admin, ""); got != 200 {
		t.Errorf("the admin's session = %d, want 200", got)
	}
	h.login("bob", "bob-password-3")
}

// Disabling a user ends their sessions and tokens; enabling them again
// revives none. An edit that leaves the account active revokes nothing.
func TestReactivatingAUserDoesNotReviveOldTokens(t *testing.T) {
	t.Parallel()
	h := newAuthHarness(t, apitest.Options{})
	user, pw := h.setupAdmin()
	admin := h.login(user, pw)
	h.as(admin)
	bob := h.userWithRole("bob", "")
	bobPath := fmt.Sprintf("/api/users/%d", bob)
	sess := h.login("bob", "bob-password-1")
	h.as(sess)
	tok := h.tokenOf("bob-password-1")

	h.as(admin)
	h.must(200, "PUT", bobPath, map[string]any{"displayName": "Bob", "isActive": true}, nil)
	if got := h.statusAs(nil, tok); got != 200 {
		t.Fatalf("token after an edit that keeps bob active = %d, want 200", got)
	}
	h.must(200, "PUT", bobPath, map[string]any{"isActive": false}, nil)
	h.must(200, "PUT", bobPath, map[string]any{"isActive": true}, nil)
	if got := h.statusAs(nil, tok); got != 401 {
		t.Errorf("old token after reactivation = %d, want 401", got)
	}
	if got := h.statusAs(sess, ""); got != 401 {
		t.Errorf("old session after reactivation = %d, want 401", got)
	}
	var list []struct{ ID int64 }
	h.must(200, "GET", "/api/auth/tokens?all=true", nil, &list)
	if len(list) != 0 {
		t.Errorf("tokens listed after reactivation = %+v, want none", list)
	}
	h.login("bob", "bob-password-1")
}

// An exec session is attached and resized only by the user who created it,
// or by an admin (real engine container).
func TestExecSessionBelongsToItsCreator(t *testing.T) {
	t.Parallel()
	h := newAuthHarness(t, apitest.Options{})
	user, pw := h.setupAdmin()
	admin := h.login(user, pw)
	h.as(admin)
	h.userWithRole("ann", "Operator")
	h.userWithRole("ben", "Operator")
	id := h.createContainer("berth-exec-owner-"+h.label, true, "sleep", "300")
	ann, ben := h.login("ann", "ann-password-1"), h.login("ben", "ben-password-1")

	newExec := func() string {
		h.as(ann)
		var inst struct {
			ExecID string `json:"execId"`
		}
		h.must(200, "POST", "/api/containers/"+id+"/exec?envId=1", map[string]string{}, &inst)
		return inst.ExecID
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	attach := func(execID string, as *http.Cookie) (*websocket.Conn, int) {
		ws, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(h.url, "http")+"/api/containers/exec/"+execID+"/attach?envId=1",
			&websocket.DialOptions{HTTPHeader: http.Header{"Cookie": {as.Name + "=" + as.Value}}})
		if err != nil {
			if resp == nil {
				t.Fatalf("attach: %v", err)
			}
			return nil, resp.StatusCode
		}
		return ws, http.StatusSwitchingProtocols
	}

	execID := newExec()
	h.as(ben)
	h.expectRefusals([]refusal{
		{"ben resizes ann's exec", "POST", "/api/containers/exec/" + execID + "/resize?envId=1&h=40&w=120", nil, 403, "belongs to another user"},
		{"ben resizes an exec Berth did not create", "POST", "/api/containers/exec/0123456789abcdef/resize?envId=1&h=40&w=120", nil, 404, "Exec session not found"},
	})
	if _, status := attach(execID, ben); status != 403 {
		t.Fatalf("ben attaches ann's exec = %d, want 403", status)
	}
	// The refusal did not use up the single-use exec: its creator attaches.
	ws, status := attach(execID, ann)
	if status != http.StatusSwitchingProtocols {
		t.Fatalf("ann attaches her exec = %d", status)
	}
	h.as(ann)
	h.must(200, "POST", "/api/containers/exec/"+execID+"/resize?envId=1&h=40&w=120", nil, nil)
	ws.Close(websocket.StatusNormalClosure, "")

	// An admin may attach anyone's.
	execID = newExec()
	ws, status = attach(execID, admin)
	if status != http.StatusSwitchingProtocols {
		t.Fatalf("the admin attaches ann's exec = %d", status)
	}
	ws.Close(websocket.StatusNormalClosure, "")
}
