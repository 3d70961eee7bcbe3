package api

import (
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gin-gonic/gin"
)

func TestPanicBecomesA500WithErrorBody(t *testing.T) {
	var logs strings.Builder
	s := &Server{log: slog.New(slog.NewTextHandler(&logs, nil))}
	e := gin.New()
	e.Use(s.logRequests)
	e.GET("/api/x", func(*gin.Context) { panic("boom") })
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest("GET", "/api/x", nil))
	if rec.Code != 500 || !strings.Contains(rec.Body.String(), `"error":"Internal server error"`) {
		t.Fatalf("panic answered %d %s", rec.Code, rec.Body)
	}
	if !strings.Contains(logs.String(), "boom") {
		t.Error("the panic was not logged")
	}
	if !strings.Contains(logs.String(), "status=500") {
		t.Errorf("the request line does not say 500: %s", logs.String())
	}
}

func TestEventStreamSendsKeepaliveEveryFiveSeconds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := httptest.NewRecorder()
		c, _ := gin.CreateTestContext(rec)
		c.Request = httptest.NewRequest("GET", "/api/containers/stats/stream", nil)
		es := startEvents(c)
		if err := es.Send("stat", map[string]int{"n": 1}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(KeepaliveInterval - time.Millisecond)
		synctest.Wait()
		if strings.Contains(rec.Body.String(), ": keepalive") {
			t.Fatal("keepalive before the interval")
		}
		time.Sleep(2 * time.Millisecond)
		synctest.Wait()
		body := rec.Body.String()
		if strings.Count(body, ": keepalive\n\n") != 1 {
			t.Fatalf("after 5 s: %q", body)
		}
		time.Sleep(KeepaliveInterval)
		synctest.Wait()
		if n := strings.Count(rec.Body.String(), ": keepalive\n\n"); n != 2 {
			t.Fatalf("after 10 s: %d keepalives", n)
		}
		es.Close()
		if !strings.HasPrefix(body, "event: stat\ndata: {\"n\":1}\n\n") {
			t.Errorf("event framing: %q", body)
		}
		h := rec.Header()
		if h.Get("Content-Type") != "text/event-stream" || h.Get("X-Accel-Buffering") != "no" || h.Get("Cache-Control") != "no-cache" {
			t.Errorf("headers = %v", h)
		}
		if err := es.Send("late", 1); err == nil {
			t.Error("Send after Close succeeded")
		}
	})
}

func TestCheckOrigin(t *testing.T) {
	s := &Server{origins: []string{"*.example.org"}}
	cases := []struct {
		origin string
		ok     bool
	}{
		{"", true},
		{"http://berth.local:3000", true},
		{"https://BERTH.local:3000", true},
		{"https://ui.example.org", true},
		{"https://evil.example.com", false},
		{"http://berth.local:4000", false},
		{"null", false},
	}
	for _, c := range cases {
		r := httptest.NewRequest("GET", "http://berth.local:3000/api/containers/exec/x/attach", nil)
		if c.origin != "" {
			r.Header.Set("Origin", c.origin)
		}
		if err := s.checkOrigin(r); (err == nil) != c.ok {
			t.Errorf("origin %q: err %v, want ok=%v", c.origin, err, c.ok)
		}
	}
}
