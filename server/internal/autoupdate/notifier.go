package autoupdate

import (
	"context"
	"fmt"
	"strings"

	"github.com/berth-dev/berth/server/internal/store"
)

// Notifier receives the outcomes of scheduled updates worth a notification
// (notify.Service).
type Notifier interface {
	Emit(envID int64, eventType, title, message string)
}

// UseNotifier makes scheduled container updates report their outcome.
func (s *Service) UseNotifier(n Notifier) { s.notifier = n }

// UseSchedulesChanged is told when the service removed an auto-update by
// itself (its container is gone), to unregister the schedule.
func (s *Service) UseSchedulesChanged(fn func(context.Context)) { s.schedulesChanged = fn }

// notifyOutcome reports a scheduled update of container name: updated,
// blocked (skipped by the vulnerability criteria), or failed. Up to date and
// other skips say nothing. Nil-safe.
func (s *Service) notifyOutcome(envID int64, name string, out Outcome, err error) {
	if s.notifier == nil {
		return
	}
	switch {
	case err != nil:
		s.notifier.Emit(envID, "auto_update_failed", "Auto-update of "+name+" failed", errorText(err))
	case out.Updated:
		s.notifier.Emit(envID, "auto_update_success", "Container "+name+" updated",
			fmt.Sprintf("Container %s now runs image %s.", name, out.NewImageID))
		s.notifyUpdated(envID, name, out)
	case len(out.Skipped) >= 8 && out.Skipped[:8] == "blocked:":
		s.notifier.Emit(envID, "auto_update_blocked", "Auto-update of "+name+" blocked", out.Skipped)
	}
}

// notifyUpdated reports a container recreated on a new image
// (container_updated), by a schedule or by hand. Nil-safe.
func (s *Service) notifyUpdated(envID int64, name string, out Outcome) {
	if s.notifier == nil || !out.Updated {
		return
	}
	s.notifier.Emit(envID, "container_updated", "Container "+name+" updated",
		fmt.Sprintf("Container %s was recreated on image %s.", name, out.NewImageID))
}

// notifyDetected reports the updates an update check found
// (updates_detected); nothing when it found none. Nil-safe.
func (s *Service) notifyDetected(envID int64, envName string, pending []store.PendingUpdate) {
	if s.notifier == nil || len(pending) == 0 {
		return
	}
	names := make([]string, 0, len(pending))
	for _, p := range pending {
		names = append(names, p.ContainerName)
	}
	s.notifier.Emit(envID, "updates_detected", fmt.Sprintf("%d container updates available on %s", len(pending), envName),
		"Newer images are available for: "+strings.Join(names, ", ")+".")
}

// notifyBatch reports a batch update that updated containers and had no
// failure (batch_update_success). Nil-safe.
func (s *Service) notifyBatch(envID int64, envName string, r BatchReport) {
	if s.notifier == nil || r.Summary.Updated == 0 || r.Summary.Failed > 0 {
		return
	}
	s.notifier.Emit(envID, "batch_update_success", fmt.Sprintf("Batch update on %s succeeded", envName),
		fmt.Sprintf("%d updated, %d up to date, %d skipped.", r.Summary.Updated, r.Summary.UpToDate, r.Summary.Skipped))
}
