package api

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/auth"
	"github.com/berth-dev/berth/server/internal/license"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
	"github.com/berth-dev/berth/shared/engine"
)

var fastArgon = auth.Argon2Params{Memory: 1024, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32}

// authzFixture is a Berth whose route handlers are stubs: what is under test
// is admission (sign-in, environment, permission) over THE route table, with
// a real store, real sessions and real API tokens.
type authzFixture struct {
	srv    *httptest.Server
	server *Server // the Server whose route table srv serves with stub handlers
	store  *store.Store
	auth   *auth.Service
	routes []route
	tokens map[string]string // principal → API token
}

func newAuthzFixture(t *testing.T) *authzFixture {
	t.Helper()
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	dir := t.TempDir()
	st, err := store.Open(ctx, filepath.Join(dir, "berth.db"), storetest.Box(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	lic, err := license.New(ctx, st, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := auth.New(ctx, auth.Options{Store: st, Log: log, DataDir: dir, Argon2: &fastArgon, Edition: lic})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"one", "two"} { // environments 1 and 2
		e := store.Environment{Name: name, ConnectionType: "socket", SocketPath: "/nonexistent.sock", Port: 2375,
			Protocol: "http", Icon: "globe", Labels: []string{}}
		if err := st.CreateEnvironment(ctx, &e); err != nil {
			t.Fatal(err)
		}
	}
	s := New(Deps{Log: log, Store: st, Auth: a, License: lic, Engines: engine.NewManager(log)})
	f := &authzFixture{server: s, store: st, auth: a, tokens: map[string]string{}}
	f.routes = s.routes()
	for i := range f.routes {
		key := f.routes[i].Method + " " + f.routes[i].Path
		f.routes[i].h = func(c *gin.Context) error {
			c.Header("X-Route", key) // which route's handler the engine dispatched to
			c.Header("X-Id", c.Param("id"))
			c.Status(http.StatusNoContent)
			return nil
		}
	}
	f.srv = httptest.NewServer(s.engine(f.routes))
	t.Cleanup(f.srv.Close)

	two := int64(2)
	principals := []struct {
		name    string
		admin   bool
		role    string
		roleEnv *int64
	}{
		{"admin", true, "", nil},
		{"operator", false, auth.RoleOperator, nil},
		{"viewer", false, auth.RoleViewer, nil},
		{"outsider", false, auth.RoleOperator, &two}, // Operator, but only on environment 2
	}
	for _, p := range principals {
		u, err := a.CreateUser(ctx, auth.UserSpec{Username: p.name, Password: p.name + "-password", IsAdmin: p.admin})
		if err != nil {
			t.Fatal(err)
		}
		if p.role != "" {
			r, err := st.GetRoleByName(ctx, p.role)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := a.AssignRole(ctx, u.ID, r.ID, p.roleEnv); err != nil {
				t.Fatal(err)
			}
		}
		tok, err := a.CreateToken(ctx, u, "t", p.name+"-password", nil)
		if err != nil {
			t.Fatal(err)
		}
		f.tokens[p.name] = tok.Token
	}
	return f
}

// concrete fills a route pattern's parameters; environments are 1.
func concrete(path string) string {
	r := strings.NewReplacer("{id}", "1", "{execId}", "abc")
	p := r.Replace(path)
	if strings.HasPrefix(path, "/api/containers") || strings.HasPrefix(path, "/api/events") {
		p += "?env=1&envId=1"
	}
	return p
}

// Expected permissions of the built-in roles, written out here as the
// statement of intent (not derived from the code under test).
var (
	viewerPerms = set("containers:view", "containers:logs", "containers:inspect", "images:view",
		"volumes:view", "volumes:inspect", "networks:view", "networks:inspect", "stacks:view", "environments:view",
		"registries:view", "git:view", "schedules:view", "activity:view", "backups:view")
	operatorPerms = set("containers:view", "containers:create", "containers:start", "containers:stop",
		"containers:restart", "containers:remove", "containers:exec", "containers:logs", "containers:inspect",
		"containers:edit", "images:view", "images:pull", "images:push", "images:remove", "images:build",
		"images:inspect", "volumes:view", "volumes:create", "volumes:remove", "volumes:inspect", "networks:view",
		"networks:create", "networks:remove", "networks:inspect", "networks:connect", "networks:disconnect",
		"stacks:view", "stacks:create", "stacks:start", "stacks:stop", "stacks:remove", "stacks:edit",
		"environments:view", "registries:view", "notifications:view", "git:view", "git:create", "git:edit",
		"git:delete", "schedules:view", "schedules:edit", "schedules:run", "activity:view", "backups:view", "backups:manage")
)

func set(perms ...string) map[string]bool {
	m := map[string]bool{}
	for _, p := range perms {
		m[p] = true
	}
	return m
}

// want is the expected status and error of principal on rt (requests name
// environment 1).
func want(principal string, rt route) (int, string) {
	switch {
	case rt.Perm == Public:
		return 204, ""
	case principal == "anonymous":
		return 401, "Unauthorized"
	case rt.Perm == Authenticated || principal == "admin":
		return 204, ""
	}
	perm := string(rt.Perm)
	switch principal {
	case "viewer":
		if viewerPerms[perm] {
			return 204, ""
		}
	case "operator":
		if operatorPerms[perm] {
			return 204, ""
		}
	case "outsider": // Operator on environment 2 only
		switch rt.Env {
		case AnyEnv:
			if operatorPerms[perm] {
				return 204, ""
			}
		case EnvQuery, EnvIDQuery, EnvPath:
			return 403, "Access denied to this environment"
		}
	}
	return 403, "Permission denied"
}

func TestRouteTableAuthorization(t *testing.T) {
	f := newAuthzFixture(t)
	for _, rt := range f.routes {
		if rt.Perm == "" {
			t.Errorf("%s %s declares no permission", rt.Method, rt.Path)
			continue
		}
		for _, principal := range []string{"anonymous", "viewer", "operator", "admin", "outsider"} {
			wantStatus, wantErr := want(principal, rt)
			req, _ := http.NewRequest(rt.Method, f.srv.URL+concrete(rt.Path), strings.NewReader("{}"))
			if tok := f.tokens[principal]; tok != "" {
				req.Header.Set("Authorization", "Bearer "+tok)
			}
			resp, err := f.srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var body struct{ Error string }
			_ = json.NewDecoder(resp.Body).Decode(&body)
			resp.Body.Close()
			if resp.StatusCode != wantStatus || body.Error != wantErr {
				t.Errorf("%s %s as %s = %d %q, want %d %q", rt.Method, rt.Path, principal,
					resp.StatusCode, body.Error, wantStatus, wantErr)
			}
			if key := rt.Method + " " + rt.Path; resp.StatusCode == 204 && resp.Header.Get("X-Route") != key {
				t.Errorf("%s %s as %s reached the handler of %q", rt.Method, rt.Path, principal, resp.Header.Get("X-Route"))
			}
		}
	}
}

// TestRouteTableIsComplete fails when a route is added without a declared
// permission known to the role catalogue, or a change without an audit action.
func TestRouteTableIsComplete(t *testing.T) {
	for _, rt := range (&Server{}).routes() {
		key := rt.Method + " " + rt.Path
		switch rt.Perm {
		case Public, Authenticated:
		default:
			res, action, ok := strings.Cut(string(rt.Perm), ":")
			if !ok || !contains(auth.Catalog[res], action) {
				t.Errorf("%s: permission %q is not in the catalogue", key, rt.Perm)
			}
		}
		if !safeMethod(rt.Method) && rt.Audit == "" {
			t.Errorf("%s changes state but declares no audit action (use Quiet to opt out explicitly)", key)
		}
		if rt.Setup && key != "POST /api/users" {
			t.Errorf("%s is open during setup; only POST /api/users may be", key)
		}
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// The session answer says, per environment the user can reach, what it may
// do there (the console shows only those controls): the Operator of
// environment 2 alone gets Operator permissions on 2 and no entry for 1; a
// Viewer everywhere gets Viewer permissions on both; an admin gets no map
// (everything is allowed).
func TestSessionAnswersPermissionsPerEnvironment(t *testing.T) {
	f := newAuthzFixture(t)
	srv := httptest.NewServer(f.server.engine(f.server.routes())) // the real handlers
	t.Cleanup(srv.Close)
	session := func(principal string) (envPerms map[string]map[string][]string, admin bool) {
		req, _ := http.NewRequest("GET", srv.URL+"/api/auth/session", nil)
		req.Header.Set("Authorization", "Bearer "+f.tokens[principal])
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out struct {
			User struct {
				IsAdmin                bool
				EnvironmentPermissions map[string]map[string][]string
			}
		}
		if res.StatusCode != 200 {
			t.Fatalf("%s: session = %d", principal, res.StatusCode)
		}
		if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
		return out.User.EnvironmentPermissions, out.User.IsAdmin
	}
	outsider, _ := session("outsider")
	if _, ok := outsider["1"]; ok || !slices.Contains(outsider["2"]["containers"], "create") {
		t.Errorf("outsider (Operator on 2) = %v, want only environment 2 with containers:create", outsider)
	}
	viewer, _ := session("viewer")
	for _, env := range []string{"1", "2"} {
		p := viewer[env]
		if !slices.Contains(p["containers"], "view") || slices.Contains(p["containers"], "stop") || p["settings"] != nil {
			t.Errorf("viewer on %s = %v, want view without stop or settings", env, p)
		}
	}
	if perms, admin := session("admin"); !admin || perms != nil {
		t.Errorf("admin: isAdmin=%v environmentPermissions=%v, want true and none", admin, perms)
	}
}
