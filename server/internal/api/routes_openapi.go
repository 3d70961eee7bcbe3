package api

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// openAPIRoutes are the routes of the served OpenAPI document and its viewer (issue 15).
func (s *Server) openAPIRoutes() []route {
	return []route{
		// The description of every route (generated from this table): for
		// any signed-in user, API tokens included.
		{"GET", "/api/openapi.json", Authenticated, NoEnv, "", false, s.getOpenAPI},
		// The viewer: a page of the console's build, which reads the
		// document with the browser's session (signed out, it says so).
		{"GET", "/api/docs", Public, NoEnv, "", false, s.apiDocs},
	}
}

func (s *Server) getOpenAPI(c *gin.Context) error {
	body, err := s.openAPIJSON()
	if err != nil {
		return err
	}
	c.Header("Cache-Control", "no-cache")
	c.Data(http.StatusOK, "application/json", body)
	return nil
}

// apiDocsPage is the viewer's page in the console's build (web/docs.html).
const apiDocsPage = "/docs.html"

// apiDocs answers the viewer's page itself (not a redirect), from the
// console being served: the embedded build or WEB_DIR's.
func (s *Server) apiDocs(c *gin.Context) error {
	r := c.Request.Clone(c.Request.Context())
	r.URL.Path, r.URL.RawPath = apiDocsPage, ""
	s.console.ServeHTTP(c.Writer, r)
	return nil
}
