package api

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// clientIP is the address of the client a request comes from: the TCP
// peer, unless the peer is a trusted proxy (TRUSTED_PROXIES); then the
// address its forwarding header names, read from the right and skipping
// further trusted proxies, so that what a client wrote into the header
// itself never counts. X-Forwarded-For is read when present (every common
// proxy appends to it), else the for= parameters of RFC 7239 Forwarded.
// Login and API-token limits, audit and activity addresses and sessions use
// it; nothing else reads those headers. A request another replica forwarded
// (replicas.go) names its client in X-Forwarded-For, as that replica's
// rules determined it.
func (s *Server) clientIP(r *http.Request) string {
	if ip, _, ok := s.relayedClient(r); ok && ip != "" {
		return ip
	}
	peer, ok := peerAddr(r)
	if !ok {
		return r.RemoteAddr
	}
	if !s.trustedProxy(peer) {
		return peer.String()
	}
	hops := forwardedHops(r.Header)
	client := peer
	for i := len(hops) - 1; i >= 0; i-- {
		a, ok := parseHop(hops[i])
		if !ok {
			break // "unknown", an obfuscated name or garbage: nothing further left is believable
		}
		client = a
		if !s.trustedProxy(a) {
			break
		}
	}
	return client.String()
}

// isHTTPS reports whether the client reached Berth over HTTPS: directly, or
// through a trusted proxy that says so (X-Forwarded-Proto, or proto= of
// Forwarded). It decides the session cookie's Secure flag.
func (s *Server) isHTTPS(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	if _, proto, ok := s.relayedClient(r); ok && proto != "" {
		return proto == "https"
	}
	peer, ok := peerAddr(r)
	if !ok || !s.trustedProxy(peer) {
		return false
	}
	if v := r.Header.Get("X-Forwarded-Proto"); v != "" {
		first, _, _ := strings.Cut(v, ",")
		return strings.EqualFold(strings.TrimSpace(first), "https")
	}
	protos := forwardedParams(r.Header, "proto") // the first element is the proxy the client reached
	return len(protos) > 0 && strings.EqualFold(protos[0], "https")
}

// trustedProxy reports whether a is in TRUSTED_PROXIES.
func (s *Server) trustedProxy(a netip.Addr) bool {
	for _, p := range s.bounds.TrustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// peerAddr is the TCP peer's address.
func peerAddr(r *http.Request) (netip.Addr, bool) {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}, false
	}
	return a.Unmap().WithZone(""), true
}

// forwardedHops lists the addresses of a forwarding header, client first.
func forwardedHops(h http.Header) []string {
	if vs := h.Values("X-Forwarded-For"); len(vs) > 0 {
		var hops []string
		for _, v := range vs {
			for _, hop := range strings.Split(v, ",") {
				hops = append(hops, strings.TrimSpace(hop))
			}
		}
		return hops
	}
	return forwardedParams(h, "for")
}

// forwardedParams lists the values of parameter name in the elements of
// the RFC 7239 Forwarded headers, in order (an element without it counts
// as "" so that positions stay right).
func forwardedParams(h http.Header, name string) []string {
	var out []string
	for _, v := range h.Values("Forwarded") {
		for _, elem := range strings.Split(v, ",") {
			val := ""
			for _, pair := range strings.Split(elem, ";") {
				k, v, ok := strings.Cut(strings.TrimSpace(pair), "=")
				if ok && strings.EqualFold(strings.TrimSpace(k), name) {
					val = strings.Trim(strings.TrimSpace(v), `"`)
				}
			}
			out = append(out, val)
		}
	}
	return out
}

// parseHop reads one hop of X-Forwarded-For or Forwarded: an address, with
// or without a port, IPv6 in brackets or not.
func parseHop(hop string) (netip.Addr, bool) {
	hop = strings.TrimSpace(hop)
	if ap, err := netip.ParseAddrPort(hop); err == nil {
		return ap.Addr().Unmap(), true
	}
	hop = strings.TrimSuffix(strings.TrimPrefix(hop, "["), "]")
	a, err := netip.ParseAddr(hop)
	if err != nil || a.Zone() != "" {
		return netip.Addr{}, false
	}
	return a.Unmap(), true
}
