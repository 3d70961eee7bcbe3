package main

import (
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// WEB_DIR serves the console from a directory; a directory without
// index.html is refused at start rather than serving the placeholder.
func TestConsoleFromWebDir(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if c, err := consoleOf("", log); err != nil || c != nil {
		t.Fatalf("no WEB_DIR: got %v, %v; want the embedded console (nil)", c, err)
	}
	empty := t.TempDir()
	if _, err := consoleOf(empty, log); err == nil || !strings.Contains(err.Error(), "WEB_DIR") {
		t.Fatalf("a directory without index.html: err = %v", err)
	}

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte("<!doctype html><title>from dir</title>"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := consoleOf(dir, log)
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	c.ServeHTTP(rec, httptest.NewRequest("GET", "/containers/x", nil))
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "from dir") {
		t.Fatalf("GET /containers/x: %d %q", rec.Code, rec.Body.String())
	}
}
