package api_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/berth-dev/berth/server/internal/apitest"
)

func TestFavoritesPerUserAndEnvironment(t *testing.T) {
	t.Parallel()
	h := newAuthHarness(t, apitest.Options{})
	user, pw := h.setupAdmin()
	admin := h.login(user, pw)
	h.as(admin)
	h.must(201, "POST", "/api/users", map[string]any{"username": "other", "password": "other-password-1"}, nil)
	var env2 struct{ ID int64 }
	h.must(201, "POST", "/api/environments", map[string]any{"name": "second-" + h.label, "connectionType": "direct",
		"host": "127.0.0.1", "port": closedPort(t)}, &env2)

	type favs struct {
		Success   bool
		Favorites []string
	}
	var f favs
	h.must(200, "GET", "/api/preferences/favorites?env=1", nil, &f)
	if f.Favorites == nil || len(f.Favorites) != 0 {
		t.Errorf("favorites at first = %+v", f)
	}
	h.must(200, "POST", "/api/preferences/favorites", map[string]any{"environmentId": 1, "action": "add", "containerName": "/web"}, nil)
	h.must(200, "POST", "/api/preferences/favorites", map[string]any{"environmentId": 1, "action": "add", "containerName": "db"}, nil)
	h.must(200, "POST", "/api/preferences/favorites", map[string]any{"environmentId": 1, "action": "add", "containerName": "web"}, &f)
	if !f.Success || !slices.Equal(f.Favorites, []string{"web", "db"}) {
		t.Errorf("after adds = %+v", f)
	}
	h.must(200, "POST", "/api/preferences/favorites", map[string]any{"environmentId": 1, "action": "reorder", "favorites": []string{"db", "web", "cache"}}, &f)
	h.must(200, "POST", "/api/preferences/favorites", map[string]any{"environmentId": 1, "action": "toggle", "containerName": "web"}, &f)
	h.must(200, "GET", "/api/preferences/favorites?env=1", nil, &f)
	if !slices.Equal(f.Favorites, []string{"db", "cache"}) {
		t.Errorf("after reorder and toggle = %+v", f)
	}
	// Another environment and another user have their own.
	h.must(200, "GET", "/api/preferences/favorites?env="+strconv.FormatInt(env2.ID, 10), nil, &f)
	if len(f.Favorites) != 0 {
		t.Errorf("second environment's favorites = %+v", f)
	}
	h.as(h.login("other", "other-password-1"))
	h.must(200, "GET", "/api/preferences/favorites?env=1", nil, &f)
	if len(f.Favorites) != 0 {
		t.Errorf("other user's favorites = %+v", f)
	}
	h.as(admin)

	for _, tc := range []struct {
		body   any
		status int
		msg    string
	}{
		{map[string]any{"action": "add", "containerName": "x"}, 400, "environmentId is required"},
		{map[string]any{"environmentId": 999, "action": "add", "containerName": "x"}, 404, "Environment not found"},
		{map[string]any{"environmentId": 1, "action": "add"}, 400, "containerName is required"},
		{map[string]any{"environmentId": 1, "action": "explode", "containerName": "x"}, 400, "action must be"},
		{map[string]any{"environmentId": 1, "action": "set"}, 400, "favorites is required"},
		{map[string]any{"environmentId": 1, "action": "set", "favorites": []string{"a", ""}}, 400, "must not be empty"},
		{`{"environmentId": "one"}`, 400, ""},
	} {
		status, body := h.do("POST", "/api/preferences/favorites", tc.body)
		if status != tc.status || !strings.Contains(string(body), tc.msg) {
			t.Errorf("POST %v = %d %s, want %d %q", tc.body, status, body, tc.status, tc.msg)
		}
	}
	h.must(200, "GET", "/api/preferences/favorites?env=1", nil, &f)
	if !slices.Equal(f.Favorites, []string{"db", "cache"}) {
		t.Errorf("refused changes changed the favorites: %+v", f)
	}
	if status, _ := h.do("GET", "/api/preferences/favorites", nil); status != 400 {
		t.Errorf("GET without env = %d, want 400", status)
	}
	h.headers = map[string]string{}
	if status, _ := h.do("GET", "/api/preferences/favorites?env=1", nil); status != 401 {
		t.Errorf("GET without sign-in = %d, want 401", status)
	}
}

