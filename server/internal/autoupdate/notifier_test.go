package autoupdate

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type emitted struct {
	EnvID       int64
	Type, Title string
}

type recorder struct{ got []emitted }

func (r *recorder) Emit(envID int64, eventType, title, _ string) {
	r.got = append(r.got, emitted{envID, eventType, title})
}

func TestScheduledUpdateOutcomesNotify(t *testing.T) {
	for _, tc := range []struct {
		name string
		out  Outcome
		err  error
		want []emitted
	}{
		{"updated", Outcome{Updated: true, NewImageID: "sha256:1"}, nil, []emitted{{3, "auto_update_success", "Container web updated"},
			{3, "container_updated", "Container web updated"}}},
		{"blocked", Outcome{Skipped: "blocked: 2 critical vulnerabilities"}, nil, []emitted{{3, "auto_update_blocked", "Auto-update of web blocked"}}},
		{"failed", Outcome{}, errors.New("pull failed"), []emitted{{3, "auto_update_failed", "Auto-update of web failed"}}},
		{"up to date", Outcome{UpToDate: true}, nil, nil},
		{"pinned", Outcome{Skipped: "the container's image x is pinned to a digest or id"}, nil, nil},
	} {
		r := &recorder{}
		s := &Service{}
		s.notifyOutcome(3, "web", tc.out, tc.err) // no notifier: nothing, no panic
		s.UseNotifier(r)
		s.notifyOutcome(3, "web", tc.out, tc.err)
		if diff := cmp.Diff(tc.want, r.got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}
