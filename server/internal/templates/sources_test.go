package templates

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
	"github.com/berth-dev/berth/shared/fault"
)

func discardLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// serveFile serves the file at path over real HTTP, counting requests.
func serveFile(t *testing.T, path string) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.URL.Path != "/templates.json" {
			http.NotFound(w, r)
			return
		}
		http.ServeFile(w, r, path)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func TestSourcesFromURLAndFileMergeWithBuiltinAndAFailingSourceIsReported(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
		dir := t.TempDir()
		s := New(Options{Store: st, Log: discardLog(), Refresh: time.Hour, Now: func() time.Time { return now }, FileDir: dir})
		srv, hits := serveFile(t, "testdata/portainer-v2.json")
		list, err := os.ReadFile("testdata/portainer-v2.json")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "portainer-v2.json"), list, 0o600); err != nil {
			t.Fatal(err)
		}
		bad := filepath.Join(dir, "bad.json")
		if err := os.WriteFile(bad, []byte(`{"version": "2", "templates": [`), 0o600); err != nil {
			t.Fatal(err)
		}
		web, err := s.CreateSource(ctx, SourceSpec{Name: "web", URL: srv.URL + "/templates.json"})
		if err != nil {
			t.Fatal(err)
		}
		if web.LastError != "" || web.TemplateCount != 4 || web.LastFetchedAt == nil {
			t.Fatalf("web source = %+v", web)
		}
		local, err := s.CreateSource(ctx, SourceSpec{Name: "local", URL: "file://" + filepath.Join(dir, "portainer-v2.json")})
		if err != nil || local.TemplateCount != 4 {
			t.Fatalf("local source = %+v, %v", local, err)
		}
		broken, err := s.CreateSource(ctx, SourceSpec{Name: "broken", URL: bad})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(broken.LastError, "invalid template list JSON") {
			t.Errorf("broken lastError = %q", broken.LastError)
		}
		missing, _ := s.CreateSource(ctx, SourceSpec{Name: "gone", URL: srv.URL + "/nothing"})
		if missing.LastError != "fetch failed: HTTP 404" {
			t.Errorf("404 source lastError = %q", missing.LastError)
		}

		all, err := s.Catalogue(ctx, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := len(all), 4+4+len(s.builtin); got != want {
			t.Fatalf("catalogue: %d templates, want %d", got, want)
		}
		webID := itoa(web.ID)
		if all[0].ID != webID+":0" || all[0].SourceName != "web" || all[1].ID != webID+":1" {
			t.Errorf("first ids %q %q", all[0].ID, all[1].ID)
		}
		// Served from the cache within the refresh interval.
		before := hits.Load()
		if _, err := s.Catalogue(ctx, Filter{}); err != nil {
			t.Fatal(err)
		}
		if hits.Load() != before {
			t.Errorf("fetched again within the refresh interval")
		}
		now = now.Add(2 * time.Hour)
		if _, err := s.Catalogue(ctx, Filter{}); err != nil {
			t.Fatal(err)
		}
		if hits.Load() == before {
			t.Errorf("not fetched again after the refresh interval")
		}
		srcs, _ := s.Sources(ctx)
		for _, src := range srcs {
			if src.Name == "broken" && !strings.Contains(src.LastError, "invalid template list JSON") {
				t.Errorf("stored lastError of broken = %q", src.LastError)
			}
		}

		// Filters.
		dbs, _ := s.Catalogue(ctx, Filter{Category: "DATABASE"})
		for _, tp := range dbs {
			if !containsFold(tp.Categories, "database") {
				t.Errorf("category filter let %q through", tp.Title)
			}
		}
		if len(dbs) < 4 {
			t.Errorf("database templates: %d", len(dbs))
		}
		q, _ := s.Catalogue(ctx, Filter{Query: "registry"})
		if len(q) != 2 || q[0].Title != "Registry" {
			t.Errorf("q=registry: %d templates", len(q))
		}
		compose, _ := s.Catalogue(ctx, Filter{Type: TypeCompose})
		for _, tp := range compose {
			if tp.Type != TypeCompose {
				t.Errorf("type filter let %q through", tp.Title)
			}
		}

		// A disabled source contributes nothing; a deleted one neither.
		f := false
		if _, err := s.UpdateSource(ctx, local.ID, SourceSpec{Enabled: &f}); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteSource(ctx, web.ID); err != nil {
			t.Fatal(err)
		}
		all, _ = s.Catalogue(ctx, Filter{})
		if len(all) != len(s.builtin) {
			t.Errorf("after disable and delete: %d templates, want the %d built-in", len(all), len(s.builtin))
		}
		if _, err := s.Template(ctx, webID+":0"); fault.KindOf(err) != fault.NotFound {
			t.Errorf("deleted source's template: %v", err)
		}
		if err := s.DeleteSource(ctx, web.ID); fault.KindOf(err) != fault.NotFound {
			t.Errorf("second delete: %v", err)
		}
	})
}

