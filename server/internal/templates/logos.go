package templates

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/berth-dev/berth/server/internal/outbound"
	"github.com/berth-dev/berth/server/internal/picture"
	"github.com/berth-dev/berth/shared/fault"
)

// Template logos are served by Berth from its own origin (issue 22), so the
// console never asks another site for an image: the built-in templates'
// logos are in the binary; those of a source's templates are fetched by the
// server in the background when the source is read (only the URLs that
// source lists) and kept in the source's directory of the logo directory,
// whose copy is served from then on, also when the remote site is gone. A
// template's logo is its placeholder until its copy exists; the list of
// templates never waits for a logo. Deleting a source removes its logos.

//go:embed logos/*.svg
var builtinLogos embed.FS

// Limits of a fetched logo.
const (
	// MaxLogoBytes bounds a logo (256 KiB).
	MaxLogoBytes = 256 << 10
	// DefaultLogoTimeout bounds the fetch of one logo; a host that did not
	// answer in time is not asked for the pass's other logos.
	DefaultLogoTimeout = 3 * time.Second
	// logoWorkers is how many logos are fetched at a time, for all sources.
	logoWorkers = 4
	// maxLogosPerSource bounds how many logos one source's read fetches.
	maxLogosPerSource = 500
	// maxLogoRedirects is how many redirects a logo fetch follows.
	maxLogoRedirects = 3
)

// logoTypes are the content types a logo may be declared with.
var logoTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true, "image/svg+xml": true}

// LogoPath is the path Berth serves template id's logo at.
func LogoPath(id string) string {
	return "/api/templates/" + url.PathEscape(id) + "/logo"
}

// UseLogoDir makes dir the directory fetched logos are kept in ("": logos
// of sources are neither fetched nor served).
func (s *Service) UseLogoDir(dir string) {
	if dir != "" {
		dir = filepath.Clean(dir)
		if abs, err := filepath.Abs(dir); err == nil {
			dir = abs
		}
	}
	s.mu.Lock()
	s.logoDir = dir
	s.mu.Unlock()
}

func (s *Service) logosDir() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logoDir
}

// logoFile is the file of the cached logo of URL u of source sourceID
// (one directory per source, removed with it) in dir.
func logoFile(dir, sourceID, u string) string {
	sum := sha256.Sum256([]byte(strings.TrimSpace(u)))
	return filepath.Join(dir, sourceID, hex.EncodeToString(sum[:]))
}

// builtinLogo returns the embedded logo of a built-in template.
func builtinLogo(name string) ([]byte, bool) {
	if name == "" || strings.ContainsAny(name, "/\\.") {
		return nil, false
	}
	data, err := fs.ReadFile(builtinLogos, "logos/"+name+".svg")
	return data, err == nil
}

// withLogoURLs sets LogoURL on the templates whose logo Berth can serve:
// a built-in one's embedded logo, a source template's cached copy.
func (s *Service) withLogoURLs(list []Template) {
	dir := s.logosDir()
	s.mu.Lock()
	busy := maps.Clone(s.logoBusy)
	s.mu.Unlock()
	for i := range list {
		t := &list[i]
		t.LogoURL, t.LogoPending = "", false
		if t.SourceID == BuiltinSource {
			if _, ok := builtinLogo(t.Name); ok {
				t.LogoURL = LogoPath(t.ID)
			}
			continue
		}
		if dir == "" || !fetchableLogo(t.Logo) {
			continue
		}
		f := logoFile(dir, t.SourceID, t.Logo)
		if fi, err := os.Stat(f); err == nil && fi.Mode().IsRegular() {
			t.LogoURL = LogoPath(t.ID)
		} else {
			t.LogoPending = busy[f]
		}
	}
}

