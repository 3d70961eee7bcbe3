package engine

import (
	"context"
	"sync"
)

// flights coalesces identical reads of one engine (per environment and
// query): many users listing the containers of one engine at once cost it one
// call at a time, not one each.
//
// A read never gets an answer older than itself: it joins the call of its key
// that has not started yet, or, while one is running (it may have read the
// engine before this read was asked for), it queues the next call, which
// every read arriving meanwhile joins. So at most one call per key runs at a
// time, at most one waits, and every answer was read from the engine after
// its request arrived.
type flights struct {
	mu   sync.Mutex
	keys map[string]*flightKey
}

type flightKey struct {
	running *flightCall // started, not finished
	next    *flightCall // starts when running finishes; joined by every new read
}

type flightCall struct {
	done   chan struct{}
	val    any
	err    error
	joined int // reads that wait for it (under flights.mu)
}

// flightTimeout bounds one shared call: it runs on its own context, since
// the reads that wait for it may leave before it ends without cutting it
// short for the others.
const flightTimeout = listTimeout

// coalesce runs fn under key as described on flights and returns its answer
// passed through clone when others read it too, so that callers never share
// what they may change. A
// caller whose ctx ends stops waiting (the call goes on for the others).
func coalesce[T any](ctx context.Context, f *flights, key string, fn func(context.Context) (T, error), clone func(T) T) (T, error) {
	f.mu.Lock()
	if f.keys == nil {
		f.keys = map[string]*flightKey{}
	}
	k := f.keys[key]
	if k == nil {
		k = &flightKey{}
		f.keys[key] = k
	}
	var call *flightCall
	start := false
	switch {
	case k.running == nil:
		call, start = &flightCall{done: make(chan struct{})}, true
		k.running = call
	case k.next != nil:
		call = k.next
	default:
		call = &flightCall{done: make(chan struct{})}
		k.next = call
	}
	call.joined++
	f.mu.Unlock()
	if start {
		go f.run(key, k, call, func(ctx context.Context) (any, error) { return fn(ctx) })
	}
	var zero T
	select {
	case <-call.done:
	case <-ctx.Done():
		return zero, ctx.Err()
	}
	if call.err != nil {
		return zero, call.err
	}
	if call.joined == 1 {
		// Its only reader (joined is final once the call ran): nobody
		// shares the answer, so it needs no copy (half a millisecond for a
		// list of 200 containers).
		return call.val.(T), nil
	}
	return clone(call.val.(T)), nil
}

// run runs call, then the call queued behind it, if any, and so on.
func (f *flights) run(key string, k *flightKey, call *flightCall, fn func(context.Context) (any, error)) {
	for call != nil {
		ctx, cancel := context.WithTimeout(context.Background(), flightTimeout)
		call.val, call.err = fn(ctx)
		cancel()
		close(call.done)
		f.mu.Lock()
		call, k.running, k.next = k.next, k.next, nil
		if call == nil {
			delete(f.keys, key)
		}
		f.mu.Unlock()
	}
}
