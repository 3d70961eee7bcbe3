package api_test

import (
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The status of an environment tells the three conditions apart: the local
// engine answers (online, with when it last answered); a socket nobody
// listens on is offline with the reason; an engine that accepts the
// connection but does not answer is busy, not offline. (The silent listener
// is the one stand-in here: a real engine cannot be made to stall on demand.)
func TestEnvironmentStatusTellsOnlineOfflineAndBusyApart(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	type status struct {
		State         string
		Reason        string
		LastReachable *time.Time
		RetryAt       *time.Time
		CheckedAt     time.Time
	}
	var local status
	h.must(200, "GET", "/api/environments/1/status", nil, &local)
	if local.State != "online" || local.LastReachable == nil || time.Since(*local.LastReachable) > time.Minute || local.CheckedAt.IsZero() {
		t.Errorf("local engine = %+v, want online, reachable just now", local)
	}

	var gone struct{ ID int64 }
	h.must(201, "POST", "/api/environments", map[string]any{"name": "gone-" + h.label, "socketPath": "/nonexistent/docker.sock"}, &gone)
	var off status
	h.must(200, "GET", fmt.Sprintf("/api/environments/%d/status", gone.ID), nil, &off)
	if off.State != "offline" || !strings.Contains(off.Reason, "cannot be reached") || off.LastReachable != nil {
		t.Errorf("missing socket = %+v, want offline with the reason and never reachable", off)
	}

	sock := filepath.Join(t.TempDir(), "silent.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() { // accepts, reads, never answers
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				buf := make([]byte, 4096)
				for {
					if _, err := c.Read(buf); err != nil {
						return
					}
				}
			}()
		}
	}()
	var silent struct{ ID int64 }
	h.must(201, "POST", "/api/environments", map[string]any{"name": "silent-" + h.label, "socketPath": sock}, &silent)
	var busy status
	h.must(200, "GET", fmt.Sprintf("/api/environments/%d/status", silent.ID), nil, &busy)
	if busy.State != "busy" || !strings.Contains(busy.Reason, "busy, not offline") {
		t.Errorf("silent engine = %+v, want busy", busy)
	}
	// A list on the busy engine is refused with 503 and a Retry-After, never
	// answered with an empty list (users would be told they have nothing), and
	// the busy engine does not become "offline".
	resp, body := h.getRaw(fmt.Sprintf("/api/containers?env=%d", silent.ID), "")
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(body), "busy") {
		t.Errorf("containers of the busy engine = %d (Retry-After %q) %s, want 503 saying busy with Retry-After",
			resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	h.must(200, "GET", fmt.Sprintf("/api/environments/%d/status", silent.ID), nil, &busy)
	if busy.State != "busy" {
		t.Errorf("silent engine after a list = %+v, want still busy", busy)
	}
	if status, _ := h.do("GET", "/api/environments/999/status", nil); status != 404 {
		t.Errorf("unknown environment = %d, want 404", status)
	}
}
