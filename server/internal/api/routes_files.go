package api

// containerFilesRoutes are the routes of the container file browser, shells and the container update endpoints (issue 15).
func (s *Server) containerFilesRoutes() []route {
	return []route{}
}
