package engine_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/berth-dev/berth/shared/engine"
)

func TestEventsReportContainerStart(t *testing.T) {
	c := localClient(t)
	label := newLabel(t)
	probe := createContainer(t, c, label, engine.CreateSpec{Cmd: []string{"true"}})
	name := "berth-test-" + label + "-started"
	target := createContainer(t, c, label, engine.CreateSpec{Name: name, Cmd: []string{"sleep", "300"}})

	ctx, cancel := context.WithCancel(t.Context())
	events := make(chan engine.Event, 64)
	done := make(chan error, 1)
	go func() {
		done <- c.Events(ctx, func(e engine.Event) error {
			if e.ID == probe || e.ID == target {
				select {
				case events <- e:
				case <-ctx.Done():
				}
			}
			return nil
		})
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})

	// The subscription is asynchronous: rename the probe until one of its
	// events arrives, so that the target's start cannot be missed.
	subscribed := false
	for i := 0; !subscribed; i++ {
		if i == 100 {
			t.Fatal("no event for the probe container after 100 renames")
		}
		if err := c.RenameContainer(t.Context(), probe, fmt.Sprintf("berth-test-%s-probe-%d", label, i)); err != nil {
			t.Fatalf("RenameContainer: %v", err)
		}
		select {
		case e := <-events:
			subscribed = e.ID == probe && e.Action == "rename"
		case err := <-done:
			t.Fatalf("Events ended: %v", err)
		case <-time.After(200 * time.Millisecond):
		}
	}

	if err := c.StartContainer(t.Context(), target); err != nil {
		t.Fatalf("StartContainer: %v", err)
	}
	timeout := time.After(30 * time.Second)
	for {
		select {
		case e := <-events:
			if e.ID != target || e.Action != "start" {
				continue // late probe events
			}
			if e.Time == 0 || e.TimeNano/int64(time.Second) != e.Time {
				t.Errorf("start event %+v: its time in seconds and in nanoseconds disagree", e)
			}
			e.Time, e.TimeNano = 0, 0
			want := engine.Event{Type: "container", Action: "start", ID: target, Name: name}
			if diff := cmp.Diff(want, e); diff != "" {
				t.Errorf("start event (-want +got):\n%s", diff)
			}
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Events after cancel = %v, want nil", err)
			}
			done <- nil // for the cleanup
			return
		case err := <-done:
			t.Fatalf("Events ended: %v", err)
		case <-timeout:
			t.Fatal("no start event for the started container")
		}
	}
}

// EventsSince replays what the engine holds from an instant on: a container
// created, started and ended before the subscription is told in order, and
// a subscription from just after its create event starts after it.
func TestEventsSinceReplaysWhatHappenedMeanwhile(t *testing.T) {
	c := localClient(t)
	label := newLabel(t)
	before := time.Now().Add(-time.Second).UnixNano()
	id := createContainer(t, c, label, engine.CreateSpec{Cmd: []string{"true"}})
	if err := c.StartContainer(t.Context(), id); err != nil {
		t.Fatalf("StartContainer: %v", err)
	}
	replay := func(since int64, until string) []engine.Event {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		var got []engine.Event
		err := c.EventsSince(ctx, since, func(e engine.Event) error {
			if e.ID != id {
				return nil
			}
			got = append(got, e)
			if e.Action == until {
				cancel()
			}
			return nil
		})
		if err != nil {
			t.Fatalf("EventsSince: %v", err)
		}
		if len(got) == 0 || got[len(got)-1].Action != until {
			t.Fatalf("replay from %d: %+v, want it to reach %q", since, got, until)
		}
		return got
	}
	all := replay(before, "die")
	var actions []string
	for _, e := range all {
		actions = append(actions, e.Action)
	}
	if diff := cmp.Diff([]string{"create", "start", "die"}, actions); diff != "" {
		t.Errorf("replayed actions (-want +got):\n%s", diff)
	}
	after := replay(all[0].TimeNano+1, "die")
	if after[0].Action == "create" {
		t.Errorf("a replay from after the create event starts with it: %+v", after)
	}
}
