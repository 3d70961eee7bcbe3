package api

import (
	"bufio"
	"compress/gzip"
	"net"
	"net/http"
	"strings"
	"sync"

	"github.com/gin-gonic/gin"
)

// gzipMinSize is the smallest JSON body worth compressing: below it the
// gzip header and the CPU cost outweigh the bytes saved.
const gzipMinSize = 1024

// gzipWriters recycles compressors: each holds about a megabyte of state.
var gzipWriters = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(nil, gzip.DefaultCompression)
	return w
}}

// compressJSON gzips JSON responses of more than gzipMinSize bytes for
// clients that accept gzip. Everything else passes untouched: small bodies,
// other content types (event streams, downloads, already-compressed data),
// responses that set their own Content-Encoding, and WebSocket upgrades.
func compressJSON(c *gin.Context) {
	c.Header("Vary", "Accept-Encoding") // caches must key on it, whichever form this answer takes
	if !acceptsGzip(c.Request) || c.Request.Method == http.MethodHead {
		c.Next()
		return
	}
	w := &gzipResponse{ResponseWriter: c.Writer, status: http.StatusOK}
	c.Writer = w
	defer w.finish()
	c.Next()
}

// acceptsGzip reports whether the request's Accept-Encoding allows gzip.
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(name), "gzip") {
			continue
		}
		q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
		return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
	}
	return false
}

// gzipResponse holds back the start of a response until it knows whether to
// compress it: a JSON body larger than gzipMinSize is compressed; any other
// response is written through as it was.
type gzipResponse struct {
	gin.ResponseWriter
	status  int
	held    []byte
	decided bool
	gz      *gzip.Writer // nil: passing through
}

func (w *gzipResponse) WriteHeader(code int) {
	if !w.decided {
		w.status = code
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

// WriteHeaderNow sends the status as it stands (gin calls it for bodiless
// responses); a response without a body is never compressed.
func (w *gzipResponse) WriteHeaderNow() {
	if !w.decided {
		w.passThrough()
	}
	w.ResponseWriter.WriteHeaderNow()
}

func (w *gzipResponse) Write(p []byte) (int, error) {
	if !w.decided {
		if !w.compressible() {
			w.passThrough()
		} else if len(w.held)+len(p) <= gzipMinSize {
			w.held = append(w.held, p...)
			return len(p), nil
		} else {
			w.startGzip()
		}
	}
	if w.gz != nil {
		return w.gz.Write(p)
	}
	return w.ResponseWriter.Write(p)
}

func (w *gzipResponse) WriteString(s string) (int, error) { return w.Write([]byte(s)) }

// compressible reports whether the response so far may be compressed.
func (w *gzipResponse) compressible() bool {
	h := w.ResponseWriter.Header()
	return w.status >= 200 && w.status != http.StatusNoContent && w.status != http.StatusNotModified &&
		h.Get("Content-Encoding") == "" && strings.HasPrefix(h.Get("Content-Type"), "application/json")
}

// passThrough sends the status and what was held back, uncompressed.
func (w *gzipResponse) passThrough() {
	w.decided = true
	w.ResponseWriter.WriteHeader(w.status)
	if len(w.held) > 0 {
		w.ResponseWriter.Write(w.held)
		w.held = nil
	}
}

// startGzip sends the headers of a compressed response and what was held back.
func (w *gzipResponse) startGzip() {
	w.decided = true
	h := w.ResponseWriter.Header()
	h.Set("Content-Encoding", "gzip")
	h.Del("Content-Length")
	w.ResponseWriter.WriteHeader(w.status)
	w.gz = gzipWriters.Get().(*gzip.Writer)
	w.gz.Reset(w.ResponseWriter)
	if len(w.held) > 0 {
		w.gz.Write(w.held)
		w.held = nil
	}
}

// Flush sends what is buffered: a response still being held back is decided
// (passed through) first, so a stream is never delayed.
func (w *gzipResponse) Flush() {
	if !w.decided {
		w.passThrough()
	}
	if w.gz != nil {
		w.gz.Flush()
	}
	w.ResponseWriter.Flush()
}

// Hijack hands the connection over (WebSocket upgrades) uncompressed.
func (w *gzipResponse) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	w.decided = true
	return w.ResponseWriter.Hijack()
}

// Written reports whether the response started, held-back bytes included,
// so that the error mapping does not write a second body after them.
func (w *gzipResponse) Written() bool { return w.ResponseWriter.Written() || len(w.held) > 0 }

// Status is the status the handler set, sent or not.
func (w *gzipResponse) Status() int {
	if !w.decided {
		return w.status
	}
	return w.ResponseWriter.Status()
}

// Unwrap lets http.ResponseController reach the connection's deadlines.
func (w *gzipResponse) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// finish ends the response: it sends a body held back in full (too small to
// compress), or closes the compressed stream.
func (w *gzipResponse) finish() {
	switch {
	case !w.decided && (len(w.held) > 0 || w.ResponseWriter.Written()):
		w.passThrough()
	case !w.decided:
		// Nothing was written: leave the response to gin (it sends the
		// status it has when the chain ends).
		if w.status != http.StatusOK {
			w.ResponseWriter.WriteHeader(w.status)
		}
	case w.gz != nil:
		w.gz.Close()
		w.gz.Reset(nil)
		gzipWriters.Put(w.gz)
		w.gz = nil
	}
}
