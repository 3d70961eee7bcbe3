package notify

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/berth-dev/berth/server/internal/events"
	"github.com/berth-dev/berth/server/internal/outbound"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
)

// Options configure a Service.
type Options struct {
	Store   *store.Store
	Engines *engine.Manager
	Events  *events.Hub // the engine events of the environments watched
	Log     *slog.Logger
	// Node names this server among those sharing the database (stable
	// across restarts: what it had claimed before is released when it
	// starts again). Default: a name of its own for each Service.
	Node string
	// Attempts is how many times a delivery is tried (default 5); RetryDelay
	// the first wait between attempts, doubled each time (default 2 s).
	Attempts   int
	RetryDelay time.Duration
	// Reconcile is how often the watched environments are re-read from the
	// database, for changes made through another server (default 30 s).
	Reconcile time.Duration
	// Poll is how often the outbox is read for messages due, those queued
	// or given back by other servers (default 2 s); this server's own are
	// sent at once.
	Poll time.Duration
	// Lease is how long a claimed message is this server's to send before
	// another server may take it over (default 1 min).
	Lease time.Duration
	// License, when set, is the installed license whose coming expiry is
	// notified (license_expiring, system-wide).
	License LicenseExpiry
	// Outbound is the outbound policy deliveries follow (nil:
	// outbound.Open).
	Outbound *outbound.Settings
}

// Service dispatches events to channels and delivers them in the
// background: Notify never blocks the operation that calls it. Each message
// is first queued in the database's outbox, once per channel and event
// however many servers see the event, then claimed by one server and sent;
// a failed delivery is tried again later, on whichever server claims it,
// and its error recorded on the channel. Messages still queued when a
// server stops are sent by the next one that runs.
type Service struct {
	o      Options
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex // guards closed and wg.Add against Close
	closed bool
	slots  chan struct{} // bounds concurrent deliveries
	wake   chan struct{} // asks the watcher loop to reconcile now
	due    chan struct{} // asks the delivery loop to claim now
	once   sync.Once
}

// maxDeliveries bounds the deliveries in flight; beyond it messages wait in
// the outbox.
const maxDeliveries = 16

// New returns a Service; Start begins its background work.
func New(o Options) *Service {
	if o.Attempts <= 0 {
		o.Attempts = 5
	}
	if o.RetryDelay <= 0 {
		o.RetryDelay = 2 * time.Second
	}
	if o.Reconcile <= 0 {
		o.Reconcile = 30 * time.Second
	}
	if o.Poll <= 0 {
		o.Poll = 2 * time.Second
	}
	if o.Lease <= 0 {
		o.Lease = time.Minute
	}
	if o.Node == "" {
		o.Node = "notify-" + randomKey()
	}
	if o.Events == nil {
		o.Events = events.NewHub(o.Engines, o.Log, events.HubOptions{})
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Service{o: o, ctx: ctx, cancel: cancel, slots: make(chan struct{}, maxDeliveries),
		wake: make(chan struct{}, 1), due: make(chan struct{}, 1)}
}

// Start runs the watchers of the environments that have subscriptions, the
// disk space check and the delivery of queued messages, until Close.
func (s *Service) Start() {
	s.once.Do(func() {
		s.spawn(s.watchLoop)
		s.spawn(s.diskLoop)
		s.spawn(s.licenseLoop)
		s.spawn(s.deliverLoop)
	})
}

// Close stops the watchers and the deliveries, and waits for them. Messages
// not yet sent stay queued for the next server that runs.
func (s *Service) Close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	s.wg.Wait()
}

// spawn runs fn in a goroutine Close waits for, unless the Service is
// closed.
func (s *Service) spawn(fn func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		fn()
	}()
}

// Changed tells the Service that subscriptions changed, so that it starts or
// stops watching environments now.
func (s *Service) Changed() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Notify queues ev for the channels subscribed to it, in the background,
// and has it delivered. It never blocks and never fails: problems are
// logged and recorded.
func (s *Service) Notify(ev Event) {
	if s == nil || s.ctx.Err() != nil {
		return
	}
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	s.spawn(func() { s.queue(s.ctx, ev) })
}

