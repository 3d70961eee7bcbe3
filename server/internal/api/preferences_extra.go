package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// Preference scopes of favourites and grids. Favourites and favourite
// groups are per environment ("favorites:<environment id>").
const (
	prefsFavorites      = "favorites:"
	prefsFavoriteGroups = "favorite_groups:"
	prefsGrid           = "grid"
)

// maxFavorites bounds the favourites, the groups and a group's containers.
const maxFavorites = 500

var (
	errGroupNotFound = fault.New(fault.NotFound, "Favorite group not found")
	errGroupExists   = fault.New(fault.Conflict, "A favorite group with this name already exists")
)

// favoriteGroup is a named group of favourite containers.
type favoriteGroup struct {
	Name       string   `json:"name"`
	Containers []string `json:"containers"`
}

// loadPrefs decodes the caller's preferences of scope into v; v is left
// as it is when there are none.
func (s *Server) loadPrefs(ctx context.Context, user int64, scope string, v any) error {
	raw, err := s.store.GetPreferences(ctx, user, scope)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	return json.Unmarshal([]byte(raw), v)
}

// savePrefs stores v as the caller's preferences of scope (at most 64 KB).
func (s *Server) savePrefs(ctx context.Context, user int64, scope string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if len(data) > maxPreferences {
		return fault.New(fault.Invalid, "Preferences are limited to 64 KB")
	}
	return s.store.SetPreferences(ctx, user, scope, string(data))
}

// prefsEnvironment is the environment a favourites request is for:
// environmentId of the body, or ?env; it must exist.
func (s *Server) prefsEnvironment(c *gin.Context, fromBody *int64) (int64, error) {
	id := int64(0)
	if fromBody != nil {
		id = *fromBody
	} else if q := c.Query("env"); q != "" {
		n, err := strconv.ParseInt(q, 10, 64)
		if err != nil {
			return 0, fault.New(fault.Invalid, "Invalid environment id")
		}
		id = n
	}
	if id <= 0 {
		return 0, fault.New(fault.Invalid, "environmentId is required")
	}
	if _, err := s.store.GetEnvironment(c.Request.Context(), id); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return 0, fault.New(fault.NotFound, "Environment not found")
		}
		return 0, err
	}
	return id, nil
}

// cleanNames trims container names (and a leading slash) and refuses
// empty ones and too many; duplicates are dropped.
func cleanNames(names []string) ([]string, error) {
	out := make([]string, 0, len(names))
	for _, n := range names {
		n = strings.TrimPrefix(strings.TrimSpace(n), "/")
		if n == "" {
			return nil, fault.New(fault.Invalid, "Container names must not be empty")
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	if len(out) > maxFavorites {
		return nil, fault.Invalidf("At most %d favorites", maxFavorites)
	}
	return out, nil
}

// getFavorites answers the caller's favourite containers of ?env:
// {favorites: [names]}, in their order.
func (s *Server) getFavorites(c *gin.Context) error {
	env, err := s.prefsEnvironment(c, nil)
	if err != nil {
		return err
	}
	favs := []string{}
	if err := s.loadPrefs(c.Request.Context(), preferencesOwner(c), prefsFavorites+strconv.FormatInt(env, 10), &favs); err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, map[string]any{"favorites": favs})
}

// postFavorites changes the caller's favourites of an environment:
// action add, remove or toggle (containerName), or reorder/set
// (favorites: the whole list). Answers {success, favorites}.
func (s *Server) postFavorites(c *gin.Context) error {
	var req struct {
		EnvironmentID *int64   `json:"environmentId"`
		Action        string   `json:"action"`
		ContainerName string   `json:"containerName"`
		Favorites     []string `json:"favorites"`
	}
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	env, err := s.prefsEnvironment(c, req.EnvironmentID)
	if err != nil {
		return err
	}
	ctx, user, scope := c.Request.Context(), preferencesOwner(c), prefsFavorites+strconv.FormatInt(env, 10)
	favs := []string{}
	if err := s.loadPrefs(ctx, user, scope, &favs); err != nil {
		return err
	}
	name := strings.TrimPrefix(strings.TrimSpace(req.ContainerName), "/")
	switch req.Action {
	case "add", "remove", "toggle":
		if name == "" {
			return fault.New(fault.Invalid, "containerName is required")
		}
		has := slices.Contains(favs, name)
		switch {
		case !has && req.Action != "remove":
			favs = append(favs, name)
		case has && req.Action != "add":
			favs = slices.DeleteFunc(favs, func(f string) bool { return f == name })
		}
	case "reorder", "set":
		if req.Favorites == nil {
			return fault.New(fault.Invalid, "favorites is required")
		}
		favs = req.Favorites
	default:
		return fault.New(fault.Invalid, "action must be add, remove, toggle, reorder or set")
	}
	if favs, err = cleanNames(favs); err != nil {
		return err
	}
	if err := s.savePrefs(ctx, user, scope, favs); err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, map[string]any{"success": true, "favorites": favs})
}

// getFavoriteGroups answers the caller's favourite groups of ?env:
// {groups: [{name, containers}]}.
func (s *Server) getFavoriteGroups(c *gin.Context) error {
	env, err := s.prefsEnvironment(c, nil)
	if err != nil {
		return err
	}
	groups := []favoriteGroup{}
	if err := s.loadPrefs(c.Request.Context(), preferencesOwner(c), prefsFavoriteGroups+strconv.FormatInt(env, 10), &groups); err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, map[string]any{"groups": groups})
}

