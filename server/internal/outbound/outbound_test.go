package outbound_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/berth-dev/berth/server/internal/outbound"
	"github.com/berth-dev/berth/shared/fault"
)

func TestCheckAddrRefusesByRule(t *testing.T) {
	all := outbound.Policy{AllowPrivate: true, AllowLoopback: true}
	none := outbound.Policy{}
	cases := []struct {
		addr   string
		policy outbound.Policy
		rule   string // "" allowed
	}{
		{"169.254.169.254", all, "never allowed"},
		{"169.254.1.1", all, "never allowed"},
		{"fe80::1", all, "never allowed"},
		{"fd00:ec2::254", all, "never allowed"},
		{"100.100.100.200", all, "never allowed"},
		{"::ffff:169.254.169.254", all, "never allowed"},
		{"0.0.0.0", all, "never allowed"},
		{"::", all, "never allowed"},
		{"224.0.0.1", all, "never allowed"},
		{"10.1.2.3", none, "private addresses are not allowed"},
		{"172.16.0.1", none, "private addresses are not allowed"},
		{"192.168.1.1", none, "private addresses are not allowed"},
		{"100.64.0.1", none, "private addresses are not allowed"},
		{"fd12::1", none, "private addresses are not allowed"},
		{"127.0.0.1", none, "loopback addresses are not allowed"},
		{"::1", none, "loopback addresses are not allowed"},
		{"127.0.0.1", outbound.Policy{AllowPrivate: true}, "loopback addresses are not allowed"},
		{"10.1.2.3", outbound.Policy{AllowLoopback: true}, "private addresses are not allowed"},
		{"10.1.2.3", outbound.Policy{AllowPrivate: true}, ""},
		{"127.0.0.1", outbound.Policy{AllowLoopback: true}, ""},
		{"93.184.216.34", none, ""},
		{"2606:4700::1111", none, ""},
	}
	for _, c := range cases {
		err := c.policy.CheckAddr(netip.MustParseAddr(c.addr), "")
		if c.rule == "" {
			if err != nil {
				t.Errorf("%s under %+v: %v, want allowed", c.addr, c.policy, err)
			}
			continue
		}
		f, ok := fault.As(err)
		if !ok || f.Kind != fault.Forbidden || !strings.Contains(f.Message, c.rule) {
			t.Errorf("%s under %+v: %v, want a 403 naming %q", c.addr, c.policy, err, c.rule)
		}
	}
}

func TestMetadataNamesAreRefusedBeforeResolving(t *testing.T) {
	for _, name := range []string{"metadata.google.internal", "METADATA.google.internal.", "metadata", "metadata.azure.com"} {
		err := outbound.Open.CheckHost(context.Background(), name)
		if f, ok := fault.As(err); !ok || f.Kind != fault.Forbidden || !strings.Contains(f.Message, "metadata") {
			t.Errorf("%s: %v, want refused", name, err)
		}
		_, err = outbound.Open.Client().Get("http://" + name + "/computeMetadata/v1/")
		if _, ok := outbound.Refused(err); !ok {
			t.Errorf("GET %s: %v, want refused", name, err)
		}
	}
}

// localhost resolves to a loopback address: the dial follows the loopback
// rule whatever the name.
func TestNameResolvingToLoopbackFollowsTheLoopbackRule(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	u := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)

	_, err := outbound.Policy{AllowPrivate: true}.Client().Get(u)
	f, ok := outbound.Refused(err)
	if !ok || !strings.Contains(f.Message, "localhost (") || !strings.Contains(f.Message, "loopback addresses are not allowed") {
		t.Fatalf("GET %s without loopback: %v, want a refusal naming localhost and the loopback rule", u, err)
	}
	res, err := outbound.Policy{AllowLoopback: true}.Client().Get(u)
	if err != nil {
		t.Fatalf("GET %s with loopback allowed: %v", u, err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d", res.StatusCode)
	}
}

// recorder records the Authorization and X-Token headers it receives.
type recorder struct {
	mu   sync.Mutex
	auth []string
}

func (r *recorder) handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.auth = append(r.auth, req.Header.Get("Authorization")+req.Header.Get("X-Token"))
		r.mu.Unlock()
		io.WriteString(w, "ok")
	})
}

func (r *recorder) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.auth...)
}

// A redirect to another port of the same host is another origin: Go's own
// client would carry Authorization there; this one carries no credential.
func TestRedirectToAnotherOriginCarriesNoCredentials(t *testing.T) {
	var other recorder
	target := httptest.NewServer(other.handler())
	defer target.Close()
	for _, withUserinfo := range []bool{false, true} {
		start := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target.URL+"/landing", http.StatusFound)
		}))
		u := start.URL + "/start"
		if withUserinfo {
			u = strings.Replace(u, "http://", "http://user:secret@", 1)
		}
		req, _ := http.NewRequest(http.MethodGet, u, nil)
		if !withUserinfo {
			req.Header.Set("Authorization", "Bearer secret")
			req.Header.Set("X-Token", "secret")
		}
		res, err := outbound.Open.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		start.Close()
	}
	for _, h := range other.got() {
		if h != "" {
			t.Fatalf("the other origin received credentials %q", h)
		}
	}
	if n := len(other.got()); n != 2 {
		t.Fatalf("the other origin got %d requests, want 2", n)
	}
}

func TestRedirectWithinTheOriginKeepsCredentials(t *testing.T) {
	var rec recorder
	mux := http.NewServeMux()
	mux.HandleFunc("/start", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/landing", http.StatusFound) })
	mux.Handle("/landing", rec.handler())
	srv := httptest.NewServer(mux)
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/start", nil)
	req.Header.Set("Authorization", "Bearer secret")
	res, err := outbound.Open.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if got := rec.got(); len(got) != 1 || got[0] != "Bearer secret" {
		t.Fatalf("same-origin redirect got %q, want the credential kept", got)
	}
}

// Each hop is re-checked: a public-looking first hop cannot redirect to a
// refused address.
func TestRedirectHopToARefusedAddressIsRefused(t *testing.T) {
	for _, loc := range []string{"http://169.254.169.254/latest/meta-data/", "http://metadata.google.internal/", "file:///etc/passwd"} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, loc, http.StatusFound)
		}))
		_, err := outbound.Open.Client().Get(srv.URL)
		srv.Close()
		if _, ok := outbound.Refused(err); !ok {
			t.Errorf("redirect to %s: %v, want refused", loc, err)
		}
	}
}

func TestContextClientFollowsTheContextsPolicy(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	ctx := outbound.WithPolicy(context.Background(), outbound.Policy{AllowPrivate: true})
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	if _, err := outbound.ContextClient().Do(req); err == nil {
		t.Fatal("loopback reached under a policy refusing it")
	} else if _, ok := outbound.Refused(err); !ok {
		t.Fatalf("%v, want a refusal", err)
	}
}

func TestOrigin(t *testing.T) {
	for raw, want := range map[string]string{
		"https://GitHub.com/org/repo.git": "https://github.com:443",
		"http://user:pw@host:8080/x":      "http://host:8080",
		"ssh://git@example.com/repo":      "ssh://example.com:22",
		"https://[::1]:3000/a":            "https://[::1]:3000",
		"/relative":                       "",
	} {
		if got := outbound.OriginOf(raw); got != want {
			t.Errorf("OriginOf(%q) = %q, want %q", raw, got, want)
		}
	}
}
