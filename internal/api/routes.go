package api

// Perm is the permission a route requires: a "<resource>:<action>" pair
// checked against the request's environment, or Public.
type Perm string

// Public marks a route that needs no permission (health, sign-in).
const Public Perm = "public"

// route is one entry of THE route table.
type route struct {
	Method string
	Path   string
	Perm   Perm
	h      handler
}

// routes is the route table: every endpoint, with its permission.
func (s *Server) routes() []route {
	return []route{
		{"GET", "/api/health", Public, s.health},

		{"GET", "/api/environments", "environments:view", s.listEnvironments},
		{"POST", "/api/environments", "environments:create", s.createEnvironment},
		{"POST", "/api/environments/test", "environments:create", s.testNewEnvironment},
		{"GET", "/api/environments/{id}", "environments:view", s.getEnvironment},
		{"PUT", "/api/environments/{id}", "environments:edit", s.updateEnvironment},
		{"DELETE", "/api/environments/{id}", "environments:delete", s.deleteEnvironment},
		{"POST", "/api/environments/{id}/test", "environments:view", s.testEnvironment},

		{"GET", "/api/containers", "containers:view", s.listContainers},
		{"POST", "/api/containers", "containers:create", s.createContainer},
		{"GET", "/api/containers/stats", "containers:view", s.allContainerStats},
		{"GET", "/api/containers/stats/stream", "containers:view", s.streamContainerStats},
		{"GET", "/api/containers/{id}", "containers:inspect", s.inspectContainer},
		{"GET", "/api/containers/{id}/inspect", "containers:inspect", s.inspectContainer},
		{"DELETE", "/api/containers/{id}", "containers:remove", s.removeContainer},
		{"POST", "/api/containers/{id}/start", "containers:start", s.containerAction},
		{"POST", "/api/containers/{id}/stop", "containers:stop", s.containerAction},
		{"POST", "/api/containers/{id}/restart", "containers:restart", s.containerAction},
		{"POST", "/api/containers/{id}/pause", "containers:stop", s.containerAction},
		{"POST", "/api/containers/{id}/unpause", "containers:start", s.containerAction},
		{"POST", "/api/containers/{id}/rename", "containers:edit", s.renameContainer},
		{"GET", "/api/containers/{id}/stats", "containers:view", s.containerStats},
		{"GET", "/api/containers/{id}/logs", "containers:logs", s.containerLogs},
		{"GET", "/api/containers/{id}/logs/stream", "containers:logs", s.streamContainerLogs},
		{"GET", "/api/containers/{id}/top", "containers:inspect", s.containerTop},
		{"POST", "/api/containers/{id}/exec", "containers:exec", s.createExec},
		{"GET", "/api/containers/exec/{execId}/attach", "containers:exec", s.attachExec},
		{"POST", "/api/containers/exec/{execId}/resize", "containers:exec", s.resizeExec},

		{"GET", "/api/events", "containers:view", s.streamEvents},
	}
}
