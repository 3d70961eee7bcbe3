package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// OutboxStatus is where a queued notification stands.
type OutboxStatus string

// The statuses of a queued notification.
const (
	OutboxPending OutboxStatus = "pending" // to be sent (again) at NextAttemptAt
	OutboxSent    OutboxStatus = "sent"
	OutboxFailed  OutboxStatus = "failed" // its last attempt failed
)

// OutboxEntry is one message a notification channel is to get: the event
// it carries (Payload, the notify package's JSON) and its delivery so far.
// A channel gets one entry per DedupeKey, whichever server queues it first.
type OutboxEntry struct {
	ID            int64
	ChannelID     int64
	DedupeKey     string
	EventType     string
	Payload       string
	Status        OutboxStatus
	Attempts      int // started so far (a claim starts one)
	NextAttemptAt time.Time
	ClaimedBy     string     // the server sending it, while ClaimedUntil
	ClaimedUntil  *time.Time // nil when no server holds it
	LastError     string
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

type outboxRow struct {
	ID            int64
	ChannelID     int64
	DedupeKey     string
	EventType     string
	Payload       string
	Status        string
	Attempts      int
	NextAttemptAt dbTime
	ClaimedBy     string
	ClaimedUntil  dbTime
	LastError     string
	CreatedAt     dbTime
	UpdatedAt     dbTime
}

func (outboxRow) TableName() string { return "notification_outbox" }

func (r outboxRow) entry() OutboxEntry {
	return OutboxEntry{ID: r.ID, ChannelID: r.ChannelID, DedupeKey: r.DedupeKey, EventType: r.EventType,
		Payload: r.Payload, Status: OutboxStatus(r.Status), Attempts: r.Attempts, NextAttemptAt: r.NextAttemptAt.Time,
		ClaimedBy: r.ClaimedBy, ClaimedUntil: r.ClaimedUntil.ptr(), LastError: r.LastError,
		CreatedAt: r.CreatedAt.Time, UpdatedAt: r.UpdatedAt.Time}
}

// QueueNotifications inserts entries as pending, due at their NextAttemptAt
// (now when zero), in one transaction, and returns how many it inserted: an
// entry whose channel already has its DedupeKey (another server queued the
// same event), or whose channel is gone, is left out.
func (s *Store) QueueNotifications(ctx context.Context, entries []OutboxEntry) (int, error) {
	t := now()
	added := 0
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		for _, e := range entries {
			due := e.NextAttemptAt
			if due.IsZero() {
				due = t
			}
			r := outboxRow{ChannelID: e.ChannelID, DedupeKey: e.DedupeKey, EventType: e.EventType, Payload: e.Payload,
				Status: string(OutboxPending), NextAttemptAt: timeValue(due.UTC().Truncate(time.Microsecond)),
				CreatedAt: timeValue(t), UpdatedAt: timeValue(t)}
			// A savepoint keeps a PostgreSQL transaction usable after a
			// foreign key violation (a channel deleted meanwhile).
			err := tx.Transaction(func(tx *gorm.DB) error {
				res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&r)
				if res.Error == nil {
					added += int(res.RowsAffected)
				}
				return res.Error
			})
			if err != nil && !isForeignKeyViolation(err) {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("store: queue notifications: %w", err)
	}
	return added, nil
}

// claimable narrows q to the pending entries due at t that no server holds.
func claimable(q *gorm.DB, t time.Time) *gorm.DB {
	return q.Where("status = ? AND next_attempt_at <= ? AND (claimed_until IS NULL OR claimed_until < ?)",
		string(OutboxPending), timeValue(t), timeValue(t))
}

// ClaimNotifications claims for node, until until, at most limit pending
// entries due at t that no server holds (a claim that ran out counts as
// none), the longest due first, and returns them. Each claim starts an
// attempt (Attempts counts it). An entry is claimed by one server only,
// however many claim at once.
func (s *Store) ClaimNotifications(ctx context.Context, node string, t, until time.Time, limit int) ([]OutboxEntry, error) {
	t, until = t.UTC().Truncate(time.Microsecond), until.UTC().Truncate(time.Microsecond)
	var ids []int64
	err := claimable(s.db.WithContext(ctx).Model(&outboxRow{}), t).Order("next_attempt_at, id").Limit(limit).
		Pluck("id", &ids).Error
	if err != nil {
		return nil, fmt.Errorf("store: claim notifications: %w", err)
	}
	var out []OutboxEntry
	for _, id := range ids {
		// The guarded update is the claim: of servers racing for the same
		// entry, the first one's update makes the others' match nothing.
		res := claimable(s.db.WithContext(ctx).Model(&outboxRow{}).Where("id = ?", id), t).
			Updates(map[string]any{"claimed_by": node, "claimed_until": timeValue(until),
				"attempts": gorm.Expr("attempts + 1"), "updated_at": timeValue(now())})
		if res.Error != nil {
			return out, fmt.Errorf("store: claim notification %d: %w", id, res.Error)
		}
		if res.RowsAffected == 0 {
			continue // another server claimed it first
		}
		e, err := s.GetQueuedNotification(ctx, id)
		if err != nil {
			return out, err
		}
		out = append(out, e)
	}
	return out, nil
}

// GetQueuedNotification returns an outbox entry, or ErrNotFound.
func (s *Store) GetQueuedNotification(ctx context.Context, id int64) (OutboxEntry, error) {
	var r outboxRow
	if err := s.db.WithContext(ctx).Where("id = ?", id).Take(&r).Error; err != nil {
		return OutboxEntry{}, fmt.Errorf("store: get queued notification %d: %w", id, translate(err))
	}
	return r.entry(), nil
}

// QueuedNotifications returns the outbox entries of a dedupe key, by
// channel id.
func (s *Store) QueuedNotifications(ctx context.Context, dedupeKey string) ([]OutboxEntry, error) {
	var rows []outboxRow
	if err := s.db.WithContext(ctx).Where("dedupe_key = ?", dedupeKey).Order("channel_id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: queued notifications %q: %w", dedupeKey, err)
	}
	out := make([]OutboxEntry, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.entry())
	}
	return out, nil
}

