package replica_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/replica"
)

// fixed is a Locator of tests.
type fixed struct{ self, token string }

func (f fixed) Self() string  { return f.self }
func (f fixed) Token() string { return f.token }
func (f fixed) HTTPURLOf(context.Context, string) (string, bool, error) {
	return "", false, nil
}

func TestRelayedNeedsTheReplicasToken(t *testing.T) {
	r := httptest.NewRequest("GET", "/api/jobs/x", nil)
	if replica.Relayed(fixed{token: "s3cret"}, r) {
		t.Error("a request without the header is relayed")
	}
	r.Header.Set(replica.RelayHeader, "wrong")
	if replica.Relayed(fixed{token: "s3cret"}, r) {
		t.Error("a wrong token is relayed")
	}
	r.Header.Set(replica.RelayHeader, "s3cret")
	if !replica.Relayed(fixed{token: "s3cret"}, r) {
		t.Error("the token is not relayed")
	}
	if replica.Relayed(nil, r) || replica.Relayed(fixed{}, r) {
		t.Error("a single Berth (nil Locator, or no token) trusts a relay header")
	}
	r.Header.Set(replica.RelayHeader, "")
	if replica.Relayed(fixed{}, r) {
		t.Error("an empty header matches an empty token")
	}
}

// Forward hands the request over whole (method, path, query, body, Host,
// the client's headers, the relay token, the forwarding headers the caller
// set, no hop-by-hop header) and streams the answer event by event.
func TestForwardStreamsTheOwnersAnswer(t *testing.T) {
	type seen struct {
		r    *http.Request
		body string
	}
	next, seenCh := make(chan struct{}), make(chan seen, 1)
	owner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := new(strings.Builder)
		_, _ = bufio.NewReader(r.Body).WriteTo(b)
		seenCh <- seen{r.Clone(context.Background()), b.String()}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Content-Security-Policy", "default-src 'self'")
		w.Header().Set("X-Job-Id", "j1")
		w.WriteHeader(http.StatusOK)
		fmt.Fprint(w, "event: start\ndata: {}\n\n")
		w.(http.Flusher).Flush()
		<-next // the first event must reach the client before the owner goes on
		fmt.Fprint(w, "event: complete\ndata: {}\n\n")
	}))
	defer owner.Close()
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'") // set by the forwarding replica too
		r.Header.Set("X-Forwarded-For", "198.51.100.4")
		r.Header.Set("X-Forwarded-Proto", "https")
		replica.Forward(w, r, owner.URL, "s3cret")
	}))
	defer front.Close()

	req, _ := http.NewRequest("DELETE", front.URL+"/api/jobs/j1?x=1", strings.NewReader(`{"a":1}`))
	req.Header.Set("Cookie", "dockhand_session=abc")
	req.Header.Set("Connection", "keep-alive, X-Secret-Hop")
	req.Header.Set("X-Secret-Hop", "dropped")
	req.Header.Set(replica.RelayHeader, "forged")
	req.Host = "berth.example.com"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	rd := bufio.NewReader(resp.Body)
	line, err := rd.ReadString('\n')
	if err != nil || line != "event: start\n" {
		t.Fatalf("first line %q %v, want the first event while the owner still runs", line, err)
	}
	close(next)
	rest := new(strings.Builder)
	_, _ = rd.WriteTo(rest)
	if !strings.Contains(rest.String(), "event: complete") {
		t.Errorf("rest of the stream = %q", rest.String())
	}
	if n := len(resp.Header.Values("Content-Security-Policy")); n != 1 || resp.Header.Get("X-Job-Id") != "j1" {
		t.Errorf("answer headers = %v, want the owner's, each once", resp.Header)
	}

	sn := <-seenCh
	got, body := sn.r, sn.body
	for name, want := range map[string]string{
		"Cookie": "dockhand_session=abc", replica.RelayHeader: "s3cret",
		"X-Forwarded-For": "198.51.100.4", "X-Forwarded-Proto": "https", "X-Secret-Hop": "",
	} {
		if v := got.Header.Get(name); v != want {
			t.Errorf("owner got %s %q, want %q", name, v, want)
		}
	}
	if got.Method != "DELETE" || got.URL.RequestURI() != "/api/jobs/j1?x=1" || got.Host != "berth.example.com" || body != `{"a":1}` {
		t.Errorf("owner got %s %s host %s body %q", got.Method, got.URL.RequestURI(), got.Host, body)
	}
}

func TestForwardToAReplicaThatCannotBeReachedIs502(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	addr := dead.URL
	dead.Close()
	for _, target := range []string{addr, "::not a url"} {
		w := httptest.NewRecorder()
		r := httptest.NewRequest("GET", "/api/jobs/x", nil).WithContext(context.Background())
		ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
		replica.Forward(w, r.WithContext(ctx), target, "s3cret")
		cancel()
		var e struct{ Error string }
		if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || w.Code != http.StatusBadGateway || e.Error == "" {
			t.Errorf("forward to %q = %d %s, want 502 with an error", target, w.Code, w.Body)
		}
	}
}
