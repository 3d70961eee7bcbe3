package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/shared/enginetest"
)

// The counting proxy forwards to the real engine and counts container lists
// (versioned or not) and event streams apart from the other requests.
func TestCountingProxyCountsEngineCalls(t *testing.T) {
	enginetest.Require(t)
	p, err := startCountingProxy(filepath.Join(t.TempDir(), "engine.sock"), enginetest.Socket)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", p.path)
	}}, Timeout: 30 * time.Second}
	defer hc.CloseIdleConnections()
	get := func(path string) string {
		t.Helper()
		resp, err := hc.Get("http://docker" + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
		}
		return string(b)
	}
	if !strings.HasPrefix(get("/containers/json?all=1"), "[") {
		t.Fatal("the engine's container list did not come through the proxy")
	}
	get("/v1.41/containers/json")
	get("/_ping")
	// An event stream that ends at once: until is in the past.
	get("/events?since=1&until=2")
	got := p.counts()
	want := proxyCounts{requests: 4, lists: 2, events: 1}
	if got != want {
		t.Fatalf("counts %+v, want %+v", got, want)
	}
	kinds := p.byKind()
	if kinds["GET /containers/json"] != 2 || kinds["GET /events"] != 1 || kinds["GET /_ping"] != 1 {
		t.Fatalf("requests by kind %v", kinds)
	}
	if p.open.Load() != 0 {
		t.Fatalf("%d event streams still counted open after they ended", p.open.Load())
	}
}

// The balancer sends each connection to the next backend in turn and
// skips one that refuses connections.
func TestBalancerRoundRobinSkipsADeadBackend(t *testing.T) {
	names := []string{"a", "b"}
	var addrs []string
	for _, name := range names {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				go func() { defer c.Close(); io.WriteString(c, name+"\n"); io.Copy(io.Discard, c) }()
			}
		}()
		addrs = append(addrs, ln.Addr().String())
	}
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := dead.Addr().String()
	dead.Close() // nothing listens there now: connections are refused
	lb, err := newBalancer([]string{addrs[0], deadAddr, addrs[1]})
	if err != nil {
		t.Fatal(err)
	}
	defer lb.Close()
	seen := map[string]int{}
	for range 6 {
		c, err := net.Dial("tcp", lb.addr())
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		line, err := bufio.NewReader(c).ReadString('\n')
		c.Close()
		if err != nil {
			t.Fatalf("no answer through the balancer: %v", err)
		}
		seen[strings.TrimSpace(line)]++
	}
	if seen["a"] == 0 || seen["b"] == 0 || seen["a"]+seen["b"] != 6 {
		t.Fatalf("connections by backend %v, want both live backends used and every connection answered", seen)
	}
}

func TestRequestKind(t *testing.T) {
	for path, want := range map[string]string{
		"/v1.41/containers/json":                  "GET /containers/json",
		"/containers/abc123/json":                 "GET /containers/{id}/json",
		"/v1.41/containers/abc123/stats":          "GET /containers/{id}/stats",
		"/_ping":                                  "GET /_ping",
		"/v1.41/networks/br0":                     "GET /networks/{id}",
		"/v1.41/images/json":                      "GET /images/json",
		"/v1.41/events":                           "GET /events",
		"/v1.41/containers/abc/exec":              "GET /containers/{id}/exec",
		"/v1.41/system/df":                        "GET /system/df",
		"/v1.41/images/127.0.0.1:5000/a/b:1/json": "GET /images/{id}/json",
		"/v1.41/exec/abc/json":                    "GET /exec/{id}/json",
	} {
		if got := requestKind("GET", path); got != want {
			t.Errorf("requestKind(%q) = %q, want %q", path, got, want)
		}
	}
}
