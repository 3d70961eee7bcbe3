package hawser

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/berth-dev/berth/shared/engine"
)

// Request timeouts (the reference's): 30 s, 300 s for compose and prune.
const (
	requestTimeout = 30 * time.Second
	longTimeout    = 300 * time.Second
	// firstFrameWait: a streaming response is handed over once its first
	// frame came (so that a refusal is an HTTP status) or after this long
	// (an events stream is silent until something happens).
	firstFrameWait = 2 * time.Second
	maxBody        = 256 << 20
)

// Transport tunnels Docker API requests to envID's agent
// (engine.HawserEdges).
func (h *Hub) Transport(envID int64) http.RoundTripper { return tunnel{hub: h, envID: envID} }

type tunnel struct {
	hub   *Hub
	envID int64
	local bool // only to an agent connected here (a relayed request)
}

// errAbsent is a request for an environment whose agent is not connected.
var errAbsent = fmt.Errorf("hawser: %w", engine.ErrAgentAbsent)

// isStreaming reports whether the agent must answer req as a stream: events,
// followed logs, stats streams, pulls and pushes.
func isStreaming(req *http.Request) bool {
	p, q := req.URL.Path, req.URL.Query()
	switch {
	case strings.HasSuffix(p, "/events"):
		return true
	case strings.HasSuffix(p, "/logs"):
		f := q.Get("follow")
		return f == "1" || f == "true"
	case strings.HasSuffix(p, "/stats"):
		s := q.Get("stream")
		return s != "0" && s != "false"
	case strings.HasSuffix(p, "/images/create"), strings.HasSuffix(p, "/push") && strings.Contains(p, "/images/"):
		return true
	}
	return false
}

func timeoutOf(req *http.Request) time.Duration {
	if strings.HasSuffix(req.URL.Path, "/prune") || strings.HasPrefix(req.URL.Path, "/_hawser/compose") ||
		strings.HasSuffix(req.URL.Path, "/build") || strings.HasSuffix(req.URL.Path, "/images/load") {
		return longTimeout
	}
	return requestTimeout
}

// RoundTrip sends req as a request frame and turns the answer back into an
// HTTP response.
func (t tunnel) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		defer req.Body.Close()
	}
	if strings.HasSuffix(req.URL.Path, "/attach") || (strings.Contains(req.URL.Path, "/exec/") && strings.HasSuffix(req.URL.Path, "/start")) {
		return nil, fmt.Errorf("%w: attaching through a Hawser edge agent (terminals use exec sessions)", engine.ErrUnsupported)
	}
	c := t.hub.get(t.envID)
	if c == nil {
		if !t.local && t.hub.replicas != nil {
			// The agent may be connected to another replica.
			return t.hub.relayed(t.envID).RoundTrip(req)
		}
		return nil, errAbsent
	}
	f := requestFrame{Type: "request", RequestID: uuid.NewString(), Method: req.Method, Path: req.URL.RequestURI(),
		Headers: map[string]string{}, Streaming: isStreaming(req)}
	for k, v := range req.Header {
		if len(v) > 0 && !hopByHop[http.CanonicalHeaderKey(k)] {
			f.Headers[k] = v[0]
		}
	}
	if req.Body != nil && !f.Streaming {
		b, err := io.ReadAll(io.LimitReader(req.Body, maxBody+1))
		if err != nil {
			return nil, err
		}
		if len(b) > maxBody {
			return nil, fmt.Errorf("%w: request body over %d bytes", engine.ErrInvalid, maxBody)
		}
		if len(b) > 0 {
			if json.Valid(b) && (b[0] == '{' || b[0] == '[') {
				f.Body = b
			} else {
				enc, _ := json.Marshal(base64.StdEncoding.EncodeToString(b))
				f.Body, f.IsBinary = enc, true
			}
		}
	}
	ch := make(chan json.RawMessage, 64)
	c.mu.Lock()
	c.pending[f.RequestID] = ch
	c.mu.Unlock()
	done := func() {
		c.mu.Lock()
		delete(c.pending, f.RequestID)
		c.mu.Unlock()
	}
	if err := c.write(req.Context(), f); err != nil {
		done()
		return nil, lost(c, err)
	}
	if f.Streaming {
		return t.stream(req, c, f.RequestID, ch, done)
	}
	defer done()
	timer := time.NewTimer(timeoutOf(req))
	defer timer.Stop()
	for {
		select {
		case <-req.Context().Done():
			return nil, req.Context().Err()
		case <-c.ctx.Done():
			return nil, lost(c, nil)
		case <-timer.C:
			return nil, fmt.Errorf("hawser: the agent did not answer %s %s in time: %w", req.Method, req.URL.Path, context.DeadlineExceeded)
		case data := <-ch:
			var head frame
			_ = json.Unmarshal(data, &head)
			switch head.Type {
			case "response":
				var r responseFrame
				if err := json.Unmarshal(data, &r); err != nil {
					return nil, fmt.Errorf("hawser: bad response frame: %w", err)
				}
				return response(req, r)
			case "error":
				return errorResponse(req, data), nil
			}
		}
	}
}

