// Package registry browses the configured image registries through the
// Registry HTTP API v2 (the OCI distribution API): their repositories, the
// tags of a repository, a search over the repository names, and deleting a
// tag's manifest. It also moves the default mark between registries.
//
// Requests go from the server itself (not from an engine), with the
// registry's stored credentials (basic or token authentication, whichever the
// registry asks for). A registry whose URL starts with http:// is spoken to
// over plain HTTP; without a scheme, HTTPS, except on loopback, localhost and
// private addresses, where plain HTTP is used as the engines do for their
// default insecure registries.
//
// A path after the registry's host (https://host:5000/team) is a namespace:
// the catalog and a search list only the repositories under team/, named
// relative to it ("app" for team/app), and the tags and deletions of "app"
// are those of team/app. The registry API itself is always at the host's
// /v2/, as the engines pull from it (host:5000/team/app).
package registry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/berth-dev/berth/server/internal/outbound"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// Limits of one request.
const (
	// DefaultPageSize is the catalog page asked for when the client names none.
	DefaultPageSize = 100
	// MaxPageSize is the largest catalog page a client may ask for.
	MaxPageSize = 1000
	// DetailedTags is how many tags of a repository (in order) get their
	// digest, size and creation time; the others are listed by name only.
	DetailedTags = 100
	// detailJobs bounds the concurrent manifest reads of a tag list.
	detailJobs = 6
	// searchPages bounds the catalog pages a search reads (of MaxPageSize each).
	searchPages = 100
	// searchResults bounds the matches a search returns.
	searchResults = 500
	// timeout bounds one operation against a registry.
	timeout = 60 * time.Second
)

var (
	errRegistryNotFound = fault.New(fault.NotFound, "Registry not found")
	errAuth             = fault.New(fault.Invalid, "Authentication failed. Check registry credentials.")
	errHubCatalog       = fault.New(fault.Invalid, "Docker Hub does not support catalog listing")
)

// dockerHubHosts are the names of the default public registry.
var dockerHubHosts = map[string]bool{
	"docker.io": true, "index.docker.io": true, "registry-1.docker.io": true, "registry.hub.docker.com": true,
	"hub.docker.com": true,
}

// Service browses registries.
type Service struct {
	store    *store.Store
	log      *slog.Logger
	outbound *outbound.Settings
	// hubIndex is where Docker Hub's searches and tag lists go (DefaultHubIndex
	// unless UseHubIndex changed it).
	hubIndex string
}

// New returns a Service whose requests follow the outbound policy ob (nil:
// outbound.Open): a registry at a refused address is refused, whatever its
// name resolves to, and so is every redirect to one.
func New(st *store.Store, log *slog.Logger, ob *outbound.Settings) *Service {
	return &Service{store: st, log: log, outbound: ob, hubIndex: DefaultHubIndex}
}

// UseHubIndex sends Docker Hub's searches and tag lists to index (""
// keeps DefaultHubIndex); see hub.go.
func (s *Service) UseHubIndex(index string) *Service {
	if index = strings.TrimRight(strings.TrimSpace(index), "/"); index != "" {
		s.hubIndex = index
	}
	return s
}

// Repository is one entry of a catalog or a search.
type Repository struct {
	Name string `json:"name"`
}

// Page is one page of a registry's catalog.
type Page struct {
	Repositories []Repository
	PageSize     int
	// NextLast is the last parameter of the next page ("" on the last page),
	// taken from the registry's Link header.
	NextLast string
}

// Tag is a tag of a repository. Digest, MediaType, Size and Created are
// set when read (at most DetailedTags tags of a page, when the registry
// answers). LastUpdated is the reference's name of the same time: Created
// for a registry, the last push on Docker Hub.
type Tag struct {
	Name        string     `json:"name"`
	Digest      string     `json:"digest,omitempty"`
	MediaType   string     `json:"mediaType,omitempty"`
	Size        int64      `json:"size,omitempty"`        // config and layers, compressed; 0 for an index
	Created     *time.Time `json:"created,omitempty"`     // from the image configuration
	LastUpdated *time.Time `json:"lastUpdated,omitempty"` // Created, or Docker Hub's last push
}

// TagPage is a page of a repository's tags: Page (from 1) of PageSize
// tags, of Total.
type TagPage struct {
	Tags     []Tag `json:"tags"`
	Total    int   `json:"total"`
	Page     int   `json:"page"`
	PageSize int   `json:"pageSize"`
	HasNext  bool  `json:"hasNext"`
	HasPrev  bool  `json:"hasPrev"`
}

// target is a registry resolved for the client library.
type target struct {
	reg  name.Registry
	auth authn.Authenticator
	hub  bool
	// namespace is the path of the registry's URL ("team/apps"; "" for
	// none): the repositories browsed are those under it.
	namespace string
	// rt carries the requests, within the outbound policy.
	rt http.RoundTripper
}

