// Package webui serves the web console: the build of web/ (copied into
// dist/ by `make web`) embedded in the binary. Files are served as they are,
// hashed assets under /assets/ cached for good, and every other path answers
// index.html so that the console's client-side routes survive a reload.
//
// A binary built before `make web` ran embeds only dist/.gitkeep and serves
// a placeholder page instead.
package webui

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"
)

//go:embed all:dist
var dist embed.FS

//go:embed placeholder.html
var placeholder []byte

// Cache-Control values: assets under /assets/ carry a content hash in their
// name and never change; everything else (index.html above all) is
// revalidated on every use, cheaply through its ETag.
const (
	immutable = "public, max-age=31536000, immutable"
	noCache   = "no-cache"
)

// contentTypes are the types of the files a Vite build emits that Go's
// built-in table lacks (it has .js, .css, .svg, .html, .json, .png, .wasm, …
// but not the fonts), so that the image FROM scratch, which has no
// /etc/mime.types, answers them right too.
var contentTypes = map[string]string{
	".js":          "text/javascript; charset=utf-8",
	".mjs":         "text/javascript; charset=utf-8",
	".css":         "text/css; charset=utf-8",
	".html":        "text/html; charset=utf-8",
	".svg":         "image/svg+xml",
	".json":        "application/json",
	".map":         "application/json",
	".webmanifest": "application/manifest+json",
	".woff":        "font/woff",
	".woff2":       "font/woff2",
	".ttf":         "font/ttf",
	".ico":         "image/x-icon",
	".txt":         "text/plain; charset=utf-8",
}

// file is one servable file, with its gzip twin when the build made one.
type file struct {
	data, gz    []byte
	etag        string
	contentType string
}

// Console serves the embedded console. It is safe for concurrent use.
type Console struct {
	files map[string]*file // by path without the leading slash
	index *file
}

// New returns the Console of the embedded build.
func New() *Console {
	sub, err := fs.Sub(dist, "dist")
	if err != nil { // cannot happen: "dist" is a valid path
		sub = dist
	}
	return FromFS(sub)
}

// FromFS returns the Console of the build in fsys (tests serve their own).
// It reads every file once: for the embedded build this only hashes them
// for their ETags.
func FromFS(fsys fs.FS) *Console {
	c := &Console{files: map[string]*file{}}
	_ = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, ".gz") || path.Base(p) == ".gitkeep" {
			return nil
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return nil
		}
		f := &file{data: data, etag: etag(data), contentType: contentType(p, data)}
		if gz, err := fs.ReadFile(fsys, p+".gz"); err == nil {
			f.gz = gz
		}
		c.files[p] = f
		return nil
	})
	c.index = c.files["index.html"]
	if c.index == nil {
		c.index = &file{data: placeholder, etag: etag(placeholder), contentType: contentTypes[".html"]}
	}
	return c
}

// Placeholder reports whether the binary was built without the console.
func (c *Console) Placeholder() bool { return c.files["index.html"] == nil }

func etag(data []byte) string {
	sum := sha256.Sum256(data)
	return `"` + base64.RawURLEncoding.EncodeToString(sum[:12]) + `"`
}

func contentType(name string, data []byte) string {
	ext := strings.ToLower(path.Ext(name))
	if t, ok := contentTypes[ext]; ok {
		return t
	}
	if t := mime.TypeByExtension(ext); t != "" {
		return t
	}
	return http.DetectContentType(data)
}

// ServeHTTP answers GET and HEAD: the file at the request's path when the
// build has one, 404 for a missing file under /assets/ (an asset of another
// build: answering it with a page would only confuse the browser), and
// index.html for any other path.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, http.StatusText(http.StatusMethodNotAllowed), http.StatusMethodNotAllowed)
		return
	}
	name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
	f, ok := c.files[name]
	cache := noCache
	switch {
	case !ok && strings.HasPrefix(name, "assets/"):
		http.NotFound(w, r)
		return
	case !ok:
		f = c.index
	case strings.HasPrefix(name, "assets/"):
		cache = immutable
	}
	h := w.Header()
	h.Set("Content-Type", f.contentType)
	h.Set("Cache-Control", cache)
	h.Set("X-Content-Type-Options", "nosniff")
	data, tag := f.data, f.etag
	if f.gz != nil {
		h.Set("Vary", "Accept-Encoding")
		if acceptsGzip(r) {
			h.Set("Content-Encoding", "gzip")
			data, tag = f.gz, strings.TrimSuffix(f.etag, `"`)+`-gz"`
		}
	}
	h.Set("ETag", tag)
	// ServeContent answers If-None-Match (304), Range and HEAD; the zero
	// time leaves out Last-Modified (embedded files have none).
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(data))
}

// acceptsGzip reports whether the request's Accept-Encoding allows gzip.
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(name), "gzip") {
			continue
		}
		q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
		return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
	}
	return false
}
