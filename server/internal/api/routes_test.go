package api

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// permPattern is the form of every non-public permission.
var permPattern = regexp.MustCompile(`^[a-z_]+:[a-z_]+$`)

func TestEveryRouteDeclaresAPermission(t *testing.T) {
	s := &Server{}
	seen := map[string]bool{}
	for _, rt := range s.routes() {
		key := rt.Method + " " + rt.Path
		if seen[key] {
			t.Errorf("route %s is declared twice", key)
		}
		seen[key] = true
		if rt.Perm != Public && rt.Perm != Authenticated && !permPattern.MatchString(string(rt.Perm)) {
			t.Errorf("route %s has permission %q, want Public, Authenticated or <resource>:<action>", key, rt.Perm)
		}
		if !strings.HasPrefix(rt.Path, "/api/") && rt.Path != "/metrics" {
			t.Errorf("route %s is outside /api", key)
		}
		// Engine-facing routes must name their environment, so that the
		// environment is resolved (and, with auth, authorized) before the handler.
		engineFacing := strings.HasPrefix(rt.Path, "/api/containers") || strings.HasPrefix(rt.Path, "/api/events")
		if engineFacing && rt.Env == NoEnv {
			t.Errorf("route %s reaches an engine but declares no environment selector", key)
		}
	}
}

func TestPauseNeedsStopAndUnpauseNeedsStart(t *testing.T) {
	want := map[string]Perm{
		"POST /api/containers/{id}/pause":           "containers:stop",
		"POST /api/containers/{id}/unpause":         "containers:start",
		"POST /api/containers/{id}/kill":            "containers:stop",
		"POST /api/containers/{id}/exec":            "containers:exec",
		"GET /api/containers/exec/{execId}/attach":  "containers:exec",
		"POST /api/containers/exec/{execId}/resize": "containers:exec",
		"POST /api/environments":                    "environments:create",
		"GET /api/environments":                     "environments:view",
		"GET /api/health":                           Public,
	}
	got := map[string]Perm{}
	for _, rt := range (&Server{}).routes() {
		got[rt.Method+" "+rt.Path] = rt.Perm
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: permission %q, want %q", k, got[k], v)
		}
	}
}

func TestErrorResponseMapsEveryKind(t *testing.T) {
	cases := []struct {
		err        error
		wantStatus int
		wantBody   errorBody
	}{
		{fault.New(fault.Invalid, "Bad"), 400, errorBody{Error: "Bad"}},
		{fault.New(fault.NotFound, "Environment not found"), 404, errorBody{Error: "Environment not found"}},
		{fault.New(fault.Forbidden, "Permission denied"), 403, errorBody{Error: "Permission denied"}},
		{fault.New(fault.Unauthorized, "Unauthorized"), 401, errorBody{Error: "Unauthorized"}},
		{fault.New(fault.Conflict, "Taken"), 409, errorBody{Error: "Taken"}},
		{fault.New(fault.TooMany, "Slow down"), 429, errorBody{Error: "Slow down"}},
		{fault.Wrap(fault.Internal, "Failed to start container", errors.New("socket: secret detail")).WithDetails("engine said no"),
			500, errorBody{Error: "Failed to start container", Details: "engine said no"}},
		{fmt.Errorf("wrapped: %w", fault.New(fault.Invalid, "Inner")), 400, errorBody{Error: "Inner"}},
		{fmt.Errorf("get: %w", store.ErrNotFound), 404, errorBody{Error: "Not found"}},
		{fmt.Errorf("insert: %w", store.ErrConflict), 409, errorBody{Error: "Already exists"}},
		{&http.MaxBytesError{Limit: 1}, 413, errorBody{Error: "Request body too large"}},
		{errors.New("raw internal detail"), 500, errorBody{Error: "Internal server error"}},
	}
	for _, c := range cases {
		status, body := errorResponse(c.err)
		if status != c.wantStatus || body != c.wantBody {
			t.Errorf("errorResponse(%v) = %d %+v, want %d %+v", c.err, status, body, c.wantStatus, c.wantBody)
		}
	}
}

func TestBindJSONRejectsMalformedBodies(t *testing.T) {
	cases := []struct {
		body    string
		wantErr bool
	}{
		{``, false},
		{`{}`, false},
		{`{"name":"x"}`, false},
		{`{"name":"x"}` + "\n", false},
		{`{"name":"x","clientVersion":"9.9","extra":{"a":[1]}}`, false}, // unknown fields are accepted
		{`{"name":`, true},
		{`{"name":"x"}{}`, true},
		{`{"name":5}`, true},
		{`nonsense`, true},
		{`{"name":"` + strings.Repeat("a", maxBody) + `"}`, true},
	}
	for _, c := range cases {
		gc, _ := gin.CreateTestContext(httptest.NewRecorder())
		gc.Request = httptest.NewRequest("POST", "/", strings.NewReader(c.body))
		var v struct{ Name string }
		err := bindJSON(gc, &v)
		if (err != nil) != c.wantErr {
			t.Errorf("bindJSON(%.40q) error = %v, want error %v", c.body, err, c.wantErr)
		}
		if err != nil {
			if status, _ := errorResponse(err); status != 400 && status != 413 {
				t.Errorf("bindJSON(%.40q) maps to %d", c.body, status)
			}
		}
	}
}

func TestUTF8ChunkerNeverSplitsARune(t *testing.T) {
	text := []byte("héllo — 世界 🚢 done\n")
	for size := 1; size <= len(text); size++ {
		var c utf8Chunker
		var out []byte
		for i := 0; i < len(text); i += size {
			chunk := c.Next(text[i:min(i+size, len(text))])
			if !utf8.Valid(chunk) {
				t.Fatalf("chunk size %d: invalid UTF-8 chunk %q", size, chunk)
			}
			out = append(out, chunk...)
		}
		out = append(out, c.Flush()...)
		if string(out) != string(text) {
			t.Fatalf("chunk size %d: reassembled %q", size, out)
		}
	}
}

func TestUTF8ChunkerReplacesInvalidBytes(t *testing.T) {
	var c utf8Chunker
	got := string(c.Next([]byte{'a', 0xff, 'b'})) + string(c.Flush())
	if got != "a\uFFFDb" {
		t.Errorf("got %q", got)
	}
	c = utf8Chunker{}
	got = string(c.Next([]byte{'x', 0xe4, 0xb8})) // incomplete 3-byte rune at the end
	if got != "x" {
		t.Errorf("held back wrongly: %q", got)
	}
	if rest := string(c.Flush()); rest != "\uFFFD\uFFFD" {
		t.Errorf("flush of an incomplete rune = %q", rest)
	}
}

func FuzzUTF8Chunker(f *testing.F) {
	f.Add([]byte("héllo 世界"), 3)
	f.Add([]byte{0xf0, 0x9f, 0x9a, 0xa2, 0xff}, 1)
	f.Fuzz(func(t *testing.T, data []byte, size int) {
		if size <= 0 || size > 64 {
			size = 7
		}
		var c utf8Chunker
		var out []byte
		for i := 0; i < len(data); i += size {
			chunk := c.Next(data[i:min(i+size, len(data))])
			if !utf8.Valid(chunk) {
				t.Fatalf("invalid chunk %q", chunk)
			}
			out = append(out, chunk...)
		}
		out = append(out, c.Flush()...)
		if !utf8.Valid(out) {
			t.Fatal("invalid output")
		}
		if utf8.Valid(data) && string(out) != string(data) {
			t.Fatalf("valid input changed: %q → %q", data, out)
		}
	})
}
