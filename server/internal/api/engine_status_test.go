package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/berth-dev/berth/shared/enginetest"
)

// Engine failures answer by what went wrong, not 500 for all: a request in
// the wrong state is 409, a bad reference or driver 400, an engine that
// cannot be reached 503, one that does not answer in time 504.

// answers asserts status and that the error or details contain want.
func (h *harness) answers(status int, method, path string, body any, want string) {
	h.t.Helper()
	got, data := h.do(method, path, body)
	var e struct{ Error, Details string }
	_ = json.Unmarshal(data, &e)
	if got != status || !strings.Contains(e.Error+" "+e.Details, want) {
		h.t.Errorf("%s %s = %d %s, want %d with %q", method, path, got, data, status, want)
	}
}

func TestPauseAndUnpauseInTheWrongStateAreConflicts(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.removeObjectsAtCleanup()
	running := h.createContainer("pause-"+h.label, true, "sleep", "300")
	stopped := h.createContainer("pause-stopped-"+h.label, false, "true")

	h.answers(409, "POST", "/api/containers/"+running+"/unpause?env=1", nil, "Failed to unpause container")
	h.must(200, "POST", "/api/containers/"+running+"/pause?env=1", nil, nil)
	h.answers(409, "POST", "/api/containers/"+running+"/pause?env=1", nil, "Failed to pause container")
	h.must(200, "POST", "/api/containers/"+running+"/unpause?env=1", nil, nil)
	h.answers(409, "POST", "/api/containers/"+stopped+"/pause?env=1", nil, "Failed to pause container")
	h.answers(409, "POST", "/api/containers/"+stopped+"/unpause?env=1", nil, "Failed to unpause container")
	if st := h.inspectState(running); !st.Running || st.Paused {
		t.Errorf("state after the refusals = %+v, want running", st)
	}
}

func TestInvalidImageReferenceIsABadRequest(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.removeObjectsAtCleanup()
	h.answers(400, "POST", "/api/images/pull?env=1", map[string]any{"image": "Not A/Reference"}, "Invalid image reference")
	h.answers(400, "POST", "/api/images/pull?env=1", map[string]any{"image": "x/../../info"}, "Invalid image reference")
	h.answers(400, "POST", "/api/containers?env=1", map[string]any{"name": "badref-" + h.label, "image": "UPPER::case",
		"labels": map[string]string{enginetest.Label: h.label}}, `Invalid image reference "UPPER::case"`)
	h.answers(400, "GET", "/api/images/Not%20A%2FReference?env=1", nil, `Invalid image reference "Not A/Reference"`)
}

func TestUnknownNetworkDriverIsABadRequest(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.removeObjectsAtCleanup()
	h.answers(400, "POST", "/api/networks?env=1", map[string]any{"name": "nodriver-" + h.label,
		"driver": "no-such-driver-" + h.label, "labels": map[string]string{enginetest.Label: h.label}}, "Failed to create network")
}

// addEnvironment adds an environment (fields as POST /api/environments
// takes them) and returns its id.
func (h *harness) addEnvironment(fields map[string]any) int64 {
	h.t.Helper()
	fields["name"] = fmt.Sprintf("%v-%s", fields["name"], h.label)
	var env struct{ ID int64 }
	h.must(201, "POST", "/api/environments", fields, &env)
	return env.ID
}

func TestUnreachableEngineIsServiceUnavailable(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	refused := h.addEnvironment(map[string]any{"name": "refused", "connectionType": "direct", "host": "127.0.0.1",
		"port": closedPort(t)})
	noSocket := h.addEnvironment(map[string]any{"name": "nosocket", "connectionType": "socket",
		"socketPath": filepath.Join(t.TempDir(), "none.sock")})
	for _, env := range []int64{refused, noSocket} {
		q := fmt.Sprintf("?env=%d", env)
		h.answers(503, "GET", "/api/containers/web"+q, nil, "Environment is offline")
		h.answers(503, "POST", "/api/containers/web/start"+q, nil, "Environment is offline")
		h.answers(503, "GET", "/api/volumes/data"+q, nil, "Environment is offline")
		h.answers(503, "DELETE", "/api/networks/net"+q, nil, "Environment is offline")
		h.answers(503, "GET", "/api/images/nginx"+q, nil, "Environment is offline")
	}
}

func TestEngineTimeOutIsGatewayTimeout(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	// An engine that answers its ping, then never answers a request.
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/_ping" {
			w.Header().Set("Api-Version", "1.41")
			return
		}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	host, port := splitHostPort(t, strings.TrimPrefix(srv.URL, "http://"))
	env := h.addEnvironment(map[string]any{"name": "silent", "connectionType": "direct", "host": host, "port": port})
	// The container list has the shortest engine deadline (10 s).
	h.answers(504, "GET", fmt.Sprintf("/api/containers?all=true&env=%d", env), nil, "The engine did not answer in time")
}
