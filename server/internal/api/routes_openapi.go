package api

// openAPIRoutes are the routes of the served OpenAPI document and its viewer (issue 15).
func (s *Server) openAPIRoutes() []route {
	return []route{}
}
