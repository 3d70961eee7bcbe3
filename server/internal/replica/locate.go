// Package replica lets several Berth servers (replicas) share one
// PostgreSQL database behind a load balancer: each replica's identity and
// liveness (registry.go), and the forwarding of a follow-up request (a job
// started on another replica) to the replica that holds what it asks for.
package replica

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httputil"
	"net/url"
)

// RelayHeader carries the relay token (Locator.Token) on a request one
// replica forwards to another. A request carrying the right token is never
// forwarded again, and the forwarding replica's X-Forwarded-For and
// X-Forwarded-Proto are believed; it is still authenticated as any request
// (the user's cookie or API token travels with it).
const RelayHeader = "X-Berth-Replica-Relay"

// Locator finds the other replicas. Registry implements it; nil (no
// REPLICA_HOST) is a single Berth, which forwards nothing.
type Locator interface {
	// Self is this replica's id.
	Self() string
	// Token is the secret every replica of the install shares (derived
	// from the encryption key), carried in RelayHeader.
	Token() string
	// HTTPURLOf is the API address of replica replicaID (http://host:port)
	// and whether it is live (its row renewed and not expired).
	HTTPURLOf(ctx context.Context, replicaID string) (url string, live bool, err error)
}

// Relayed reports whether r was forwarded by another replica of the
// install: it carries RelayHeader with l's token (compared in constant
// time). With a nil Locator nothing is relayed.
func Relayed(l Locator, r *http.Request) bool {
	if l == nil {
		return false
	}
	got, want := r.Header.Get(RelayHeader), l.Token()
	return got != "" && want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// Forward sends the request r to the replica at target (its HTTP URL) and
// copies the answer to w as it comes (an event stream is flushed event by
// event). The request keeps its method, path, query, body, Host and the
// client's headers, minus the hop-by-hop ones; it gains RelayHeader with
// token. X-Forwarded-For and X-Forwarded-Proto are sent as r has them: the
// caller sets them to the client's address and scheme as its trusted-proxy
// rules determined them (the receiving replica believes them because the
// token says a replica wrote them). The answer's headers replace those w
// already holds. A replica that cannot be reached answers 502.
func Forward(w http.ResponseWriter, r *http.Request, target string, token string) {
	u, err := url.Parse(target)
	if err != nil || u.Scheme == "" || u.Host == "" {
		writeError(w, http.StatusBadGateway, "The Berth replica that holds this has no usable address")
		return
	}
	p := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(u)
			pr.Out.Host = pr.In.Host // the client's host: same-origin checks and redirects stay right
			// Rewrite starts from a request without forwarding headers:
			// carry the ones the caller vouches for.
			for _, h := range []string{"X-Forwarded-For", "X-Forwarded-Proto"} {
				if v := pr.In.Header.Values(h); len(v) > 0 {
					pr.Out.Header[h] = append([]string(nil), v...)
				}
			}
			pr.Out.Header.Set(RelayHeader, token)
		},
		FlushInterval: -1,
		ErrorLog:      log.New(io.Discard, "", 0), // a client that leaves a stream is no error
		ModifyResponse: func(resp *http.Response) error {
			for k := range resp.Header {
				w.Header().Del(k) // e.g. the security headers both replicas set: once
			}
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if r.Context().Err() != nil {
				return // the client left
			}
			writeError(w, http.StatusBadGateway, "The Berth replica that holds this could not be reached")
		},
	}
	p.ServeHTTP(w, r)
}

// writeError answers Berth's error body {error}.
func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}
