package api_test

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"testing"
	"time"
)

// A client of the activity stream that reconnects with the id of the last
// event it got (Last-Event-ID, as browsers do) first gets the events stored
// while it was away, in order, then the new ones.
func TestActivityStreamResumesAfterTheLastEventID(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	name := "resume-" + h.label
	ctx, cancel := context.WithCancel(t.Context())
	events, _ := h.openEvents(ctx, "/api/activity/events?container="+name)
	if ev := <-events; ev.Name != "connected" || ev.ID != "" {
		t.Fatalf("first event = %+v, want connected, without an id", ev)
	}
	id := h.createContainer(name, true, "sleep", "300")
	last := waitActivity(t, h, events, id, "start")
	cancel() // the client goes away

	// Meanwhile the container restarts: events the client missed.
	h.must(200, "POST", "/api/containers/"+id+"/restart?env=1", nil, nil)
	var missed []int64
	deadline := time.Now().Add(60 * time.Second)
	for {
		var page struct{ Events []activityEvent }
		h.must(200, "GET", "/api/activity?container="+name+"&limit=1000", nil, &page)
		missed = missed[:0]
		restarted := false
		for _, e := range page.Events {
			if e.ID > last.ID {
				missed = append(missed, e.ID)
				restarted = restarted || e.Action == "restart"
			}
		}
		if restarted {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the restart of %s was not collected: %+v", name, page.Events)
		}
		time.Sleep(100 * time.Millisecond)
	}
	slices.Sort(missed)

	h.headers["Last-Event-ID"] = strconv.FormatInt(last.ID, 10)
	events, _ = h.openEvents(t.Context(), "/api/activity/events?container="+name)
	delete(h.headers, "Last-Event-ID")
	if ev := <-events; ev.Name != "connected" {
		t.Fatalf("first event = %+v, want connected", ev)
	}
	var got []int64
	timeout := time.After(30 * time.Second)
	for len(got) < len(missed) {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatalf("the stream ended after %v, want %v", got, missed)
			}
			var a activityEvent
			if err := json.Unmarshal([]byte(ev.Data), &a); err != nil {
				t.Fatal(err)
			}
			if ev.ID != strconv.FormatInt(a.ID, 10) {
				t.Errorf("event %s has the SSE id %q", ev.Data, ev.ID)
			}
			got = append(got, a.ID)
		case <-timeout:
			t.Fatalf("resumed stream sent %v, want %v", got, missed)
		}
	}
	if !slices.Equal(got, missed) {
		t.Errorf("resumed stream sent %v, want the missed events %v in order", got, missed)
	}
}
