package api_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/apitest"
	"github.com/berth-dev/berth/server/internal/events"
	"github.com/berth-dev/berth/server/internal/secret"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
	"github.com/berth-dev/berth/shared/enginetest"
)

// harness is a Berth served in-process over real HTTP, with SQLite in a
// temporary directory and the real local engine as environment 1.
type harness struct {
	t       *testing.T
	url     string
	store   *store.Store
	label   string // value of enginetest.Label on everything this test creates
	dataDir string
	headers map[string]string // sent with every request (Cookie, Authorization)
	http    *http.Client
	logs    *apitest.LockedBuffer
	events  *events.Hub
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	enginetest.Require(t)
	return startHarness(t, filepath.Join(t.TempDir(), "berth.db"), storetest.Box(t))
}

// startHarness serves a Berth on the SQLite file dbPath, with
// authentication disabled (the engine features are under test).
func startHarness(t *testing.T, dbPath string, box *secret.Box) *harness {
	t.Helper()
	return startHarnessWith(t, apitest.Options{DBPath: dbPath, Box: box})
}

// newAuthHarness serves a Berth with authentication enabled, as on a first
// start: no user yet, a setup token in the data directory.
func newAuthHarness(t *testing.T, o apitest.Options) *harness {
	t.Helper()
	enginetest.Require(t)
	o.DBPath, o.Box, o.Auth = filepath.Join(t.TempDir(), "berth.db"), storetest.Box(t), true
	return startHarnessWith(t, o)
}

func startHarnessWith(t *testing.T, o apitest.Options) *harness {
	t.Helper()
	ctx := context.Background()
	logs := &apitest.LockedBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	o.Log = log
	b, err := apitest.Start(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	dataDir := o.DataDir
	if dataDir == "" {
		dataDir = filepath.Dir(o.DBPath)
	}
	h := &harness{t: t, url: b.URL, store: b.Store, dataDir: dataDir, headers: map[string]string{}, label: randomLabel(), http: &http.Client{Timeout: 60 * time.Second}, logs: logs,
		events: b.Events}
	t.Cleanup(func() {
		enginetest.RemoveLabelled(t, h.label)
		b.Close()
	})
	return h
}

func randomLabel() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// do sends a request with an optional JSON body and returns the status and body.
func (h *harness) do(method, path string, body any) (int, []byte) {
	h.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			h.t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, h.url+path, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range h.headers {
		req.Header.Set(k, v)
	}
	resp, err := h.http.Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	return resp.StatusCode, data
}

// must sends a request that must answer want, and decodes the body into out.
func (h *harness) must(want int, method, path string, body, out any) {
	h.t.Helper()
	status, data := h.do(method, path, body)
	if status != want {
		h.t.Fatalf("%s %s = %d %s, want %d", method, path, status, data, want)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			h.t.Fatalf("%s %s: decode %s: %v", method, path, data, err)
		}
	}
}

// refusal is a request the API must refuse: it answers status with an
// error message that contains message.
type refusal struct {
	name, method, path string
	body               any
	status             int
	message            string
}

// expectRefusals sends each refusal in a subtest of its name.
func (h *harness) expectRefusals(cases []refusal) {
	h.t.Helper()
	for _, tt := range cases {
		h.t.Run(tt.name, func(t *testing.T) {
			code, body := h.do(tt.method, tt.path, tt.body)
			if code != tt.status || !strings.Contains(shErrorOf(body), tt.message) {
				t.Errorf("= %d %s, want %d with %q", code, body, tt.status, tt.message)
			}
		})
	}
}

// createContainer creates (and starts, when start) a labelled container
// running cmd and returns its id.
func (h *harness) createContainer(name string, start bool, cmd ...string) string {
	h.t.Helper()
	var out struct {
		Success bool   `json:"success"`
		ID      string `json:"id"`
	}
	h.must(200, "POST", "/api/containers?env=1", map[string]any{
		"name": name, "image": enginetest.Image(), "command": cmd, "startAfterCreate": start,
		"labels": map[string]string{enginetest.Label: h.label},
	}, &out)
	if !out.Success || len(out.ID) != 64 {
		h.t.Fatalf("create: %+v", out)
	}
	return out.ID
}

// inspectState returns State of a container, read through Berth.
func (h *harness) inspectState(id string) (state struct {
	Status  string
	Running bool
	Paused  bool
}) {
	h.t.Helper()
	var doc struct {
		State *struct {
			Status  string
			Running bool
			Paused  bool
		}
	}
	h.must(200, "GET", "/api/containers/"+id+"?env=1", nil, &doc)
	if doc.State == nil {
		h.t.Fatalf("inspect %s: no State", id)
	}
	state.Status, state.Running, state.Paused = doc.State.Status, doc.State.Running, doc.State.Paused
	return state
}

// sseEvent is one Server-Sent Event.
type sseEvent = apitest.Event

// openEvents opens an SSE endpoint and returns a channel of its events; the
// channel closes when the stream ends. The stream is closed at cleanup.
func (h *harness) openEvents(ctx context.Context, path string) (<-chan sseEvent, *http.Response) {
	h.t.Helper()
	return h.openStream(ctx, "GET", path, nil)
}

// openStream is openEvents for any method, with an optional JSON body.
func (h *harness) openStream(ctx context.Context, method, path string, body any) (<-chan sseEvent, *http.Response) {
	h.t.Helper()
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			h.t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, _ := http.NewRequestWithContext(ctx, method, h.url+path, rd)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	for k, v := range h.headers {
		req.Header.Set(k, v)
	}
	resp, err := (&http.Client{}).Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { resp.Body.Close() })
	ch := apitest.Events(resp.Body, 64)
	return ch, resp
}

func jsonDecode(r io.Reader, v any) error { return json.NewDecoder(r).Decode(v) }
