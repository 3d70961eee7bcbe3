package api

// volumeContentRoutes are the routes of volume browsing, cloning and exports and image exports (issue 15).
func (s *Server) volumeContentRoutes() []route {
	return []route{}
}
