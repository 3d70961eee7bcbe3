package registry

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// Docker Hub is browsed through its index, DefaultHubIndex unless the
// configuration (DOCKER_HUB_INDEX_URL) names another. At Docker Hub's own
// host (hub.docker.com) the index speaks Docker Hub's API (search and paged
// tag lists with sizes and push times); any other index is a registry (the
// registry API v2) standing in for Docker Hub, such as a mirror: its tags
// come from the registry API and a search from its catalog, with the
// credentials of a configured registry at the same host, if any. Official
// images' one-part names (nginx) are library/nginx there, as on Docker Hub.
const DefaultHubIndex = "https://hub.docker.com"

// DefaultHubPageSize is the page of tags Docker Hub is asked for when the
// client names none (the reference's 20).
const DefaultHubPageSize = 20

// hubAPIHost is the host at which the index speaks Docker Hub's API.
const hubAPIHost = "hub.docker.com"

var errHubRepoNotFound = fault.New(fault.NotFound, "Image not found on Docker Hub")

// hubRepository is Docker Hub's name of an image: library/nginx for nginx.
func hubRepository(image string) (string, error) {
	image = strings.Trim(strings.TrimSpace(image), "/")
	if image == "" {
		return "", fault.New(fault.Invalid, "Image name is required")
	}
	image = strings.TrimPrefix(strings.TrimPrefix(image, "docker.io/"), "index.docker.io/")
	if !strings.Contains(image, "/") {
		image = "library/" + image
	}
	for _, c := range strings.Split(image, "/") {
		if !pathComponent.MatchString(c) {
			return "", fault.New(fault.Invalid, "Invalid repository name")
		}
	}
	return image, nil
}

// hubSpeaksAPI reports whether the index is Docker Hub's API.
func (s *Service) hubSpeaksAPI() (*url.URL, bool, error) {
	u, err := url.Parse(s.hubIndex)
	if err != nil || u.Host == "" {
		return nil, false, fault.New(fault.Internal, "The Docker Hub index URL (DOCKER_HUB_INDEX_URL) is not a URL")
	}
	return u, strings.EqualFold(u.Hostname(), hubAPIHost), nil
}

// hubMirror is the registry standing in for Docker Hub, with the
// credentials of the first configured registry at its host.
func (s *Service) hubMirror(ctx context.Context, index *url.URL) (target, error) {
	r := store.Registry{URL: index.Scheme + "://" + index.Host}
	regs, err := s.store.ListRegistries(ctx)
	if err != nil {
		return target{}, err
	}
	for _, reg := range regs {
		if hostOf(reg.URL) == strings.ToLower(index.Host) && reg.Username != "" {
			r.Username, r.Password = reg.Username, reg.Password
			break
		}
	}
	t, err := resolve(r)
	if err != nil {
		return target{}, err
	}
	p, err := s.outbound.Policy(ctx)
	if err != nil {
		return target{}, err
	}
	t.rt = p.Transport()
	return t, nil
}

// hostOf is the lower-case host[:port] of a registry URL.
func hostOf(raw string) string {
	h := strings.ToLower(strings.TrimSpace(raw))
	if i := strings.Index(h, "://"); i >= 0 {
		h = h[i+3:]
	}
	h, _, _ = strings.Cut(h, "/")
	return h
}

