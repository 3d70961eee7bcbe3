package engine

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/moby/moby/client"
)

const hex64 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestObjectRefsAreCheckedForTheirKind(t *testing.T) {
	climb := []string{"", ".", "..", "../info", "../images/x", "..%2Finfo", "/", "//x", "x/", "-x", "_x",
		"a b", "a?b", "a#b", "a%2F", "é", "x\x00", strings.Repeat("a/", 5000)}
	tests := []struct {
		kind   string
		check  func(string) error
		accept []string
		refuse []string
	}{
		{"container", func(s string) error { _, err := checkContainer(s); return err },
			[]string{"web", "/web", "Web_1.a-b", hex64, "0123ab", strings.Repeat("a", 10<<10)},
			append([]string{"//web", "/", "/../x", "a/b"}, climb...)},
		{"volume", checkVolume, []string{"data", "my_vol.1-x", hex64}, append([]string{"/data", "a/b"}, climb...)},
		{"network", checkNetwork, []string{"bridge", "app_default", hex64}, append([]string{"/bridge", "a/b"}, climb...)},
		{"exec", CheckExecID, []string{hex64},
			append([]string{hex64[:12], hex64 + "0", strings.ToUpper(hex64), "../containers/x/" + hex64[:47]}, climb...)},
		{"image", CheckImage,
			[]string{"nginx", "nginx:1.27", "library/nginx:latest", "localhost:5000/a/b:tag", "[::1]:5000/a@sha256:" + hex64,
				"sha256:" + hex64, hex64, "0123ab", "ghcr.io/x/y@sha256:" + hex64},
			append([]string{"../../info", "a/../b", "a//b", "a/./b", "Nginx", "nginx:", "nginx:-x", "/nginx",
				"nginx:" + strings.Repeat("t", 200)}, climb...)},
		{"project", CheckProjectName, []string{"web", "my-app_2", "0"}, append([]string{"Web", "-x", "a.b"}, climb...)},
	}
	for _, tt := range tests {
		for _, s := range tt.accept {
			if err := tt.check(s); err != nil {
				t.Errorf("%s %q refused: %v", tt.kind, shorten(s), err)
			}
		}
		for _, s := range tt.refuse {
			err := tt.check(s)
			var e *Error
			if !errors.Is(err, ErrInvalid) || !errors.As(err, &e) || !strings.HasPrefix(e.Msg, "Invalid ") {
				t.Errorf("%s %q: got %v, want an ErrInvalid naming the value", tt.kind, shorten(s), err)
			}
		}
	}
}

func TestImageNamesForTransfersAreNotIDs(t *testing.T) {
	for _, s := range []string{"nginx", "localhost:5000/a:1", "a@sha256:" + hex64} {
		if err := CheckImageName(s); err != nil {
			t.Errorf("CheckImageName(%q): %v", s, err)
		}
	}
	for _, s := range []string{hex64, "../x", "A", ""} {
		if err := CheckImageName(s); !errors.Is(err, ErrInvalid) {
			t.Errorf("CheckImageName(%q) = %v, want ErrInvalid", s, err)
		}
	}
}

func TestRefusalQuotesAShortenedValue(t *testing.T) {
	err := checkVolume(strings.Repeat("é/", 5000))
	if err == nil || len(err.Error()) > 200 || !strings.HasPrefix(err.Error(), `Invalid volume name "`) {
		t.Fatalf("refusal of a 10 kB name: %q", err)
	}
}

// pathRecorder is an engine that answers the ping with the client's API
// version and every other request with 404, recording the request's path.
type pathRecorder struct {
	mu    sync.Mutex
	paths []recordedPath
}

type recordedPath struct{ method, path, escaped string }

func (p *pathRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/_ping" {
		w.Header().Set("Api-Version", client.MaxAPIVersion)
		w.WriteHeader(http.StatusOK)
		return
	}
	p.mu.Lock()
	p.paths = append(p.paths, recordedPath{r.Method, r.URL.Path, r.URL.EscapedPath()})
	p.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusNotFound)
	_, _ = w.Write([]byte(`{"message":"no such object"}`))
}

func (p *pathRecorder) take() []recordedPath {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.paths
	p.paths = nil
	return out
}

// recordingClient returns a Client of a direct environment served by a
// pathRecorder.
func recordingClient(tb testing.TB) (*Client, *pathRecorder) {
	tb.Helper()
	rec := &pathRecorder{}
	srv := httptest.NewServer(rec)
	tb.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	host, port, _ := net.SplitHostPort(u.Host)
	p, _ := strconv.Atoi(port)
	m := NewManager(slog.New(slog.DiscardHandler))
	tb.Cleanup(m.Close)
	c, err := m.Client(context.Background(), Endpoint{ID: 1, ConnectionType: Direct, Host: host, Port: p})
	if err != nil {
		tb.Fatalf("client of the recording engine: %v", err)
	}
	return c, rec
}