// postFavoriteGroups changes the caller's favourite groups of an
// environment: action add (name, containers), update (name, containers),
// rename (name, newName), remove (name), or reorder/set (groups: the whole
// list). Answers {success, groups}.
func (s *Server) postFavoriteGroups(c *gin.Context) error {
	var req favoriteGroupsInput
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	env, err := s.prefsEnvironment(c, req.EnvironmentID)
	if err != nil {
		return err
	}
	ctx, user, scope := c.Request.Context(), preferencesOwner(c), prefsFavoriteGroups+strconv.FormatInt(env, 10)
	groups := []favoriteGroup{}
	if err := s.loadPrefs(ctx, user, scope, &groups); err != nil {
		return err
	}
	name := strings.TrimSpace(req.Name)
	find := func(n string) int {
		return slices.IndexFunc(groups, func(g favoriteGroup) bool { return g.Name == n })
	}
	if req.Action != "reorder" && req.Action != "set" && name == "" {
		return fault.New(fault.Invalid, "name is required")
	}
	switch req.Action {
	case "add", "create":
		if find(name) >= 0 {
			return errGroupExists
		}
		groups = append(groups, favoriteGroup{Name: name, Containers: req.Containers})
	case "update":
		i := find(name)
		if i < 0 {
			return errGroupNotFound
		}
		groups[i].Containers = req.Containers
	case "rename":
		i := find(name)
		newName := strings.TrimSpace(req.NewName)
		switch {
		case i < 0:
			return errGroupNotFound
		case newName == "":
			return fault.New(fault.Invalid, "newName is required")
		case newName != name && find(newName) >= 0:
			return errGroupExists
		}
		groups[i].Name = newName
	case "remove", "delete":
		i := find(name)
		if i < 0 {
			return errGroupNotFound
		}
		groups = slices.Delete(groups, i, i+1)
	case "reorder", "set":
		if req.Groups == nil {
			return fault.New(fault.Invalid, "groups is required")
		}
		groups = req.Groups
	default:
		return fault.New(fault.Invalid, "action must be add, update, rename, remove, reorder or set")
	}
	if groups, err = cleanGroups(groups); err != nil {
		return err
	}
	if err := s.savePrefs(ctx, user, scope, groups); err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, map[string]any{"success": true, "groups": groups})
}

// cleanGroups checks a list of groups: named, names unique, containers
// clean, not too many.
func cleanGroups(groups []favoriteGroup) ([]favoriteGroup, error) {
	if len(groups) > maxFavorites {
		return nil, fault.Invalidf("At most %d favorite groups", maxFavorites)
	}
	seen := map[string]bool{}
	for i := range groups {
		g := &groups[i]
		g.Name = strings.TrimSpace(g.Name)
		if g.Name == "" {
			return nil, fault.New(fault.Invalid, "Every favorite group needs a name")
		}
		if seen[g.Name] {
			return nil, errGroupExists
		}
		seen[g.Name] = true
		names, err := cleanNames(g.Containers)
		if err != nil {
			return nil, err
		}
		g.Containers = names
	}
	return groups, nil
}

// validGridID is the form of a grid id: the console's table names.
func validGridID(id string) bool {
	if id == "" || len(id) > 100 {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.:", r)) {
			return false
		}
	}
	return true
}

// getGrid answers the caller's table preferences:
// {preferences: {<gridId>: {columns: [...]}}}.
func (s *Server) getGrid(c *gin.Context) error {
	grids := map[string]json.RawMessage{}
	if err := s.loadPrefs(c.Request.Context(), preferencesOwner(c), prefsGrid, &grids); err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, map[string]any{"preferences": grids})
}

// postGrid stores the preferences of one table: {gridId, columns: [...]}
// (columns as the console keeps them: ids, visibility, widths). Answers
// {success, preferences}.
func (s *Server) postGrid(c *gin.Context) error {
	var req gridInput
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	if !validGridID(req.GridID) {
		return fault.New(fault.Invalid, "gridId is required (letters, digits, - _ . :)")
	}
	var cols []json.RawMessage
	if err := json.Unmarshal(req.Columns, &cols); err != nil || cols == nil {
		return fault.New(fault.Invalid, "columns must be an array")
	}
	ctx, user := c.Request.Context(), preferencesOwner(c)
	grids := map[string]json.RawMessage{}
	if err := s.loadPrefs(ctx, user, prefsGrid, &grids); err != nil {
		return err
	}
	grid, err := json.Marshal(map[string]any{"columns": cols})
	if err != nil {
		return err
	}
	grids[req.GridID] = grid
	if err := s.savePrefs(ctx, user, prefsGrid, grids); err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, map[string]any{"success": true, "preferences": grids})
}

// deleteGrid resets the preferences of table ?gridId, or of every table
// without it. Answers {success, preferences}.
func (s *Server) deleteGrid(c *gin.Context) error {
	ctx, user := c.Request.Context(), preferencesOwner(c)
	grids := map[string]json.RawMessage{}
	if id, ok := c.GetQuery("gridId"); ok {
		if !validGridID(id) {
			return fault.New(fault.Invalid, "Invalid gridId")
		}
		if err := s.loadPrefs(ctx, user, prefsGrid, &grids); err != nil {
			return err
		}
		delete(grids, id)
	}
	if err := s.savePrefs(ctx, user, prefsGrid, grids); err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, map[string]any{"success": true, "preferences": grids})
}
