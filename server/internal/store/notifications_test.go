package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
)

func TestNotificationChannelConfigIsSealedAtRestAndRoundTrips(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		ch := store.NotificationChannel{Type: "smtp", Name: "mail", Enabled: true,
			Config: json.RawMessage(`{"host":"mail.example","password":"sm7p-s3cret"}`), EventTypes: []string{"container_exited"}}
		if err := s.CreateNotificationChannel(ctx, &ch); err != nil {
			t.Fatal(err)
		}
		var raw string
		if err := s.DB().QueryRowContext(ctx, "SELECT config FROM notification_channels WHERE id = $1", ch.ID).Scan(&raw); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(raw, "sm7p-s3cret") || !strings.HasPrefix(raw, "enc:") {
			t.Errorf("config at rest = %q, want it sealed", raw)
		}
		got, err := s.GetNotificationChannel(ctx, ch.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(ch, got); diff != "" {
			t.Errorf("round trip (-want +got):\n%s", diff)
		}
		dup := store.NotificationChannel{Type: "webhook", Name: "mail", Config: json.RawMessage(`{}`)}
		if err := s.CreateNotificationChannel(ctx, &dup); !errors.Is(err, store.ErrConflict) {
			t.Errorf("duplicate name: %v, want ErrConflict", err)
		}
		if err := s.RecordNotificationDelivery(ctx, ch.ID, "boom"); err != nil {
			t.Fatal(err)
		}
		got, _ = s.GetNotificationChannel(ctx, ch.ID)
		if got.LastError != "boom" || got.LastErrorAt == nil || got.LastSentAt != nil {
			t.Errorf("after a failure: %q %v %v", got.LastError, got.LastErrorAt, got.LastSentAt)
		}
		if err := s.RecordNotificationDelivery(ctx, ch.ID, ""); err != nil {
			t.Fatal(err)
		}
		got, _ = s.GetNotificationChannel(ctx, ch.ID)
		if got.LastError != "" || got.LastSentAt == nil {
			t.Errorf("after a success: %q %v", got.LastError, got.LastSentAt)
		}
	})
}

func TestEnvironmentNotificationsFollowTheirChannelAndEnvironment(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		env := createEnvironment(t, s, "prod")
		ch := store.NotificationChannel{Type: "webhook", Name: "hook", Enabled: true, Config: json.RawMessage(`{}`)}
		if err := s.CreateNotificationChannel(ctx, &ch); err != nil {
			t.Fatal(err)
		}
		sub := store.EnvironmentNotification{EnvironmentID: env.ID, NotificationID: ch.ID, Enabled: true,
			EventTypes: []string{"container_oom"}}
		if err := s.SaveEnvironmentNotification(ctx, &sub, true); err != nil {
			t.Fatal(err)
		}
		if err := s.SaveEnvironmentNotification(ctx, &sub, true); !errors.Is(err, store.ErrConflict) {
			t.Errorf("second subscription: %v, want ErrConflict", err)
		}
		missing := store.EnvironmentNotification{EnvironmentID: env.ID, NotificationID: ch.ID + 100}
		if err := s.SaveEnvironmentNotification(ctx, &missing, true); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("subscription to a missing channel: %v, want ErrNotFound", err)
		}
		ids, err := s.SubscribedEnvironments(ctx)
		if err != nil || !cmp.Equal(ids, []int64{env.ID}) {
			t.Errorf("subscribed environments = %v, %v; want [%d]", ids, err, env.ID)
		}
		sub.Enabled = false
		if err := s.SaveEnvironmentNotification(ctx, &sub, false); err != nil {
			t.Fatal(err)
		}
		if ids, _ := s.SubscribedEnvironments(ctx); len(ids) != 0 {
			t.Errorf("subscribed environments with the subscription disabled = %v, want none", ids)
		}
		got, err := s.GetEnvironmentNotification(ctx, env.ID, ch.ID)
		if err != nil || got.Enabled || !cmp.Equal(got.EventTypes, []string{"container_oom"}) {
			t.Errorf("subscription = %+v, %v", got, err)
		}
		if err := s.DeleteNotificationChannel(ctx, ch.ID); err != nil {
			t.Fatal(err)
		}
		if list, err := s.ListEnvironmentNotifications(ctx, env.ID); err != nil || len(list) != 0 {
			t.Errorf("subscriptions after the channel's deletion = %v, %v; want none", list, err)
		}
		if err := s.DeleteNotificationChannel(ctx, ch.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("second delete: %v, want ErrNotFound", err)
		}
	})
}
