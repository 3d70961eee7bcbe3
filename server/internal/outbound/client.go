package outbound

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/berth-dev/berth/shared/fault"
)

// dialTimeout bounds one connection attempt.
const dialTimeout = 30 * time.Second

// DialContext connects to addr (host:port) as net.Dialer does, refusing a
// metadata name before resolving it and, through the dialer's Control hook,
// every address p does not allow among those actually dialled.
func (p Policy) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if err := CheckName(host); err != nil {
		return nil, err
	}
	d := p.Dialer(host)
	return d.DialContext(ctx, network, addr)
}

// Dialer is a net.Dialer whose Control hook refuses the addresses p does
// not allow; name is the host being dialled, named in refusals. Callers
// that take a *net.Dialer (LDAP, TLS) use it; they must also call
// CheckName(name) first, which this hook cannot do.
func (p Policy) Dialer(name string) *net.Dialer {
	return &net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second,
		Control: func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("outbound: unexpected address %q: %w", address, err)
			}
			return p.CheckAddr(ap.Addr(), name)
		}}
}

// Transport is an HTTP transport dialling through p. It uses no proxy (a
// proxy would dial the target where the policy cannot see it) and keeps no
// idle connections (each is checked when dialled, under the policy of its
// request).
func (p Policy) Transport() *http.Transport {
	return &http.Transport{
		DialContext:           p.DialContext,
		TLSClientConfig:       &tls.Config{MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2:     true,
		DisableKeepAlives:     true,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: time.Minute,
		ExpectContinueTimeout: time.Second,
	}
}

// Client is an HTTP client dialling through p whose redirects are
// re-checked hop by hop (see CheckRedirect).
func (p Policy) Client() *http.Client {
	return &http.Client{Transport: p.Transport(), CheckRedirect: CheckRedirect}
}

// maxRedirects is how many redirects a request follows.
const maxRedirects = 10

// keptHeaders are the request headers a redirect to another origin keeps;
// every other one (Authorization, Cookie, tokens in custom headers) is
// dropped.
var keptHeaders = map[string]bool{"Accept": true, "Accept-Encoding": true, "Accept-Language": true,
	"User-Agent": true, "Content-Type": true, "Cache-Control": true}

// CheckRedirect is an http.Client's CheckRedirect: it follows at most 10
// redirects, only to http and https URLs that are not metadata names (the
// address is checked when dialled), and when a hop leaves the origin
// (scheme, host and port) of the first request it drops the URL's user
// information and every header but a few harmless ones, so no credential
// is carried to another host. Go's own rule keeps Authorization across a
// change of port or scheme and to subdomains; this one does not.
func CheckRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		return fault.New(fault.Forbidden, fmt.Sprintf("Redirect to a %s URL refused: only http and https are followed", req.URL.Scheme))
	}
	if err := CheckName(req.URL.Hostname()); err != nil {
		return err
	}
	if len(via) > 0 && Origin(req.URL) != Origin(via[0].URL) {
		req.URL.User = nil
		for k := range req.Header {
			if !keptHeaders[http.CanonicalHeaderKey(k)] {
				req.Header.Del(k)
			}
		}
	}
	return nil
}

// defaultPorts are the ports of schemes that name none.
var defaultPorts = map[string]string{"http": "80", "https": "443", "ssh": "22", "git": "9418", "ldap": "389",
	"ldaps": "636", "smtp": "25"}

// Origin is u's scheme, host and port ("https://example.com:443"), the
// port made explicit; "" when u has no host.
func Origin(u *url.URL) string {
	if u == nil || u.Hostname() == "" {
		return ""
	}
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		port = defaultPorts[scheme]
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// OriginOf is Origin of a raw URL; "" when it does not parse or has no host.
func OriginOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return Origin(u)
}

// Refused reports whether err is (or wraps, however deep) a refusal of this
// package or another 403, returning it: callers that turn connection
// errors into messages keep refusals as errors.
func Refused(err error) (*fault.Error, bool) {
	for err != nil {
		var f *fault.Error
		if !errors.As(err, &f) {
			return nil, false
		}
		if f.Kind == fault.Forbidden {
			return f, true
		}
		err = f.Unwrap()
	}
	return nil, false
}

type policyKey struct{}

// WithPolicy returns ctx carrying p, for clients that cannot be given a
// dialer per request (go-git's HTTP transport is installed once per
// process): see ContextTransport.
func WithPolicy(ctx context.Context, p Policy) context.Context {
	return context.WithValue(ctx, policyKey{}, p)
}

// FromContext is the policy ctx carries (WithPolicy), or Open when none.
func FromContext(ctx context.Context) Policy {
	if p, ok := ctx.Value(policyKey{}).(Policy); ok {
		return p
	}
	return Open
}

// Open is the policy of a caller that is not tied to the admin setting
// (package tests, a nil *Settings): private and loopback addresses are
// allowed; link-local, metadata and special addresses are still refused.
var Open = Policy{AllowPrivate: true, AllowLoopback: true}

// ContextClient is an HTTP client whose connections are checked against the
// policy of their request's context (FromContext), with CheckRedirect.
func ContextClient() *http.Client {
	t := Open.Transport()
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		return FromContext(ctx).DialContext(ctx, network, addr)
	}
	return &http.Client{Transport: t, CheckRedirect: CheckRedirect}
}
