package images

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type recorder struct{ got []string }

func (r *recorder) Emit(_ int64, eventType, title, message string) {
	r.got = append(r.got, eventType+": "+title+": "+message)
}

func TestPruneOutcomesNotify(t *testing.T) {
	r := &recorder{}
	s := &Service{}
	s.notifyPrune(1, "local", 1, 10, nil) // no notifier: nothing, no panic
	s.UseNotifier(r)
	s.notifyPrune(1, "local", 3, 2048, nil)
	s.notifyPrune(1, "local", 0, 0, errors.New("engine unreachable"))
	want := []string{"image_prune_success: Images pruned on local: Removed 3 images, reclaimed " + humanBytes(2048) + ".",
		"image_prune_failed: Image prune on local failed: engine unreachable"}
	if diff := cmp.Diff(want, r.got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
