// Package events follows the engine events of environments, under the names
// the API uses ("container-start", "container-die", …): one engine event
// stream per environment, shared by every subscriber (SSE clients of
// /api/events, the activity collector, the notifier), and a containers-list
// cache kept exact by that stream.
package events

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
)

// Event is one relayed engine occurrence.
type Event struct {
	Name   string // "<type>-<action>", e.g. container-start
	ID     string
	Object string // the object's name, when the engine gives one
	Time   int64  // when the engine saw it, Unix seconds
	// TimeNano is the same in Unix nanoseconds (0 if the engine gave none).
	TimeNano int64
}

// Notice is what a subscription receives: an engine event, or, with Offline
// set (and Event zero), word that the environment's engine cannot be reached
// or its stream broke; the hub reconnects by itself and events follow again.
type Notice struct {
	Event   Event
	Offline error
}

// Errors a subscription ends with (Subscription.Err).
var (
	// ErrLagged: the subscriber did not take its notices as fast as they
	// came and its buffer filled up; it was dropped so that it never holds
	// up the others. What came after is lost to it.
	ErrLagged = errors.New("events: the subscriber fell behind and was dropped")
	// ErrClosed: the hub was closed.
	ErrClosed = errors.New("events: hub closed")
)

// Retry bounds of the reconnection to an engine whose event stream failed.
const (
	retryMin = time.Second
	retryMax = 30 * time.Second
)

// Defaults of HubOptions.
const (
	defaultLinger     = 30 * time.Second
	defaultListHold   = 2 * time.Minute
	defaultListMaxAge = time.Second
	// settle is how long after the engine answered the event request the
	// stream is taken to be subscribed (the engine subscribes it right after
	// answering) when no event proved it yet: until then the containers-list
	// cache is not used.
	settle = 250 * time.Millisecond
)

// Buffer sizes of subscriptions: an SSE client, and Berth's own followers
// (which store or notify each event and must rarely lose one). A follower's
// notices wait in a queue that grows with its backlog (noticeQueue), not in
// a channel's buffer: a channel's ring touches every one of its slots as
// notices pass through it, so a 4096-slot channel of notices (80 bytes each)
// ends up resident in full, 320 KB per follower and environment, even when
// it never holds more than one.
const (
	ClientBuffer = 256
	followBuffer = 4096
)

// HubOptions tune a Hub; zero fields take the defaults.
type HubOptions struct {
	// Linger is how long an environment's engine stream stays open after its
	// last subscriber left (default 30 s): a client reconnecting meanwhile
	// does not cost a new stream.
	Linger time.Duration
	// ListHold is how long a containers list read keeps the environment's
	// stream (which keeps the cache exact) open without any subscriber
	// (default 2 min).
	ListHold time.Duration
	// ListMaxAge bounds the age of a cached containers list (default 1 s):
	// the engine's status texts ("Up 5 seconds") age without events.
	ListMaxAge time.Duration
}

// Hub follows each environment's engine events with one stream, opened for
// the first subscriber and closed Linger after the last one left, and fans
// them out to every subscriber through a bounded buffer of its own.
type Hub struct {
	engines *engine.Manager
	log     *slog.Logger
	o       HubOptions

	mu     sync.Mutex
	envs   map[int64]*stream
	closed bool

	opened atomic.Int64 // engine event streams opened
	hits   atomic.Int64 // containers lists served from the cache
	fills  atomic.Int64 // containers lists stored in the cache
}

// NewHub returns a Hub over engines. It listens to engines' writes
// (engine.Manager.OnWrite) to keep its containers-list cache exact.
func NewHub(engines *engine.Manager, log *slog.Logger, o HubOptions) *Hub {
	if o.Linger <= 0 {
		o.Linger = defaultLinger
	}
	if o.ListHold <= 0 {
		o.ListHold = defaultListHold
	}
	if o.ListMaxAge <= 0 {
		o.ListMaxAge = defaultListMaxAge
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	h := &Hub{engines: engines, log: log, o: o, envs: map[int64]*stream{}}
	if engines != nil {
		engines.OnWrite(h.Invalidate)
	}
	return h
}

// Stats are counters of a Hub since it was made.
type Stats struct {
	Streams   int64 // engine event streams opened (reconnections included)
	Following int   // environments followed now
	ListHits  int64 // containers lists served from the cache
	ListFills int64 // containers lists read from the engine and kept
}

// Stats returns the hub's counters.
func (h *Hub) Stats() Stats {
	h.mu.Lock()
	n := len(h.envs)
	h.mu.Unlock()
	return Stats{Streams: h.opened.Load(), Following: n, ListHits: h.hits.Load(), ListFills: h.fills.Load()}
}

// Following reports whether the hub holds an engine stream (open or being
// reopened) for environment envID.
func (h *Hub) Following(envID int64) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.envs[envID]
	return ok
}

