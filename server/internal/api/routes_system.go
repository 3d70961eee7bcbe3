package api

// systemRoutes are the routes of system, host, disk, database health, prune, merged logs, batch actions, Prometheus metrics, audit streams and export, profile and preferences.
func (s *Server) systemRoutes() []route {
	return nil
}
