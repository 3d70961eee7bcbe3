package engine

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// gatedRead is a read whose calls block until released, counting calls and
// answering the number of the call that served it.
type gatedRead struct {
	calls   atomic.Int64
	started chan int64
	release chan struct{}
}

func newGatedRead() *gatedRead {
	return &gatedRead{started: make(chan int64, 16), release: make(chan struct{})}
}

func (g *gatedRead) fn(ctx context.Context) ([]int64, error) {
	n := g.calls.Add(1)
	g.started <- n
	select {
	case <-g.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return []int64{n}, nil
}

func cloneInts(v []int64) []int64 { return append([]int64{}, v...) }

func TestCoalescedReadsShareCallsAndNeverGetAnAnswerOlderThanThemselves(t *testing.T) {
	var f flights
	g := newGatedRead()
	type result struct {
		v   []int64
		err error
	}
	read := func() chan result {
		ch := make(chan result, 1)
		go func() {
			v, err := coalesce(t.Context(), &f, "k", g.fn, cloneInts)
			ch <- result{v, err}
		}()
		return ch
	}

	first := read()
	if n := <-g.started; n != 1 {
		t.Fatalf("first call = %d", n)
	}
	// Call 1 is running: it may have read the engine before these arrived,
	// so they must not get its answer; they all share call 2.
	var later []chan result
	for range 10 {
		later = append(later, read())
	}
	waitFor(t, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.keys["k"] != nil && f.keys["k"].next != nil && f.keys["k"].next.joined == 10
	})
	g.release <- struct{}{} // ends call 1
	if r := <-first; r.err != nil || r.v[0] != 1 {
		t.Fatalf("first read = %+v, want call 1", r)
	}
	if n := <-g.started; n != 2 {
		t.Fatalf("second call = %d", n)
	}
	close(g.release)
	for i, ch := range later {
		r := <-ch
		if r.err != nil || len(r.v) != 1 || r.v[0] != 2 {
			t.Errorf("later read %d = %+v, want call 2's answer", i, r)
		}
		r.v[0] = -1 // each has its own copy
	}
	if got := g.calls.Load(); got != 2 {
		t.Errorf("engine calls = %d for 11 reads, want 2", got)
	}
	// Nothing is left behind: the next read makes a call of its own.
	if v, err := coalesce(t.Context(), &f, "k", g.fn, cloneInts); err != nil || v[0] != 3 {
		t.Errorf("read after all = %v, %v; want call 3", v, err)
	}
	waitFor(t, func() bool { // the last call's runner lets go of its key
		f.mu.Lock()
		defer f.mu.Unlock()
		return len(f.keys) == 0
	})
}

func TestACoalescedReaderThatLeavesDoesNotCutTheCallShortForOthers(t *testing.T) {
	var f flights
	g := newGatedRead()
	ctx, cancel := context.WithCancel(t.Context())
	left := make(chan error, 1)
	go func() {
		_, err := coalesce(ctx, &f, "k", g.fn, cloneInts)
		left <- err
	}()
	<-g.started
	var wg sync.WaitGroup
	var got []int64
	wg.Add(1)
	go func() { // joins the queued call 2
		defer wg.Done()
		got, _ = coalesce(t.Context(), &f, "k", g.fn, cloneInts)
	}()
	waitFor(t, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.keys["k"].next != nil
	})
	cancel()
	if err := <-left; !errors.Is(err, context.Canceled) {
		t.Fatalf("reader that left = %v, want canceled", err)
	}
	close(g.release) // call 1 ends normally although its first reader left; call 2 runs
	wg.Wait()
	if len(got) != 1 || got[0] != 2 {
		t.Errorf("other reader = %v, want call 2's answer", got)
	}
}

func TestCoalescedReadsShareAFailure(t *testing.T) {
	var f flights
	boom := errors.New("boom")
	_, err := coalesce(t.Context(), &f, "k", func(context.Context) ([]int64, error) { return nil, boom }, cloneInts)
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 5 s")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestALoneCoalescedReadGetsTheAnswerUncopied: a copy is made for each read
// that shares a call, none for the only one.
func TestALoneCoalescedReadGetsTheAnswerUncopied(t *testing.T) {
	var f flights
	var copies atomic.Int64
	clone := func(v []int64) []int64 { copies.Add(1); return cloneInts(v) }
	g := newGatedRead()
	close(g.release)
	if v, err := coalesce(t.Context(), &f, "k", g.fn, clone); err != nil || v[0] != 1 || copies.Load() != 0 {
		t.Fatalf("lone read = %v, %v after %d copies; want call 1, no copy", v, err, copies.Load())
	}
	// Two reads queued behind a running call share the next one: each
	// gets a copy of its own.
	g2 := newGatedRead()
	first := make(chan []int64, 1)
	go func() { v, _ := coalesce(t.Context(), &f, "k", g2.fn, clone); first <- v }()
	<-g2.started
	out := make(chan []int64, 2)
	for range 2 {
		go func() { v, _ := coalesce(t.Context(), &f, "k", g2.fn, clone); out <- v }()
	}
	waitFor(t, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.keys["k"] != nil && f.keys["k"].next != nil && f.keys["k"].next.joined == 2
	})
	close(g2.release)
	<-first
	a, b := <-out, <-out
	if a[0] != 2 || b[0] != 2 || &a[0] == &b[0] || copies.Load() != 2 {
		t.Errorf("shared reads = %v %v after %d copies; want call 2's answer, one copy each", a, b, copies.Load())
	}
}
