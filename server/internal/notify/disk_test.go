package notify

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
)

// The warning fires once when a real filesystem (a temporary directory's)
// is above the threshold, not again while it stays above, and again after
// it was seen below; the state is the database's, so that a second server
// (another Service on the same store) does not fire it again. Threshold 1%
// is above any real filesystem's usage, 100% below it (a full filesystem
// would fail the test, not pass it).
func TestDiskWarningFiresOnceWhenCrossingAbove(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "berth.db"), storetest.Box(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	a := New(Options{Store: st, Log: log, Node: "a"})
	b := New(Options{Store: st, Log: log, Node: "b"})
	steps := []struct {
		s         *Service
		threshold int
		crossed   bool
	}{{a, 1, true}, {b, 1, false}, {a, 1, false}, {b, 100, false}, {a, 1, true}, {b, 1, false}}
	pct, err := DiskUsage(dir)
	if err != nil {
		t.Fatal(err)
	}
	if pct <= 0 || pct >= 100 {
		t.Fatalf("usage of %s = %.2f%%", dir, pct)
	}
	for i, step := range steps {
		crossed, err := step.s.diskAbove(t.Context(), 7, pct >= float64(step.threshold))
		if err != nil {
			t.Fatal(err)
		}
		if crossed != step.crossed {
			t.Errorf("step %d (server %s, threshold %d%%, usage %.2f%%): crossed = %v, want %v", i, step.s.o.Node,
				step.threshold, pct, crossed, step.crossed)
		}
	}
	if crossed, _ := a.diskAbove(t.Context(), 8, pct >= 1); !crossed { // each environment has its own state
		t.Error("another environment did not cross")
	}
	if _, err := DiskUsage(dir + "/absent"); err == nil {
		t.Error("a missing path was measured")
	}
}
