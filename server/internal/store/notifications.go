package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// NotificationChannel is a destination of notifications (an SMTP server, a
// webhook, a chat service). Config is the type's settings as JSON, plaintext
// in memory and sealed whole at rest (it holds passwords, tokens and URLs
// that carry tokens). EventTypes empty means every event.
type NotificationChannel struct {
	ID          int64
	Type        string
	Name        string
	Enabled     bool
	Config      json.RawMessage
	EventTypes  []string
	LastError   string
	LastErrorAt *time.Time
	LastSentAt  *time.Time
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

type notificationChannelRow struct {
	ID          int64
	Type        string
	Name        string
	Enabled     bool
	Config      string
	EventTypes  string
	LastError   string
	LastErrorAt dbTime
	LastSentAt  dbTime
	CreatedAt   dbTime
	UpdatedAt   dbTime
}

func (notificationChannelRow) TableName() string { return "notification_channels" }

// EnvironmentNotification subscribes an environment to a channel.
// EventTypes empty means the channel's own event types.
type EnvironmentNotification struct {
	ID             int64
	EnvironmentID  int64
	NotificationID int64
	Enabled        bool
	EventTypes     []string
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

type environmentNotificationRow struct {
	ID             int64
	EnvironmentID  int64
	NotificationID int64
	Enabled        bool
	EventTypes     string
	CreatedAt      dbTime
	UpdatedAt      dbTime
}

func (environmentNotificationRow) TableName() string { return "environment_notifications" }

func encodeEventTypes(v []string) string {
	if v == nil {
		v = []string{}
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func decodeEventTypes(s string) ([]string, error) {
	out := []string{}
	if s == "" {
		return out, nil
	}
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		return nil, fmt.Errorf("event types: %w", err)
	}
	return out, nil
}

func timePtr(d dbTime) *time.Time {
	if !d.Valid {
		return nil
	}
	t := d.Time
	return &t
}

func (s *Store) notificationChannel(r notificationChannelRow) (NotificationChannel, error) {
	cfg, err := s.box.Decrypt(r.Config)
	if err != nil {
		return NotificationChannel{}, fmt.Errorf("notification %d: config: %w", r.ID, err)
	}
	types, err := decodeEventTypes(r.EventTypes)
	if err != nil {
		return NotificationChannel{}, fmt.Errorf("notification %d: %w", r.ID, err)
	}
	if cfg == "" {
		cfg = "{}"
	}
	return NotificationChannel{ID: r.ID, Type: r.Type, Name: r.Name, Enabled: r.Enabled, Config: json.RawMessage(cfg),
		EventTypes: types, LastError: r.LastError, LastErrorAt: timePtr(r.LastErrorAt), LastSentAt: timePtr(r.LastSentAt),
		CreatedAt: r.CreatedAt.Time, UpdatedAt: r.UpdatedAt.Time}, nil
}

// ListNotificationChannels returns every channel ordered by id.
func (s *Store) ListNotificationChannels(ctx context.Context) ([]NotificationChannel, error) {
	var rows []notificationChannelRow
	if err := s.db.WithContext(ctx).Order("id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: list notification channels: %w", err)
	}
	out := make([]NotificationChannel, 0, len(rows))
	for _, r := range rows {
		ch, err := s.notificationChannel(r)
		if err != nil {
			return nil, fmt.Errorf("store: list notification channels: %w", err)
		}
		out = append(out, ch)
	}
	return out, nil
}

// GetNotificationChannel returns a channel, or ErrNotFound.
func (s *Store) GetNotificationChannel(ctx context.Context, id int64) (NotificationChannel, error) {
	var r notificationChannelRow
	if err := s.db.WithContext(ctx).Where("id = ?", id).Take(&r).Error; err != nil {
		return NotificationChannel{}, fmt.Errorf("store: get notification channel %d: %w", id, translate(err))
	}
	ch, err := s.notificationChannel(r)
	if err != nil {
		return NotificationChannel{}, fmt.Errorf("store: get notification channel %d: %w", id, err)
	}
	return ch, nil
}

// CreateNotificationChannel inserts ch (ErrConflict on a taken name).
func (s *Store) CreateNotificationChannel(ctx context.Context, ch *NotificationChannel) error {
	cfg, err := s.box.Encrypt(string(ch.Config))
	if err != nil {
		return fmt.Errorf("store: create notification channel: %w", err)
	}
	t := now()
	row := notificationChannelRow{Type: ch.Type, Name: ch.Name, Enabled: ch.Enabled, Config: cfg,
		EventTypes: encodeEventTypes(ch.EventTypes), CreatedAt: timeValue(t), UpdatedAt: timeValue(t)}
	if err := s.db.WithContext(ctx).Create(&row).Error; err != nil {
		return fmt.Errorf("store: create notification channel %q: %w", ch.Name, translate(err))
	}
	ch.ID, ch.CreatedAt, ch.UpdatedAt = row.ID, t, t
	return nil
}

// UpdateNotificationChannel writes the settings of ch by ID (not its
// delivery record).
func (s *Store) UpdateNotificationChannel(ctx context.Context, ch *NotificationChannel) error {
	cfg, err := s.box.Encrypt(string(ch.Config))
	if err != nil {
		return fmt.Errorf("store: update notification channel: %w", err)
	}
	t := now()
	err = oneRow(s.db.WithContext(ctx).Model(&notificationChannelRow{}).Where("id = ?", ch.ID).Updates(map[string]any{
		"type": ch.Type, "name": ch.Name, "enabled": ch.Enabled, "config": cfg,
		"event_types": encodeEventTypes(ch.EventTypes), "updated_at": timeValue(t),
	}))
	if err != nil {
		return fmt.Errorf("store: update notification channel %d: %w", ch.ID, err)
	}
	ch.UpdatedAt = t
	return nil
}

// DeleteNotificationChannel deletes a channel and its subscriptions, or
// answers ErrNotFound.
func (s *Store) DeleteNotificationChannel(ctx context.Context, id int64) error {
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Where("notification_id = ?", id).Delete(&environmentNotificationRow{}).Error; err != nil {
			return err
		}
		return oneRow(tx.Where("id = ?", id).Delete(&notificationChannelRow{}))
	})
	if err != nil {
		return fmt.Errorf("store: delete notification channel %d: %w", id, err)
	}
	return nil
}

