package templates

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/berth-dev/berth/server/internal/hostpath"
	"github.com/berth-dev/berth/server/internal/outbound"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

//go:embed builtin.json
var builtinJSON []byte

// BuiltinSource is the source id of the built-in templates.
const BuiltinSource = "builtin"

// Defaults of Options.
const (
	DefaultRefresh  = time.Hour
	DefaultTimeout  = 15 * time.Second
	DefaultMaxBytes = 5 << 20
)

// Options configure a Service.
type Options struct {
	Store *store.Store
	Log   *slog.Logger
	// Refresh is how long a fetched list is used before it is fetched again
	// (0: DefaultRefresh).
	Refresh time.Duration
	// Timeout bounds one fetch (0: DefaultTimeout); MaxBytes bounds a list's
	// size (0: DefaultMaxBytes).
	Timeout  time.Duration
	MaxBytes int64
	// Client fetches URL sources (nil: one following Outbound).
	Client *http.Client
	// Outbound is the outbound policy URL sources are fetched under (nil:
	// outbound.Open): a source at a refused address is refused when saved
	// and, whatever it resolves to later, when fetched.
	Outbound *outbound.Settings
	Now      func() time.Time
	// FileDir is the one directory (with those under it) that file sources
	// (an absolute path or a file:// URL) are read from, so that editing the
	// settings never reads another file of the server; "" refuses file
	// sources. See UseFileDir.
	FileDir string
	// LogoDir is the directory the logos of source templates are fetched
	// into and served from ("": none; see UseLogoDir). LogoTimeout bounds
	// the fetch of one logo (0: DefaultLogoTimeout); a host that did not
	// answer in time is not asked for the other logos of the same pass.
	LogoDir     string
	LogoTimeout time.Duration
}

// Service keeps the template sources and the catalogue read from them.
type Service struct {
	o       Options
	builtin []Template

	mu      sync.Mutex
	cache   map[int64]cached
	fileDir string // Options.FileDir, absolute; guarded by mu
	logoDir string // Options.LogoDir, absolute; guarded by mu

	// Logos are fetched in the background (see fetchLogos), by at most
	// logoWorkers requests at a time for all sources together.
	logoSlots chan struct{}
	logoBusy  map[string]bool // cache files being fetched; guarded by mu
	logoGone  map[int64]bool  // deleted sources, whose logos are not kept; guarded by mu
	logoWrite sync.Mutex      // a source's logo directory is not written while it is removed
	logoWG    sync.WaitGroup  // background logo fetches
}

// cached is a source's last successful read.
type cached struct {
	url       string
	fetchedAt time.Time
	list      []Template
}