func TestSourceValidationAndLimits(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		s := New(Options{Store: st, Log: discardLog(), MaxBytes: 64, Timeout: 2 * time.Second})
		for _, sp := range []struct {
			spec SourceSpec
			want string
		}{
			{SourceSpec{URL: "http://x"}, "Source name is required"},
			{SourceSpec{Name: "a"}, "Source URL or file path is required"},
			{SourceSpec{Name: "a", URL: "ftp://x/y"}, "Source must be an http(s) URL or an absolute file path"},
			{SourceSpec{Name: "a", URL: "relative/file.json"}, "Source must be an http(s) URL or an absolute file path"},
		} {
			if _, err := s.CreateSource(ctx, sp.spec); err == nil || err.Error() != sp.want {
				t.Errorf("%+v: %v, want %q", sp.spec, err, sp.want)
			}
		}
		srcs, _ := s.Sources(ctx)
		if len(srcs) != 0 {
			t.Fatalf("refused sources were stored: %+v", srcs)
		}
		srv, _ := serveFile(t, "testdata/portainer-v2.json")
		big, err := s.CreateSource(ctx, SourceSpec{Name: "big", URL: srv.URL + "/templates.json"})
		if err != nil {
			t.Fatal(err)
		}
		if big.LastError != "template list is larger than 64 bytes" {
			t.Errorf("size limit: lastError = %q", big.LastError)
		}
		if _, err := s.CreateSource(ctx, SourceSpec{Name: "big", URL: srv.URL}); fault.KindOf(err) != fault.Conflict {
			t.Errorf("duplicate name: %v", err)
		}
		// A server that never answers is cut at the timeout.
		stall := make(chan struct{})
		slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-stall:
			case <-r.Context().Done():
			}
		}))
		t.Cleanup(func() { close(stall); slow.Close() })
		hung, err := s.CreateSource(ctx, SourceSpec{Name: "hung", URL: slow.URL})
		if err != nil {
			t.Fatal(err)
		}
		if hung.LastError != "fetch timed out after 2s" {
			t.Errorf("timeout: lastError = %q", hung.LastError)
		}
	})
}

// File sources are read from the directory of file sources only (the host
// path rule): any other path, a file URL of one, or a symbolic link in the
// directory that leads out of it is the 403 of the rule; a path climbing
// out with ".." or naming a directory is a 400; none is stored. Without a
// directory, file sources are refused; URL sources need http or https.
func TestFileSourcesAreConfinedToTheirDirectory(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		root := t.TempDir()
		dir := filepath.Join(root, "templates")
		outside := filepath.Join(root, "secret.json")
		list, err := os.ReadFile("testdata/portainer-v2.json")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, "team"), 0o750); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{outside, filepath.Join(dir, "team", "list.json")} {
			if err := os.WriteFile(p, list, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Symlink(outside, filepath.Join(dir, "link.json")); err != nil {
			t.Fatal(err)
		}
		s := New(Options{Store: st, Log: discardLog(), FileDir: dir + "/"})
		inDir := func(p string) string {
			return fmt.Sprintf("Invalid template file source %q: a template file source must be a file in %s", p, dir)
		}
		link := filepath.Join(dir, "link.json")
		for _, sp := range []struct {
			url  string
			kind fault.Kind
			want string
		}{
			{outside, fault.Forbidden, inDir(outside)},
			{"file://" + outside, fault.Forbidden, inDir(outside)},
			{"/etc/passwd", fault.Forbidden, inDir("/etc/passwd")},
			{link, fault.Forbidden, inDir(link)},
			{dir, fault.Invalid, fmt.Sprintf("Invalid template file source %q: it is a directory, a file path is required", dir)},
			{dir + "/team/../../secret.json", fault.Invalid, fmt.Sprintf("Invalid template file source %q: path traversal is not allowed", dir+"/team/../../secret.json")},
			{"file:///etc/hostname", fault.Forbidden, inDir("/etc/hostname")},
			{"gopher://example.test/x", fault.Invalid, "Source must be an http(s) URL or an absolute file path"},
			{"file:relative.json", fault.Invalid, "Invalid source URL: a file URL needs an absolute path"},
			{"http:///templates.json", fault.Invalid, "Invalid source URL: no host"},
		} {
			_, err := s.CreateSource(ctx, SourceSpec{Name: "x", URL: sp.url})
			if f, ok := fault.As(err); !ok || f.Kind != sp.kind || f.Message != sp.want {
				t.Errorf("source %q: %v, want %v %q", sp.url, err, sp.kind, sp.want)
			}
		}
		if srcs, _ := s.Sources(ctx); len(srcs) != 0 {
			t.Fatalf("refused sources were stored: %+v", srcs)
		}

		nested, err := s.CreateSource(ctx, SourceSpec{Name: "nested", URL: "file://" + filepath.Join(dir, "team", "list.json")})
		if err != nil || nested.LastError != "" || nested.TemplateCount != 4 {
			t.Fatalf("a file under the directory = %+v, %v", nested, err)
		}
		if _, err := s.UpdateSource(ctx, nested.ID, SourceSpec{URL: outside}); fault.KindOf(err) != fault.Forbidden {
			t.Errorf("moving a source outside the directory: %v, want 403", err)
		}

		// A source stored before the directory changed is no longer read.
		s.UseFileDir(t.TempDir())
		all, err := s.Catalogue(ctx, Filter{Refresh: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, tp := range all {
			if tp.SourceID != BuiltinSource {
				t.Errorf("template %q of source %s read from outside the directory", tp.Title, tp.SourceName)
			}
		}

		closed := New(Options{Store: st, Log: discardLog()})
		want := "File template sources are disabled on this server: use an http(s) URL"
		if _, err := closed.CreateSource(ctx, SourceSpec{Name: "y", URL: filepath.Join(dir, "team", "list.json")}); fault.KindOf(err) != fault.Invalid || err.Error() != want {
			t.Errorf("file source without a directory: %v, want %q", err, want)
		}
	})
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func containsFold(l []string, s string) bool {
	for _, x := range l {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}
