package registry

import (
	"context"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// serveTimeout bounds the look at one registry for an image.
const serveTimeout = 5 * time.Second

// Serving is a configured registry holding an image.
type Serving struct {
	RegistryID   int64
	RegistryName string
	// Reference is what an engine pulls: the registry's host and namespace
	// before the image's name (127.0.0.1:5000/anchore/grype:v0.120.1), or
	// the image's own name at Docker Hub.
	Reference string
}

// FindImage looks in the configured registries, in order, for image (a
// Docker Hub name with a tag: anchore/grype:v0.120.1) and returns the first
// that holds it (found false when none does). A registry that cannot be
// reached or refuses is passed over.
func (s *Service) FindImage(ctx context.Context, image string) (Serving, bool, error) {
	repoName, tag, ok := strings.Cut(strings.TrimSpace(image), ":")
	if !ok || repoName == "" || tag == "" || strings.Contains(tag, "/") {
		return Serving{}, false, nil
	}
	regs, err := s.store.ListRegistries(ctx)
	if err != nil {
		return Serving{}, false, err
	}
	p, err := s.outbound.Policy(ctx)
	if err != nil {
		return Serving{}, false, err
	}
	for _, r := range regs {
		t, err := resolve(r)
		if err != nil {
			continue
		}
		t.rt = p.Transport()
		rel := repoName
		if t.hub && !strings.Contains(rel, "/") {
			rel = "library/" + rel
		}
		repo, err := t.repository(rel)
		if err != nil {
			continue
		}
		ref := repo.Tag(tag)
		if s.holds(ctx, t, ref) {
			out := Serving{RegistryID: r.ID, RegistryName: r.Name, Reference: ref.String()}
			if t.hub {
				out.Reference = image
			}
			return out, true, nil
		}
	}
	return Serving{}, false, nil
}

// holds tells whether the registry answers ref's manifest.
func (s *Service) holds(ctx context.Context, t target, ref name.Tag) bool {
	ctx, cancel := context.WithTimeout(ctx, serveTimeout)
	defer cancel()
	_, err := remote.Head(ref, t.options(ctx)...)
	if err != nil {
		s.log.Debug("registry does not serve image", "ref", ref.String(), "err", err)
	}
	return err == nil
}
