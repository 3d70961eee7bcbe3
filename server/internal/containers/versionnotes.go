package containers

import (
	"context"
	"net/url"
	"strings"
	"time"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// VersionNotes is what is known of the versions an update check surfaced
// for a container. Berth does not fetch release notes from the internet:
// the notes link each version to the release page the image's source label
// names, and Local tells what the image's labels and the last update check
// say.
type VersionNotes struct {
	ChangelogURL string        `json:"changelogUrl,omitempty"`
	Source       string        `json:"source,omitempty"` // owner/repository of a GitHub source, else the source's address
	Notes        []VersionNote `json:"notes"`
	Local        LocalVersion  `json:"local"`
	Message      string        `json:"message"`
}

// VersionNote is one version's entry; Body stays empty (no notes fetched).
type VersionNote struct {
	Version     string `json:"version"`
	Name        string `json:"name,omitempty"`
	GithubTag   string `json:"githubTag,omitempty"`
	Body        string `json:"body"`
	PublishedAt string `json:"publishedAt,omitempty"`
	URL         string `json:"url"`
}

// LocalVersion is what the engine and the last update check know of a
// container's image.
type LocalVersion struct {
	Image           string     `json:"image"`
	ImageID         string     `json:"imageId"`
	Version         string     `json:"version,omitempty"`  // org.opencontainers.image.version
	Revision        string     `json:"revision,omitempty"` // org.opencontainers.image.revision
	Source          string     `json:"source,omitempty"`   // org.opencontainers.image.source
	CurrentDigests  []string   `json:"currentDigests"`
	AvailableDigest string     `json:"availableDigest,omitempty"` // the registry's, from the last update check
	CheckedAt       *time.Time `json:"checkedAt,omitempty"`
}

// The OCI image annotations read as labels.
const (
	labelVersion  = "org.opencontainers.image.version"
	labelRevision = "org.opencontainers.image.revision"
	labelSource   = "org.opencontainers.image.source"
)

// maxVersions bounds the versions one request asks about.
const maxVersions = 50

const notesMessage = "Berth does not fetch release notes from the internet: the notes link to the release pages of the " +
	"image's source (org.opencontainers.image.source), and local tells what the image's labels and the last update check know."

// VersionNotes answers what can be known locally of versions (a
// comma-separated list) of container id's image.
func (s *Service) VersionNotes(ctx context.Context, env store.Environment, id, versions string) (VersionNotes, error) {
	var list []string
	for _, v := range strings.Split(versions, ",") {
		if v = strings.TrimSpace(v); v != "" {
			list = append(list, v)
		}
	}
	if len(list) > maxVersions {
		return VersionNotes{}, fault.Invalidf("At most %d versions may be asked at once", maxVersions)
	}
	c, err := s.client(ctx, env, "inspect container")
	if err != nil {
		return VersionNotes{}, err
	}
	cfg, err := c.InspectConfig(ctx, id)
	if err != nil {
		return VersionNotes{}, opFault("inspect container", err)
	}
	out := VersionNotes{Notes: []VersionNote{}, Message: notesMessage,
		Local: LocalVersion{Image: cfg.Image, ImageID: cfg.ImageID, CurrentDigests: []string{}}}
	if img, err := c.InspectImage(ctx, cfg.ImageID); err == nil {
		out.Local.CurrentDigests = append(out.Local.CurrentDigests, img.RepoDigests...)
	}
	labels := cfg.Labels // the image's labels, and those the container set over them
	out.Local.Version, out.Local.Revision = labels[labelVersion], labels[labelRevision]
	if src := webAddress(labels[labelSource]); src != "" {
		out.Local.Source = src
	}
	if pending, err := s.store.ListPendingUpdates(ctx, env.ID); err == nil {
		for _, p := range pending {
			if p.ContainerName == cfg.Name {
				out.Local.AvailableDigest = p.NewDigest
				at := p.CheckedAt
				out.Local.CheckedAt = &at
			}
		}
	}
	releases := ""
	if repo, ok := githubRepo(out.Local.Source); ok {
		out.Source = repo
		releases = "https://github.com/" + repo + "/releases"
		out.ChangelogURL = releases
	} else if out.Local.Source != "" {
		out.Source = out.Local.Source
		out.ChangelogURL = out.Local.Source
	}
	for _, v := range list {
		n := VersionNote{Version: v, URL: out.ChangelogURL}
		if releases != "" {
			n.URL = releases + "/tag/" + url.PathEscape(v)
		}
		out.Notes = append(out.Notes, n)
	}
	return out, nil
}

// webAddress is s when it is an http(s) address, else "".
func webAddress(s string) string {
	s = strings.TrimSpace(s)
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return ""
	}
	return s
}

// githubRepo is the owner/repository of a GitHub address.
func githubRepo(addr string) (string, bool) {
	u, err := url.Parse(addr)
	if err != nil || !strings.EqualFold(u.Host, "github.com") {
		return "", false
	}
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	if len(parts) < 2 || parts[0] == "" || parts[1] == "" {
		return "", false
	}
	return parts[0] + "/" + strings.TrimSuffix(parts[1], ".git"), true
}
