package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"
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

// startEvents answers r with an event stream.
func startEvents(w http.ResponseWriter, r *http.Request) *eventStream {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	es := &eventStream{w: w, rc: http.NewResponseController(w), done: make(chan struct{})}
	_ = es.rc.Flush()
	go es.keepalive(r)
	return es
}

func (es *eventStream) keepalive(r *http.Request) {
	t := time.NewTicker(KeepaliveInterval)
	defer t.Stop()
	for {
		select {
		case <-es.done:
			return
		case <-r.Context().Done():
			return
		case <-t.C:
			es.mu.Lock()
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