// New returns a Service.
func New(o Options) *Service {
	if o.Refresh <= 0 {
		o.Refresh = DefaultRefresh
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.LogoTimeout <= 0 {
		o.LogoTimeout = DefaultLogoTimeout
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	list, _, err := Parse(builtinJSON)
	if err != nil { // a build defect, which the package's tests catch
		o.Log.Error("templates: built-in list", "err", err)
	}
	for i := range list {
		list[i].SourceID, list[i].SourceName = BuiltinSource, "Built-in"
		list[i].ID = BuiltinSource + ":" + list[i].Name
		if _, ok := builtinLogo(list[i].Name); ok {
			list[i].Logo = LogoPath(list[i].ID) // shipped in the binary, served by Berth
		}
	}
	s := &Service{o: o, builtin: list, cache: map[int64]cached{},
		logoSlots: make(chan struct{}, logoWorkers), logoBusy: map[string]bool{}, logoGone: map[int64]bool{}}
	s.UseFileDir(o.FileDir)
	s.UseLogoDir(o.LogoDir)
	return s
}

// UseFileDir makes dir the directory of file sources (Options.FileDir).
// When it changes, the lists read before are forgotten: a file source
// outside the new directory is not served from the cache.
func (s *Service) UseFileDir(dir string) {
	if dir != "" {
		dir = filepath.Clean(dir)
		if abs, err := filepath.Abs(dir); err == nil {
			dir = abs
		}
	}
	s.mu.Lock()
	if dir != s.fileDir {
		s.fileDir = dir
		clear(s.cache)
	}
	s.mu.Unlock()
}

// filesDir returns the directory of file sources ("": none allowed).
func (s *Service) filesDir() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fileDir
}

// SourceSpec is a template source as a client sends it.
type SourceSpec struct {
	Name    string
	URL     string
	Enabled *bool // nil: true on create, unchanged on update
}

// checkSource validates a source's name and location: an http(s) URL, or
// a file in the directory of file sources.
func (s *Service) checkSource(name, raw string) error {
	if strings.TrimSpace(name) == "" {
		return fault.Invalidf("Source name is required")
	}
	if len(name) > 100 {
		return fault.Invalidf("Source name must be at most 100 characters")
	}
	if strings.TrimSpace(raw) == "" {
		return fault.Invalidf("Source URL or file path is required")
	}
	path := raw
	if !filepath.IsAbs(raw) {
		u, err := url.Parse(raw)
		if err != nil {
			return fault.Invalidf("Invalid source URL: %v", err)
		}
		switch u.Scheme {
		case "http", "https":
			if u.Host == "" {
				return fault.Invalidf("Invalid source URL: no host")
			}
			return nil
		case "file":
			if !filepath.IsAbs(u.Path) {
				return fault.Invalidf("Invalid source URL: a file URL needs an absolute path")
			}
			path = u.Path
		default:
			return fault.Invalidf("Source must be an http(s) URL or an absolute file path")
		}
	}
	_, err := s.inFileDir(path)
	return err
}

// inFileDir returns path, cleaned, when it names a file under the
// directory of file sources once symbolic links are followed (the host
// path rule of docs/security.md): a malformed path (relative, "..") or a
// directory is a 400, a path leading anywhere else the 403 that says where
// file sources must be.
func (s *Service) inFileDir(path string) (string, error) {
	dir := s.filesDir()
	if dir == "" {
		return "", fault.Invalidf("File template sources are disabled on this server: use an http(s) URL")
	}
	pol := hostpath.Policy{Home: dir, Outside: "a template file source must be a file in " + dir}
	path, err := pol.Confine("template file source", path, hostpath.File)
	if err != nil {
		return "", err
	}
	if path == filepath.Clean(dir) {
		return "", fault.Invalidf("Invalid template file source %q: a file in %s is required, not the directory itself", path, dir)
	}
	return path, nil
}

// within reports whether path is below dir (both clean and absolute).
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// Sources returns every source with the outcome of its last fetch.
func (s *Service) Sources(ctx context.Context) ([]store.TemplateSource, error) {
	return s.o.Store.ListTemplateSources(ctx)
}

// Source returns one source, or the 404.
func (s *Service) Source(ctx context.Context, id int64) (store.TemplateSource, error) {
	src, err := s.o.Store.GetTemplateSource(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return store.TemplateSource{}, errSourceNotFound(id)
	}
	return src, err
}

func errSourceNotFound(id int64) error {
	return fault.New(fault.NotFound, fmt.Sprintf("Template source %d not found", id))
}

// checkDestination refuses (403) an http(s) source whose host the outbound
// policy refuses.
func (s *Service) checkDestination(ctx context.Context, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return nil
	}
	p, err := s.o.Outbound.Policy(ctx)
	if err != nil {
		return err
	}
	return p.CheckHost(ctx, u.Hostname())
}

func errSourceExists(name string) error {
	return fault.New(fault.Conflict, fmt.Sprintf("A template source named '%s' already exists", name))
}

// CreateSource records a source and fetches it at once, so that the answer
// tells whether it can be read (lastError).
func (s *Service) CreateSource(ctx context.Context, sp SourceSpec) (store.TemplateSource, error) {
	sp.Name, sp.URL = strings.TrimSpace(sp.Name), strings.TrimSpace(sp.URL)
	if err := s.checkSource(sp.Name, sp.URL); err != nil {
		return store.TemplateSource{}, err
	}
	if err := s.checkDestination(ctx, sp.URL); err != nil {
		return store.TemplateSource{}, err
	}
	src := store.TemplateSource{Name: sp.Name, URL: sp.URL, Enabled: sp.Enabled == nil || *sp.Enabled}
	if err := s.o.Store.CreateTemplateSource(ctx, &src); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return store.TemplateSource{}, errSourceExists(sp.Name)
		}
		return store.TemplateSource{}, err
	}
	s.mu.Lock()
	delete(s.logoGone, src.ID) // a reused id
	s.mu.Unlock()
	return s.refreshOne(ctx, src), nil
}