// HubTags lists a page of a Docker Hub image's tags, newest push first at
// Docker Hub's API (page from 1, pageSize 0: DefaultHubPageSize), by name
// at a standing-in registry.
func (s *Service) HubTags(ctx context.Context, image string, page, pageSize int) (TagPage, error) {
	repo, err := hubRepository(image)
	if err != nil {
		return TagPage{}, err
	}
	if page < 0 || pageSize < 0 || pageSize > 100 {
		return TagPage{}, fault.New(fault.Invalid, "Page must be positive and page size between 1 and 100")
	}
	page, pageSize = max(page, 1), cmp.Or(pageSize, DefaultHubPageSize)
	index, api, err := s.hubSpeaksAPI()
	if err != nil {
		return TagPage{}, err
	}
	if !api {
		t, err := s.hubMirror(ctx, index)
		if err != nil {
			return TagPage{}, err
		}
		return s.tags(ctx, t, repo, page, pageSize)
	}
	var body struct {
		Count    int     `json:"count"`
		Next     *string `json:"next"`
		Previous *string `json:"previous"`
		Results  []struct {
			Name          string     `json:"name"`
			FullSize      int64      `json:"full_size"`
			LastUpdated   *time.Time `json:"last_updated"`
			TagLastPushed *time.Time `json:"tag_last_pushed"`
			Digest        string     `json:"digest"`
			Images        []struct {
				Digest string `json:"digest"`
				Size   int64  `json:"size"`
			} `json:"images"`
		} `json:"results"`
	}
	q := url.Values{"page": {strconv.Itoa(page)}, "page_size": {strconv.Itoa(pageSize)}, "ordering": {"last_updated"}}
	if err := s.hubGet(ctx, index, "/v2/repositories/"+repo+"/tags", q, &body); err != nil {
		return TagPage{}, err
	}
	out := TagPage{Tags: make([]Tag, 0, len(body.Results)), Total: body.Count, Page: page, PageSize: pageSize,
		HasNext: body.Next != nil && *body.Next != "", HasPrev: body.Previous != nil && *body.Previous != ""}
	for _, r := range body.Results {
		tag := Tag{Name: r.Name, Size: r.FullSize, Digest: r.Digest, LastUpdated: r.LastUpdated}
		if tag.LastUpdated == nil {
			tag.LastUpdated = r.TagLastPushed
		}
		if len(r.Images) > 0 {
			tag.Size = cmp.Or(tag.Size, r.Images[0].Size)
			if tag.Digest == "" {
				tag.Digest = r.Images[0].Digest
			}
		}
		out.Tags = append(out.Tags, tag)
	}
	return out, nil
}

// HubSearch searches Docker Hub for term: at most limit (0:
// DefaultSearchLimit) repositories.
func (s *Service) HubSearch(ctx context.Context, term string, limit int) ([]SearchResult, error) {
	term = strings.TrimSpace(term)
	if term == "" {
		return nil, errSearchTerm
	}
	limit, err := searchLimit(limit)
	if err != nil {
		return nil, err
	}
	index, api, err := s.hubSpeaksAPI()
	if err != nil {
		return nil, err
	}
	if !api {
		t, err := s.hubMirror(ctx, index)
		if err != nil {
			return nil, err
		}
		return t.search(ctx, term, limit)
	}
	var body struct {
		Results []struct {
			RepoName         string `json:"repo_name"`
			Name             string `json:"name"`
			ShortDescription string `json:"short_description"`
			Description      string `json:"description"`
			StarCount        int    `json:"star_count"`
			IsOfficial       bool   `json:"is_official"`
			IsAutomated      bool   `json:"is_automated"`
		} `json:"results"`
	}
	q := url.Values{"query": {term}, "page_size": {strconv.Itoa(min(limit, 100))}}
	if err := s.hubGet(ctx, index, "/v2/search/repositories/", q, &body); err != nil {
		return nil, err
	}
	out := make([]SearchResult, 0, len(body.Results))
	for _, r := range body.Results {
		out = append(out, SearchResult{Name: cmp.Or(r.RepoName, r.Name), Description: cmp.Or(r.ShortDescription, r.Description),
			StarCount: r.StarCount, IsOfficial: r.IsOfficial, IsAutomated: r.IsAutomated})
	}
	return out, nil
}

// hubGet reads a JSON document of Docker Hub's API, within the outbound
// policy. Docker Hub's 404 is the image's; its other refusals are passed
// on with their status's meaning.
func (s *Service) hubGet(ctx context.Context, index *url.URL, path string, q url.Values, into any) error {
	p, err := s.outbound.Policy(ctx)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	u := *index
	u.Path, u.RawQuery = strings.TrimRight(u.Path, "/")+path, q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "berth")
	resp, err := p.Client().Do(req)
	if err != nil {
		return classify(err, "Failed to reach Docker Hub")
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return errHubRepoNotFound
	case resp.StatusCode == http.StatusTooManyRequests:
		return fault.New(fault.Unavailable, "Docker Hub rate limit reached; try again later")
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return fault.New(fault.Forbidden, "Docker Hub denied access to this image")
	case resp.StatusCode != http.StatusOK:
		return fault.New(fault.Internal, "Failed to fetch from Docker Hub").
			WithDetails(fmt.Sprintf("Docker Hub returned error: %d", resp.StatusCode))
	}
	if err := json.NewDecoder(http.MaxBytesReader(nil, resp.Body, 8<<20)).Decode(into); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return fault.New(fault.Internal, "Docker Hub's answer is too large")
		}
		return fault.Wrap(fault.Internal, "Docker Hub's answer is not JSON", err)
	}
	return nil
}
