package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/berth-dev/berth/server/internal/outbound"
	"github.com/berth-dev/berth/shared/fault"
)

// Catalog returns one page of the registry's repositories (those of its
// namespace, named relative to it): n of them (0: DefaultPageSize) after
// last (the registry's order).
func (s *Service) Catalog(ctx context.Context, id int64, n int, last string) (Page, error) {
	t, err := s.target(ctx, id)
	if err != nil {
		return Page{}, err
	}
	if t.hub {
		return Page{}, errHubCatalog
	}
	if n <= 0 {
		n = DefaultPageSize
	}
	if n > MaxPageSize {
		return Page{}, fault.Invalidf("Page size must be at most %d", MaxPageSize)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client, err := t.catalogClient(ctx)
	if err != nil {
		return Page{}, classify(err, "Failed to fetch the catalog")
	}
	repos, next, err := t.namespacePage(ctx, client, n, last)
	if err != nil {
		return Page{}, classify(err, "Failed to fetch the catalog")
	}
	page := Page{Repositories: make([]Repository, 0, len(repos)), PageSize: n, NextLast: next}
	for _, r := range repos {
		page.Repositories = append(page.Repositories, Repository{Name: r})
	}
	return page, nil
}

// catalogClient is an HTTP client authorised for the registry's catalog.
func (t target) catalogClient(ctx context.Context) (*http.Client, error) {
	rt, err := transport.NewWithContext(ctx, t.reg, t.auth, t.rt,
		[]string{t.reg.Scope(transport.CatalogScope)})
	if err != nil {
		return nil, err
	}
	return &http.Client{Transport: rt, CheckRedirect: outbound.CheckRedirect}, nil
}

// namespacePage reads a page of at most n repository names of the
// namespace after last, both relative to it, and the last parameter of the
// next page ("" at the end). The registry lists names in lexical order (the
// registry API's rule for paging), so the namespace's names follow one
// another from namespace/ on: the first name past them ends the namespace.
func (t target) namespacePage(ctx context.Context, client *http.Client, n int, last string) ([]string, string, error) {
	repos, next, err := t.catalogPage(ctx, client, n, t.full(last))
	if err != nil || t.namespace == "" {
		return repos, next, err
	}
	start := t.full("")
	names := make([]string, 0, len(repos))
	for _, r := range repos {
		if rel, ok := strings.CutPrefix(r, start); ok {
			names = append(names, rel)
		} else if r > start {
			return names, "", nil
		}
	}
	rel, ok := strings.CutPrefix(next, start)
	if !ok { // a next page outside the namespace: it ends here
		rel = ""
	}
	return names, rel, nil
}

// catalogPage reads GET /v2/_catalog?n=&last= and the last parameter of
// its Link rel="next" header.
func (t target) catalogPage(ctx context.Context, client *http.Client, n int, last string) ([]string, string, error) {
	q := url.Values{"n": {fmt.Sprint(n)}}
	if last != "" {
		q.Set("last", last)
	}
	u := url.URL{Scheme: t.reg.Scheme(), Host: t.reg.RegistryStr(), Path: "/v2/_catalog", RawQuery: q.Encode()}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	if err := transport.CheckError(resp, http.StatusOK); err != nil {
		return nil, "", err
	}
	var body struct {
		Repositories []string `json:"repositories"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, "", fmt.Errorf("decode catalog: %w", err)
	}
	return body.Repositories, nextLast(resp.Header.Values("Link")), nil
}

// nextLast returns the last query parameter of a Link rel="next" header
// (`</v2/_catalog?last=x&n=100>; rel="next"`), or "".
func nextLast(links []string) string {
	for _, header := range links {
		for _, link := range strings.Split(header, ",") {
			target, params, _ := strings.Cut(link, ";")
			if !strings.Contains(strings.ReplaceAll(params, " ", ""), `rel="next"`) &&
				!strings.Contains(params, "rel=next") {
				continue
			}
			target = strings.Trim(strings.TrimSpace(target), "<>")
			u, err := url.Parse(target)
			if err != nil {
				continue
			}
			if l := u.Query().Get("last"); l != "" {
				return l
			}
		}
	}
	return ""
}

// catalogSearch returns the repositories of the registry (of its
// namespace, named relative to it) whose names contain q (case
// insensitive), in catalog order: at most limit of them, from at most
// searchPages catalog pages.
func (t target) catalogSearch(ctx context.Context, q string, limit int) ([]string, error) {
	q = strings.ToLower(strings.TrimSpace(q))
	client, err := t.catalogClient(ctx)
	if err != nil {
		return nil, classify(err, "Failed to search the registry")
	}
	out := []string{}
	last := ""
	for range searchPages {
		repos, next, err := t.namespacePage(ctx, client, MaxPageSize, last)
		if err != nil {
			return nil, classify(err, "Failed to search the registry")
		}
		for _, r := range repos {
			if strings.Contains(strings.ToLower(r), q) {
				out = append(out, r)
				if len(out) == limit {
					return out, nil
				}
			}
		}
		// A registry without Link headers: a short page is the last one.
		if next == "" && len(repos) == MaxPageSize {
			next = repos[len(repos)-1]
		}
		if next == "" || next == last {
			break
		}
		last = next
	}
	return out, nil
}
