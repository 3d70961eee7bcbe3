package api

import "github.com/berth-dev/berth/server/internal/files"

// containerFilesRoutes are the routes of the container file browser, shells and the container update endpoints (issue 15).
//
// Reading files and detecting shells need containers:inspect; changing files
// needs containers:exec (writing a container's files is as strong as running
// a command in it); resource updates need containers:edit.
func (s *Server) containerFilesRoutes() []route {
	h := &fileHandlers{svc: files.New(s.engines, s.helperImg)}
	return []route{
		{"GET", "/api/containers/{id}/files", "containers:inspect", EnvQuery, "", false, h.list},
		{"GET", "/api/containers/{id}/files/content", "containers:inspect", EnvQuery, "", false, h.readContent},
		{"GET", "/api/containers/{id}/files/download", "containers:inspect", EnvQuery, "", false, h.download},
		{"PUT", "/api/containers/{id}/files/content", "containers:exec", EnvQuery, "container.file.write", false, h.writeContent},
		{"POST", "/api/containers/{id}/files/create", "containers:exec", EnvQuery, "container.file.create", false, h.create},
		{"DELETE", "/api/containers/{id}/files/delete", "containers:exec", EnvQuery, "container.file.delete", false, h.remove},
		{"POST", "/api/containers/{id}/files/rename", "containers:exec", EnvQuery, "container.file.rename", false, h.rename},
		{"POST", "/api/containers/{id}/files/chmod", "containers:exec", EnvQuery, "container.file.chmod", false, h.chmod},
		{"POST", "/api/containers/{id}/files/upload", "containers:exec", EnvQuery, "container.file.upload", false, h.upload},
		{"GET", "/api/containers/{id}/shells", "containers:inspect", EnvQuery, "", false, h.shells},
		{"POST", "/api/containers/{id}/update", "containers:edit", EnvQuery, "container.update", false, s.updateContainerSettings},
		{"POST", "/api/containers/{id}/update-runtime", "containers:edit", EnvQuery, "container.update_runtime", false, h.updateContainer},
	}
}
