package registry

import (
	"context"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/berth-dev/berth/shared/fault"
)

// Search limits.
const (
	// DefaultSearchLimit is how many results a search returns when the
	// client names no limit (the reference's 25).
	DefaultSearchLimit = 25
	// MaxSearchLimit is the most results a client may ask for.
	MaxSearchLimit = searchResults
)

// SearchResult is a repository found by a search, in Docker Hub's search
// shape (a registry knows only the name).
type SearchResult struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	StarCount   int    `json:"star_count"`
	IsOfficial  bool   `json:"is_official"`
	IsAutomated bool   `json:"is_automated"`
}

var errSearchTerm = fault.New(fault.Invalid, "Search term is required")

// searchLimit validates a search's limit (0: DefaultSearchLimit).
func searchLimit(limit int) (int, error) {
	switch {
	case limit == 0:
		return DefaultSearchLimit, nil
	case limit < 0 || limit > MaxSearchLimit:
		return 0, fault.Invalidf("Limit must be between 1 and %d", MaxSearchLimit)
	}
	return limit, nil
}

// Search returns at most limit (0: DefaultSearchLimit) repositories of
// registry id whose names contain term (case insensitive): a term naming a
// repository that exists (team/app) first, then the catalog's matches in
// its order (of the registry's namespace, named relative to it). A Docker
// Hub registry is searched through the Docker Hub index (HubSearch).
func (s *Service) Search(ctx context.Context, id int64, term string, limit int) ([]SearchResult, error) {
	term = strings.TrimSpace(term)
	if term == "" {
		return nil, errSearchTerm
	}
	limit, err := searchLimit(limit)
	if err != nil {
		return nil, err
	}
	t, err := s.target(ctx, id)
	if err != nil {
		return nil, err
	}
	if t.hub {
		return s.HubSearch(ctx, term, limit)
	}
	return t.search(ctx, term, limit)
}

// search searches a registry through the registry API.
func (t target) search(ctx context.Context, term string, limit int) ([]SearchResult, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var names []string
	if strings.Contains(term, "/") && t.exists(ctx, term) {
		names = append(names, strings.Trim(term, "/"))
	}
	found, err := t.catalogSearch(ctx, term, limit)
	if err != nil {
		return nil, err
	}
	for _, n := range found {
		if len(names) < limit && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	out := make([]SearchResult, len(names))
	for i, n := range names {
		out[i].Name = n
	}
	return out, nil
}

// exists reports whether the registry lists tags of repository (a direct
// look-up, quicker than the catalog on a large registry).
func (t target) exists(ctx context.Context, repository string) bool {
	repo, err := t.repository(repository)
	if err != nil {
		return false
	}
	_, err = remote.List(repo, t.options(ctx)...)
	return err == nil
}
