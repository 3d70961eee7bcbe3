package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/internal/enginetest"
)

// TestServeStartsStopsAndKeepsEnvironmentsAcrossRestarts runs `berth serve`
// twice on one data directory: the local environment is created once (id 1),
// an environment created through the API survives the restart, and a
// cancelled context shuts the server down cleanly.
func TestServeStartsStopsAndKeepsEnvironmentsAcrossRestarts(t *testing.T) {
	enginetest.Require(t)
	dataDir := t.TempDir()

	serveOnce(t, dataDir, func(base string) {
		resp, err := http.Post(base+"/api/environments", "application/json",
			strings.NewReader(`{"name":"second","connectionType":"direct","host":"192.0.2.1"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 201 {
			t.Fatalf("create environment: %d", resp.StatusCode)
		}
	})
	serveOnce(t, dataDir, func(base string) {
		var envs []struct {
			ID   int64
			Name string
		}
		getJSON(t, base+"/api/environments", &envs)
		if len(envs) != 2 || envs[0].ID != 1 || envs[0].Name != "local" || envs[1].Name != "second" {
			t.Fatalf("environments after restart = %+v", envs)
		}
	})
	if fi, err := os.Stat(filepath.Join(dataDir, ".encryption_key")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("encryption key file: %v %v, want mode 0600", fi, err)
	}
}

// serveOnce runs the server until check returns, then stops it.
func serveOnce(t *testing.T, dataDir string, check func(base string)) {
	t.Helper()
	port := freePort(t)
	env := map[string]string{"DATA_DIR": dataDir, "PORT": strconv.Itoa(port), "HOST": "127.0.0.1", "LOG_LEVEL": "warn"}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"serve"}, func(k string) string { return env[k] }, io.Discard) }()
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	waitHealthy(t, base, done)
	check(base)
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve returned %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not stop after its context ended")
	}
}

func waitHealthy(t *testing.T, base string, done <-chan error) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-done:
			t.Fatalf("serve exited early: %v", err)
		default:
		}
		var h struct{ Status string }
		if resp, err := http.Get(base + "/api/health"); err == nil {
			_ = json.NewDecoder(resp.Body).Decode(&h)
			resp.Body.Close()
			if h.Status == "ok" {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("server never became healthy")
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func getJSON(t *testing.T, url string, out any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatal(err)
	}
}

func TestUnknownCommandFails(t *testing.T) {
	if err := run(context.Background(), []string{"frobnicate"}, func(string) string { return "" }, io.Discard); err == nil {
		t.Fatal("unknown command succeeded")
	}
	if err := run(context.Background(), []string{"serve", "-port", "x"}, func(string) string { return "" }, io.Discard); err == nil {
		t.Fatal("bad flag succeeded")
	}
}
