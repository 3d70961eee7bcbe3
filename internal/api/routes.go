package api

// Perm is the permission a route requires: a "<resource>:<action>" pair
// checked against the request's environment, or Public.
type Perm string

// Public marks a route that needs no permission (health, sign-in).
const Public Perm = "public"

// Selector says how a route names its environment.
type Selector int

// The environment selectors.
const (
	NoEnv      Selector = iota // the route is not about one environment's engine
	EnvQuery                   // query parameter env (default 1)
	EnvIDQuery                 // query parameter envId (exec endpoints)
)

// route is one entry of THE route table.
type route struct {
	Method string
	Path   string
	Perm   Perm
	Env    Selector
	h      handler
}

// routes is the route table: every endpoint, with its permission.
func (s *Server) routes() []route {
	return []route{
		{"GET", "/api/health", Public, NoEnv, s.health},

		{"GET", "/api/environments", "environments:view", NoEnv, s.listEnvironments},
		{"POST", "/api/environments", "environments:create", NoEnv, s.createEnvironment},
		{"POST", "/api/environments/test", "environments:create", NoEnv, s.testNewEnvironment},
		{"GET", "/api/environments/{id}", "environments:view", NoEnv, s.getEnvironment},
		{"PUT", "/api/environments/{id}", "environments:edit", NoEnv, s.updateEnvironment},
		{"DELETE", "/api/environments/{id}", "environments:delete", NoEnv, s.deleteEnvironment},
		{"POST", "/api/environments/{id}/test", "environments:view", NoEnv, s.testEnvironment},

		{"GET", "/api/containers", "containers:view", EnvQuery, s.listContainers},
		{"POST", "/api/containers", "containers:create", EnvQuery, s.createContainer},
		{"GET", "/api/containers/stats", "containers:view", EnvQuery, s.allContainerStats},
		{"GET", "/api/containers/stats/stream", "containers:view", EnvQuery, s.streamContainerStats},
		{"GET", "/api/containers/{id}", "containers:inspect", EnvQuery, s.inspectContainer},
		{"GET", "/api/containers/{id}/inspect", "containers:inspect", EnvQuery, s.inspectContainer},
		{"DELETE", "/api/containers/{id}", "containers:remove", EnvQuery, s.removeContainer},
		{"POST", "/api/containers/{id}/start", "containers:start", EnvQuery, s.containerAction},
		{"POST", "/api/containers/{id}/stop", "containers:stop", EnvQuery, s.containerAction},
		{"POST", "/api/containers/{id}/restart", "containers:restart", EnvQuery, s.containerAction},
		{"POST", "/api/containers/{id}/pause", "containers:stop", EnvQuery, s.containerAction},
		{"POST", "/api/containers/{id}/unpause", "containers:start", EnvQuery, s.containerAction},
		{"POST", "/api/containers/{id}/rename", "containers:edit", EnvQuery, s.renameContainer},
		{"GET", "/api/containers/{id}/stats", "containers:view", EnvQuery, s.containerStats},
		{"GET", "/api/containers/{id}/logs", "containers:logs", EnvQuery, s.containerLogs},
		{"GET", "/api/containers/{id}/logs/stream", "containers:logs", EnvQuery, s.streamContainerLogs},
		{"GET", "/api/containers/{id}/top", "containers:inspect", EnvQuery, s.containerTop},
		{"POST", "/api/containers/{id}/exec", "containers:exec", EnvIDQuery, s.createExec},
		{"GET", "/api/containers/exec/{execId}/attach", "containers:exec", EnvIDQuery, s.attachExec},
		{"POST", "/api/containers/exec/{execId}/resize", "containers:exec", EnvIDQuery, s.resizeExec},

		{"GET", "/api/events", "containers:view", EnvQuery, s.streamEvents},
	}
}
