package gitops

import (
	"context"
	"fmt"
)

// Notifier receives the outcomes of git syncs worth a notification
// (notify.Service).
type Notifier interface {
	Emit(envID int64, eventType, title, message string)
}

// UseNotifier makes syncs and webhook deploys report their outcome.
func (s *Service) UseNotifier(n Notifier) { s.notifier = n }

// notifySync reports a sync of stack name: deployed, skipped (unchanged), or
// failed. Nil-safe.
func (s *Service) notifySync(envID int64, name string, res Result, err error) {
	if s.notifier == nil {
		return
	}
	switch {
	case err != nil:
		s.notifier.Emit(envID, "git_sync_failed", "Git sync of "+name+" failed", err.Error())
	case res.Deployed:
		s.notifier.Emit(envID, "git_sync_success", "Stack "+name+" deployed from git", res.Message)
	default:
		s.notifier.Emit(envID, "git_sync_skipped", "Stack "+name+" is up to date", res.Message)
	}
}

// stackName names git stack id for a notification ("#id" when unknown).
func (s *Service) stackName(ctx context.Context, id int64) string {
	if g, err := s.store.GetGitStack(ctx, id); err == nil {
		return g.StackName
	}
	return fmt.Sprintf("#%d", id)
}