// Registry returns the configured registry id, or the spec's 404.
func (s *Service) Registry(ctx context.Context, id int64) (store.Registry, error) {
	r, err := s.store.GetRegistry(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return store.Registry{}, errRegistryNotFound
	}
	return r, err
}

func (s *Service) target(ctx context.Context, id int64) (target, error) {
	r, err := s.Registry(ctx, id)
	if err != nil {
		return target{}, err
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

// resolve turns a stored registry into what the client library needs.
func resolve(r store.Registry) (target, error) {
	raw := strings.TrimSpace(r.URL)
	var opts []name.Option
	lower := strings.ToLower(raw)
	if strings.HasPrefix(lower, "http://") {
		opts = append(opts, name.Insecure)
	}
	host := lower
	if i := strings.Index(host, "://"); i >= 0 {
		host = host[i+3:]
		raw = raw[i+3:]
	}
	host, _, _ = strings.Cut(host, "/")
	_, path, _ := strings.Cut(raw, "/")
	namespace, err := namespaceOf(path)
	if err != nil {
		return target{}, err
	}
	hub := dockerHubHosts[host]
	if hub {
		host = name.DefaultRegistry
	}
	reg, err := name.NewRegistry(host, opts...)
	if err != nil {
		return target{}, fault.Wrap(fault.Invalid, "Registry URL is not a valid registry address", err)
	}
	var auth authn.Authenticator = authn.Anonymous
	if r.Username != "" && r.Password != "" {
		auth = &authn.Basic{Username: r.Username, Password: r.Password}
	}
	return target{reg: reg, auth: auth, hub: hub, namespace: namespace}, nil
}

// namespaceOf validates the path of a registry URL as a namespace of
// repository names: "team/apps" of "/team/apps/". An empty path, and the
// registry API's own "v2", are no namespace.
func namespaceOf(path string) (string, error) {
	path = strings.Trim(path, "/")
	if path == "" || path == "v2" {
		return "", nil
	}
	for _, c := range strings.Split(path, "/") {
		if !pathComponent.MatchString(c) {
			return "", fault.Invalidf("Registry URL path '%s' is not a valid repository namespace "+
				"(lowercase letters, digits and separators)", path)
		}
	}
	return path, nil
}

// pathComponent is a component of a repository name (the distribution
// reference grammar).
var pathComponent = regexp.MustCompile(`^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$`)

// options are the client library's options for one operation: the
// registry's credentials, no retries (a failure is reported at once).
func (t target) options(ctx context.Context) []remote.Option {
	return []remote.Option{remote.WithContext(ctx), remote.WithAuth(t.auth), remote.WithTransport(t.rt),
		remote.WithRetryBackoff(remote.Backoff{Steps: 1}), remote.WithUserAgent("berth")}
}

// repository parses a repository name of the registry, relative to its
// namespace.
func (t target) repository(repo string) (name.Repository, error) {
	repo = strings.Trim(strings.TrimSpace(repo), "/")
	if repo == "" {
		return name.Repository{}, fault.New(fault.Invalid, "Repository is required")
	}
	r, err := name.NewRepository(t.reg.Name() + "/" + t.full(repo))
	if err != nil {
		return name.Repository{}, fault.Wrap(fault.Invalid, "Invalid repository name", err)
	}
	r.Registry = t.reg // with its scheme decision (name.Insecure)
	return r, nil
}

// full is the registry's name of a repository named rel in the namespace
// (the namespace itself with a trailing slash for ""; every name in it
// sorts after that).
func (t target) full(rel string) string {
	if t.namespace == "" {
		return rel
	}
	return t.namespace + "/" + rel
}

// details reads a tag's manifest (and an image's configuration) into tag.
func details(ctx context.Context, p *remote.Puller, ref name.Reference, tag *Tag) error {
	desc, err := p.Get(ctx, ref)
	if err != nil {
		return err
	}
	tag.Digest, tag.MediaType = desc.Digest.String(), string(desc.MediaType)
	if !desc.MediaType.IsImage() {
		return nil
	}
	img, err := desc.Image()
	if err != nil {
		return err
	}
	m, err := img.Manifest()
	if err != nil {
		return err
	}
	size := m.Config.Size
	for _, l := range m.Layers {
		size += l.Size
	}
	tag.Size = size
	cfg, err := img.ConfigFile()
	if err != nil {
		return err
	}
	if !cfg.Created.IsZero() {
		created := cfg.Created.UTC()
		tag.Created, tag.LastUpdated = &created, &created
	}
	return nil
}

// DeleteImage deletes a tag's manifest: the tag is resolved to its digest
// (asking for every manifest type, so that the registry does not convert
// it), and the manifest is deleted by digest, with every tag pointing at it.
// It returns the digest.
func (s *Service) DeleteImage(ctx context.Context, id int64, repository, tag string) (string, error) {
	t, err := s.target(ctx, id)
	if err != nil {
		return "", err
	}
	repo, err := t.repository(repository)
	if err != nil {
		return "", err
	}
	tag = strings.TrimSpace(tag)
	if tag == "" {
		return "", fault.New(fault.Invalid, "Tag is required")
	}
	ref, err := name.NewTag(repo.Name() + ":" + tag)
	if err != nil {
		return "", fault.Wrap(fault.Invalid, "Invalid tag", err)
	}
	ref.Repository = repo
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	opts := t.options(ctx)
	desc, err := remote.Head(ref, opts...)
	if err != nil {
		return "", classifyRepo(err, "Failed to delete the image")
	}
	if err := remote.Delete(repo.Digest(desc.Digest.String()), opts...); err != nil {
		return "", classifyDelete(err)
	}
	return desc.Digest.String(), nil
}

// SetDefault makes registry id the default one (and no other), in one
// transaction.
func (s *Service) SetDefault(ctx context.Context, id int64) (store.Registry, error) {
	r, err := s.Registry(ctx, id)
	if err != nil {
		return store.Registry{}, err
	}
	r.IsDefault = true
	if err := s.store.UpdateRegistry(ctx, &r); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return store.Registry{}, errRegistryNotFound
		}
		return store.Registry{}, err
	}
	return r, nil
}

