package api

// inventoryRoutes are the routes of the remaining operations of the reference inventory (batch updates, update checks, socket detection, icons, avatars, favourites, changelog, dependencies).
func (s *Server) inventoryRoutes() []route {
	return []route{}
}
