package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/berth-dev/berth/server/internal/store"
)

// Outbox retention: sent and failed messages are deleted this long after
// their last change (they are kept that long so that a server that sees an
// event late still finds it queued), checked every pruneEvery.
const (
	outboxRetention = 7 * 24 * time.Hour
	pruneEvery      = time.Hour
)

// maxRetryDelay bounds the wait before an attempt.
const maxRetryDelay = time.Hour

// deliverLoop sends the messages due in the outbox until Close: at once
// when this server queued some, every Poll for the others (queued by other
// servers, given back, due for another attempt).
func (s *Service) deliverLoop() {
	if n, err := s.o.Store.ReleaseNotificationClaims(s.ctx, s.o.Node); err != nil && s.ctx.Err() == nil {
		s.o.Log.Warn("notification: cannot release the messages this server held before it started", "err", err)
	} else if n > 0 {
		s.o.Log.Info("notification: messages held before a restart are due again", "count", n)
	}
	tick := time.NewTicker(s.o.Poll)
	defer tick.Stop()
	lastPrune := time.Time{}
	for {
		if time.Since(lastPrune) >= pruneEvery {
			lastPrune = time.Now()
			s.prune()
		}
		s.claimDue()
		select {
		case <-s.ctx.Done():
			return
		case <-tick.C:
		case <-s.due:
		}
	}
}

// claimDue claims as many due messages as there are free delivery slots,
// and sends each in the background.
func (s *Service) claimDue() {
	for {
		free := cap(s.slots) - len(s.slots) // only this loop takes slots
		if free == 0 || s.ctx.Err() != nil {
			return
		}
		t := time.Now()
		entries, err := s.o.Store.ClaimNotifications(s.ctx, s.o.Node, t, t.Add(s.o.Lease), free)
		if err != nil {
			if s.ctx.Err() == nil {
				s.o.Log.Warn("notification: cannot claim queued messages", "err", err)
			}
		}
		for _, e := range entries {
			s.slots <- struct{}{}
			s.spawn(func() {
				defer func() { <-s.slots }()
				s.send(e)
			})
		}
		if err != nil || len(entries) < free {
			return
		}
	}
}

// send makes one attempt at the claimed message e and records its outcome.
func (s *Service) send(e store.OutboxEntry) {
	// The outcome is recorded even while the Service closes.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(s.ctx), 10*time.Second)
	defer cancel()
	settle := func(what string, err error) {
		if err != nil {
			s.o.Log.Warn("notification: outcome not recorded", "message", e.ID, "outcome", what, "err", err)
		}
	}
	ch, err := s.o.Store.GetNotificationChannel(s.ctx, e.ChannelID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return // deleted with its channel
	case err != nil:
		if s.ctx.Err() != nil {
			settle("released", s.o.Store.ReleaseNotification(rctx, e.ID, s.o.Node))
			return
		}
		s.retry(rctx, e, err)
		return
	case !ch.Enabled:
		settle("failed", s.o.Store.FailNotification(rctx, e.ID, s.o.Node, "the channel is disabled"))
		return
	}
	cfg, err := ParseConfig(ch.Type, ch.Config)
	if err != nil {
		settle("failed", s.o.Store.FailNotification(rctx, e.ID, s.o.Node, err.Error()))
		s.record(ch.ID, err)
		return
	}
	var ev Event
	if err := json.Unmarshal([]byte(e.Payload), &ev); err != nil {
		settle("failed", s.o.Store.FailNotification(rctx, e.ID, s.o.Node, "unreadable event: "+err.Error()))
		return
	}
	sctx, err := s.o.Outbound.Context(s.ctx)
	if err == nil {
		err = Send(sctx, ch.Type, cfg, Message{Event: ev})
	}
	switch {
	case err == nil:
		settle("sent", s.o.Store.MarkNotificationSent(rctx, e.ID, s.o.Node))
		s.record(ch.ID, nil)
	case s.ctx.Err() != nil:
		// Stopping: the attempt was cut short; the next server makes it.
		settle("released", s.o.Store.ReleaseNotification(rctx, e.ID, s.o.Node))
	default:
		s.o.Log.Warn("notification not delivered", "channel", ch.Name, "type", ch.Type, "event", e.EventType,
			"attempt", e.Attempts, "err", err)
		s.record(ch.ID, fmt.Errorf("attempt %d of %d: %w", e.Attempts, s.o.Attempts, err))
		s.retry(rctx, e, err)
	}
}

// retry makes e due again after its back-off, or fails it after its last
// attempt.
func (s *Service) retry(ctx context.Context, e store.OutboxEntry, cause error) {
	if e.Attempts >= s.o.Attempts {
		if err := s.o.Store.FailNotification(ctx, e.ID, s.o.Node, cause.Error()); err != nil {
			s.o.Log.Warn("notification: outcome not recorded", "message", e.ID, "outcome", "failed", "err", err)
		}
		return
	}
	delay := s.o.RetryDelay << max(e.Attempts-1, 0)
	if delay <= 0 || delay > maxRetryDelay {
		delay = maxRetryDelay
	}
	if err := s.o.Store.RetryNotification(ctx, e.ID, s.o.Node, time.Now().Add(delay), cause.Error()); err != nil {
		s.o.Log.Warn("notification: outcome not recorded", "message", e.ID, "outcome", "retry", "err", err)
		return
	}
	// This server is likely the first to find it due again.
	time.AfterFunc(delay, s.kick)
}

// prune deletes the sent and failed messages past the outbox retention.
func (s *Service) prune() {
	n, err := s.o.Store.PruneNotifications(s.ctx, time.Now().Add(-outboxRetention))
	switch {
	case err != nil && s.ctx.Err() == nil:
		s.o.Log.Warn("notification: old messages not deleted", "err", err)
	case n > 0:
		s.o.Log.Info("notification: old messages deleted", "count", n)
	}
}
