// Package notify provides Berth's notifications: the channel types (SMTP and
// the webhook-style services), their validation and masking, the dispatch
// of events to the channels environments subscribe to through the
// database's outbox (one message per channel and event, however many
// servers share the database), its delivery with retries, and the watchers
// that turn engine events into notification events.
package notify

import (
	"fmt"
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
	"backup_success", "backup_failed",
}

// KnownEventType reports whether t is one of EventTypes.
func KnownEventType(t string) bool { return slices.Contains(EventTypes, t) }

// Event is something worth a notification.
type Event struct {
	Type          string    `json:"type"`                    // one of EventTypes
	EnvironmentID int64     `json:"environmentId,omitempty"` // 0 for system-wide events
	Environment   string    `json:"environment,omitempty"`   // the environment's name, if any
	Title         string    `json:"title,omitempty"`
	Message       string    `json:"message,omitempty"`
	Time          time.Time `json:"time"`
	// Key names the occurrence the event reports, the same on every server
	// that sees it: a channel gets one message per key. For an engine
	// event it is EngineKey's; empty makes the event its own occurrence
	// (an operation that runs on one server, which reports it once).
	Key string `json:"-"`
}

// EngineKey is the key of the notification events an engine event causes:
// its environment, the engine's time in nanoseconds, its actor and action.
func EngineKey(envID, timeNano int64, actorID, action string) string {
	return fmt.Sprintf("engine:%d:%d:%s:%s", envID, timeNano, actorID, action)
}

// wants reports whether a list of event types (empty: every event) takes t.
func wants(types []string, t string) bool {
	return len(types) == 0 || slices.Contains(types, t)
}
