package api

import (
	"cmp"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/registry"
	"github.com/berth-dev/berth/shared/fault"
)

// registryBrowser is the registry browser (stateless: one per request).
func (s *Server) registryBrowser() *registry.Service {
	return registry.New(s.store, s.log, s.outbound).UseHubIndex(s.hubIndex)
}

// optionalRegistryParam reads the registry query parameter where it may be
// absent (Docker Hub, then): ok is false without it.
func optionalRegistryParam(c *gin.Context) (id int64, ok bool, err error) {
	if strings.TrimSpace(c.Query("registry")) == "" {
		return 0, false, nil
	}
	id, err = registryParam(c)
	return id, err == nil, err
}

// imageParam reads the repository a registry request names: image (the
// reference's name) or repository (Berth's, kept for its console and
// scripts). Both, different, is refused.
func imageParam(c *gin.Context) (string, error) {
	image, repo := strings.TrimSpace(c.Query("image")), strings.TrimSpace(c.Query("repository"))
	if image != "" && repo != "" && image != repo {
		return "", fault.New(fault.Invalid, "image and repository name different repositories; send one of them")
	}
	return cmp.Or(image, repo), nil
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

// registrySearch answers the repositories whose names contain term (q:
// Berth's older name), of the registry named, else of Docker Hub, in Docker
// Hub's search shape (a list).
func (s *Server) registrySearch(c *gin.Context) error {
	id, ok, err := optionalRegistryParam(c)
	if err != nil {
		return err
	}
	limit, err := queryInt(c, "limit", 0)
	if err != nil {
		return err
	}
	term := cmp.Or(c.Query("term"), c.Query("q"))
	var found []registry.SearchResult
	if ok {
		found, err = s.registryBrowser().Search(c.Request.Context(), id, term, limit)
	} else {
		found, err = s.registryBrowser().HubSearch(c.Request.Context(), term, limit)
	}
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, found)
}

// registryTagsJSON is a page of a repository's tags.
type registryTagsJSON struct {
	Tags       []registry.Tag `json:"tags"`
	Total      int            `json:"total"`
	Page       int            `json:"page"`
	PageSize   int            `json:"pageSize"`
	HasNext    bool           `json:"hasNext"`
	HasPrev    bool           `json:"hasPrev"`
	Repository string         `json:"repository"` // the repository asked for (Berth's answer had it)
}

// registryTags answers a page of the tags of a repository (image, or
// repository) of the registry named, else of Docker Hub: page and pageSize
// page them (a registry's come all in one page unless pageSize is sent;
// Docker Hub's 20 a page by default).
func (s *Server) registryTags(c *gin.Context) error {
	id, ok, err := optionalRegistryParam(c)
	if err != nil {
		return err
	}
	repo, err := imageParam(c)
	if err != nil {
		return err
	}
	page, err := queryInt(c, "page", 0)
	if err != nil {
		return err
	}
	pageSize, err := queryInt(c, "pageSize", 0)
	if err != nil {
		return err
	}
	var tags registry.TagPage
	if ok {
		tags, err = s.registryBrowser().Tags(c.Request.Context(), id, repo, page, pageSize)
	} else {
		tags, err = s.registryBrowser().HubTags(c.Request.Context(), repo, page, pageSize)
	}
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, registryTagsJSON{Tags: tags.Tags, Total: tags.Total, Page: tags.Page,
		PageSize: tags.PageSize, HasNext: tags.HasNext, HasPrev: tags.HasPrev, Repository: repo})
}

// registryTagInfo answers one tag's digest, size, creation time and
// platforms, read from its manifest; details the registry would not give
// are missing, with the reason. Without a registry (Docker Hub, whose tag
// lists carry these) nothing is read.
func (s *Server) registryTagInfo(c *gin.Context) error {
	id, ok, err := optionalRegistryParam(c)
	if err != nil {
		return err
	}
	repo, err := imageParam(c)
	if err != nil {
		return err
	}
	tag := strings.TrimSpace(c.Query("tag"))
	if repo == "" || tag == "" {
		return fault.New(fault.Invalid, "image and tag are required")
	}
	if !ok {
		return writeJSON(c, http.StatusOK, registry.TagInfo{Platforms: []registry.Platform{}, Reason: "Not supported without a registry"})
	}
	info, err := s.registryBrowser().TagInfo(c.Request.Context(), id, repo, tag)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, info)
}

// deleteRegistryImage deletes a tag's manifest from the registry.
func (s *Server) deleteRegistryImage(c *gin.Context) error {
	id, err := registryParam(c)
	if err != nil {
		return err
	}
	repo, err := imageParam(c)
	if err != nil {
		return err
	}
	tag := strings.TrimSpace(c.Query("tag"))
	digest, err := s.registryBrowser().DeleteImage(c.Request.Context(), id, repo, tag)
	if err != nil {
		return err
	}
	noteAudit(c, digest, repo+":"+tag)
	return writeJSON(c, http.StatusOK, digestAnswer{Success: true, Digest: digest, Message: "Deleted " + repo + ":" + tag})
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
