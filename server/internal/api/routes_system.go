package api

import (
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/system"
)

// systemRoutes are the routes of system, host, disk, database health, prune, merged logs, Prometheus metrics, audit streams and export, profile and preferences.
// Building them also sets up the area's state (once): the server's start
// time, the engine-wide operations and the Prometheus collectors.
func (s *Server) systemRoutes() []route {
	s.sys.setup(s)
	return []route{
		// Prometheus: for a scraper holding an API token of a user with settings:view.
		{"GET", "/api/metrics", "settings:view", NoEnv, "", false, s.prometheusMetrics},
		// Where Prometheus looks by default, and where the reference serves
		// them: scrape configs written for it work unchanged.
		{"GET", "/metrics", "settings:view", NoEnv, "", false, s.prometheusMetrics},

		{"GET", "/api/system", "settings:view", NoEnv, "", false, s.getSystem},
		{"GET", "/api/health/database", "settings:view", NoEnv, "", false, s.databaseHealth},
		{"GET", "/api/host", "environments:view", EnvQuery, "", false, s.getHost},
		{"GET", "/api/system/disk", "environments:view", EnvQuery, "", false, s.getDisk},
		{"GET", "/api/containers/sizes", "containers:view", EnvQuery, "", false, s.containerSizes},

		// The handler also checks the permissions of what a prune of everything removes.
		{"POST", "/api/prune/containers", "containers:remove", EnvQuery, "container.prune", false, s.prune(system.Containers)},
		{"POST", "/api/prune/networks", "networks:remove", EnvQuery, "network.prune", false, s.prune(system.Networks)},
		{"POST", "/api/prune/volumes", "volumes:remove", EnvQuery, "volume.prune", false, s.prune(system.Volumes)},
		{"POST", "/api/prune/all", "images:remove", EnvQuery, "system.prune", false, s.prune(system.All)},

		{"GET", "/api/logs/merged", "containers:logs", EnvQuery, "", false, s.mergedLogs},

		{"GET", "/api/audit/events", "audit_logs:view", NoEnv, "", false, s.streamAudit},
		{"GET", "/api/audit/users", "audit_logs:view", NoEnv, "", false, s.auditUsers},
		{"GET", "/api/audit/export", "audit_logs:view", NoEnv, "", false, s.exportAuditFile},

		{"GET", "/api/profile", Authenticated, NoEnv, "", false, s.getProfile},
		{"PUT", "/api/profile", Authenticated, NoEnv, "profile.update", false, s.putProfile},
		{"GET", "/api/profile/preferences", Authenticated, NoEnv, "", false, s.getPreferences(store.PrefsProfile)},
		{"PUT", "/api/profile/preferences", Authenticated, NoEnv, Quiet, false, s.putPreferences(store.PrefsProfile)},
		{"POST", "/api/profile/preferences", Authenticated, NoEnv, Quiet, false, s.putPreferences(store.PrefsProfile)},
		{"GET", "/api/dashboard/preferences", Authenticated, NoEnv, "", false, s.getPreferences(store.PrefsDashboard)},
		{"POST", "/api/dashboard/preferences", Authenticated, NoEnv, Quiet, false, s.putPreferences(store.PrefsDashboard)},
		{"PUT", "/api/dashboard/preferences", Authenticated, NoEnv, Quiet, false, s.putPreferences(store.PrefsDashboard)},

		// Console-wide settings: general ones (a JSON object the console
		// keeps), and the default theme, which the sign-in page reads too.
		{"GET", "/api/settings/general", "settings:view", NoEnv, "", false, s.getGeneralSettings},
		{"POST", "/api/settings/general", "settings:edit", NoEnv, "settings.general", false, s.putGeneralSettings},
		{"PUT", "/api/settings/general", "settings:edit", NoEnv, "settings.general", false, s.putGeneralSettings},
		{"GET", "/api/settings/theme", Public, NoEnv, "", false, s.getSettingsObject(themeSettingsKey, `{"theme":"system"}`)},
		{"PUT", "/api/settings/theme", "settings:edit", NoEnv, "settings.theme", false, s.putSettingsObject(themeSettingsKey)},
		{"POST", "/api/settings/theme", "settings:edit", NoEnv, "settings.theme", false, s.putSettingsObject(themeSettingsKey)},
	}
}