// UpdateSource changes a source; an empty name or URL keeps the stored one.
// The source is fetched again.
func (s *Service) UpdateSource(ctx context.Context, id int64, sp SourceSpec) (store.TemplateSource, error) {
	src, err := s.Source(ctx, id)
	if err != nil {
		return store.TemplateSource{}, err
	}
	if n := strings.TrimSpace(sp.Name); n != "" {
		src.Name = n
	}
	if u := strings.TrimSpace(sp.URL); u != "" {
		src.URL = u
	}
	if sp.Enabled != nil {
		src.Enabled = *sp.Enabled
	}
	if err := s.checkSource(src.Name, src.URL); err != nil {
		return store.TemplateSource{}, err
	}
	if err := s.checkDestination(ctx, src.URL); err != nil {
		return store.TemplateSource{}, err
	}
	if err := s.o.Store.UpdateTemplateSource(ctx, &src); err != nil {
		switch {
		case errors.Is(err, store.ErrNotFound):
			return store.TemplateSource{}, errSourceNotFound(id)
		case errors.Is(err, store.ErrConflict):
			return store.TemplateSource{}, errSourceExists(src.Name)
		}
		return store.TemplateSource{}, err
	}
	s.forget(id)
	if !src.Enabled {
		return src, nil
	}
	return s.refreshOne(ctx, src), nil
}

// DeleteSource removes a source, its cached templates and its cached logos.
func (s *Service) DeleteSource(ctx context.Context, id int64) error {
	if err := s.o.Store.DeleteTemplateSource(ctx, id); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return errSourceNotFound(id)
		}
		return err
	}
	s.forget(id)
	s.dropLogos(id)
	return nil
}

func (s *Service) forget(id int64) {
	s.mu.Lock()
	delete(s.cache, id)
	s.mu.Unlock()
}

// refreshOne fetches src now and returns it with the outcome recorded.
func (s *Service) refreshOne(ctx context.Context, src store.TemplateSource) store.TemplateSource {
	list, err := s.fetch(ctx, src)
	s.record(ctx, &src, list, err)
	return src
}

// record keeps the outcome of a fetch in the cache and on the source's row,
// and returns the templates the source now contributes.
func (s *Service) record(ctx context.Context, src *store.TemplateSource, list []Template, fetchErr error) []Template {
	at := s.o.Now().UTC().Truncate(time.Microsecond)
	msg := ""
	s.mu.Lock()
	if fetchErr != nil {
		// The last good read of the same URL stays in use while the source
		// fails; the failure is not tried again before the refresh interval
		// either (a list is refreshed at once with ?refresh=true).
		msg = fetchErr.Error()
		if prev, ok := s.cache[src.ID]; ok && prev.url == src.URL {
			list = prev.list
		}
	}
	s.cache[src.ID] = cached{url: src.URL, fetchedAt: at, list: list}
	s.mu.Unlock()
	count := len(list)
	if err := s.o.Store.RecordTemplateFetch(context.WithoutCancel(ctx), src.ID, at, count, msg); err != nil {
		s.o.Log.Warn("record template fetch", "source", src.ID, "err", err)
	}
	src.LastError, src.LastFetchedAt, src.TemplateCount = msg, &at, count
	return list
}

// fetch reads and parses a source's list, bounded in time and size, and
// gives its templates their ids.
func (s *Service) fetch(ctx context.Context, src store.TemplateSource) ([]Template, error) {
	ctx, cancel := context.WithTimeout(ctx, s.o.Timeout)
	defer cancel()
	data, err := s.read(ctx, src.URL)
	if err != nil {
		return nil, err
	}
	list, _, err := Parse(data)
	if err != nil {
		return nil, err
	}
	sid := strconv.FormatInt(src.ID, 10)
	for i := range list {
		list[i].ID, list[i].SourceID, list[i].SourceName = sid+":"+strconv.Itoa(i), sid, src.Name
	}
	s.fetchLogos(src.ID, src.Name, list) // in the background: never delays the list
	return list, nil
}

// read returns the bytes at location: an http(s) URL, or a file URL or an
// absolute path of a regular file in the directory of file sources (also
// once symbolic links are followed; a source stored before the directory
// was set is refused here).
func (s *Service) read(ctx context.Context, location string) ([]byte, error) {
	path := location
	if u, err := url.Parse(location); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, location, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Accept", "application/json")
		client, err := s.client(ctx)
		if err != nil {
			return nil, err
		}
		resp, err := client.Do(req)
		if f, ok := outbound.Refused(err); ok {
			return nil, f
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("fetch timed out after %s", s.o.Timeout)
			}
			return nil, fmt.Errorf("fetch failed: %w", err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("fetch failed: HTTP %d", resp.StatusCode)
		}
		return s.limited(resp.Body)
	} else if err == nil && u.Scheme == "file" {
		path = u.Path
	}
	path, err := s.openable(path)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read file: %w", errors.Unwrap(err))
	}
	defer f.Close()
	return s.limited(f)
}

