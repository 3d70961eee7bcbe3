package api

// notificationRoutes are the routes of notifications: channels, tests and per-environment subscriptions.
func (s *Server) notificationRoutes() []route {
	return nil
}
