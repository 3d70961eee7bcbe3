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
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/berth-dev/berth/server/internal/outbound"
	"github.com/berth-dev/berth/server/internal/picture"
	"github.com/berth-dev/berth/shared/fault"
)

// Template logos are served by Berth from its own origin (issue 22), so the
// console never asks another site for an image: the built-in templates'
// logos are in the binary; those of a source's templates are fetched by the
// server when the source is read (only the URLs that source lists) and kept
// in the logo directory, whose copy is served from then on, also when the
// remote site is gone.

//go:embed logos/*.svg
var builtinLogos embed.FS

// Limits of a fetched logo.
const (
	// MaxLogoBytes bounds a logo (256 KiB).
	MaxLogoBytes = 256 << 10
	// DefaultLogoTimeout bounds the fetch of all the new logos of one source.
	DefaultLogoTimeout = 10 * time.Second
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

// logoFile is the file of the cached logo of URL u in dir.
func logoFile(dir, u string) string {
	sum := sha256.Sum256([]byte(u))
	return filepath.Join(dir, hex.EncodeToString(sum[:]))
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
	for i := range list {
		t := &list[i]
		t.LogoURL = ""
		if t.SourceID == BuiltinSource {
			if _, ok := builtinLogo(t.Name); ok {
				t.LogoURL = LogoPath(t.ID)
			}
			continue
		}
		if dir == "" || !fetchableLogo(t.Logo) {
			continue
		}
		if fi, err := os.Stat(logoFile(dir, t.Logo)); err == nil && fi.Mode().IsRegular() {
			t.LogoURL = LogoPath(t.ID)
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
		data, err = os.ReadFile(logoFile(dir, t.Logo))
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

// fetchLogos fetches the logos list names that are not cached yet, each
// once, into the logo directory; a logo that cannot be fetched or is
// refused is skipped (its template shows the placeholder) and logged.
func (s *Service) fetchLogos(ctx context.Context, sourceName string, list []Template) {
	dir := s.logosDir()
	if dir == "" {
		return
	}
	seen := map[string]bool{}
	var todo []string
	for _, t := range list {
		u := strings.TrimSpace(t.Logo)
		if seen[u] || !fetchableLogo(u) {
			continue
		}
		seen[u] = true
		if _, err := os.Stat(logoFile(dir, u)); err == nil {
			continue
		}
		todo = append(todo, u)
	}
	if len(todo) == 0 {
		return
	}
	if len(todo) > maxLogosPerSource {
		todo = todo[:maxLogosPerSource]
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		s.o.Log.Warn("template logos: directory", "dir", dir, "err", err)
		return
	}
	client, err := s.logoClient(ctx)
	if err != nil {
		s.o.Log.Warn("template logos", "source", sourceName, "err", err)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, s.o.LogoTimeout)
	defer cancel()
	g := errgroup.Group{}
	g.SetLimit(4)
	for _, u := range todo {
		g.Go(func() error {
			data, err := s.fetchLogo(ctx, client, u)
			if err == nil {
				err = writeAtomic(logoFile(dir, u), data)
			}
			if err != nil {
				s.o.Log.Info("template logo not cached", "source", sourceName, "url", u, "err", err)
			}
			return nil
		})
	}
	_ = g.Wait()
}

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
