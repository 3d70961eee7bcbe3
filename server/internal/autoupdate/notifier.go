package autoupdate

import "fmt"

// Notifier receives the outcomes of scheduled updates worth a notification
// (notify.Service).
type Notifier interface {
	Emit(envID int64, eventType, title, message string)
}

// UseNotifier makes scheduled container updates report their outcome.
func (s *Service) UseNotifier(n Notifier) { s.notifier = n }

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
	case len(out.Skipped) >= 8 && out.Skipped[:8] == "blocked:":
		s.notifier.Emit(envID, "auto_update_blocked", "Auto-update of "+name+" blocked", out.Skipped)
	}
}
