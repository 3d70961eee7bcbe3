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
	for i := range streams {
		streams[i], _ = h.openEvents(ctx, "/api/events?env=1")
		if first := <-streams[i]; first.Name != "connected" {
			t.Fatalf("client %d: first event = %+v, want connected", i, first)
		}
	}
	if got := h.events.Stats().Streams; got != 1 {
		t.Fatalf("engine event streams opened = %d with %d SSE clients connected, want 1", got, clients)
	}
	id := h.createContainer("berth-hub-"+h.label, false, "true")
	for i, ch := range streams {
		waitForEvent(t, ch, i, "container-create", id)
	}
	if got := h.events.Stats().Streams; got != 1 {
		t.Errorf("engine event streams opened = %d after the events reached every client, want 1", got)
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
