package webui

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"
)

func gzipped(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return b.Bytes()
}

func testConsole(t *testing.T) *Console {
	t.Helper()
	return FromFS(fstest.MapFS{
		"index.html":                {Data: []byte("<!doctype html><title>console</title>")},
		"favicon.svg":               {Data: []byte("<svg xmlns='http://www.w3.org/2000/svg'/>")},
		"assets/index-abc123.js":    {Data: []byte("console.log(1)")},
		"assets/index-abc123.js.gz": {Data: gzipped(t, "console.log(1)")},
		"assets/index-def456.css":   {Data: []byte("body{}")},
		"assets/font-0a1b.woff2":    {Data: []byte("wOF2")},
		".gitkeep":                  {Data: nil},
	})
}

func get(t *testing.T, h http.Handler, method, target string, hdr map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestConsoleServesFilesAndIndexForOtherPaths(t *testing.T) {
	c := testConsole(t)
	cases := []struct {
		path        string
		status      int
		contentType string
		cache       string
		body        string
	}{
		{"/", 200, "text/html; charset=utf-8", noCache, "<!doctype html><title>console</title>"},
		{"/index.html", 200, "text/html; charset=utf-8", noCache, "<!doctype html><title>console</title>"},
		{"/containers/abc", 200, "text/html; charset=utf-8", noCache, "<!doctype html><title>console</title>"},
		{"/.gitkeep", 200, "text/html; charset=utf-8", noCache, "<!doctype html><title>console</title>"},
		{"/../../etc/passwd", 200, "text/html; charset=utf-8", noCache, "<!doctype html><title>console</title>"},
		{"/favicon.svg", 200, "image/svg+xml", noCache, "<svg xmlns='http://www.w3.org/2000/svg'/>"},
		{"/assets/index-abc123.js", 200, "text/javascript; charset=utf-8", immutable, "console.log(1)"},
		{"/assets/index-def456.css", 200, "text/css; charset=utf-8", immutable, "body{}"},
		{"/assets/font-0a1b.woff2", 200, "font/woff2", immutable, "wOF2"},
		{"/assets/gone-999.js", 404, "text/plain; charset=utf-8", "", "404 page not found\n"},
	}
	for _, tc := range cases {
		rec := get(t, c, "GET", tc.path, nil)
		if rec.Code != tc.status {
			t.Errorf("GET %s = %d, want %d", tc.path, rec.Code, tc.status)
			continue
		}
		if got := rec.Header().Get("Content-Type"); got != tc.contentType {
			t.Errorf("GET %s: Content-Type %q, want %q", tc.path, got, tc.contentType)
		}
		if got := rec.Header().Get("Cache-Control"); got != tc.cache {
			t.Errorf("GET %s: Cache-Control %q, want %q", tc.path, got, tc.cache)
		}
		if rec.Body.String() != tc.body {
			t.Errorf("GET %s: body %q, want %q", tc.path, rec.Body.String(), tc.body)
		}
	}
}

func TestConsoleHeadHasNoBody(t *testing.T) {
	rec := get(t, testConsole(t), "HEAD", "/assets/index-abc123.js", nil)
	if rec.Code != 200 || rec.Body.Len() != 0 || rec.Header().Get("Content-Length") != "14" {
		t.Fatalf("HEAD = %d, body %q, Content-Length %q", rec.Code, rec.Body.String(), rec.Header().Get("Content-Length"))
	}
}

func TestConsoleServesGzipTwinToClientsThatAcceptIt(t *testing.T) {
	c := testConsole(t)
	rec := get(t, c, "GET", "/assets/index-abc123.js", map[string]string{"Accept-Encoding": "gzip, br"})
	if rec.Header().Get("Content-Encoding") != "gzip" || rec.Header().Get("Vary") != "Accept-Encoding" {
		t.Fatalf("headers %v", rec.Header())
	}
	zr, err := gzip.NewReader(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(zr); string(b) != "console.log(1)" {
		t.Fatalf("body %q", b)
	}
	plain := get(t, c, "GET", "/assets/index-abc123.js", map[string]string{"Accept-Encoding": "gzip;q=0"})
	if plain.Header().Get("Content-Encoding") != "" || plain.Body.String() != "console.log(1)" {
		t.Fatalf("q=0: headers %v body %q", plain.Header(), plain.Body.String())
	}
	if rec.Header().Get("ETag") == plain.Header().Get("ETag") {
		t.Fatal("the gzip and plain forms share an ETag")
	}
}

func TestConsoleRevalidatesIndexByETag(t *testing.T) {
	c := testConsole(t)
	tag := get(t, c, "GET", "/", nil).Header().Get("ETag")
	if tag == "" {
		t.Fatal("no ETag")
	}
	if rec := get(t, c, "GET", "/dashboard", map[string]string{"If-None-Match": tag}); rec.Code != http.StatusNotModified {
		t.Fatalf("If-None-Match = %d, want 304", rec.Code)
	}
}

func TestConsoleRefusesOtherMethods(t *testing.T) {
	rec := get(t, testConsole(t), "POST", "/containers", nil)
	if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != "GET, HEAD" {
		t.Fatalf("POST = %d, Allow %q", rec.Code, rec.Header().Get("Allow"))
	}
}

func TestEmbeddedBuildHasAnIndex(t *testing.T) {
	c := New()
	rec := get(t, c, "GET", "/", nil)
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "<title>") {
		t.Fatalf("GET / = %d %q", rec.Code, rec.Body.String())
	}
	if c.Placeholder() && !strings.Contains(rec.Body.String(), "make web") {
		t.Fatalf("placeholder page: %q", rec.Body.String())
	}
}
