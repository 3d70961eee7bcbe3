package templates

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
	"github.com/berth-dev/berth/shared/fault"
)

// tinyPNG is a real 2×2 PNG.
func tinyPNG(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	img.Set(0, 0, color.RGBA{R: 200, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// logoRemote is a real HTTP server standing for a remote template source:
// it serves /templates.json (one template per logo path) and the logos,
// counting the requests of each path.
type logoRemote struct {
	srv  *httptest.Server
	mu   sync.Mutex
	hits map[string]int
}

func (r *logoRemote) count(path string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.hits[path]
}

func startLogoRemote(t *testing.T, pngData []byte) *logoRemote {
	t.Helper()
	r := &logoRemote{hits: map[string]int{}}
	svg := `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 4 4"><rect width="4" height="4" fill="#08f"/></svg>`
	mux := http.NewServeMux()
	serve := func(path, ct string, body []byte) {
		mux.HandleFunc(path, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", ct)
			_, _ = w.Write(body)
		})
	}
	serve("/png", "image/png", pngData)
	serve("/svg", "image/svg+xml; charset=utf-8", []byte(svg))
	serve("/big", "image/png", append(append([]byte{}, pngData...), make([]byte, MaxLogoBytes)...))
	serve("/html", "text/html", []byte("<html><body>not an image</body></html>"))
	serve("/lies", "image/png", []byte("<html><body>not an image</body></html>"))
	serve("/script", "image/svg+xml", []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`))
	mux.HandleFunc("/to-file", func(w http.ResponseWriter, req *http.Request) {
		http.Redirect(w, req, "file:///etc/passwd", http.StatusFound)
	})
	paths := []string{"/png", "/svg", "/big", "/html", "/lies", "/script", "/to-file", "/missing"}
	mux.HandleFunc("/templates.json", func(w http.ResponseWriter, _ *http.Request) {
		var list []map[string]any
		for _, p := range paths {
			list = append(list, map[string]any{"type": 1, "title": "Logo " + p, "image": "busybox", "logo": r.srv.URL + p})
		}
		list = append(list, map[string]any{"type": 1, "title": "Logo ftp", "image": "busybox", "logo": "ftp://example.invalid/x.png"})
		_ = json.NewEncoder(w).Encode(map[string]any{"version": "2", "templates": list})
	})
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.hits[req.URL.Path]++
		r.mu.Unlock()
		mux.ServeHTTP(w, req)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func TestSourceLogosAreFetchedOnceCachedAndServedWithoutTheRemote(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		pngData := tinyPNG(t)
		remote := startLogoRemote(t, pngData)
		logoDir := t.TempDir()
		now := time.Date(2026, 11, 28, 4, 0, 0, 0, time.UTC)
		s := New(Options{Store: st, Log: discardLog(), Now: func() time.Time { return now }, LogoDir: logoDir})
		src, err := s.CreateSource(ctx, SourceSpec{Name: "logos", URL: remote.srv.URL + "/templates.json"})
		if err != nil || src.LastError != "" {
			t.Fatalf("source = %+v, %v", src, err)
		}
		s.waitLogos() // fetched in the background as the source was read
		list, err := s.Catalogue(ctx, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		byTitle := map[string]Template{}
		for _, tp := range list {
			byTitle[tp.Title] = tp
		}
		// Served: the PNG and the plain SVG, at Berth's own path.
		for _, p := range []string{"/png", "/svg"} {
			tp := byTitle["Logo "+p]
			if tp.LogoURL != LogoPath(tp.ID) || !strings.HasPrefix(tp.LogoURL, "/api/templates/") {
				t.Errorf("%s: logoUrl = %q", p, tp.LogoURL)
			}
		}
		// Refused: oversize, a type Berth does not serve, content that is not
		// the declared image, an SVG with a script, a redirect to file:, a
		// 404, a non-http scheme (never requested at all).
		for _, p := range []string{"/big", "/html", "/lies", "/script", "/to-file", "/missing", "ftp"} {
			tp := byTitle["Logo "+p]
			if tp.LogoURL != "" {
				t.Errorf("%s: logoUrl = %q, want none", p, tp.LogoURL)
			}
			if _, _, err := s.Logo(ctx, tp.ID, true); !isNotFound(err) {
				t.Errorf("%s: Logo error = %v, want a 404", p, err)
			}
		}
		data, ct, err := s.Logo(ctx, byTitle["Logo /png"].ID, true)
		if err != nil || ct != "image/png" || !bytes.Equal(data, pngData) {
			t.Fatalf("png logo = %d bytes %q, %v", len(data), ct, err)
		}
		if _, ct, err := s.Logo(ctx, byTitle["Logo /svg"].ID, true); err != nil || ct != "image/svg+xml" {
			t.Fatalf("svg logo = %q, %v", ct, err)
		}
		// Fetched once: reading the source again (refresh) asks only for the
		// list and the logos that were refused, never for a cached one.
		if _, err := s.Catalogue(ctx, Filter{Refresh: true}); err != nil {
			t.Fatal(err)
		}
		s.waitLogos()
		if n := remote.count("/png"); n != 1 {
			t.Errorf("the png logo was fetched %d times, want 1", n)
		}
		if n := remote.count("/templates.json"); n != 2 {
			t.Errorf("the list was fetched %d times, want 2", n)
		}
		// No partial files left behind by the atomic writes.
		entries, _ := os.ReadDir(filepath.Join(logoDir, strconv.FormatInt(src.ID, 10)))
		if len(entries) != 2 {
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			t.Errorf("logo dir holds %v, want the 2 logos", names)
		}
		// The remote is gone: the cached logos are still served, from a new
		// Service too (a restarted server), as long as the template is listed.
		remote.srv.Close()
		data, _, err = s.Logo(ctx, byTitle["Logo /png"].ID, true)
		if err != nil || !bytes.Equal(data, pngData) {
			t.Fatalf("png logo without the remote = %d bytes, %v", len(data), err)
		}
		s2 := New(Options{Store: st, Log: discardLog(), LogoDir: logoDir})
		s2.cache[src.ID] = s.cache[src.ID] // the list as last read (the remote cannot answer it any more)
		data, _, err = s2.Logo(ctx, byTitle["Logo /png"].ID, true)
		if err != nil || !bytes.Equal(data, pngData) {
			t.Fatalf("png logo from a new service = %d bytes, %v", len(data), err)
		}
	})
}

func TestBuiltinLogosAreShippedAndNoLogoDirMeansPlaceholders(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		remote := startLogoRemote(t, tinyPNG(t))
		s := New(Options{Store: st, Log: discardLog()}) // no logo directory
		if _, err := s.CreateSource(ctx, SourceSpec{Name: "logos", URL: remote.srv.URL + "/templates.json"}); err != nil {
			t.Fatal(err)
		}
		list, err := s.Catalogue(ctx, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		builtins := 0
		for _, tp := range list {
			if tp.SourceID != BuiltinSource {
				if tp.LogoURL != "" {
					t.Errorf("%s: logoUrl %q without a logo directory", tp.Title, tp.LogoURL)
				}
				continue
			}
			builtins++
			if tp.LogoURL != LogoPath(tp.ID) || tp.Logo != tp.LogoURL {
				t.Errorf("built-in %s: logo %q, logoUrl %q", tp.Name, tp.Logo, tp.LogoURL)
				continue
			}
			data, ct, err := s.Logo(ctx, tp.ID, false)
			if err != nil || ct != "image/svg+xml" || len(data) == 0 {
				t.Errorf("built-in %s logo: %q %d bytes, %v", tp.Name, ct, len(data), err)
			}
		}
		if builtins == 0 {
			t.Fatal("no built-in templates")
		}
		if n := remote.count("/png"); n != 0 {
			t.Errorf("logos fetched without a logo directory: %d", n)
		}
		if _, _, err := s.Logo(ctx, "builtin:nope", true); !isNotFound(err) {
			t.Errorf("unknown template logo: %v", err)
		}
	})
}

func TestSniffLogo(t *testing.T) {
	for _, c := range []struct {
		data []byte
		want string
	}{
		{tinyPNG(t), "image/png"},
		{[]byte("GIF89a\x01\x00\x01\x00"), "image/gif"},
		{[]byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`), "image/svg+xml"},
		{[]byte(`<svg xmlns="http://www.w3.org/2000/svg" onload="x()"/>`), ""},
		{[]byte("plain text"), ""},
		{append(tinyPNG(t), make([]byte, MaxLogoBytes)...), ""},
	} {
		got, err := sniffLogo(c.data)
		if got != c.want || (c.want == "") != (err != nil) {
			t.Errorf("sniffLogo(%.20q) = %q, %v; want %q", c.data, got, err, c.want)
		}
	}
}

