// Package enginetest provides helpers for tests that need the real Docker
// engine started by scripts/test-env.sh: the gate (skip outside CI, fail in
// CI), the locally built test image, and labelled cleanup.
package enginetest

import (
	"context"
	"net"
	"net/http"
	"os"
	"testing"
	"time"
)

// Socket is the local engine's socket.
const Socket = "/var/run/docker.sock"

// Label marks every object a test creates, so that cleanup can find it.
const Label = "berth.test"

// Require skips the test when no engine answers at Socket, or fails it when
// CI=true: a skipped suite is not a passing one.
func Require(t testing.TB) {
	t.Helper()
	if err := ping(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the Docker engine at %s does not answer (run scripts/test-env.sh): %v", Socket, err)
		}
		t.Skipf("no Docker engine at %s (run scripts/test-env.sh): %v", Socket, err)
	}
}

// Image returns the locally built test image (BERTH_TEST_IMAGE, default
// berth-test/busybox:1).
func Image() string {
	if img := os.Getenv("BERTH_TEST_IMAGE"); img != "" {
		return img
	}
	return "berth-test/busybox:1"
}

// HTTPClient returns a client that talks to the engine socket directly (the
// raw Engine API), for setup, cleanup and comparison.
func HTTPClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", Socket)
		},
	}}
}

func ping() error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://engine/_ping", nil)
	resp, err := HTTPClient().Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

// RequireEnv stops the test when a variable that scripts/test-env.sh sets
// (a registry, a directory, an identity provider, the scanners) is empty:
// it fails when CI=true (a skipped suite is not a passing one) and skips
// otherwise. what names the service for the message.
func RequireEnv(t testing.TB, what string, vars ...string) {
	t.Helper()
	for _, v := range vars {
		if os.Getenv(v) != "" {
			continue
		}
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s: %s is not set (run scripts/test-env.sh)", what, v)
		}
		t.Skipf("%s: %s is not set (run scripts/test-env.sh)", what, v)
	}
}
