package api

// templatesRoutes are the routes of app templates, template sources, config sets and labels (issue 15).
func (s *Server) templatesRoutes() []route {
	return []route{}
}