// client is the client of URL sources: Options.Client, else one that
// follows the outbound policy.
func (s *Service) client(ctx context.Context) (*http.Client, error) {
	if s.o.Client != nil {
		return s.o.Client, nil
	}
	p, err := s.o.Outbound.Policy(ctx)
	if err != nil {
		return nil, err
	}
	return p.Client(), nil
}

// openable resolves the path of a file source: a regular file under the
// directory of file sources once symbolic links are followed.
func (s *Service) openable(path string) (string, error) {
	path, err := s.inFileDir(path)
	if err != nil {
		return "", err // its message is the source's lastError
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", fmt.Errorf("cannot read file: %w", errors.Unwrap(err))
	}
	root, err := filepath.EvalSymlinks(s.filesDir())
	if err != nil {
		return "", fmt.Errorf("cannot read the template files directory: %w", errors.Unwrap(err))
	}
	if !within(root, real) {
		return "", fmt.Errorf("cannot read file: it leads outside %s", s.filesDir())
	}
	if fi, err := os.Stat(real); err != nil || !fi.Mode().IsRegular() {
		return "", fmt.Errorf("cannot read file: not a regular file")
	}
	return real, nil
}

// limited reads r whole, or fails when it is larger than MaxBytes.
func (s *Service) limited(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, s.o.MaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read failed: %w", err)
	}
	if int64(len(data)) > s.o.MaxBytes {
		return nil, fmt.Errorf("template list is larger than %d bytes", s.o.MaxBytes)
	}
	return data, nil
}

// Filter selects templates of the catalogue.
type Filter struct {
	Category string // one of a template's categories (case-insensitive)
	Query    string // in the title, description, name, image or categories (case-insensitive)
	Type     int    // 0: any
	Refresh  bool   // fetch every enabled source again first
}

// Catalogue returns the templates of every enabled source, fetched again
// when older than the refresh interval, followed by the built-in ones. A
// source that cannot be read contributes its last good list, if any; its
// error is recorded on it.
func (s *Service) Catalogue(ctx context.Context, f Filter) ([]Template, error) {
	sources, err := s.o.Store.ListTemplateSources(ctx)
	if err != nil {
		return nil, err
	}
	lists := make([][]Template, len(sources))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	for i, src := range sources {
		if !src.Enabled {
			continue
		}
		s.mu.Lock()
		c, ok := s.cache[src.ID]
		s.mu.Unlock()
		if ok && c.url == src.URL && !f.Refresh && s.o.Now().Sub(c.fetchedAt) < s.o.Refresh {
			lists[i] = c.list
			continue
		}
		g.Go(func() error {
			list, err := s.fetch(gctx, src)
			lists[i] = s.record(gctx, &src, list, err)
			return nil
		})
	}
	_ = g.Wait() // fetches report their errors on their sources
	out := []Template{}
	for _, l := range lists {
		out = append(out, l...)
	}
	out = append(out, s.builtin...)
	s.withLogoURLs(out)
	return slices.DeleteFunc(out, func(t Template) bool { return !f.match(t) }), nil
}

func (f Filter) match(t Template) bool {
	if f.Type != 0 && t.Type != f.Type {
		return false
	}
	if f.Category != "" && !slices.ContainsFunc(t.Categories, func(c string) bool { return strings.EqualFold(c, f.Category) }) {
		return false
	}
	if q := strings.ToLower(strings.TrimSpace(f.Query)); q != "" {
		hay := strings.ToLower(strings.Join(append([]string{t.Title, t.Description, t.Name, t.Image}, t.Categories...), "\n"))
		return strings.Contains(hay, q)
	}
	return true
}

// Template returns the template with id from the catalogue, or the 404.
func (s *Service) Template(ctx context.Context, id string) (Template, error) {
	if strings.TrimSpace(id) == "" {
		return Template{}, fault.Invalidf("Template ID is required")
	}
	list, err := s.Catalogue(ctx, Filter{})
	if err != nil {
		return Template{}, err
	}
	for _, t := range list {
		if t.ID == id {
			return t, nil
		}
	}
	return Template{}, errNotFound(id)
}
