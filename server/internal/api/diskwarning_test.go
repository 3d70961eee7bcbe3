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

// The reference's disk warning fields: mode (percentage|absolute), threshold
// (the percentage) and thresholdGb are stored and answered flat, beside
// Berth's settings; a bad mode or thresholdGb is 400 and changes nothing.
func TestEnvironmentDiskWarningReadsTheReferenceModeAndThresholds(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	base := "/api/environments/1/disk-warning"
	type answer struct {
		Enabled     bool
		Mode        string
		Threshold   int
		ThresholdGb float64
		Settings    struct {
			Mode             string
			ThresholdPercent int
			ThresholdGb      float64
		}
	}
	var got answer
	h.must(200, "GET", base, nil, &got)
	if got.Mode != "percentage" || got.Threshold != 90 || got.ThresholdGb != 50 || got.Enabled {
		t.Errorf("defaults = %+v", got)
	}
	h.must(200, "POST", base, map[string]any{"enabled": true, "mode": "absolute", "threshold": 85, "thresholdGb": 120}, nil)
	got = answer{}
	h.must(200, "GET", base, nil, &got)
	if !got.Enabled || got.Mode != "absolute" || got.Threshold != 85 || got.ThresholdGb != 120 ||
		got.Settings.Mode != "absolute" || got.Settings.ThresholdPercent != 85 || got.Settings.ThresholdGb != 120 {
		t.Errorf("after saving = %+v", got)
	}
	wantError(t, h, "POST", base, map[string]any{"mode": "relative"}, 400,
		`Invalid mode "relative": use "percentage" (threshold, a share of the filesystem) or "absolute" (thresholdGb, the engine's disk use in GB)`)
	wantError(t, h, "POST", base, map[string]any{"mode": "percentage", "thresholdGb": 0.5}, 400,
		"Invalid thresholdGb 0.5: use a number of GB of at least 1")
	wantError(t, h, "POST", base, map[string]any{"threshold": 100}, 400, "Invalid threshold 100: use a whole percentage from 1 to 99")
	got = answer{}
	h.must(200, "GET", base, nil, &got)
	if got.Mode != "absolute" || got.ThresholdGb != 120 || got.Threshold != 85 {
		t.Errorf("a refused change changed the warning: %+v", got)
	}
}

// The reference's semver detection fields of the update check are read:
// their defaults are accepted and answered; a value Berth's digest check
// cannot honour is 400 and changes nothing.
func TestUpdateCheckRefusesSemverDetectionItCannotHonour(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	base := "/api/environments/1/update-check"
	type settings struct {
		Enabled                 bool
		Cron                    string
		CheckPinnedVersions     bool
		SemverMaxBump           string
		SemverMatchFlavor       bool
		SemverIncludePrerelease bool
	}
	var got struct{ Settings settings }
	h.must(200, "POST", base, map[string]any{"enabled": true, "cron": "0 5 * * *", "checkPinnedVersions": false,
		"semverMaxBump": "major", "semverMatchFlavor": true, "semverIncludePrerelease": false}, &got)
	want := settings{Enabled: true, Cron: "0 5 * * *", SemverMaxBump: "major", SemverMatchFlavor: true}
	if got.Settings != want {
		t.Errorf("saved = %+v, want %+v", got.Settings, want)
	}
	for field, v := range map[string]any{"checkPinnedVersions": true, "semverMaxBump": "minor", "semverMatchFlavor": false, "semverIncludePrerelease": true} {
		wantError(t, h, "POST", base, map[string]any{"enabled": false, field: v}, 400,
			field+` is not supported: Berth's update check compares the registry digest of the tag a container runs and does not look for newer version tags (checkPinnedVersions false, semverMaxBump "major", semverMatchFlavor true and semverIncludePrerelease false are accepted)`)
	}
	got.Settings = settings{}
	h.must(200, "GET", base, nil, &got)
	if got.Settings != want {
		t.Errorf("after refused changes = %+v, want %+v", got.Settings, want)
	}
}