// Logo returns the logo of template id and its content type: the embedded
// one of a built-in template, the cached copy of a source template's. A
// template without one (never fetched, or refused) is a 404; the console
// shows its placeholder. admin tells whether the caller may see templates
// marked administrator_only.
func (s *Service) Logo(ctx context.Context, id string, admin bool) ([]byte, string, error) {
	t, err := s.Template(ctx, id)
	if err != nil {
		return nil, "", err
	}
	if t.AdministratorOnly && !admin {
		return nil, "", errNotFound(id)
	}
	noLogo := fault.New(fault.NotFound, fmt.Sprintf("Template '%s' has no logo", id))
	var data []byte
	if t.SourceID == BuiltinSource {
		var ok bool
		if data, ok = builtinLogo(t.Name); !ok {
			return nil, "", noLogo
		}
	} else {
		dir := s.logosDir()
		if dir == "" || !fetchableLogo(t.Logo) {
			return nil, "", noLogo
		}
		data, err = os.ReadFile(logoFile(dir, t.SourceID, t.Logo))
		if errors.Is(err, fs.ErrNotExist) {
			return nil, "", noLogo
		}
		if err != nil {
			return nil, "", err
		}
	}
	ct, err := sniffLogo(data)
	if err != nil { // a file changed behind Berth's back
		return nil, "", noLogo
	}
	return data, ct, nil
}

// fetchableLogo reports whether u is a logo URL Berth fetches: http or
// https with a host.
func fetchableLogo(u string) bool {
	p, err := url.Parse(strings.TrimSpace(u))
	return err == nil && (p.Scheme == "http" || p.Scheme == "https") && p.Host != ""
}

// fetchLogos starts fetching, in the background, the logos list names
// that are not cached (nor being fetched) yet, each once, into the source's
// directory of the logo directory; a logo that cannot be fetched or is
// refused is skipped (its template shows the placeholder) and logged.
func (s *Service) fetchLogos(srcID int64, sourceName string, list []Template) {
	dir := s.logosDir()
	if dir == "" {
		return
	}
	sid := strconv.FormatInt(srcID, 10)
	seen := map[string]bool{}
	var todo []string
	s.mu.Lock()
	for _, t := range list {
		u := strings.TrimSpace(t.Logo)
		if seen[u] || !fetchableLogo(u) || len(todo) == maxLogosPerSource {
			continue
		}
		seen[u] = true
		f := logoFile(dir, sid, u)
		if s.logoBusy[f] {
			continue
		}
		if _, err := os.Stat(f); err == nil {
			continue
		}
		s.logoBusy[f] = true
		todo = append(todo, u)
	}
	s.mu.Unlock()
	if len(todo) == 0 {
		return
	}
	s.logoWG.Add(1)
	go func() {
		defer s.logoWG.Done()
		s.fetchLogoPass(srcID, dir, sourceName, todo)
		s.mu.Lock()
		for _, u := range todo {
			delete(s.logoBusy, logoFile(dir, sid, u))
		}
		s.mu.Unlock()
	}()
}

// fetchLogoPass fetches the logos todo of a source, at most logoWorkers at
// a time for all sources, each within LogoTimeout; once a host did not
// answer in time, its other logos are left for the next read.
func (s *Service) fetchLogoPass(srcID int64, dir, sourceName string, todo []string) {
	client, err := s.logoClient(context.Background())
	if err != nil {
		s.o.Log.Warn("template logos", "source", sourceName, "err", err)
		return
	}
	var mu sync.Mutex
	slow := map[string]bool{} // hosts that did not answer in time
	isSlow := func(host string) bool {
		mu.Lock()
		defer mu.Unlock()
		return slow[host]
	}
	var wg sync.WaitGroup
	for _, u := range todo {
		host := ""
		if p, err := url.Parse(u); err == nil {
			host = p.Host
		}
		if isSlow(host) {
			continue
		}
		s.logoSlots <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-s.logoSlots; wg.Done() }()
			if isSlow(host) {
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), s.o.LogoTimeout)
			data, err := s.fetchLogo(ctx, client, u)
			if ctx.Err() != nil {
				mu.Lock()
				slow[host] = true
				mu.Unlock()
			}
			cancel()
			if err == nil {
				err = s.keepLogo(srcID, dir, u, data)
			}
			if err != nil {
				s.o.Log.Info("template logo not cached", "source", sourceName, "url", u, "err", err)
			}
		}()
	}
	wg.Wait()
}

