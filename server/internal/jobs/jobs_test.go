package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/berth-dev/berth/shared/clocktest"
)

func TestFollowReplaysThenStreamsUntilTheEnd(t *testing.T) {
	r := NewRegistry(context.Background(), time.Minute, nil)
	step := make(chan struct{})
	j := r.Start(7, func(ctx context.Context, emit Emit) (string, any, bool) {
		emit("progress", map[string]int{"n": 1})
		<-step
		emit("progress", map[string]int{"n": 2})
		return "result", map[string]string{"status": "complete"}, false
	})
	if j.Owner != 7 || len(j.ID) != 36 {
		t.Fatalf("job = %+v", j)
	}
	var got []string
	first := make(chan struct{})
	done := make(chan error)
	go func() {
		done <- j.Follow(context.Background(), func(e Event) error {
			got = append(got, e.Name+" "+string(e.Data))
			if len(got) == 1 {
				close(first)
			}
			return nil
		})
	}()
	<-first // the replayed event arrived while the job waits
	close(step)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	want := []string{`progress {"n":1}`, `progress {"n":2}`, `result {"status":"complete"}`}
	if len(got) != len(want) {
		t.Fatalf("events = %q", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("event %d = %q, want %q", i, got[i], want[i])
		}
	}
	s := j.Snapshot()
	if s.Status != Done || string(s.Result) != `{"status":"complete"}` || len(s.Lines) != 3 {
		t.Errorf("snapshot = %+v", s)
	}
	// A late follower gets the whole replay.
	n := 0
	if err := j.Follow(context.Background(), func(Event) error { n++; return nil }); err != nil || n != 3 {
		t.Errorf("late follow: %d events, %v", n, err)
	}
}

func TestLeavingNeverCancelsTheJob(t *testing.T) {
	r := NewRegistry(context.Background(), time.Minute, nil)
	release := make(chan struct{})
	j := r.Start(0, func(ctx context.Context, emit Emit) (string, any, bool) {
		select {
		case <-release:
			return "result", "finished", false
		case <-ctx.Done():
			return "result", "cancelled", true
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the client is gone
	if err := j.Follow(ctx, func(Event) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("Follow with a gone client = %v", err)
	}
	close(release)
	s, err := j.Wait(context.Background())
	if err != nil || s.Status != Done || string(s.Result) != `"finished"` {
		t.Fatalf("job after its follower left = %+v, %v", s, err)
	}
}

func TestFailedJobAndTimeout(t *testing.T) {
	r := NewRegistry(context.Background(), 10*time.Millisecond, nil)
	j := r.Start(0, func(ctx context.Context, emit Emit) (string, any, bool) {
		<-ctx.Done() // the registry's timeout ends it
		return "result", map[string]string{"status": "error", "error": ctx.Err().Error()}, true
	})
	s, _ := j.Wait(context.Background())
	var res map[string]string
	_ = json.Unmarshal(s.Result, &res)
	if s.Status != Error || res["error"] != context.DeadlineExceeded.Error() {
		t.Fatalf("snapshot = %+v", s)
	}
}

func TestFinishedJobsAreKeptForTheRetentionOnly(t *testing.T) {
	clock := clocktest.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	r := NewRegistry(context.Background(), time.Minute, clock.Now)
	j := r.Start(0, func(ctx context.Context, emit Emit) (string, any, bool) { return "result", 1, false })
	if _, err := j.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	clock.Advance(Retention)
	if _, ok := r.Get(j.ID); !ok {
		t.Fatal("job gone at exactly the retention")
	}
	clock.Advance(time.Nanosecond)
	if _, ok := r.Get(j.ID); ok {
		t.Fatal("job kept past the retention")
	}
	if _, ok := r.Get("no-such-job"); ok {
		t.Fatal("unknown job found")
	}
}

func TestCancelStopsARunningJobAndForgetsIt(t *testing.T) {
	r := NewRegistry(context.Background(), time.Minute, nil)
	j := r.Start(1, func(ctx context.Context, emit Emit) (string, any, bool) {
		<-ctx.Done()
		return "result", map[string]string{"status": "error", "error": ctx.Err().Error()}, true
	})
	cancelled, ok := r.Cancel(j.ID)
	if !cancelled || !ok {
		t.Fatalf("Cancel(running) = %v, %v; want true, true", cancelled, ok)
	}
	if _, ok := r.Get(j.ID); ok {
		t.Error("a cancelled job is still listed")
	}
	s, err := j.Wait(context.Background())
	if err != nil || s.Status != Error {
		t.Errorf("cancelled job ended %+v, %v; want status error", s, err)
	}
	if cancelled, ok := r.Cancel(j.ID); cancelled || ok {
		t.Errorf("Cancel(forgotten) = %v, %v; want false, false", cancelled, ok)
	}

	done := r.Start(1, func(context.Context, Emit) (string, any, bool) { return "result", nil, false })
	if _, err := done.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if cancelled, ok := r.Cancel(done.ID); cancelled || !ok {
		t.Errorf("Cancel(finished) = %v, %v; want false, true", cancelled, ok)
	}
}
