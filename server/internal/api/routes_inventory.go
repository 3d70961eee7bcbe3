package api

// inventoryRoutes are the routes of the remaining operations of the reference inventory (batch updates, update checks, socket detection, icons, avatars, favourites, changelog, dependencies).
func (s *Server) inventoryRoutes() []route {
	return []route{
		// Updates of an environment's containers: a check that records the
		// pending updates, and updates of several containers through the
		// auto-update's health-gated recreate.
		{"POST", "/api/containers/check-updates", "containers:edit", EnvQuery, "container.check_updates", false, s.checkUpdates},
		{"POST", "/api/containers/batch-update", "containers:create", EnvQuery, "container.batch_update", false, s.batchUpdate},
		{"POST", "/api/containers/batch-update-stream", "containers:create", EnvQuery, "container.batch_update", false, s.batchUpdateStream},
		// Dismisses the recorded pending updates: all of ?env, or one container's (?containerName=).
		{"DELETE", "/api/containers/pending-updates", "containers:edit", EnvQuery, "container.pending_updates_clear", false, s.clearPendingUpdates},

		{"GET", "/api/environments/detect-socket", "environments:create", NoEnv, "", false, s.detectSocket},
		{"GET", "/api/environments/{id}/icon", "environments:view", EnvPath, "", false, s.getEnvironmentIcon},
		{"POST", "/api/environments/{id}/icon", "environments:edit", EnvPath, "environment.icon", false, s.setEnvironmentIcon},
		{"DELETE", "/api/environments/{id}/icon", "environments:edit", EnvPath, "environment.icon_delete", false, s.deleteEnvironmentIcon},

		{"GET", "/api/profile/avatar", Authenticated, NoEnv, "", false, s.getAvatar},
		{"POST", "/api/profile/avatar", Authenticated, NoEnv, "profile.avatar", false, s.setAvatar},
		{"DELETE", "/api/profile/avatar", Authenticated, NoEnv, "profile.avatar_delete", false, s.deleteAvatar},

		{"GET", "/api/preferences/favorites", Authenticated, NoEnv, "", false, s.getFavorites},
		{"POST", "/api/preferences/favorites", Authenticated, NoEnv, Quiet, false, s.postFavorites},
		{"GET", "/api/preferences/favorite-groups", Authenticated, NoEnv, "", false, s.getFavoriteGroups},
		{"POST", "/api/preferences/favorite-groups", Authenticated, NoEnv, Quiet, false, s.postFavoriteGroups},
		{"GET", "/api/preferences/grid", Authenticated, NoEnv, "", false, s.getGrid},
		{"POST", "/api/preferences/grid", Authenticated, NoEnv, Quiet, false, s.postGrid},
		{"DELETE", "/api/preferences/grid", Authenticated, NoEnv, Quiet, false, s.deleteGrid},

		{"GET", "/api/changelog", Authenticated, NoEnv, "", false, s.getChangelog},
		{"GET", "/api/dependencies", Authenticated, NoEnv, "", false, s.getDependencies},

		// PUT is PATCH's twin: the fields sent replace, the others stay.
		{"PUT", "/api/auth/ldap/{id}", "settings:edit", NoEnv, "ldap.update", false, s.patchLDAP},
		{"PUT", "/api/auth/oidc/{id}", "settings:edit", NoEnv, "oidc.update", false, s.patchOIDC},
	}
}