// stream is the follower of one environment. Its fields are under Hub.mu.
type stream struct {
	env       store.Environment // the newest version seen
	subs      map[*Subscription]struct{}
	holdUntil time.Time // a list read keeps the stream until then
	stop      context.CancelFunc
	timer     *time.Timer        // stops the stream when idle
	reconnect context.CancelFunc // ends the current engine stream (the environment changed)
	changed   chan struct{}      // ends the wait before a retry (the environment changed)

	state    int // connecting, open or down
	lastErr  error
	openedAt time.Time
	sawEvent bool // since the engine stream opened
	gen      uint64
	lists    [2]*listEntry // containers (running, all) as of gen
}

// States of a stream.
const (
	connecting = iota
	open
	down
)

// Subscription receives the notices of one environment on C until Close,
// or until the hub drops it (C is closed; Err tells why).
type Subscription struct {
	C <-chan Notice

	c      chan Notice
	queue  *noticeQueue // a follower's (Follow): c and C are nil
	ready  chan struct{}
	h      *Hub
	st     *stream
	err    error // under Hub.mu
	closed bool  // under Hub.mu: c is closed
	isDone bool  // under Hub.mu: ready is closed
}

// Ready is closed once the environment's engine stream has opened or failed
// (at once when it already had): what follows on C is then the engine's.
func (s *Subscription) Ready() <-chan struct{} { return s.ready }

// Err is why C was closed: ErrLagged or ErrClosed (nil before).
func (s *Subscription) Err() error {
	s.h.mu.Lock()
	defer s.h.mu.Unlock()
	return s.err
}

// Close ends the subscription.
func (s *Subscription) Close() {
	s.h.mu.Lock()
	defer s.h.mu.Unlock()
	s.h.dropLocked(s.st, s, nil)
}

// noticeQueue holds a follower's notices until it takes them: at most max;
// wake (capacity 1) is signalled when one is queued and closed when the
// subscription ends.
type noticeQueue struct {
	mu   sync.Mutex
	q    []Notice
	max  int
	wake chan struct{}
}

// push queues n, or reports that the queue is full.
func (q *noticeQueue) push(n Notice) bool {
	q.mu.Lock()
	if len(q.q) >= q.max {
		q.mu.Unlock()
		return false
	}
	q.q = append(q.q, n)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
	return true
}

// take returns the queued notices, leaving spare (emptied) as the queue.
func (q *noticeQueue) take(spare []Notice) []Notice {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.q
	q.q = spare[:0]
	return out
}

// deliverLocked hands n to s, or reports that its buffer is full.
func (s *Subscription) deliverLocked(n Notice) bool {
	if s.queue != nil {
		return s.queue.push(n)
	}
	select {
	case s.c <- n:
		return true
	default:
		return false
	}
}

// endLocked closes what s's notices arrive on.
func (s *Subscription) endLocked() {
	if s.queue != nil {
		close(s.queue.wake)
		return
	}
	close(s.c)
}

// Subscribe starts a subscription to env's events with a buffer of size
// notices, opening the environment's engine stream if none is open. An
// environment known to be unreachable is reported on C at once.
func (h *Hub) Subscribe(env store.Environment, size int) *Subscription {
	c := make(chan Notice, max(size, 1))
	return h.subscribe(env, &Subscription{C: c, c: c, ready: make(chan struct{}), h: h})
}