func TestFavoriteGroups(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	type group struct {
		Name       string
		Containers []string
	}
	var g struct {
		Success bool
		Groups  []group
	}
	post := func(body map[string]any) {
		t.Helper()
		body["environmentId"] = 1
		h.must(200, "POST", "/api/preferences/favorite-groups", body, &g)
	}
	post(map[string]any{"action": "add", "name": "front", "containers": []string{"web", "/proxy", "web"}})
	post(map[string]any{"action": "add", "name": "back", "containers": []string{"db"}})
	post(map[string]any{"action": "update", "name": "back", "containers": []string{"db", "cache"}})
	post(map[string]any{"action": "rename", "name": "front", "newName": "edge"})
	post(map[string]any{"action": "reorder", "groups": []group{{"back", []string{"db", "cache"}}, {"edge", []string{"web", "proxy"}}}})
	h.must(200, "GET", "/api/preferences/favorite-groups?env=1", nil, &g)
	want := []group{{"back", []string{"db", "cache"}}, {"edge", []string{"web", "proxy"}}}
	if len(g.Groups) != 2 || g.Groups[0].Name != want[0].Name || !slices.Equal(g.Groups[0].Containers, want[0].Containers) ||
		g.Groups[1].Name != want[1].Name || !slices.Equal(g.Groups[1].Containers, want[1].Containers) {
		t.Errorf("groups = %+v, want %+v", g.Groups, want)
	}
	for _, tc := range []struct {
		body   map[string]any
		status int
		msg    string
	}{
		{map[string]any{"action": "add", "name": "edge"}, 409, "already exists"},
		{map[string]any{"action": "rename", "name": "back", "newName": "edge"}, 409, "already exists"},
		{map[string]any{"action": "update", "name": "nope"}, 404, "Favorite group not found"},
		{map[string]any{"action": "remove", "name": "nope"}, 404, "Favorite group not found"},
		{map[string]any{"action": "add"}, 400, "name is required"},
		{map[string]any{"action": "set", "groups": []group{{"a", nil}, {"a", nil}}}, 409, "already exists"},
	} {
		tc.body["environmentId"] = 1
		status, body := h.do("POST", "/api/preferences/favorite-groups", tc.body)
		if status != tc.status || !strings.Contains(string(body), tc.msg) {
			t.Errorf("POST %v = %d %s, want %d %q", tc.body, status, body, tc.status, tc.msg)
		}
	}
	post(map[string]any{"action": "remove", "name": "back"})
	if len(g.Groups) != 1 || g.Groups[0].Name != "edge" {
		t.Errorf("after remove = %+v", g.Groups)
	}
}

func TestGridPreferences(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var g struct {
		Success     bool
		Preferences map[string]struct {
			Columns []any
		}
	}
	h.must(200, "GET", "/api/preferences/grid", nil, &g)
	if g.Preferences == nil || len(g.Preferences) != 0 {
		t.Errorf("grid at first = %+v", g)
	}
	cols := []map[string]any{{"id": "name", "visible": true, "width": 200}, {"id": "image", "visible": false}}
	h.must(200, "POST", "/api/preferences/grid", map[string]any{"gridId": "containers", "columns": cols}, nil)
	h.must(200, "POST", "/api/preferences/grid", map[string]any{"gridId": "images", "columns": []string{"repo", "size"}}, nil)
	h.must(200, "GET", "/api/preferences/grid", nil, &g)
	if len(g.Preferences) != 2 || len(g.Preferences["containers"].Columns) != 2 || g.Preferences["containers"].Columns[0].(map[string]any)["width"] != float64(200) {
		t.Errorf("grid = %+v", g.Preferences)
	}
	for _, body := range []any{
		map[string]any{"columns": cols},
		map[string]any{"gridId": "a b", "columns": cols},
		map[string]any{"gridId": "x", "columns": "name"},
		map[string]any{"gridId": "x"},
	} {
		if status, out := h.do("POST", "/api/preferences/grid", body); status != 400 {
			t.Errorf("POST %v = %d %s, want 400", body, status, out)
		}
	}
	g.Preferences = nil // a map decoded into keeps its keys
	h.must(200, "DELETE", "/api/preferences/grid?gridId=images", nil, &g)
	if len(g.Preferences) != 1 || len(g.Preferences["containers"].Columns) != 2 {
		t.Errorf("after deleting one grid = %+v", g.Preferences)
	}
	h.must(200, "DELETE", "/api/preferences/grid", nil, nil)
	g.Preferences = nil
	h.must(200, "GET", "/api/preferences/grid", nil, &g)
	if len(g.Preferences) != 0 {
		t.Errorf("after deleting all = %+v", g.Preferences)
	}
}
