package api

// notificationRoutes are the routes of notifications: channels, tests and per-environment subscriptions.
func (s *Server) notificationRoutes() []route {
	return []route{
		{"GET", "/api/notifications", "notifications:view", NoEnv, "", false, s.listNotifications},
		{"POST", "/api/notifications", "notifications:create", NoEnv, "notification.create", false, s.createNotification},
		{"POST", "/api/notifications/test", "notifications:edit", NoEnv, Quiet, false, s.testNewNotification},
		{"GET", "/api/notifications/trigger-test", "notifications:view", NoEnv, "", false, s.notificationCatalogue},
		{"POST", "/api/notifications/trigger-test", "notifications:edit", NoEnv, "notification.trigger_test", false, s.triggerTestNotification},
		{"GET", "/api/notifications/{id}", "notifications:view", NoEnv, "", false, s.getNotification},
		{"PUT", "/api/notifications/{id}", "notifications:edit", NoEnv, "notification.update", false, s.updateNotification},
		{"DELETE", "/api/notifications/{id}", "notifications:delete", NoEnv, "notification.delete", false, s.deleteNotification},
		{"POST", "/api/notifications/{id}/test", "notifications:edit", NoEnv, Quiet, false, s.testNotification},

		{"GET", "/api/environments/{id}/notifications", "notifications:view", EnvPath, "", false, s.listEnvNotifications},
		{"POST", "/api/environments/{id}/notifications", "notifications:edit", EnvPath, "environment.notification.create", false, s.createEnvNotification},
		{"GET", "/api/environments/{id}/notifications/{notificationId}", "notifications:view", EnvPath, "", false, s.getEnvNotification},
		{"PUT", "/api/environments/{id}/notifications/{notificationId}", "notifications:edit", EnvPath, "environment.notification.update", false, s.updateEnvNotification},
		{"DELETE", "/api/environments/{id}/notifications/{notificationId}", "notifications:edit", EnvPath, "environment.notification.delete", false, s.deleteEnvNotification},
	}
}
