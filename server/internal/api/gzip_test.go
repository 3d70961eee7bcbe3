package api

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
)

// gzipEngine serves a few bodies behind compressJSON (and logRequests, as
// the real engine orders them).
func gzipEngine(t *testing.T) *httptest.Server {
	t.Helper()
	gin.SetMode(gin.ReleaseMode)
	s := &Server{log: slog.New(slog.DiscardHandler)}
	e := gin.New()
	e.Use(compressJSON, s.logRequests)
	big := map[string]string{"data": strings.Repeat("berth ", 400)} // ~2.4 KB of JSON
	e.GET("/big", func(c *gin.Context) { writeJSON(c, http.StatusOK, big) })
	e.GET("/small", func(c *gin.Context) { writeJSON(c, http.StatusOK, map[string]bool{"success": true}) })
	e.GET("/bigerror", func(c *gin.Context) { writeJSON(c, http.StatusBadRequest, big) })
	e.GET("/text", func(c *gin.Context) {
		c.Header("Content-Type", "application/octet-stream")
		c.Writer.Write(bytes.Repeat([]byte("x"), 4096))
	})
	e.GET("/stream", func(c *gin.Context) {
		c.Header("Content-Type", "text/event-stream")
		for range 3 {
			c.Writer.Write([]byte("data: " + strings.Repeat("y", 1000) + "\n\n"))
			c.Writer.Flush()
		}
	})
	e.GET("/empty", func(c *gin.Context) { c.Status(http.StatusNoContent) })
	e.GET("/panic", func(c *gin.Context) { panic("boom") })
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	return srv
}

func TestLargeJSONIsGzippedForClientsThatAcceptIt(t *testing.T) {
	srv := gzipEngine(t)
	cases := []struct {
		path, accept string
		status       int
		gzipped      bool
	}{
		{"/big", "gzip", 200, true},
		{"/big", "br, gzip;q=0.8", 200, true},
		{"/big", "", 200, false},
		{"/big", "gzip;q=0", 200, false},
		{"/big", "deflate", 200, false},
		{"/bigerror", "gzip", 400, true},
		{"/small", "gzip", 200, false},
		{"/text", "gzip", 200, false},
		{"/stream", "gzip", 200, false},
		{"/empty", "gzip", 204, false},
		{"/panic", "gzip", 500, false},
	}
	for _, c := range cases {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+c.path, nil)
		if c.accept != "" {
			req.Header.Set("Accept-Encoding", c.accept)
		}
		// A transport that does not add or undo gzip by itself.
		resp, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("%s (%q): status %d, want %d", c.path, c.accept, resp.StatusCode, c.status)
		}
		enc := resp.Header.Get("Content-Encoding")
		if (enc == "gzip") != c.gzipped {
			t.Errorf("%s (%q): Content-Encoding %q, want gzipped=%v", c.path, c.accept, enc, c.gzipped)
			continue
		}
		body := raw
		if c.gzipped {
			zr, err := gzip.NewReader(bytes.NewReader(raw))
			if err != nil {
				t.Fatalf("%s: %v", c.path, err)
			}
			if body, err = io.ReadAll(zr); err != nil {
				t.Fatalf("%s: %v", c.path, err)
			}
			if len(raw) >= len(body) {
				t.Errorf("%s: %d compressed bytes for %d", c.path, len(raw), len(body))
			}
		}
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") && c.status != 204 && !json.Valid(body) {
			t.Errorf("%s (%q): body is not JSON: %.80q", c.path, c.accept, body)
		}
		if resp.Header.Get("Vary") != "Accept-Encoding" {
			t.Errorf("%s (%q): Vary %q, want Accept-Encoding", c.path, c.accept, resp.Header.Get("Vary"))
		}
	}
}

func TestGzipDoesNotDelayAStream(t *testing.T) {
	srv := gzipEngine(t)
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/stream", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	// The first event arrives whole and readable, not held for compression.
	first := make([]byte, len("data: "))
	if _, err := io.ReadFull(resp.Body, first); err != nil || string(first) != "data: " {
		t.Fatalf("first bytes %q, %v", first, err)
	}
}