// RecordNotificationDelivery notes the outcome of a delivery to a channel:
// a success clears the last error; a failure records it. A channel deleted
// meanwhile is not an error.
func (s *Store) RecordNotificationDelivery(ctx context.Context, id int64, deliveryErr string) error {
	t := now()
	fields := map[string]any{"last_sent_at": timeValue(t), "last_error": ""}
	if deliveryErr != "" {
		fields = map[string]any{"last_error": deliveryErr, "last_error_at": timeValue(t)}
	}
	if err := s.db.WithContext(ctx).Model(&notificationChannelRow{}).Where("id = ?", id).Updates(fields).Error; err != nil {
		return fmt.Errorf("store: record notification delivery %d: %w", id, err)
	}
	return nil
}

func environmentNotification(r environmentNotificationRow) (EnvironmentNotification, error) {
	types, err := decodeEventTypes(r.EventTypes)
	if err != nil {
		return EnvironmentNotification{}, fmt.Errorf("environment notification %d: %w", r.ID, err)
	}
	return EnvironmentNotification{ID: r.ID, EnvironmentID: r.EnvironmentID, NotificationID: r.NotificationID,
		Enabled: r.Enabled, EventTypes: types, CreatedAt: r.CreatedAt.Time, UpdatedAt: r.UpdatedAt.Time}, nil
}