// keepLogo writes a fetched logo into its source's directory, unless the
// source was deleted meanwhile.
func (s *Service) keepLogo(srcID int64, dir, u string, data []byte) error {
	s.logoWrite.Lock()
	defer s.logoWrite.Unlock()
	s.mu.Lock()
	gone := s.logoGone[srcID]
	s.mu.Unlock()
	if gone {
		return errors.New("the source was deleted")
	}
	f := logoFile(dir, strconv.FormatInt(srcID, 10), u)
	if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
		return err
	}
	return writeAtomic(f, data)
}

// dropLogos removes the cached logos of a deleted source; a fetch still
// running for it keeps nothing.
func (s *Service) dropLogos(srcID int64) {
	s.logoWrite.Lock()
	defer s.logoWrite.Unlock()
	s.mu.Lock()
	s.logoGone[srcID] = true
	dir := s.logoDir
	s.mu.Unlock()
	if dir == "" {
		return
	}
	if err := os.RemoveAll(filepath.Join(dir, strconv.FormatInt(srcID, 10))); err != nil {
		s.o.Log.Warn("template logos: remove a deleted source's logos", "source", srcID, "err", err)
	}
}

// PruneLogos removes from the logo directory what belongs to no source:
// the logos of sources deleted while Berth was not running (or before
// logos were removed with their source), and files of an older layout.
func (s *Service) PruneLogos(ctx context.Context) error {
	dir := s.logosDir()
	if dir == "" {
		return nil
	}
	sources, err := s.o.Store.ListTemplateSources(ctx)
	if err != nil {
		return err
	}
	keep := map[string]bool{}
	for _, src := range sources {
		keep[strconv.FormatInt(src.ID, 10)] = true
	}
	s.logoWrite.Lock()
	defer s.logoWrite.Unlock()
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() && keep[e.Name()] {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// waitLogos waits for the background logo fetches started so far (tests).
func (s *Service) waitLogos() { s.logoWG.Wait() }

// logoClient is the client logos are fetched with: the source's (the
// outbound policy's unless Options.Client is set), following at most a few
// redirects, only to http(s) URLs and never from https down to http.
func (s *Service) logoClient(ctx context.Context) (*http.Client, error) {
	base, err := s.client(ctx)
	if err != nil {
		return nil, err
	}
	c := *base
	next := base.CheckRedirect
	if next == nil {
		next = outbound.CheckRedirect
	}
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= maxLogoRedirects {
			return fmt.Errorf("stopped after %d redirects", maxLogoRedirects)
		}
		if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
			return fmt.Errorf("redirect to a %s URL refused", req.URL.Scheme)
		}
		if via[0].URL.Scheme == "https" && req.URL.Scheme != "https" {
			return fmt.Errorf("redirect from https to %s refused", req.URL.Scheme)
		}
		return next(req, via)
	}
	return &c, nil
}

// fetchLogo reads one logo: HTTP 200, a declared image type Berth serves,
// at most MaxLogoBytes, and content that is such an image.
func (s *Service) fetchLogo(ctx context.Context, client *http.Client, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "image/png, image/jpeg, image/gif, image/webp, image/svg+xml")
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil || !logoTypes[mt] {
		return nil, fmt.Errorf("content type %q is not an image type Berth serves", resp.Header.Get("Content-Type"))
	}
	if resp.ContentLength > MaxLogoBytes {
		return nil, fmt.Errorf("logo is larger than %d bytes", MaxLogoBytes)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxLogoBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxLogoBytes {
		return nil, fmt.Errorf("logo is larger than %d bytes", MaxLogoBytes)
	}
	if _, err := sniffLogo(data); err != nil {
		return nil, err
	}
	return data, nil
}

// sniffLogo returns the content type of a logo told by its content: a GIF,
// or a picture the picture package accepts (PNG, JPEG, WebP, or SVG without
// scripts).
func sniffLogo(data []byte) (string, error) {
	if len(data) > MaxLogoBytes {
		return "", fmt.Errorf("logo is larger than %d bytes", MaxLogoBytes)
	}
	if bytes.HasPrefix(data, []byte("GIF87a")) || bytes.HasPrefix(data, []byte("GIF89a")) {
		return "image/gif", nil
	}
	return picture.Check(data)
}

// writeAtomic writes data to path through a temporary file renamed over
// it, so a reader never sees half a logo.
func writeAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".logo-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
	}
	return err
}
