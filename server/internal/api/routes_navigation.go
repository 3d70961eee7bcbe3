package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/auth"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// navigationRoutes are the console's navigation settings (where it lands
// after sign-in, where a click on an environment leads: for everyone, and
// each user's own choice over it) and each user's sidebar (order and hidden
// entries).
func (s *Server) navigationRoutes() []route {
	return []route{
		{"GET", "/api/settings/navigation", Authenticated, NoEnv, "", false, s.getNavigation},
		// scope=user is the caller's own; the global scope needs
		// settings:edit, checked by the handler.
		{"PUT", "/api/settings/navigation", Authenticated, NoEnv, "settings.navigation", false, s.putNavigation},
		{"GET", "/api/preferences/sidebar", Authenticated, NoEnv, "", false, s.getSidebar},
		{"POST", "/api/preferences/sidebar", Authenticated, NoEnv, Quiet, false, s.postSidebar},
		{"DELETE", "/api/preferences/sidebar", Authenticated, NoEnv, Quiet, false, s.deleteSidebar},
	}
}

// navigationOps document the navigation and sidebar routes.
var navigationOps = map[string]apiOp{
	"GET /api/settings/navigation": {Summary: "The navigation in force for the caller (landing page, environment click target), the global and the caller's own values",
		Response: navigationAnswer{}},
	"PUT /api/settings/navigation": {Summary: "Set the navigation for everyone (scope=global, settings:edit) or for the caller (scope=user); an empty or null value clears it",
		Request: navigationPrefs{}, Response: navigationSaved{},
		Query: []queryParam{{"scope", "string", "global (default) or user"}}},
	"GET /api/preferences/sidebar":    {Summary: "The caller's sidebar: entry order and hidden entries", Response: sidebarAnswer{}},
	"POST /api/preferences/sidebar":   {Summary: "Save the caller's sidebar: entry order and hidden entries", Request: sidebarInput{}, Response: sidebarAnswer{}},
	"DELETE /api/preferences/sidebar": {Summary: "Reset the caller's sidebar to the console's default", Response: sidebarAnswer{}},
}

// Where the navigation is kept: the global values in a setting, a user's
// in their preferences.
const (
	navigationSettingKey = "console.navigation"
	prefsNavigation      = "navigation"
	prefsSidebar         = "sidebar"
)

// Navigation defaults and the pages the console can land on.
const (
	defaultLandingPage  = "dashboard"
	defaultEnvClickPage = "containers"
)

var navigationPages = []string{"dashboard", "containers", "stacks", "images", "volumes", "networks", "logs",
	"activity", "schedules", "environments", "registries", "git", "templates", "audit", "settings", "terminal"}

// navigationPrefs are navigation values: absent (null) values defer to the
// next level (user → global → default).
type navigationPrefs struct {
	LandingPage  *string `json:"landingPage"`  // one of the console's pages: dashboard, containers, stacks, images, volumes, networks, logs, activity, …
	EnvClickPage *string `json:"envClickPage"` // the page a click on an environment opens (same names)
}

// navigationEffective are the values in force.
type navigationEffective struct {
	LandingPage  string `json:"landingPage"`
	EnvClickPage string `json:"envClickPage"`
}

// navigationAnswer is GET /api/settings/navigation: user is null when the
// caller chose nothing (or authentication is off).
type navigationAnswer struct {
	Effective navigationEffective `json:"effective"`
	Global    navigationPrefs     `json:"global"`
	User      *navigationPrefs    `json:"user"`
}

// navigationSaved answers a PUT: the scope's values as saved.
type navigationSaved struct {
	Success bool             `json:"success"`
	Global  *navigationPrefs `json:"global,omitempty"`
	User    *navigationPrefs `json:"user,omitempty"`
}

// loadNavigation reads the global values and the caller's (nil when none).
func (s *Server) loadNavigation(c *gin.Context) (navigationPrefs, *navigationPrefs, error) {
	ctx := c.Request.Context()
	var global navigationPrefs
	if err := s.loadSettingJSON(ctx, navigationSettingKey, &global); err != nil {
		return global, nil, err
	}
	ident := identityOf(c)
	if ident == nil {
		return global, nil, nil
	}
	var user *navigationPrefs
	if err := s.loadPrefs(ctx, ident.User.ID, prefsNavigation, &user); err != nil {
		return global, nil, err
	}
	return global, user, nil
}

