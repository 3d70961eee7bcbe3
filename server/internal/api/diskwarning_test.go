package api_test

import (
	"fmt"
	"testing"
)

// An environment's disk warning defaults to off at 90%, saves a partial
// change, and refuses a threshold outside 1..99 with a 400 that changes
// nothing.
func TestEnvironmentDiskWarningSettings(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var env struct{ ID int64 }
	h.must(201, "POST", "/api/environments", map[string]any{"name": "dw-" + h.label, "connectionType": "socket",
		"socketPath": "/var/run/berth-none-" + h.label + ".sock"}, &env)
	base := fmt.Sprintf("/api/environments/%d/disk-warning", env.ID)
	type settings struct {
		Enabled          bool
		ThresholdPercent int
	}
	var dw struct {
		Success  bool
		Settings settings
	}
	h.must(200, "GET", base, nil, &dw)
	if dw.Settings != (settings{Enabled: false, ThresholdPercent: 90}) {
		t.Errorf("defaults = %+v", dw.Settings)
	}
	h.must(200, "POST", base, map[string]any{"enabled": true, "thresholdPercent": 75}, &dw)
	if !dw.Success || dw.Settings != (settings{Enabled: true, ThresholdPercent: 75}) {
		t.Errorf("saved = %+v", dw)
	}
	for _, bad := range []int{0, 100, -5} {
		wantError(t, h, "POST", base, map[string]any{"enabled": false, "thresholdPercent": bad}, 400,
			fmt.Sprintf("Invalid thresholdPercent %d: use a whole percentage from 1 to 99", bad))
	}
	h.must(200, "POST", base, map[string]any{"thresholdPercent": 60}, nil) // enabled kept
	dw = struct {
		Success  bool
		Settings settings
	}{}
	h.must(200, "GET", base, nil, &dw)
	if dw.Settings != (settings{Enabled: true, ThresholdPercent: 60}) {
		t.Errorf("after refused changes and a partial one = %+v", dw.Settings)
	}
}
