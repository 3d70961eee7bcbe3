package registry

import (
	"context"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/berth-dev/berth/shared/fault"
)

// tagInfoTimeout bounds the manifest reads of one tag's details.
const tagInfoTimeout = 15 * time.Second

// TagInfo is what one tag's manifest says: its digest and media type, its
// compressed size (of the first platform's image for a multi-platform
// index), its creation time (the image configuration's) and its
// platforms. A detail the registry would not give is missing and Reason
// says why (the tag's row is never an error: the reference's rule).
type TagInfo struct {
	Digest      string     `json:"digest,omitempty"`
	MediaType   string     `json:"mediaType,omitempty"`
	Size        *int64     `json:"size"`
	LastUpdated *time.Time `json:"lastUpdated"`
	Created     *time.Time `json:"created,omitempty"`
	Platforms   []Platform `json:"platforms"`
	Reason      string     `json:"reason,omitempty"`
}

// Platform is one image of a tag.
type Platform struct {
	OS           string `json:"os"`
	Architecture string `json:"architecture"`
	Variant      string `json:"variant,omitempty"`
	Digest       string `json:"digest,omitempty"`
	Size         int64  `json:"size,omitempty"` // the image's manifest's, for an index; the image's, else
}

var errTagInfoParams = fault.New(fault.Invalid, "image and tag are required")

// TagInfo reads the details of one tag (or digest) of a repository of
// registry id with the registry's credentials. A missing registry is the
// spec's 404; a registry that cannot answer is a TagInfo with its Reason.
// Docker Hub registries are not read (their tag lists carry size and
// date already).
func (s *Service) TagInfo(ctx context.Context, id int64, repository, tag string) (TagInfo, error) {
	repository, tag = strings.TrimSpace(repository), strings.TrimSpace(tag)
	if repository == "" || tag == "" {
		return TagInfo{}, errTagInfoParams
	}
	t, err := s.target(ctx, id)
	if err != nil {
		return TagInfo{}, err
	}
	if t.hub {
		return TagInfo{Platforms: []Platform{}, Reason: "Docker Hub tags carry size/date already"}, nil
	}
	repo, err := t.repository(repository)
	if err != nil {
		return TagInfo{}, err
	}
	var ref name.Reference
	if strings.HasPrefix(tag, "sha256:") {
		ref, err = name.NewDigest(repo.Name()+"@"+tag, name.WeakValidation)
	} else {
		ref, err = name.NewTag(repo.Name()+":"+tag, name.WeakValidation)
	}
	if err != nil {
		return TagInfo{}, fault.Wrap(fault.Invalid, "Invalid tag", err)
	}
	ctx, cancel := context.WithTimeout(ctx, tagInfoTimeout)
	defer cancel()
	info, err := t.tagInfo(ctx, withRegistry(ref, repo))
	if err != nil {
		s.log.Debug("registry tag info", "repository", repo.String(), "tag", tag, "err", err)
		info.Reason = tagInfoReason(err)
	}
	if info.Platforms == nil {
		info.Platforms = []Platform{}
	}
	return info, nil
}

// withRegistry gives ref the registry of repo (with its scheme decision).
func withRegistry(ref name.Reference, repo name.Repository) name.Reference {
	switch r := ref.(type) {
	case name.Tag:
		r.Repository = repo
		return r
	case name.Digest:
		return repo.Digest(r.DigestStr())
	}
	return ref
}

// tagInfo reads ref's manifest, and for an image its configuration; for an
// index, its platforms and its first image's size and configuration.
func (t target) tagInfo(ctx context.Context, ref name.Reference) (TagInfo, error) {
	var info TagInfo
	puller, err := remote.NewPuller(t.options(ctx)...)
	if err != nil {
		return info, err
	}
	desc, err := puller.Get(ctx, ref)
	if err != nil {
		return info, err
	}
	info.Digest, info.MediaType = desc.Digest.String(), string(desc.MediaType)
	if desc.MediaType.IsIndex() {
		idx, err := desc.ImageIndex()
		if err != nil {
			return info, err
		}
		m, err := idx.IndexManifest()
		if err != nil {
			return info, err
		}
		for _, d := range m.Manifests {
			if d.Platform == nil || d.Platform.OS == "unknown" { // attestations
				continue
			}
			info.Platforms = append(info.Platforms, Platform{OS: d.Platform.OS, Architecture: d.Platform.Architecture,
				Variant: d.Platform.Variant, Digest: d.Digest.String(), Size: d.Size})
		}
		if len(info.Platforms) == 0 {
			return info, nil
		}
		first := info.Platforms[0].Digest
		var detail Tag
		if err := details(ctx, puller, ref.Context().Digest(first), &detail); err != nil {
			return info, err
		}
		info.Size, info.Created, info.LastUpdated = &detail.Size, detail.Created, detail.Created
		return info, nil
	}
	if !desc.MediaType.IsImage() {
		return info, nil
	}
	img, err := desc.Image()
	if err != nil {
		return info, err
	}
	m, err := img.Manifest()
	if err != nil {
		return info, err
	}
	size := m.Config.Size
	for _, l := range m.Layers {
		size += l.Size
	}
	info.Size = &size
	cfg, err := img.ConfigFile()
	if err != nil {
		return info, err
	}
	if !cfg.Created.IsZero() {
		created := cfg.Created.UTC()
		info.Created, info.LastUpdated = &created, &created
	}
	info.Platforms = []Platform{{OS: cfg.OS, Architecture: cfg.Architecture, Variant: cfg.Variant,
		Digest: desc.Digest.String(), Size: size}}
	return info, nil
}

// tagInfoReason says, in the reference's words, why a tag's details are
// missing.
func tagInfoReason(err error) string {
	f, ok := fault.As(classifyRepo(err, "Unavailable"))
	switch {
	case !ok:
		return "Unavailable"
	case f.Kind == fault.NotFound:
		return "Manifest not found"
	case f.Kind == fault.Forbidden || f.Message == errAuth.Message:
		return "Authentication required"
	case f.Kind == fault.Unavailable && strings.Contains(f.Message, "in time"):
		return "Timed out"
	}
	return f.Message
}
