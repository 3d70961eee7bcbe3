package api

// registryBrowserRoutes are the routes of the registry browser and the default registry (issue 15).
// The browser speaks to the registry from the server (no environment), with
// the registry's stored credentials.
func (s *Server) registryBrowserRoutes() []route {
	return []route{
		{"GET", "/api/registry/catalog", "registries:view", NoEnv, "", false, s.registryCatalog},
		{"GET", "/api/registry/search", "registries:view", NoEnv, "", false, s.registrySearch},
		{"GET", "/api/registry/tags", "registries:view", NoEnv, "", false, s.registryTags},
		{"DELETE", "/api/registry/image", "registries:delete", NoEnv, "registry.image.delete", false, s.deleteRegistryImage},
		{"POST", "/api/registries/{id}/default", "registries:edit", NoEnv, "registry.default", false, s.setDefaultRegistry},
	}
}