func environmentNotifications(rows []environmentNotificationRow) ([]EnvironmentNotification, error) {
	out := make([]EnvironmentNotification, 0, len(rows))
	for _, r := range rows {
		n, err := environmentNotification(r)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// ListEnvironmentNotifications returns the subscriptions of an environment
// ordered by channel id.
func (s *Store) ListEnvironmentNotifications(ctx context.Context, envID int64) ([]EnvironmentNotification, error) {
	var rows []environmentNotificationRow
	if err := s.db.WithContext(ctx).Where("environment_id = ?", envID).Order("notification_id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: list notifications of environment %d: %w", envID, err)
	}
	out, err := environmentNotifications(rows)
	if err != nil {
		return nil, fmt.Errorf("store: list notifications of environment %d: %w", envID, err)
	}
	return out, nil
}

// SubscribedEnvironments returns the ids of the environments with at least
// one enabled subscription.
func (s *Store) SubscribedEnvironments(ctx context.Context) ([]int64, error) {
	var ids []int64
	if err := s.db.WithContext(ctx).Model(&environmentNotificationRow{}).Where("enabled = ?", true).
		Distinct("environment_id").Order("environment_id").Pluck("environment_id", &ids).Error; err != nil {
		return nil, fmt.Errorf("store: subscribed environments: %w", err)
	}
	return ids, nil
}

// GetEnvironmentNotification returns one subscription, or ErrNotFound.
func (s *Store) GetEnvironmentNotification(ctx context.Context, envID, notificationID int64) (EnvironmentNotification, error) {
	var r environmentNotificationRow
	if err := s.db.WithContext(ctx).Where("environment_id = ? AND notification_id = ?", envID, notificationID).
		Take(&r).Error; err != nil {
		return EnvironmentNotification{}, fmt.Errorf("store: get notification %d of environment %d: %w", notificationID, envID, translate(err))
	}
	return environmentNotification(r)
}

// SaveEnvironmentNotification creates the subscription of n's environment to
// n's channel, or updates it (create reports whether it was new). A channel
// or environment that does not exist is ErrNotFound.
func (s *Store) SaveEnvironmentNotification(ctx context.Context, n *EnvironmentNotification, create bool) error {
	t := now()
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var count int64
		if err := tx.Model(&notificationChannelRow{}).Where("id = ?", n.NotificationID).Count(&count).Error; err != nil {
			return err
		}
		if count == 0 {
			return ErrNotFound
		}
		if !create {
			return oneRow(tx.Model(&environmentNotificationRow{}).
				Where("environment_id = ? AND notification_id = ?", n.EnvironmentID, n.NotificationID).
				Updates(map[string]any{"enabled": n.Enabled, "event_types": encodeEventTypes(n.EventTypes),
					"updated_at": timeValue(t)}))
		}
		row := environmentNotificationRow{EnvironmentID: n.EnvironmentID, NotificationID: n.NotificationID,
			Enabled: n.Enabled, EventTypes: encodeEventTypes(n.EventTypes), CreatedAt: timeValue(t), UpdatedAt: timeValue(t)}
		if err := tx.Create(&row).Error; err != nil {
			if isForeignKeyViolation(err) {
				return ErrNotFound
			}
			return err
		}
		n.ID, n.CreatedAt = row.ID, t
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: save notification %d of environment %d: %w", n.NotificationID, n.EnvironmentID, translate(err))
	}
	n.UpdatedAt = t
	return nil
}

// DeleteEnvironmentNotification removes a subscription, or answers
// ErrNotFound.
func (s *Store) DeleteEnvironmentNotification(ctx context.Context, envID, notificationID int64) error {
	if err := oneRow(s.db.WithContext(ctx).Where("environment_id = ? AND notification_id = ?", envID, notificationID).
		Delete(&environmentNotificationRow{})); err != nil {
		return fmt.Errorf("store: delete notification %d of environment %d: %w", notificationID, envID, err)
	}
	return nil
}