// queue inserts a message of ev into the outbox for each channel that
// takes it (nothing when another server queued it first), and wakes the
// delivery loop.
func (s *Service) queue(ctx context.Context, ev Event) {
	channels, err := s.recipients(ctx, ev)
	if err != nil {
		if ctx.Err() == nil {
			s.o.Log.Warn("notification: cannot find its channels", "event", ev.Type, "err", err)
		}
		return
	}
	if len(channels) == 0 {
		return
	}
	key := ev.Key
	if key == "" {
		key = "once:" + randomKey()
	}
	payload, err := json.Marshal(ev)
	if err != nil {
		s.o.Log.Warn("notification: cannot encode its event", "event", ev.Type, "err", err)
		return
	}
	entries := make([]store.OutboxEntry, 0, len(channels))
	for _, ch := range channels {
		if _, err := ParseConfig(ch.Type, ch.Config); err != nil {
			s.record(ch.ID, err)
			continue
		}
		entries = append(entries, store.OutboxEntry{ChannelID: ch.ID, DedupeKey: key, EventType: ev.Type,
			Payload: string(payload)})
	}
	added, err := s.o.Store.QueueNotifications(ctx, entries)
	switch {
	case err != nil:
		if ctx.Err() == nil {
			s.o.Log.Warn("notification: not queued", "event", ev.Type, "key", key, "err", err)
		}
		return
	case added < len(entries):
		s.o.Log.Debug("notification: already queued by another server", "event", ev.Type, "key", key,
			"title", ev.Title, "channels", len(entries), "queued", added)
	default:
		s.o.Log.Debug("notification: queued", "event", ev.Type, "key", key, "title", ev.Title, "channels", added)
	}
	if added > 0 {
		s.kick()
	}
}

// kick asks the delivery loop to claim due messages now.
func (s *Service) kick() {
	select {
	case s.due <- struct{}{}:
	default:
	}
}

// recipients are the enabled channels that take ev: those the event's
// environment subscribes to for it, or for a system-wide event every
// channel that takes it.
func (s *Service) recipients(ctx context.Context, ev Event) ([]store.NotificationChannel, error) {
	var out []store.NotificationChannel
	if ev.EnvironmentID == 0 {
		all, err := s.o.Store.ListNotificationChannels(ctx)
		if err != nil {
			return nil, err
		}
		for _, ch := range all {
			if ch.Enabled && wants(ch.EventTypes, ev.Type) {
				out = append(out, ch)
			}
		}
		return out, nil
	}
	subs, err := s.o.Store.ListEnvironmentNotifications(ctx, ev.EnvironmentID)
	if err != nil {
		return nil, err
	}
	for _, sub := range subs {
		if !sub.Enabled {
			continue
		}
		ch, err := s.o.Store.GetNotificationChannel(ctx, sub.NotificationID)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		types := sub.EventTypes
		if len(types) == 0 {
			types = ch.EventTypes
		}
		if ch.Enabled && wants(types, ev.Type) {
			out = append(out, ch)
		}
	}
	return out, nil
}

func (s *Service) record(id int64, err error) {
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if rerr := s.o.Store.RecordNotificationDelivery(ctx, id, msg); rerr != nil && s.ctx.Err() == nil {
		s.o.Log.Warn("notification: cannot record the delivery", "channel", id, "err", rerr)
	}
}

// randomKey is 16 random hex digits.
func randomKey() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Test sends a test message through a channel (saved or not) at once and
// reports the outcome; nothing is retried or recorded. ctx carries the
// outbound policy (outbound.WithPolicy; none: outbound.Open).
func Test(ctx context.Context, typ string, cfg Config, name string) error {
	return Send(ctx, typ, cfg, Message{Event: Event{Type: "test", Title: "Berth test notification",
		Message: fmt.Sprintf("This is a test of the notification channel %q.", strings.TrimSpace(name)), Time: time.Now()}})
}

// Emit notifies an event of environment envID (0: system-wide) that another
// package reports through its own small Notifier interface (auto-update,
// git sync, scans); the environment's name is looked up in the background.
func (s *Service) Emit(envID int64, eventType, title, message string) {
	if s == nil || !KnownEventType(eventType) {
		return
	}
	ev := Event{Type: eventType, EnvironmentID: envID, Title: title, Message: message, Time: time.Now()}
	if envID == 0 {
		s.Notify(ev)
		return
	}
	s.spawn(func() {
		if env, err := s.o.Store.GetEnvironment(s.ctx, envID); err == nil {
			ev.Environment = env.Name
		}
		s.Notify(ev)
	})
}
