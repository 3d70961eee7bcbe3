package api

import "github.com/berth-dev/berth/server/internal/registry"

// registryBrowserRoutes are the routes of the registry browser and the default registry (issue 15).
// The browser speaks to the registry from the server (no environment), with
// the registry's stored credentials.
func (s *Server) registryBrowserRoutes() []route {
	return []route{
		{"GET", "/api/registry/catalog", "registries:view", NoEnv, "", false, s.registryCatalog},
		{"GET", "/api/registry/search", "registries:view", NoEnv, "", false, s.registrySearch},
		{"GET", "/api/registry/tags", "registries:view", NoEnv, "", false, s.registryTags},
		{"GET", "/api/registry/tag-info", "registries:view", NoEnv, "", false, s.registryTagInfo},
		{"DELETE", "/api/registry/image", "registries:delete", NoEnv, "registry.image.delete", false, s.deleteRegistryImage},
		{"POST", "/api/registries/{id}/default", "registries:edit", NoEnv, "registry.default", false, s.setDefaultRegistry},
	}
}

// registryBrowserOps document the registry browser's routes added after
// issue 15 (the others are in contentOps).
var registryBrowserOps = map[string]apiOp{
	"GET /api/registry/tag-info": {Summary: "One tag's digest, size, creation time and platforms, read from its manifest (what the registry would not give is missing, with the reason)",
		Response: registry.TagInfo{}, Query: append([]queryParam{{"image", "string", "the repository"},
			{"repository", "string", "image's older name"}, {"tag", "string", "the tag or a digest"}}, registryQuery...)},
}