func (h *Hub) subscribe(env store.Environment, sub *Subscription) *Subscription {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		sub.err, sub.closed, sub.isDone = ErrClosed, true, true
		sub.endLocked()
		close(sub.ready)
		return sub
	}
	st := h.streamLocked(env)
	sub.st = st
	st.subs[sub] = struct{}{}
	if st.timer != nil {
		st.timer.Stop()
		st.timer = nil
	}
	switch st.state {
	case open:
		sub.readyLocked()
	case down:
		sub.readyLocked()
		sub.deliverLocked(Notice{Offline: st.lastErr})
	}
	return sub
}

func (s *Subscription) readyLocked() {
	if !s.isDone {
		s.isDone = true
		close(s.ready)
	}
}

// Follow calls emit for each event of env until ctx ends (nil), emit or
// offline fails (that error), or the hub drops the subscription (ErrLagged,
// ErrClosed). While the engine cannot be reached offline is called with the
// cause, at each failed attempt; the hub reconnects by itself, asking the
// engine for the events after the last one it relayed, so that none is lost
// across a reconnection (those the engine still holds).
func (h *Hub) Follow(ctx context.Context, env store.Environment, emit func(Event) error, offline func(error) error) error {
	q := &noticeQueue{max: followBuffer, wake: make(chan struct{}, 1)}
	sub := h.subscribe(env, &Subscription{queue: q, ready: make(chan struct{}), h: h})
	defer sub.Close()
	handle := func(batch []Notice) error {
		for i, n := range batch {
			if ctx.Err() != nil {
				return nil
			}
			var err error
			if n.Offline != nil {
				err = offline(n.Offline)
			} else {
				err = emit(n.Event)
			}
			batch[i] = Notice{}
			if err != nil {
				return err
			}
		}
		return nil
	}
	var spare []Notice
	for {
		batch := q.take(spare)
		if len(batch) == 0 {
			spare = batch
			select {
			case <-ctx.Done():
				return nil
			case _, ok := <-q.wake:
				if !ok { // ended: what was queued before still counts
					if err := handle(q.take(nil)); err != nil || ctx.Err() != nil {
						return err
					}
					return sub.Err()
				}
			}
			continue
		}
		if err := handle(batch); err != nil || ctx.Err() != nil {
			return err
		}
		spare = nil
		if cap(batch) <= 64 { // a burst's large backing array is not kept
			spare = batch
		}
	}
}

// Close stops every stream and ends every subscription (ErrClosed).
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for id, st := range h.envs {
		for sub := range st.subs {
			h.dropLocked(st, sub, ErrClosed)
		}
		h.stopLocked(id, st)
	}
}

// streamLocked returns env's stream, starting it if needed. A newer version
// of the environment (its connection settings changed) replaces the one the
// stream follows, which reconnects.
func (h *Hub) streamLocked(env store.Environment) *stream {
	st := h.envs[env.ID]
	if st == nil {
		ctx, stop := context.WithCancel(context.Background())
		st = &stream{env: env, subs: map[*Subscription]struct{}{}, stop: stop, changed: make(chan struct{}, 1)}
		h.envs[env.ID] = st
		go h.follow(ctx, st)
		return st
	}
	if env.UpdatedAt.After(st.env.UpdatedAt) {
		st.env = env
		h.resetLocked(st)
		if st.reconnect != nil {
			st.reconnect()
		}
		select {
		case st.changed <- struct{}{}:
		default:
		}
	}
	return st
}

// dropLocked ends sub with err (nil: its own Close) and schedules the stop
// of st when sub was its last subscriber.
func (h *Hub) dropLocked(st *stream, sub *Subscription, err error) {
	if sub.closed {
		return
	}
	sub.closed, sub.err = true, err
	sub.endLocked()
	sub.readyLocked()
	if st == nil {
		return
	}
	delete(st.subs, sub)
	if errors.Is(err, ErrLagged) {
		h.log.Warn("events: a subscriber fell behind and was dropped", "env", st.env.ID)
	}
	if len(st.subs) == 0 && !h.closed {
		h.scheduleStopLocked(st)
	}
}

// scheduleStopLocked stops st once it has had no subscriber for Linger and
// no list read holds it.
func (h *Hub) scheduleStopLocked(st *stream) {
	if st.timer != nil {
		return
	}
	wait := h.o.Linger
	if d := time.Until(st.holdUntil); d > wait {
		wait = d
	}
	st.timer = time.AfterFunc(wait, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		st.timer = nil
		if h.envs[st.env.ID] != st || len(st.subs) > 0 {
			return
		}
		if time.Now().Before(st.holdUntil) {
			h.scheduleStopLocked(st)
			return
		}
		h.stopLocked(st.env.ID, st)
	})
}

