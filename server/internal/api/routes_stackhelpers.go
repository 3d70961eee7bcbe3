package api

// stackHelpersRoutes are the routes of the stack editor's and git helpers (issue 15).
func (s *Server) stackHelpersRoutes() []route {
	return []route{}
}