// settleClaimed updates entry id while node holds it, or answers
// ErrNotFound (its claim ran out and another server took it).
func (s *Store) settleClaimed(ctx context.Context, id int64, node string, fields map[string]any) error {
	fields["claimed_by"], fields["claimed_until"], fields["updated_at"] = "", dbTime{}, timeValue(now())
	return oneRow(s.db.WithContext(ctx).Model(&outboxRow{}).
		Where("id = ? AND status = ? AND claimed_by = ?", id, string(OutboxPending), node).Updates(fields))
}

// MarkNotificationSent records that node sent entry id. ErrNotFound when
// node no longer holds it.
func (s *Store) MarkNotificationSent(ctx context.Context, id int64, node string) error {
	if err := s.settleClaimed(ctx, id, node, map[string]any{"status": string(OutboxSent), "last_error": ""}); err != nil {
		return fmt.Errorf("store: mark notification %d sent: %w", id, err)
	}
	return nil
}

// RetryNotification records that node's attempt at entry id failed with
// deliveryErr and makes it due again at next. ErrNotFound when node no
// longer holds it.
func (s *Store) RetryNotification(ctx context.Context, id int64, node string, next time.Time, deliveryErr string) error {
	err := s.settleClaimed(ctx, id, node, map[string]any{"last_error": deliveryErr,
		"next_attempt_at": timeValue(next.UTC().Truncate(time.Microsecond))})
	if err != nil {
		return fmt.Errorf("store: retry notification %d: %w", id, err)
	}
	return nil
}

// FailNotification records that node's last attempt at entry id failed with
// deliveryErr: it is not tried again. ErrNotFound when node no longer holds
// it.
func (s *Store) FailNotification(ctx context.Context, id int64, node, deliveryErr string) error {
	if err := s.settleClaimed(ctx, id, node, map[string]any{"status": string(OutboxFailed), "last_error": deliveryErr}); err != nil {
		return fmt.Errorf("store: fail notification %d: %w", id, err)
	}
	return nil
}

// ReleaseNotification gives back entry id, which node claimed but did not
// try (it is stopping): due at once again, its attempt not counted.
// ErrNotFound when node no longer holds it.
func (s *Store) ReleaseNotification(ctx context.Context, id int64, node string) error {
	err := s.settleClaimed(ctx, id, node, map[string]any{"attempts": gorm.Expr("attempts - 1")})
	if err != nil {
		return fmt.Errorf("store: release notification %d: %w", id, err)
	}
	return nil
}

// ReleaseNotificationClaims gives back every pending entry node holds: what
// a server that (re)starts under the same node name held before it stopped.
// Their attempts stay counted. It returns how many.
func (s *Store) ReleaseNotificationClaims(ctx context.Context, node string) (int64, error) {
	res := s.db.WithContext(ctx).Model(&outboxRow{}).
		Where("status = ? AND claimed_by = ?", string(OutboxPending), node).
		Updates(map[string]any{"claimed_by": "", "claimed_until": dbTime{}, "updated_at": timeValue(now())})
	if res.Error != nil {
		return 0, fmt.Errorf("store: release notification claims of %s: %w", node, res.Error)
	}
	return res.RowsAffected, nil
}

// PruneNotifications deletes the sent and failed entries last updated
// before t and returns how many. Pending entries stay, however old.
func (s *Store) PruneNotifications(ctx context.Context, before time.Time) (int64, error) {
	res := s.db.WithContext(ctx).Where("status <> ? AND updated_at < ?", string(OutboxPending), timeValue(before)).
		Delete(&outboxRow{})
	if res.Error != nil {
		return 0, fmt.Errorf("store: prune notifications: %w", res.Error)
	}
	return res.RowsAffected, nil
}

// notificationStateRow is a row of the notification_state table.
type notificationStateRow struct {
	Name      string `gorm:"primaryKey"`
	Value     string
	UpdatedAt dbTime
}

func (notificationStateRow) TableName() string { return "notification_state" }

// SwitchNotificationState sets the state name, shared by the servers on the
// database, to value, and reports whether it changed it. A state never set
// stands for absent. Of several servers switching a state to the same value
// at once, exactly one is told it changed it: the one that notifies.
func (s *Store) SwitchNotificationState(ctx context.Context, name, value, absent string) (bool, error) {
	t := timeValue(now())
	res := s.db.WithContext(ctx).Model(&notificationStateRow{}).Where("name = ? AND value <> ?", name, value).
		Updates(map[string]any{"value": value, "updated_at": t})
	if res.Error != nil {
		return false, fmt.Errorf("store: switch notification state %s: %w", name, res.Error)
	}
	if res.RowsAffected > 0 || value == absent {
		return res.RowsAffected > 0, nil
	}
	res = s.db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).
		Create(&notificationStateRow{Name: name, Value: value, UpdatedAt: t})
	if res.Error != nil {
		return false, fmt.Errorf("store: switch notification state %s: %w", name, res.Error)
	}
	return res.RowsAffected > 0, nil
}
