package api

// volumeContentRoutes are the routes of volume browsing, cloning and exports and image exports (issue 15).
func (s *Server) volumeContentRoutes() []route {
	return []route{
		{"GET", "/api/volumes/{name}/browse", "volumes:inspect", EnvQuery, "", false, s.browseVolume},
		{"GET", "/api/volumes/{name}/browse/content", "volumes:inspect", EnvQuery, "", false, s.volumeFileContent},
		// Releasing a browse helper changes nothing the user made.
		{"POST", "/api/volumes/{name}/browse/release", "volumes:inspect", EnvQuery, Quiet, false, s.releaseVolumeBrowse},
		{"POST", "/api/volumes/{name}/clone", "volumes:create", EnvQuery, "volume.clone", false, s.cloneVolume},
		{"GET", "/api/volumes/{name}/export", "volumes:inspect", EnvQuery, "", false, s.exportVolume},
		{"GET", "/api/images/{id}/export", "images:inspect", EnvQuery, "", false, s.exportImage},
	}
}
