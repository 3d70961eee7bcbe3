package engine

import (
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/berth-dev/berth/shared/enginetest"
)

// EngineProxy returns a handler that forwards every request to the local
// engine's socket, so that tests can put the real engine behind TLS, plain
// TCP or another unix socket. It is exported for the engine_test package.
func EngineProxy(tb testing.TB) http.Handler {
	tb.Helper()
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", enginetest.Socket)
		},
	}
	tb.Cleanup(tr.CloseIdleConnections)
	return &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.Out.URL.Scheme = "http"
			r.Out.URL.Host = "engine"
		},
		Transport:     tr,
		FlushInterval: -1, // streams (events, logs) pass through at once
		ErrorLog:      log.New(io.Discard, "", 0),
	}
}

// countingListener counts the connections it accepted.
type countingListener struct {
	net.Listener
	accepted atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accepted.Add(1)
	}
	return c, err
}

// serveEngineAt serves EngineProxy on a unix socket at path. stop closes the
// listener (which removes the socket file) and every connection; it also runs
// at cleanup.
func serveEngineAt(t *testing.T, path string) (ln *countingListener, stop func()) {
	t.Helper()
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatalf("listen on %s: %v", path, err)
	}
	ln = &countingListener{Listener: l}
	srv := &http.Server{Handler: EngineProxy(t), ErrorLog: log.New(io.Discard, "", 0), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	stop = sync.OnceFunc(func() {
		_ = srv.Close()
		<-done
	})
	t.Cleanup(stop)
	return ln, stop
}
