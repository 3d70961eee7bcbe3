package api

// registryBrowserRoutes are the routes of the registry browser and the default registry (issue 15).
func (s *Server) registryBrowserRoutes() []route {
	return []route{}
}