// classifyDelete maps a failed manifest deletion: a registry that does not
// allow deletions answers 405 (UNSUPPORTED).
func classifyDelete(err error) error {
	var te *transport.Error
	if errors.As(err, &te) && (te.StatusCode == http.StatusMethodNotAllowed || hasCode(te, transport.UnsupportedErrorCode)) {
		return fault.Wrap(fault.Invalid, "This registry does not allow deleting images (deletion is disabled in its configuration)", err)
	}
	return classifyRepo(err, "Failed to delete the image")
}

// classifyRepo maps a failed request about a repository or tag: unknown
// ones are 404s.
func classifyRepo(err error, msg string) error {
	var te *transport.Error
	if errors.As(err, &te) && (te.StatusCode == http.StatusNotFound ||
		hasCode(te, transport.NameUnknownErrorCode) || hasCode(te, transport.ManifestUnknownErrorCode)) {
		return fault.Wrap(fault.NotFound, "Repository or tag not found", err)
	}
	return classify(err, msg)
}

// classify maps a failed registry request to the client's fault: refused
// credentials (4xx), a registry that cannot be reached (503), or msg with
// the registry's answer as details (500). The registry's error texts carry
// no credentials (the library redacts URLs).
func classify(err error, msg string) error {
	if _, ok := fault.As(err); ok {
		return err
	}
	var te *transport.Error
	if errors.As(err, &te) {
		switch {
		case te.StatusCode == http.StatusUnauthorized || hasCode(te, transport.UnauthorizedErrorCode):
			return fault.Wrap(fault.Invalid, errAuth.Message, err)
		case te.StatusCode == http.StatusForbidden || hasCode(te, transport.DeniedErrorCode):
			return fault.Wrap(fault.Forbidden, "The registry denied access. Check the registry user's permissions.", err)
		case te.StatusCode == http.StatusNotFound:
			return fault.Wrap(fault.NotFound, "The registry does not support this operation of the registry API v2", err)
		}
		return fault.Wrap(fault.Internal, msg, err).WithDetails(fmt.Sprintf("The registry answered %d %s",
			te.StatusCode, http.StatusText(te.StatusCode)))
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fault.Wrap(fault.Unavailable, "The registry did not answer in time", err)
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	var ue *url.Error
	if errors.As(err, &ue) || isNetError(err) {
		return fault.Wrap(fault.Unavailable, "Could not connect to the registry", err).WithDetails(unwrapURL(err))
	}
	return fault.Wrap(fault.Internal, msg, err)
}

func hasCode(te *transport.Error, code transport.ErrorCode) bool {
	for _, d := range te.Errors {
		if d.Code == code {
			return true
		}
	}
	return false
}

// isNetError reports a connection failure the library did not wrap in a
// url.Error (its ping reports them as plain errors).
func isNetError(err error) bool {
	s := err.Error()
	for _, frag := range []string{"connection refused", "no such host", "i/o timeout", "tls:", "x509:",
		"server gave HTTP response to HTTPS client", "connection reset", "network is unreachable"} {
		if strings.Contains(s, frag) {
			return true
		}
	}
	return false
}

// unwrapURL returns the innermost cause of a connection failure, the
// client-facing detail (an address and the system's reason, no credentials).
func unwrapURL(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		return ue.Err.Error()
	}
	return err.Error()
}