// loadSettingJSON decodes the setting key into v; v is left as it is when
// the setting is not there.
func (s *Server) loadSettingJSON(ctx context.Context, key string, v any) error {
	raw, err := s.store.GetSetting(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	return json.Unmarshal([]byte(raw), v)
}

// saveSettingJSON stores v as the setting key.
func (s *Server) saveSettingJSON(ctx context.Context, key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return s.store.SetSetting(ctx, key, string(b))
}

func (s *Server) getNavigation(c *gin.Context) error {
	global, user, err := s.loadNavigation(c)
	if err != nil {
		return err
	}
	eff := navigationEffective{LandingPage: defaultLandingPage, EnvClickPage: defaultEnvClickPage}
	for _, p := range []*navigationPrefs{&global, user} {
		if p == nil {
			continue
		}
		if p.LandingPage != nil {
			eff.LandingPage = *p.LandingPage
		}
		if p.EnvClickPage != nil {
			eff.EnvClickPage = *p.EnvClickPage
		}
	}
	return writeJSON(c, http.StatusOK, navigationAnswer{Effective: eff, Global: global, User: user})
}

// mergeNavigation applies the fields of req that were sent (raw) to p: a
// page name sets, "" or null clears, absent keeps.
func mergeNavigation(p *navigationPrefs, raw map[string]json.RawMessage) error {
	for field, dst := range map[string]**string{"landingPage": &p.LandingPage, "envClickPage": &p.EnvClickPage} {
		v, sent := raw[field]
		if !sent {
			continue
		}
		var page *string
		if err := json.Unmarshal(v, &page); err != nil {
			return fault.Invalidf("%s must be a string", field)
		}
		switch {
		case page == nil || *page == "":
			*dst = nil
		case !slices.Contains(navigationPages, *page):
			return fault.Invalidf("Invalid %s %q: one of %v", field, *page, navigationPages)
		default:
			*dst = page
		}
	}
	return nil
}

func (s *Server) putNavigation(c *gin.Context) error {
	scope := c.DefaultQuery("scope", "global")
	if scope != "global" && scope != "user" {
		return fault.New(fault.Invalid, "scope must be global or user")
	}
	var raw map[string]json.RawMessage
	if err := bindJSON(c, &raw); err != nil {
		return err
	}
	ident := identityOf(c)
	ctx := c.Request.Context()
	global, user, err := s.loadNavigation(c)
	if err != nil {
		return err
	}
	if scope == "user" {
		if ident == nil {
			return fault.New(fault.Invalid, "User navigation preferences need authentication, which is off: set the global ones")
		}
		if user == nil {
			user = &navigationPrefs{}
		}
		if err := mergeNavigation(user, raw); err != nil {
			return err
		}
		if err := s.savePrefs(ctx, ident.User.ID, prefsNavigation, user); err != nil {
			return err
		}
		noteAudit(c, "", "user")
		return writeJSON(c, http.StatusOK, navigationSaved{Success: true, User: user})
	}
	if ident != nil && ident.Access.Check("settings:edit", nil) != auth.Allowed {
		return errPermission
	}
	if err := mergeNavigation(&global, raw); err != nil {
		return err
	}
	if err := s.saveSettingJSON(ctx, navigationSettingKey, global); err != nil {
		return err
	}
	noteAudit(c, "", "global")
	return writeJSON(c, http.StatusOK, navigationSaved{Success: true, Global: &global})
}

// sidebarPrefs are a user's sidebar: the entries' order and the hidden
// ones (console entry ids; empty lists: the console's default).
type sidebarPrefs struct {
	Order  []string `json:"order"`
	Hidden []string `json:"hidden"`
}

// sidebarAnswer wraps them as the reference does.
type sidebarAnswer struct {
	Preferences sidebarPrefs `json:"preferences"`
}

// sidebarInput is POST /api/preferences/sidebar: both lists are required.
type sidebarInput struct {
	Order  *[]string `json:"order"`
	Hidden *[]string `json:"hidden"`
}

// maxSidebarEntries bounds each list.
const maxSidebarEntries = 100

// sidebarList decodes one list: an array of entry ids.
func sidebarList(field string, sent *[]string) ([]string, error) {
	if sent == nil || *sent == nil {
		return nil, fault.Invalidf("%s must be an array of strings", field)
	}
	list := *sent
	if len(list) > maxSidebarEntries {
		return nil, fault.Invalidf("%s holds at most %d entries", field, maxSidebarEntries)
	}
	out := []string{}
	for _, id := range list {
		if !validGridID(id) {
			return nil, fault.Invalidf("Invalid %s entry %q (letters, digits, - _ . :)", field, id)
		}
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out, nil
}

func (s *Server) getSidebar(c *gin.Context) error {
	p := sidebarPrefs{Order: []string{}, Hidden: []string{}}
	if err := s.loadPrefs(c.Request.Context(), preferencesOwner(c), prefsSidebar, &p); err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, sidebarAnswer{Preferences: p})
}

func (s *Server) postSidebar(c *gin.Context) error {
	var req sidebarInput
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	var p sidebarPrefs
	var err error
	if p.Order, err = sidebarList("order", req.Order); err != nil {
		return err
	}
	if p.Hidden, err = sidebarList("hidden", req.Hidden); err != nil {
		return err
	}
	if err := s.savePrefs(c.Request.Context(), preferencesOwner(c), prefsSidebar, p); err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, sidebarAnswer{Preferences: p})
}

func (s *Server) deleteSidebar(c *gin.Context) error {
	p := sidebarPrefs{Order: []string{}, Hidden: []string{}}
	if err := s.savePrefs(c.Request.Context(), preferencesOwner(c), prefsSidebar, p); err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, sidebarAnswer{Preferences: p})
}