func isNotFound(err error) bool {
	f, ok := fault.As(err)
	return ok && f.Kind == fault.NotFound
}

// A logo host that hangs never delays reading a source: the list answers at
// once with the placeholder, the logo is fetched in the background within
// its own short timeout, and the host's other logos are not asked for in
// that pass; a host that answers gets its logo cached meanwhile.
func TestAHangingLogoHostNeverDelaysTheTemplates(t *testing.T) {
	st := openLogoStore(t)
	ctx := context.Background()
	release := make(chan struct{})
	var hangMu sync.Mutex
	hangHits := 0
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hangMu.Lock()
		hangHits++
		hangMu.Unlock()
		select { // a host that accepts the request and never answers
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(hang.Close)
	t.Cleanup(func() { close(release) })
	good := startLogoRemote(t, tinyPNG(t))
	mux := http.NewServeMux()
	mux.HandleFunc("/templates.json", func(w http.ResponseWriter, _ *http.Request) {
		var list []map[string]any
		for i := range 6 {
			list = append(list, map[string]any{"type": 1, "title": fmt.Sprintf("Hang %d", i), "image": "busybox", "logo": fmt.Sprintf("%s/logo-%d.png", hang.URL, i)})
		}
		list = append(list, map[string]any{"type": 1, "title": "Good", "image": "busybox", "logo": good.srv.URL + "/png"})
		_ = json.NewEncoder(w).Encode(map[string]any{"version": "2", "templates": list})
	})
	lists := httptest.NewServer(mux)
	t.Cleanup(lists.Close)

	logoDir := t.TempDir()
	s := New(Options{Store: st, Log: discardLog(), LogoDir: logoDir, LogoTimeout: 300 * time.Millisecond})
	start := time.Now()
	src, err := s.CreateSource(ctx, SourceSpec{Name: "hangs", URL: lists.URL + "/templates.json"})
	if err != nil || src.LastError != "" || src.TemplateCount != 7 {
		t.Fatalf("source = %+v, %v", src, err)
	}
	list, err := s.Catalogue(ctx, Filter{Refresh: true})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 250*time.Millisecond {
		t.Errorf("creating and reading the source took %v: it waited for the logos", took)
	}
	for _, tp := range list {
		if tp.SourceName == "hangs" && (tp.LogoURL != "" || !tp.LogoPending) {
			t.Errorf("%s: logoUrl %q, pending %v; want the placeholder, its logo being fetched", tp.Title, tp.LogoURL, tp.LogoPending)
		}
	}
	s.waitLogos()
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("the logo fetches took %v, want about the 300 ms timeout", took)
	}
	hangMu.Lock()
	hits := hangHits
	hangMu.Unlock()
	// Two passes (create, refresh) ran; each asks the hanging host at most
	// logoWorkers times before it is known to hang, never for all 6 logos.
	if hits == 0 || hits > 2*logoWorkers {
		t.Errorf("the hanging host was asked %d times", hits)
	}
	list, err = s.Catalogue(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tp := range list {
		switch {
		case tp.Title == "Good" && tp.LogoURL != LogoPath(tp.ID):
			t.Errorf("the good host's logo is not served: %q", tp.LogoURL)
		case strings.HasPrefix(tp.Title, "Hang ") && (tp.LogoURL != "" || tp.LogoPending):
			t.Errorf("%s: logoUrl %q, pending %v after the fetches ended", tp.Title, tp.LogoURL, tp.LogoPending)
		}
	}
}

// Cached logos go with their source: deleting it removes them, and on
// start the logos of sources that no longer exist (and files of an older
// layout) are removed while those of existing sources stay.
func TestLogosOfADeletedSourceAreRemoved(t *testing.T) {
	st := openLogoStore(t)
	ctx := context.Background()
	remote := startLogoRemote(t, tinyPNG(t))
	logoDir := t.TempDir()
	s := New(Options{Store: st, Log: discardLog(), LogoDir: logoDir})
	keep, err := s.CreateSource(ctx, SourceSpec{Name: "keep", URL: remote.srv.URL + "/templates.json"})
	if err != nil {
		t.Fatal(err)
	}
	drop, err := s.CreateSource(ctx, SourceSpec{Name: "drop", URL: remote.srv.URL + "/templates.json"})
	if err != nil {
		t.Fatal(err)
	}
	s.waitLogos()
	dirOf := func(id int64) string { return filepath.Join(logoDir, strconv.FormatInt(id, 10)) }
	count := func(dir string) int {
		entries, err := os.ReadDir(dir)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		return len(entries)
	}
	if count(dirOf(keep.ID)) != 2 || count(dirOf(drop.ID)) != 2 {
		t.Fatalf("cached: keep %d, drop %d logos; want 2 each", count(dirOf(keep.ID)), count(dirOf(drop.ID)))
	}
	if err := s.DeleteSource(ctx, drop.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dirOf(drop.ID)); !os.IsNotExist(err) {
		t.Errorf("the deleted source's logos are still there: %v", err)
	}

	// Left behind while Berth was not running: a deleted source's directory
	// and a logo of the older flat layout.
	orphan := dirOf(drop.ID + 1000)
	if err := os.MkdirAll(orphan, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{filepath.Join(orphan, "aa"), filepath.Join(logoDir, strings.Repeat("b", 64))} {
		if err := os.WriteFile(f, tinyPNG(t), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s2 := New(Options{Store: st, Log: discardLog(), LogoDir: logoDir})
	if err := s2.PruneLogos(ctx); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(logoDir)
	if len(entries) != 1 || entries[0].Name() != strconv.FormatInt(keep.ID, 10) || count(dirOf(keep.ID)) != 2 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("after the prune the logo dir holds %v, want only %d with its 2 logos", names, keep.ID)
	}
}

// openLogoStore is a real SQLite store in t.TempDir (the logo cache does not
// depend on the dialect; the other tests here run on both).
func openLogoStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "berth.db"), storetest.Box(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}
