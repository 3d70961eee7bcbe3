package api

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/berth-dev/berth/server/internal/webui"
)

// TestEngineRoutesLikeTheStandardMux pins the routing rules the API had on
// net/http's ServeMux, now that gin's router serves the route table: no
// redirects, a JSON 404 under /api/, HEAD for GET routes, wildcards that
// still match where a static sibling exists, escaped slashes kept inside a
// parameter — and one rule the ServeMux did not keep (its /api/ catch-all
// answered 404): a known path asked with another method, OPTIONS included,
// answers 405 with an Allow header. Paths outside /api are the web console's.
func TestEngineRoutesLikeTheStandardMux(t *testing.T) {
	f := newAuthzFixture(t)
	const notFound = `{"error":"Not found"}` + "\n"
	const notAllowed = `{"error":"Method not allowed"}` + "\n"
	cases := []struct {
		method, path string
		status       int
		contentType  string
		body         string // compared when not empty
		route, id    string // for 204s: the route (X-Route) and {id} reached
		allow        string // the Allow header (405s)
	}{
		{"GET", "/api/nope", 404, "application/json", notFound, "", "", ""},
		{"DELETE", "/api/health", 405, "application/json", notAllowed, "", "", "GET, HEAD"},
		{"OPTIONS", "/api/health", 405, "application/json", notAllowed, "", "", "GET, HEAD"},
		{"PATCH", "/api/volumes/x", 405, "application/json", notAllowed, "", "", "GET, HEAD, DELETE"},
		{"OPTIONS", "/api/nope", 404, "application/json", notFound, "", "", ""},
		{"GET", "/api/health/", 404, "application/json", notFound, "", "", ""},
		{"GET", "/api/containers/1/", 404, "application/json", notFound, "", "", ""},
		{"GET", "/api/", 404, "application/json", notFound, "", "", ""},
		{"GET", "/api", 404, "application/json", notFound, "", "", ""},
		// Other paths are the web console's (see TestConsoleServedOutsideTheAPI).
		{"GET", "/nope", 200, "text/html; charset=utf-8", "", "", "", ""},
		{"GET", "/API/health", 200, "text/html; charset=utf-8", "", "", "", ""},
		{"GET", "/", 200, "text/html; charset=utf-8", "", "", "", ""},
		{"HEAD", "/", 200, "text/html; charset=utf-8", "", "", "", ""},
		{"POST", "/", 405, "application/json", notAllowed, "", "", "GET, HEAD"},
		{"POST", "/nope", 404, "text/plain; charset=utf-8", "404 page not found\n", "", "", ""},
		{"HEAD", "/api/health", 204, "", "", "GET /api/health", "", ""},
		{"GET", "/api/containers/stats?env=1", 204, "", "", "GET /api/containers/stats", "", ""},
		{"GET", "/api/containers/exec?env=1", 204, "", "", "GET /api/containers/{id}", "exec", ""},
		{"GET", "/api/containers/stats/inspect?env=1", 204, "", "", "GET /api/containers/{id}/inspect", "stats", ""},
		{"GET", "/api/containers/exec/abc/attach?envId=1", 204, "", "", "GET /api/containers/exec/{execId}/attach", "", ""},
		{"POST", "/api/auth/oidc/callback/test", 204, "", "", "POST /api/auth/oidc/{id}/test", "callback", ""},
		{"GET", "/api/auth/oidc/callback", 204, "", "", "GET /api/auth/oidc/callback", "", ""},
		{"GET", "/api/images/docker.io%2Flibrary%2Falpine/history?env=1", 204, "", "", "GET /api/images/{id}/history", "docker.io/library/alpine", ""},
	}
	for _, c := range cases {
		req, _ := http.NewRequest(c.method, f.srv.URL+c.path, nil)
		req.Header.Set("Authorization", "Bearer "+f.tokens["admin"])
		resp, err := f.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("%s %s = %d %s, want %d", c.method, c.path, resp.StatusCode, body, c.status)
			continue
		}
		if c.contentType != "" && resp.Header.Get("Content-Type") != c.contentType {
			t.Errorf("%s %s: Content-Type %q, want %q", c.method, c.path, resp.Header.Get("Content-Type"), c.contentType)
		}
		if c.body != "" && string(body) != c.body {
			t.Errorf("%s %s: body %q, want %q", c.method, c.path, body, c.body)
		}
		if got := resp.Header.Get("X-Route"); got != c.route {
			t.Errorf("%s %s reached %q, want %q", c.method, c.path, got, c.route)
		}
		if got := resp.Header.Get("Allow"); got != c.allow {
			t.Errorf("%s %s: Allow %q, want %q", c.method, c.path, got, c.allow)
		}
		if got := resp.Header.Get("X-Id"); got != c.id {
			t.Errorf("%s %s: {id} = %q, want %q", c.method, c.path, got, c.id)
		}
	}
}

