package api

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/registry"
	"github.com/berth-dev/berth/shared/fault"
)

// registryBrowser is the registry browser (stateless: one per request).
func (s *Server) registryBrowser() *registry.Service {
	return registry.New(s.store, s.log, s.outbound)
}

// registryParam reads the registry query parameter: the id of a
// configured registry.
func registryParam(c *gin.Context) (int64, error) {
	v := strings.TrimSpace(c.Query("registry"))
	if v == "" {
		return 0, fault.New(fault.Invalid, "Registry ID is required")
	}
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil || id <= 0 {
		return 0, fault.New(fault.NotFound, "Registry not found")
	}
	return id, nil
}

// catalogJSON is a page of a registry's catalog.
type catalogJSON struct {
	Repositories []registry.Repository `json:"repositories"`
	Pagination   struct {
		PageSize int     `json:"pageSize"`
		HasMore  bool    `json:"hasMore"`
		NextLast *string `json:"nextLast"`
	} `json:"pagination"`
}

// registryCatalog answers one page of repositories (n, last: the registry
// API's paging, passed through); the next page's URL is also in a Link
// header, as the registry API gives it.
func (s *Server) registryCatalog(c *gin.Context) error {
	id, err := registryParam(c)
	if err != nil {
		return err
	}
	n, err := queryInt(c, "n", 0)
	if err != nil {
		return err
	}
	page, err := s.registryBrowser().Catalog(c.Request.Context(), id, n, c.Query("last"))
	if err != nil {
		return err
	}
	var out catalogJSON
	out.Repositories = page.Repositories
	if out.Repositories == nil {
		out.Repositories = []registry.Repository{}
	}
	out.Pagination.PageSize = page.PageSize
	if page.NextLast != "" {
		out.Pagination.HasMore, out.Pagination.NextLast = true, &page.NextLast
		q := c.Request.URL.Query()
		q.Set("last", page.NextLast)
		q.Set("n", strconv.Itoa(page.PageSize))
		c.Header("Link", `<`+c.Request.URL.Path+`?`+q.Encode()+`>; rel="next"`)
	}
	return writeJSON(c, http.StatusOK, out)
}

// registrySearch answers the repositories whose names contain q.
func (s *Server) registrySearch(c *gin.Context) error {
	id, err := registryParam(c)
	if err != nil {
		return err
	}
	repos, err := s.registryBrowser().Search(c.Request.Context(), id, c.Query("q"))
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, map[string]any{"repositories": repos})
}

// registryTags answers the tags of a repository.
func (s *Server) registryTags(c *gin.Context) error {
	id, err := registryParam(c)
	if err != nil {
		return err
	}
	repo := strings.TrimSpace(c.Query("repository"))
	tags, err := s.registryBrowser().Tags(c.Request.Context(), id, repo)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, map[string]any{"repository": repo, "tags": tags})
}

// deleteRegistryImage deletes a tag's manifest from the registry.
func (s *Server) deleteRegistryImage(c *gin.Context) error {
	id, err := registryParam(c)
	if err != nil {
		return err
	}
	repo, tag := strings.TrimSpace(c.Query("repository")), strings.TrimSpace(c.Query("tag"))
	digest, err := s.registryBrowser().DeleteImage(c.Request.Context(), id, repo, tag)
	if err != nil {
		return err
	}
	noteAudit(c, digest, repo+":"+tag)
	return writeJSON(c, http.StatusOK, map[string]any{"success": true, "digest": digest})
}

// setDefaultRegistry makes a registry the default one.
func (s *Server) setDefaultRegistry(c *gin.Context) error {
	id, err := pathID(c, "Registry")
	if err != nil {
		return err
	}
	reg, err := s.registryBrowser().SetDefault(c.Request.Context(), id)
	if err != nil {
		return err
	}
	noteAudit(c, strconv.FormatInt(reg.ID, 10), reg.Name)
	return writeJSON(c, http.StatusOK, toRegistryJSON(reg))
}
