package api_test

import (
	"fmt"
	"testing"

	"github.com/berth-dev/berth/server/internal/apitest"
)

// The reference's confirmDisableAuth: demoting, deactivating or deleting
// the last active admin is 409 "This is the last admin user" and changes
// nothing; confirmed, it is done and authentication is turned off.
func TestLastAdminNeedsConfirmDisableAuth(t *testing.T) {
	t.Parallel()
	h := newAuthHarness(t, apitest.Options{})
	user, pw := h.setupAdmin()
	h.as(h.login(user, pw))
	var users []struct {
		ID       int64
		Username string
		IsAdmin  bool
		IsActive bool
	}
	h.must(200, "GET", "/api/users", nil, &users)
	if len(users) != 1 {
		t.Fatalf("users = %+v", users)
	}
	path := fmt.Sprintf("/api/users/%d", users[0].ID)
	wantError(t, h, "PUT", path, map[string]any{"isAdmin": false}, 409, "This is the last admin user")
	wantError(t, h, "PUT", path, map[string]any{"isActive": false, "confirmDisableAuth": false}, 409, "This is the last admin user")
	wantError(t, h, "DELETE", path, nil, 409, "This is the last admin user")
	wantError(t, h, "DELETE", path+"?confirmDisableAuth=false", nil, 409, "This is the last admin user")
	h.must(200, "GET", "/api/users", nil, &users)
	if len(users) != 1 || !users[0].IsAdmin || !users[0].IsActive {
		t.Fatalf("a refused change changed the admin: %+v", users)
	}
	var settings struct{ AuthEnabled bool }
	h.must(200, "GET", "/api/auth/settings", nil, &settings)
	if !settings.AuthEnabled {
		t.Fatalf("authentication turned off by a refused change")
	}
	var del struct{ Success, AuthDisabled bool }
	h.must(200, "DELETE", path+"?confirmDisableAuth=true", nil, &del)
	if !del.Success || !del.AuthDisabled {
		t.Errorf("confirmed delete = %+v", del)
	}
	h.must(200, "GET", "/api/auth/settings", nil, &settings)
	if settings.AuthEnabled {
		t.Errorf("authentication still on after the last admin was deleted")
	}
	h.must(200, "GET", "/api/users", nil, &users)
	if len(users) != 0 {
		t.Errorf("users after the confirmed delete = %+v", users)
	}
}