// TestConsoleServedOutsideTheAPI serves a console build through the whole
// engine (request logging, the gzip middleware): its files, index.html for
// the console's own routes, the immutable cache of hashed assets, HEAD, and
// the API's JSON 404 untouched.
func TestConsoleServedOutsideTheAPI(t *testing.T) {
	f := newAuthzFixture(t)
	const index = "<!doctype html><title>Berth console</title><script type=module src=/assets/index-abc.js></script>"
	js := strings.Repeat("console.log('berth');\n", 200) // over the gzip middleware's threshold
	f.server.console = webui.FromFS(fstest.MapFS{
		"index.html":          {Data: []byte(index)},
		"assets/index-abc.js": {Data: []byte(js)},
	})
	srv := httptest.NewServer(f.server.Handler())
	t.Cleanup(srv.Close)
	cases := []struct {
		method, path string
		status       int
		contentType  string
		cache        string
		body         string
	}{
		{"GET", "/", 200, "text/html; charset=utf-8", "no-cache", index},
		{"GET", "/containers/abc", 200, "text/html; charset=utf-8", "no-cache", index},
		{"HEAD", "/containers/abc", 200, "text/html; charset=utf-8", "no-cache", ""},
		{"GET", "/assets/index-abc.js", 200, "text/javascript; charset=utf-8", "public, max-age=31536000, immutable", js},
		{"HEAD", "/assets/index-abc.js", 200, "text/javascript; charset=utf-8", "public, max-age=31536000, immutable", ""},
		{"GET", "/api/nope", 404, "application/json", "", `{"error":"Not found"}` + "\n"},
		{"GET", "/api/health", 200, "application/json", "", ""},
	}
	for _, c := range cases {
		req, _ := http.NewRequest(c.method, srv.URL+c.path, nil)
		req.Header.Set("Accept-Encoding", "gzip") // set by hand: the client leaves the body as sent
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("%s %s = %d %s, want %d", c.method, c.path, resp.StatusCode, body, c.status)
			continue
		}
		if got := resp.Header.Get("Content-Type"); got != c.contentType {
			t.Errorf("%s %s: Content-Type %q, want %q", c.method, c.path, got, c.contentType)
		}
		if got := resp.Header.Get("Cache-Control"); got != c.cache {
			t.Errorf("%s %s: Cache-Control %q, want %q", c.method, c.path, got, c.cache)
		}
		if c.status == 200 && resp.Header.Get("Content-Encoding") != "" {
			t.Errorf("%s %s: Content-Encoding %q: the console's files pass the JSON compressor untouched",
				c.method, c.path, resp.Header.Get("Content-Encoding"))
		}
		if (c.method == "HEAD" || c.body != "") && string(body) != c.body {
			t.Errorf("%s %s: body %.80q, want %.80q", c.method, c.path, body, c.body)
		}
	}
}

// TestEmbeddedConsoleAnswersTheRoot checks the build in the binary, real or
// the placeholder of a checkout where `make web` has not run.
func TestEmbeddedConsoleAnswersTheRoot(t *testing.T) {
	f := newAuthzFixture(t)
	for _, path := range []string{"/", "/some/client/route"} {
		resp, err := http.Get(f.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), "<title>") || resp.Header.Get("Cache-Control") != "no-cache" {
			t.Errorf("GET %s = %d %q (Cache-Control %q)", path, resp.StatusCode, body, resp.Header.Get("Cache-Control"))
		}
	}
}