// hopByHop are headers that concern one connection, not the request.
var hopByHop = map[string]bool{"Connection": true, "Keep-Alive": true, "Proxy-Connection": true,
	"Transfer-Encoding": true, "Upgrade": true, "Te": true, "Trailer": true}

// lost is the error of a request whose connection ended.
func lost(c *agentConn, err error) error {
	cause := context.Cause(c.ctx)
	if cause == nil {
		cause = err
	}
	return fmt.Errorf("hawser: the agent's connection ended (%v): %w", cause, engine.ErrAgentAbsent)
}

func response(req *http.Request, r responseFrame) (*http.Response, error) {
	body := []byte(r.Body)
	if r.IsBinary {
		b, err := base64.StdEncoding.DecodeString(r.Body)
		if err != nil {
			return nil, fmt.Errorf("hawser: bad binary body: %w", err)
		}
		body = b
	}
	h := http.Header{}
	for k, v := range r.Headers {
		h.Set(k, v)
	}
	h.Del("Content-Length")
	code := r.StatusCode
	if code == 0 {
		code = http.StatusOK
	}
	return &http.Response{StatusCode: code, Status: fmt.Sprintf("%d %s", code, http.StatusText(code)),
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: h, Body: io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)), Request: req}, nil
}

// errorResponse turns an agent's error frame into the engine's error shape.
func errorResponse(req *http.Request, data []byte) *http.Response {
	var e errorFrame
	_ = json.Unmarshal(data, &e)
	msg := e.Error
	if msg == "" {
		msg = e.Message
	}
	code := http.StatusInternalServerError
	if strings.Contains(strings.ToLower(msg), "no such") {
		code = http.StatusNotFound
	}
	b, _ := json.Marshal(map[string]string{"message": msg})
	h := http.Header{"Content-Type": []string{"application/json"}}
	return &http.Response{StatusCode: code, Status: fmt.Sprintf("%d %s", code, http.StatusText(code)),
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: h, Body: io.NopCloser(bytes.NewReader(b)),
		ContentLength: int64(len(b)), Request: req}
}

// stream answers a streaming request: stream frames become the body,
// stream_end (or the connection's end) ends it; closing the body or
// cancelling the request sends stream_end with reason cancelled.
func (t tunnel) stream(req *http.Request, c *agentConn, id string, ch chan json.RawMessage, done func()) (*http.Response, error) {
	pr, pw := io.Pipe()
	var first json.RawMessage
	wait := time.NewTimer(firstFrameWait)
	select {
	case first = <-ch:
	case <-wait.C:
	case <-req.Context().Done():
		done()
		_ = c.write(context.Background(), streamEndFrame{Type: "stream_end", RequestID: id, Reason: "cancelled"})
		return nil, req.Context().Err()
	case <-c.ctx.Done():
		done()
		return nil, lost(c, nil)
	}
	wait.Stop()
	if first != nil {
		var head frame
		_ = json.Unmarshal(first, &head)
		if head.Type == "error" {
			done()
			return errorResponse(req, first), nil
		}
	}
	closed := make(chan struct{})
	go func() {
		defer done()
		handle := func(data json.RawMessage) bool {
			var head frame
			_ = json.Unmarshal(data, &head)
			switch head.Type {
			case "stream":
				var s streamFrame
				if json.Unmarshal(data, &s) == nil && len(s.Data) > 0 {
					if _, err := pw.Write(s.Data); err != nil {
						_ = c.write(context.Background(), streamEndFrame{Type: "stream_end", RequestID: id, Reason: "cancelled"})
						return false
					}
				}
				return true
			case "stream_end":
				_ = pw.Close()
				return false
			case "error":
				var e errorFrame
				_ = json.Unmarshal(data, &e)
				_ = pw.CloseWithError(errors.New(e.Error))
				return false
			}
			return true
		}
		if first != nil && !handle(first) {
			return
		}
		for {
			select {
			case data := <-ch:
				if !handle(data) {
					return
				}
			case <-req.Context().Done():
				_ = c.write(context.Background(), streamEndFrame{Type: "stream_end", RequestID: id, Reason: "cancelled"})
				_ = pw.CloseWithError(req.Context().Err())
				return
			case <-closed:
				_ = c.write(context.Background(), streamEndFrame{Type: "stream_end", RequestID: id, Reason: "cancelled"})
				return
			case <-c.ctx.Done():
				_ = pw.CloseWithError(lost(c, nil))
				return
			}
		}
	}()
	ct := "application/json"
	if strings.HasSuffix(req.URL.Path, "/logs") {
		ct = "application/vnd.docker.multiplexed-stream"
	}
	return &http.Response{StatusCode: http.StatusOK, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": []string{ct}}, Body: &streamBody{pr: pr, closed: closed}, ContentLength: -1,
		Request: req}, nil
}

// streamBody is a streaming response's body; closing it early cancels the
// stream at the agent.
type streamBody struct {
	pr     *io.PipeReader
	closed chan struct{}
	once   sync.Once
}

func (b *streamBody) Read(p []byte) (int, error) { return b.pr.Read(p) }

func (b *streamBody) Close() error {
	b.once.Do(func() { close(b.closed) })
	return b.pr.Close()
}
