package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// TestHealthcheckFollowsHostAndPort checks `berth healthcheck` against a
// stand-in server: healthy on 200, unhealthy on any other status or when
// nothing listens, and it finds a server listening on all interfaces through
// loopback.
func TestHealthcheckFollowsHostAndPort(t *testing.T) {
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/health" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(status)
	}))
	defer srv.Close()
	port := strconv.Itoa(srv.Listener.Addr().(*net.TCPAddr).Port)
	check := func(env map[string]string, args ...string) error {
		return run(context.Background(), append([]string{"healthcheck"}, args...),
			func(k string) string { return env[k] }, strings.NewReader(""), io.Discard)
	}

	for _, host := range []string{"", "0.0.0.0", "127.0.0.1"} {
		if err := check(map[string]string{"HOST": host, "PORT": port}); err != nil {
			t.Errorf("HOST=%q: healthy server reported unhealthy: %v", host, err)
		}
	}
	status = http.StatusServiceUnavailable
	if err := check(map[string]string{"PORT": port}); err == nil {
		t.Error("a 503 was reported healthy")
	}
	srv.Close()
	if err := check(map[string]string{"PORT": port}); err == nil {
		t.Error("a port nobody listens on was reported healthy")
	}
	if err := check(map[string]string{"PORT": port}, "extra"); err == nil {
		t.Error("a stray argument was accepted")
	}
}