// objectRoutes are Client calls that put an object reference in the
// engine's URL path, with the path each must reach for a reference the
// call accepts.
var objectRoutes = []struct {
	name string
	call func(ctx context.Context, c *Client, s string) error
	path func(s string) string
}{
	{"InspectVolume", func(ctx context.Context, c *Client, s string) error { _, err := c.InspectVolume(ctx, s); return err },
		func(s string) string { return "/volumes/" + s }},
	{"RemoveVolume", func(ctx context.Context, c *Client, s string) error { return c.RemoveVolume(ctx, s, false) },
		func(s string) string { return "/volumes/" + s }},
	{"InspectContainer", func(ctx context.Context, c *Client, s string) error {
		_, _, err := c.InspectContainer(ctx, s)
		return err
	}, func(s string) string { return "/containers/" + strings.TrimPrefix(s, "/") + "/json" }},
	{"PauseContainer", func(ctx context.Context, c *Client, s string) error { return c.PauseContainer(ctx, s) },
		func(s string) string { return "/containers/" + strings.TrimPrefix(s, "/") + "/pause" }},
	{"InspectNetwork", func(ctx context.Context, c *Client, s string) error {
		_, _, err := c.InspectNetwork(ctx, s)
		return err
	}, func(s string) string { return "/networks/" + s }},
	{"InspectImage", func(ctx context.Context, c *Client, s string) error { _, err := c.InspectImage(ctx, s); return err },
		func(s string) string { return "/images/" + s + "/json" }},
	{"RemoveImage", func(ctx context.Context, c *Client, s string) error {
		_, err := c.RemoveImage(ctx, s, false)
		return err
	},
		func(s string) string { return "/images/" + s }},
	{"ImageHistory", func(ctx context.Context, c *Client, s string) error { _, err := c.ImageHistory(ctx, s); return err },
		func(s string) string { return "/images/" + s + "/history" }},
	{"InspectExec", func(ctx context.Context, c *Client, s string) error { _, err := c.InspectExec(ctx, s); return err },
		func(s string) string { return "/exec/" + s + "/json" }},
	{"ResizeExec", func(ctx context.Context, c *Client, s string) error { return c.ResizeExec(ctx, s, 24, 80) },
		func(s string) string { return "/exec/" + s + "/resize" }},
}

// checkObjectPath calls every object route with s and fails unless each
// either refuses s without a request or sends exactly one request whose
// path is the object's own route, with no "." or ".." segment. It returns
// the names of the routes that accepted s.
func checkObjectPath(t *testing.T, c *Client, rec *pathRecorder, s string) (accepted []string) {
	t.Helper()
	ctx := context.Background()
	prefix := "/v" + client.MaxAPIVersion
	for _, r := range objectRoutes {
		err := r.call(ctx, c, s)
		got := rec.take()
		if len(got) == 0 {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("%s(%q) sent nothing and returned %v, want ErrInvalid", r.name, shorten(s), err)
			}
			continue
		}
		if len(got) != 1 || !errors.Is(err, ErrNotFound) {
			t.Fatalf("%s(%q): %d requests %v, error %v; want one request answered 404", r.name, shorten(s), len(got), got, err)
		}
		want := prefix + r.path(s)
		if got[0].path != want {
			t.Fatalf("%s(%q) reached %s %q, want %q", r.name, shorten(s), got[0].method, got[0].path, want)
		}
		if dec, err := url.PathUnescape(got[0].escaped); err != nil || dec != want {
			t.Fatalf("%s(%q): escaped path %q decodes to %q (%v), want %q", r.name, shorten(s), got[0].escaped, dec, err, want)
		}
		for _, seg := range strings.Split(strings.TrimPrefix(got[0].path, "/"), "/") {
			if seg == "" || seg == "." || seg == ".." {
				t.Fatalf("%s(%q) sent path %q with segment %q", r.name, shorten(s), got[0].path, seg)
			}
		}
		accepted = append(accepted, r.name)
	}
	return accepted
}

func TestObjectRoutesStayOnTheirObject(t *testing.T) {
	c, rec := recordingClient(t)
	reached := map[string]int{}
	for _, s := range objectPathSeeds() {
		for _, name := range checkObjectPath(t, c, rec, s) {
			reached[name]++
		}
	}
	// Valid references do reach their route: the check would pass
	// trivially if everything were refused.
	for _, r := range objectRoutes {
		if reached[r.name] == 0 {
			t.Errorf("%s accepted none of the seeds", r.name)
		}
	}
}

func objectPathSeeds() []string {
	return []string{
		"web", "/web", hex64, "nginx:1.27", "localhost:5000/a/b:1", "sha256:" + hex64,
		"..", "../info", "..%2Finfo", "..%2F..%2Finfo", "../images/nginx", "../containers/web", "../../info",
		"a/../../info", "./x", "x/.", "%2e%2e", "x?y=1", "x#y", "x y", "é", "日本", "\u202e", "a\x00b",
		"../containers/web/resize?h=1", strings.Repeat("a", 10<<10), strings.Repeat("../", 3000),
	}
}

// FuzzEngineObjectPath checks, for arbitrary references, that every Client
// call taking an object reference either refuses it before sending
// anything or reaches exactly that object's route: nothing climbs to
// another route with "..", and escaping keeps the value inside its segment.
func FuzzEngineObjectPath(f *testing.F) {
	for _, s := range objectPathSeeds() {
		f.Add(s)
	}
	c, rec := recordingClient(f)
	f.Fuzz(func(t *testing.T, s string) {
		checkObjectPath(t, c, rec, s)
	})
}
