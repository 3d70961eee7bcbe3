package api

// activityRoutes are the routes of activity: collected engine events and host metrics, and the dashboard stream, history and preferences.
func (s *Server) activityRoutes() []route {
	return nil
}
