package registry

import (
	"context"
	"sort"
	"sync"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/berth-dev/berth/shared/fault"
)

// Tags lists a page of the tags of a repository of registry id, sorted by
// name: page (from 1) of pageSize tags, or every tag in one page when
// pageSize is 0 (the registry API lists them all at once). The tags of the
// page, at most DetailedTags of them, get their digest, media type, size and
// creation time (read with at most detailJobs requests at a time; a tag
// whose details cannot be read is listed by name only). A Docker Hub
// registry is listed through the Docker Hub index (HubTags).
func (s *Service) Tags(ctx context.Context, id int64, repository string, page, pageSize int) (TagPage, error) {
	t, err := s.target(ctx, id)
	if err != nil {
		return TagPage{}, err
	}
	if t.hub {
		return s.HubTags(ctx, repository, page, pageSize)
	}
	return s.tags(ctx, t, repository, page, pageSize)
}

// tags lists a page of a repository's tags through the registry API.
func (s *Service) tags(ctx context.Context, t target, repository string, page, pageSize int) (TagPage, error) {
	if page < 0 || pageSize < 0 {
		return TagPage{}, fault.New(fault.Invalid, "Page and page size must be positive")
	}
	repo, err := t.repository(repository)
	if err != nil {
		return TagPage{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	puller, err := remote.NewPuller(t.options(ctx)...)
	if err != nil {
		return TagPage{}, err
	}
	names, err := puller.List(ctx, repo)
	if err != nil {
		return TagPage{}, classifyRepo(err, "Failed to list tags")
	}
	sort.Strings(names)
	out := pageOf(names, page, pageSize)
	s.detail(ctx, puller, repo, out.Tags[:min(len(out.Tags), DetailedTags)])
	return out, nil
}

// pageOf cuts page (from 1; 0 is 1) of pageSize names (0: all of them).
func pageOf(names []string, page, pageSize int) TagPage {
	page = max(page, 1)
	if pageSize == 0 {
		pageSize, page = len(names), 1
	}
	from := min((page-1)*pageSize, len(names))
	to := min(from+pageSize, len(names))
	out := TagPage{Tags: make([]Tag, to-from), Total: len(names), Page: page, PageSize: pageSize,
		HasNext: to < len(names), HasPrev: page > 1}
	for i, n := range names[from:to] {
		out.Tags[i].Name = n
	}
	return out
}

// detail reads the details of tags, at most detailJobs at a time.
func (s *Service) detail(ctx context.Context, puller *remote.Puller, repo name.Repository, tags []Tag) {
	sem := make(chan struct{}, detailJobs)
	var wg sync.WaitGroup
	for i := range tags {
		wg.Add(1)
		sem <- struct{}{}
		go func(tag *Tag) {
			defer wg.Done()
			defer func() { <-sem }()
			if err := details(ctx, puller, repo.Tag(tag.Name), tag); err != nil {
				s.log.Debug("registry tag details", "repository", repo.String(), "tag", tag.Name, "err", err)
			}
		}(&tags[i])
	}
	wg.Wait()
}
