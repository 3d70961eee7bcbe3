package api

// activityRoutes are the routes of activity: collected engine events and host metrics, and the dashboard stream, history and preferences.
func (s *Server) activityRoutes() []route {
	return []route{
		// Stored engine events of every environment the caller may see
		// (activity:view), or of ?env=N alone (checked by the handlers).
		{"GET", "/api/activity", activityPerm, AnyEnv, "", false, s.listActivity},
		{"GET", "/api/activity/events", activityPerm, AnyEnv, "", false, s.streamActivity},
		{"GET", "/api/activity/stats", activityPerm, AnyEnv, "", false, s.activityStats},
		{"GET", "/api/activity/containers", activityPerm, AnyEnv, "", false, s.activityContainers},
		// Clearing needs environments:edit on ?env=N, or on every environment.
		{"DELETE", "/api/activity", activityClearPerm, AnyEnv, "activity.clear", false, s.clearActivity},
		{"GET", "/api/activity/settings", "settings:view", NoEnv, "", false, s.getActivitySettings},
		{"PUT", "/api/activity/settings", "settings:edit", NoEnv, "activity.settings", false, s.putActivitySettings},

		// The dashboard's figures as a stream: each environment's as soon as
		// it is gathered, then again periodically.
		{"GET", "/api/dashboard/stats/stream", dashboardPerm, AnyEnv, "", false, s.streamDashboardStats},
	}
}
