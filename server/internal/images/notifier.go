package images

import "fmt"

// Notifier receives the outcomes of scheduled image prunes (notify.Service).
type Notifier interface {
	Emit(envID int64, eventType, title, message string)
}

// UseNotifier makes the image_prune schedule report its outcome.
func (s *Service) UseNotifier(n Notifier) { s.notify = n }

// notifyPrune reports a scheduled prune of environment envName: removed
// images and reclaimed bytes, or the failure. Nil-safe.
func (s *Service) notifyPrune(envID int64, envName string, removed int, reclaimed int64, err error) {
	if s.notify == nil {
		return
	}
	if err != nil {
		s.notify.Emit(envID, "image_prune_failed", "Image prune on "+envName+" failed", err.Error())
		return
	}
	s.notify.Emit(envID, "image_prune_success", "Images pruned on "+envName,
		fmt.Sprintf("Removed %d images, reclaimed %s.", removed, humanBytes(reclaimed)))
}
