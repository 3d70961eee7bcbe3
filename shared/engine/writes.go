package engine

import (
	"net/http"
	"strings"
)

// OnWrite registers fn to be called with the environment's id whenever Berth
// changed something on that environment's engine: every request other than a
// read (GET, HEAD) once the engine answered it, every pull and image load once
// its stream ended, and every compose operation, pull or push run by an
// agent, once it ended. A cache of what the engine
// reports (events.Hub's containers list) drops what it holds then, so that
// no answer it gives is older than a change Berth made. fn must be quick; it
// runs on the caller's path. Register before the first Client.
func (m *Manager) OnWrite(fn func(envID int64)) {
	m.writeMu.Lock()
	defer m.writeMu.Unlock()
	m.onWrite = append(m.onWrite, fn)
}

// wrote tells the OnWrite listeners that env's engine was changed.
func (m *Manager) wrote(envID int64) {
	m.writeMu.Lock()
	fns := m.onWrite
	m.writeMu.Unlock()
	for _, fn := range fns {
		fn(envID)
	}
}

// writeHook is the SDK client's response hook of environment envID: it
// reports every answered request that may have changed the engine. Requests
// that change nothing a list shows (exec sessions, attaches, resizes, waits,
// file copies) are left out, so that a terminal's traffic does not defeat
// the caches.
func (m *Manager) writeHook(envID int64) func(*http.Response) {
	return func(r *http.Response) {
		if r == nil || r.Request == nil || !changes(r.Request.Method, r.Request.URL.Path) {
			return
		}
		m.wrote(envID)
	}
}

// changes reports whether a request of method to path (an Engine API path,
// with or without its /v1.xx prefix) may change the engine's objects.
func changes(method, path string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	if rest, ok := strings.CutPrefix(path, "/v"); ok { // the API version: /v1.47/…
		if i := strings.IndexByte(rest, '/'); i > 0 && strings.Trim(rest[:i], "0123456789.") == "" {
			path = rest[i:]
		}
	}
	if strings.HasPrefix(path, "/exec/") {
		return false
	}
	for _, quiet := range []string{"/exec", "/attach", "/resize", "/wait", "/archive"} {
		if strings.HasSuffix(path, quiet) {
			return false
		}
	}
	return true
}
