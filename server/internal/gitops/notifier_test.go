package gitops

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type recorder struct{ got []string }

func (r *recorder) Emit(_ int64, eventType, title, _ string) {
	r.got = append(r.got, eventType+": "+title)
}

func TestGitSyncOutcomesNotify(t *testing.T) {
	r := &recorder{}
	s := &Service{}
	s.notifySync(1, "app", Result{Deployed: true}, nil) // no notifier: nothing, no panic
	s.UseNotifier(r)
	s.notifySync(1, "app", Result{Deployed: true, Message: "Deployed"}, nil)
	s.notifySync(1, "app", Result{Message: "up to date"}, nil)
	s.notifySync(1, "app", Result{}, errors.New("clone failed"))
	want := []string{"git_sync_success: Stack app deployed from git", "git_sync_skipped: Stack app is up to date",
		"git_sync_failed: Git sync of app failed"}
	if diff := cmp.Diff(want, r.got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
