package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
)

// KeepaliveInterval is the period of the comment lines that keep idle event
// streams open through proxies.
const KeepaliveInterval = 5 * time.Second

// eventStream writes Server-Sent Events. Writes are serialized; each event is
// flushed at once; a keepalive comment goes out every KeepaliveInterval until
// Close or the client leaves.
type eventStream struct {
	w    http.ResponseWriter
	rc   *http.ResponseController
	mu   sync.Mutex
	done chan struct{}
	once sync.Once
}

// startEvents answers the request with an event stream. The stream must be
// closed before the handler returns (the gin context, its writer included,
// is reused afterwards).
func startEvents(c *gin.Context) *eventStream {
	c.Header("Content-Type", "text/event-stream")
	c.Header("Cache-Control", "no-cache")
	c.Header("Connection", "keep-alive")
	c.Header("X-Accel-Buffering", "no")
	c.Status(http.StatusOK)
	w := c.Writer
	es := &eventStream{w: w, rc: http.NewResponseController(w), done: make(chan struct{})}
	_ = es.rc.Flush()
	go es.keepalive(c.Request.Context())
	return es
}

func (es *eventStream) keepalive(ctx context.Context) {
	t := time.NewTicker(KeepaliveInterval)
	defer t.Stop()
	for {
		select {
		case <-es.done:
			return
		case <-ctx.Done():
			return
		case <-t.C:
			es.mu.Lock()
			select {
			case <-es.done: // closed while the tick fired: the writer is no longer ours
				es.mu.Unlock()
				return
			default:
			}
			_, err := fmt.Fprint(es.w, ": keepalive\n\n")
			if err == nil {
				err = es.rc.Flush()
			}
			es.mu.Unlock()
			if err != nil {
				return
			}
		}
	}
}

// Send writes one event named event whose data is v as JSON; an empty name
// sends an unnamed event (a "message" to browsers).
func (es *eventStream) Send(event string, v any) error {
	return es.SendID("", event, v)
}

// SendID is Send with the event's id: what a browser that reconnects sends
// back as its Last-Event-ID header ("" sends none).
func (es *eventStream) SendID(id, event string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	es.mu.Lock()
	defer es.mu.Unlock()
	select {
	case <-es.done:
		return http.ErrHandlerTimeout
	default:
	}
	if id != "" {
		if _, err := fmt.Fprintf(es.w, "id: %s\n", id); err != nil {
			return err
		}
	}
	if event != "" {
		if _, err := fmt.Fprintf(es.w, "event: %s\n", event); err != nil {
			return err
		}
	}
	if _, err := fmt.Fprintf(es.w, "data: %s\n\n", data); err != nil {
		return err
	}
	return es.rc.Flush()
}

// Close stops the keepalive; no event can be sent afterwards.
func (es *eventStream) Close() {
	es.once.Do(func() {
		es.mu.Lock()
		close(es.done)
		es.mu.Unlock()
	})
}
