package notify

import (
	"testing"
)

// The warning fires once when a real filesystem (a temporary directory's)
// is above the threshold, not again while it stays above, and again after
// it was seen below. Threshold 1% is above any real filesystem's usage,
// 100% below it (a full filesystem would fail the test, not pass it).
func TestDiskWarningFiresOnceWhenCrossingAbove(t *testing.T) {
	dir := t.TempDir()
	var d diskCrossing
	steps := []struct {
		threshold int
		crossed   bool
	}{{1, true}, {1, false}, {100, false}, {1, true}}
	for i, st := range steps {
		pct, crossed, err := d.check(7, dir, st.threshold)
		if err != nil {
			t.Fatal(err)
		}
		if pct <= 0 || pct >= 100 {
			t.Fatalf("usage of %s = %.2f%%", dir, pct)
		}
		if crossed != st.crossed {
			t.Errorf("step %d (threshold %d%%, usage %.2f%%): crossed = %v, want %v", i, st.threshold, pct, crossed, st.crossed)
		}
	}
	if _, crossed, _ := d.check(8, dir, 1); !crossed { // each environment has its own state
		t.Error("another environment did not cross")
	}
	if _, _, err := d.check(7, dir+"/absent", 1); err == nil {
		t.Error("a missing path was measured")
	}
}
