package api

import (
	"net/http/httptest"
	"net/netip"
	"testing"
)

func TestClientIPReadsForwardingHeadersOnlyFromTrustedProxies(t *testing.T) {
	s := &Server{bounds: Boundaries{TrustedProxies: []netip.Prefix{
		netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")}}}
	cases := []struct {
		name, peer, xff, fwd, want string
	}{
		{"no header", "10.1.1.1:5000", "", "", "10.1.1.1"},
		{"untrusted peer writes a header", "192.0.2.1:5000", "203.0.113.9", "", "192.0.2.1"},
		{"untrusted peer writes Forwarded", "192.0.2.1:5000", "", "for=203.0.113.9", "192.0.2.1"},
		{"trusted proxy", "10.1.1.1:5000", "203.0.113.9", "", "203.0.113.9"},
		{"client-written leftmost entry is ignored", "10.1.1.1:5000", "198.51.100.1, 203.0.113.9", "", "203.0.113.9"},
		{"chain of trusted proxies", "10.1.1.1:5000", "203.0.113.9, 10.2.2.2, 10.3.3.3", "", "203.0.113.9"},
		{"every hop trusted", "10.1.1.1:5000", "10.2.2.2", "", "10.2.2.2"},
		{"garbage stops the walk", "10.1.1.1:5000", "203.0.113.9, unknown", "", "10.1.1.1"},
		{"a hop with a port", "10.1.1.1:5000", "203.0.113.9:4711", "", "203.0.113.9"},
		{"Forwarded with IPv6", "10.1.1.1:5000", "", `for=192.0.2.60;proto=https, for="[2001:db8::7]:4711"`, "2001:db8::7"},
		{"X-Forwarded-For wins over Forwarded", "10.1.1.1:5000", "203.0.113.9", "for=198.51.100.1", "203.0.113.9"},
		{"IPv6 loopback proxy", "[::1]:5000", "203.0.113.9", "", "203.0.113.9"},
		{"IPv4-mapped peer", "[::ffff:10.1.1.1]:5000", "203.0.113.9", "", "203.0.113.9"},
	}
	for _, c := range cases {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = c.peer
		if c.xff != "" {
			r.Header.Set("X-Forwarded-For", c.xff)
		}
		if c.fwd != "" {
			r.Header.Set("Forwarded", c.fwd)
		}
		if got := s.clientIP(r); got != c.want {
			t.Errorf("%s: clientIP = %q, want %q", c.name, got, c.want)
		}
	}
	none := &Server{}
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "127.0.0.1:5000"
	r.Header.Set("X-Forwarded-For", "203.0.113.9")
	r.Header.Set("X-Forwarded-Proto", "https")
	if got := none.clientIP(r); got != "127.0.0.1" {
		t.Errorf("without TRUSTED_PROXIES a loopback peer's header is read: %q", got)
	}
	if none.isHTTPS(r) {
		t.Error("without TRUSTED_PROXIES a loopback peer's X-Forwarded-Proto is believed")
	}
}
