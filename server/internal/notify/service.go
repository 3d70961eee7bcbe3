package notify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/berth-dev/berth/server/internal/events"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
)

// Options configure a Service.
type Options struct {
	Store   *store.Store
	Engines *engine.Manager
	Relay   *events.Relay
	Log     *slog.Logger
	// Attempts is how many times a delivery is tried (default 5); RetryDelay
	// the first wait between attempts, doubled each time (default 2 s).
	Attempts   int
	RetryDelay time.Duration
	// Reconcile is how often the watched environments are re-read from the
	// database, for changes made through another server (default 30 s).
	Reconcile time.Duration
}

// Service dispatches events to channels and delivers them in the
// background: Notify never blocks the operation that calls it, a failed
// delivery is retried with a growing delay and its error recorded on the
// channel.
type Service struct {
	o      Options
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex // guards closed and wg.Add against Close
	closed bool
	slots  chan struct{} // bounds concurrent deliveries
	wake   chan struct{} // asks the watcher loop to reconcile now
	once   sync.Once
}

// maxDeliveries bounds the deliveries in flight; beyond it new ones wait
// (in their own goroutine, never in the caller's).
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
	ctx, cancel := context.WithCancel(context.Background())
	return &Service{o: o, ctx: ctx, cancel: cancel, slots: make(chan struct{}, maxDeliveries), wake: make(chan struct{}, 1)}
}

// Start runs the watchers of the environments that have subscriptions and
// the disk space check, until Close.
func (s *Service) Start() {
	s.once.Do(func() {
		s.spawn(s.watchLoop)
		s.spawn(s.diskLoop)
	})
}

// Close stops the watchers and abandons pending retries, and waits for them.
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

// Notify dispatches ev to the channels subscribed to it, in the background.
// It never blocks and never fails: problems are logged and recorded.
func (s *Service) Notify(ev Event) {
	if s == nil || s.ctx.Err() != nil {
		return
	}
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	s.spawn(func() {
		channels, err := s.recipients(s.ctx, ev)
		if err != nil {
			if s.ctx.Err() == nil {
				s.o.Log.Warn("notification: cannot find its channels", "event", ev.Type, "err", err)
			}
			return
		}
		for _, ch := range channels {
			s.deliver(ch, ev)
		}
	})
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

// Deliver sends ev through ch in the background, with retries.
func (s *Service) deliver(ch store.NotificationChannel, ev Event) {
	cfg, err := ParseConfig(ch.Type, ch.Config)
	if err != nil {
		s.record(ch.ID, err)
		return
	}
	s.spawn(func() {
		select {
		case s.slots <- struct{}{}:
		case <-s.ctx.Done():
			return
		}
		defer func() { <-s.slots }()
		delay := s.o.RetryDelay
		for attempt := 1; ; attempt++ {
			err := Send(s.ctx, ch.Type, cfg, Message{Event: ev})
			if err == nil {
				s.record(ch.ID, nil)
				return
			}
			if s.ctx.Err() != nil {
				return
			}
			s.o.Log.Warn("notification not delivered", "channel", ch.Name, "type", ch.Type, "event", ev.Type,
				"attempt", attempt, "err", err)
			s.record(ch.ID, fmt.Errorf("attempt %d of %d: %w", attempt, s.o.Attempts, err))
			if attempt >= s.o.Attempts {
				return
			}
			select {
			case <-s.ctx.Done():
				return
			case <-time.After(delay):
			}
			delay *= 2
		}
	})
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

// Test sends a test message through a channel (saved or not) at once and
// reports the outcome; nothing is retried or recorded.
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
