package api_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

// Every SSE client of /api/events on one environment shares the server's
// one engine event stream of that environment (the activity collector's
// and the notifier's included), and each client gets every event.
func TestEventsClientsShareOneEngineStream(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const clients = 6
	streams := make([]<-chan sseEvent, clients)
	var base int64
	for i := range streams {
		streams[i], _ = h.openEvents(ctx, "/api/events?env=1")
		if first := <-streams[i]; first.Name != "connected" {
			t.Fatalf("client %d: first event = %+v, want connected", i, first)
		}
		if i == 0 {
			// The first client's stream (or the collectors' own, opened
			// before it): connected means open.
			base = h.events.Stats().Streams
			if base < 1 {
				t.Fatalf("engine event streams opened = %d once the first client is connected, want 1", base)
			}
		}
	}
	if got := h.events.Stats().Streams; got != base {
		t.Fatalf("engine event streams opened = %d with %d SSE clients connected, want %d (one per environment)", got, clients, base)
	}
	id := h.createContainer("berth-hub-"+h.label, false, "true")
	for i, ch := range streams {
		waitForEvent(t, ch, i, "container-create", id)
	}
	if got := h.events.Stats().Streams; got != base {
		t.Errorf("engine event streams opened = %d after the events reached every client, want %d", got, base)
	}
}

// waitForEvent reads client i's stream until the event named name of object
// id; it fails when the stream ends first.
func waitForEvent(t *testing.T, ch <-chan sseEvent, i int, name, id string) {
	t.Helper()
	for ev := range ch {
		var data struct{ ID string }
		_ = json.Unmarshal([]byte(ev.Data), &data)
		if ev.Name == name && data.ID == id {
			return
		}
	}
	t.Fatalf("client %d: stream ended before %s of %s", i, name, id)
}