func (h *Hub) stopLocked(id int64, st *stream) {
	if st.timer != nil {
		st.timer.Stop()
		st.timer = nil
	}
	st.stop()
	h.resetLocked(st)
	if h.envs[id] == st {
		delete(h.envs, id)
	}
}

// resetLocked forgets what st's cache holds: whatever was read before this
// instant is no longer known to be current.
func (h *Hub) resetLocked(st *stream) {
	st.gen++
	st.lists = [2]*listEntry{}
}

// follow runs st's engine stream until ctx ends, reconnecting with a growing
// delay when the engine cannot be reached or its stream breaks.
func (h *Hub) follow(ctx context.Context, st *stream) {
	delay := retryMin
	// resume is where a reconnection asks the engine to start (Unix ns):
	// after the last event relayed, or, before any, when the first stream
	// opened (this server's clock, which the engine's is taken to match).
	var resume int64
	for {
		h.mu.Lock()
		env := st.env
		h.mu.Unlock()
		c, err := h.engines.Client(ctx, env.Endpoint())
		if err == nil {
			cctx, cancel := context.WithCancel(ctx)
			h.mu.Lock()
			st.reconnect = cancel
			h.mu.Unlock()
			start := time.Now()
			err = c.EventsOpened(cctx, resume, func() {
				h.opened.Add(1)
				if resume == 0 {
					resume = time.Now().UnixNano()
				}
				if !h.setOpen(st, env) {
					cancel() // the environment changed while this stream opened: follow its new version
				}
			}, func(ev engine.Event) error {
				if ev.TimeNano >= resume {
					resume = ev.TimeNano + 1
				}
				h.publish(st, ev)
				return nil
			})
			reconnect := cctx.Err() != nil && ctx.Err() == nil
			cancel()
			if ctx.Err() != nil {
				return
			}
			if reconnect { // the environment changed: follow its new version at once
				h.setDown(st, nil)
				delay = retryMin
				continue
			}
			if err == nil {
				err = errors.New("the engine ended its event stream")
			}
			if time.Since(start) > retryMax {
				delay = retryMin // the stream worked for a while: retry soon
			}
		}
		if ctx.Err() != nil {
			return
		}
		h.setDown(st, err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
			delay = min(delay*2, retryMax)
		case <-st.changed: // new settings: worth trying at once
			delay = retryMin
		}
	}
}

// setOpen records that st's engine stream, opened for env, is open, unless
// the environment changed meanwhile (false).
func (h *Hub) setOpen(st *stream, env store.Environment) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !st.env.UpdatedAt.Equal(env.UpdatedAt) {
		return false
	}
	st.state, st.lastErr, st.openedAt, st.sawEvent = open, nil, time.Now(), false
	h.resetLocked(st)
	for sub := range st.subs {
		sub.readyLocked()
	}
	return true
}

// setDown records that st's engine stream is not open; with a cause, every
// subscriber is told the environment is offline.
func (h *Hub) setDown(st *stream, cause error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.resetLocked(st)
	if cause == nil {
		st.state = connecting
		return
	}
	st.state, st.lastErr = down, cause
	h.fanOutLocked(st, Notice{Offline: cause})
}

// publish relays ev to st's subscribers and invalidates what it changes.
func (h *Hub) publish(st *stream, ev engine.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	st.sawEvent = true
	if changesList(ev) {
		h.resetLocked(st)
	}
	h.fanOutLocked(st, Notice{Event: Event{Name: ev.Type + "-" + ev.Action, ID: ev.ID, Object: ev.Name, Time: ev.Time,
		TimeNano: ev.TimeNano}})
}

// fanOutLocked hands n to every subscriber of st without ever waiting: one
// whose buffer is full is dropped (ErrLagged).
func (h *Hub) fanOutLocked(st *stream, n Notice) {
	for sub := range st.subs {
		sub.readyLocked()
		if !sub.deliverLocked(n) {
			h.dropLocked(st, sub, ErrLagged)
		}
	}
}
