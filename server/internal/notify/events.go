// Package notify provides Berth's notifications: the channel types (SMTP and
// the webhook-style services), their validation and masking, the delivery
// queue with retries, the dispatch of events to the channels environments
// subscribe to, and the watchers that turn engine events into notification
// events.
package notify

import (
	"slices"
	"time"
)

// EventTypes are the notification event ids (COMPAT.md), environment-scoped
// except license_expiring.
var EventTypes = []string{
	"container_started", "container_stopped", "container_restarted", "container_exited", "container_oom",
	"container_unhealthy", "container_healthy", "container_updated", "image_pulled",
	"auto_update_success", "auto_update_failed", "auto_update_blocked", "updates_detected", "batch_update_success",
	"git_sync_success", "git_sync_failed", "git_sync_skipped",
	"stack_started", "stack_stopped", "stack_deployed", "stack_deploy_failed",
	"vulnerability_critical", "vulnerability_high", "vulnerability_any",
	"environment_offline", "environment_online", "disk_space_warning",
	"image_prune_success", "image_prune_failed", "license_expiring",
}

// KnownEventType reports whether t is one of EventTypes.
func KnownEventType(t string) bool { return slices.Contains(EventTypes, t) }

// Event is something worth a notification.
type Event struct {
	Type          string // one of EventTypes
	EnvironmentID int64  // 0 for system-wide events
	Environment   string // the environment's name, if any
	Title         string
	Message       string
	Time          time.Time
}

// wants reports whether a list of event types (empty: every event) takes t.
func wants(types []string, t string) bool {
	return len(types) == 0 || slices.Contains(types, t)
}
