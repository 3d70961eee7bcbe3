package api_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/berth-dev/berth/server/internal/scan"
)

// referenceGeneralDefaults is what the reference answers for
// GET /api/settings/general on a fresh install, key by key (as JSON);
// where the reference's value would misstate Berth (its pinned scanner
// images, its prune not sparing them), Berth's own.
var referenceGeneralDefaults = map[string]any{
	"confirmDestructive": true, "showStoppedContainers": true, "highlightUpdates": true, "coloredActionButtons": false,
	"actionIconSize": "normal", "timeFormat": "24h", "dateFormat": "DD.MM.YYYY", "downloadFormat": "tar",
	"defaultGrypeArgs": "-o json -v {image}", "defaultTrivyArgs": "image --format json {image}",
	"scheduleRetentionDays": 30.0, "eventRetentionDays": 7.0, "scheduleCleanupCron": "0 3 * * *", "eventCleanupCron": "0 3 * * *",
	"scheduleCleanupEnabled": true, "eventCleanupEnabled": true, "logBufferSizeKb": 500.0, "logMaxLines": 2000.0,
	"defaultTimezone": "UTC", "eventCollectionMode": "stream", "eventPollInterval": 60000.0, "metricsCollectionInterval": 30000.0,
	"lightTheme": "default", "darkTheme": "default", "font": "system", "fontSize": "normal", "gridFontSize": "normal",
	"terminalFont": "system-mono", "editorFont": "system-mono", "compactPorts": false, "showExposedPorts": false,
	"showGitCommitHash": false, "formatLogTimestamps": false, "externalStackPaths": []any{}, "primaryStackLocation": nil,
	"defaultGrypeImage": scan.DefaultGrypeImage, "defaultTrivyImage": scan.DefaultTrivyImage, "labelFilterMode": "any",
	"defaultBackupImage": "fnsys/dockhand-backup:latest", "honorProxyLabels": true, "showImageChangelogLinks": true,
	"useSelfhstIcons": false, "showWhatsNew": true, "animateIcons": true, "editorIndentGuides": false,
	"protectScannerImages": false, "defaultScannerNetworkMode": "", "defaultScannerDns": []any{},
}

func TestGeneralSettingsAnswerEveryReferenceKeyAndRefuseWhatBerthDoesNotDo(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var got map[string]any
	h.must(200, "GET", "/api/settings/general", nil, &got)
	for k, want := range referenceGeneralDefaults {
		v, ok := got[k]
		if !ok {
			t.Errorf("fresh GET has no %s", k)
		} else if !reflect.DeepEqual(v, want) {
			t.Errorf("fresh %s = %#v, want %#v", k, v, want)
		}
	}
	if tmpl, _ := got["defaultComposeTemplate"].(string); !strings.HasPrefix(tmpl, "version: \"3.8\"\n\nservices:\n  app:\n    image: nginx:alpine") ||
		!strings.Contains(tmpl, "APP_ENV=${APP_ENV:-production}") {
		t.Errorf("fresh defaultComposeTemplate = %q", got["defaultComposeTemplate"])
	}

	// The implemented keys round-trip; the keys not sent keep their value.
	root := t.TempDir()
	written := map[string]any{
		"confirmDestructive": false, "timeFormat": "12h", "dateFormat": "YYYY-MM-DD", "darkTheme": "dracula", "font": "inter",
		"logMaxLines": 500.0, "labelFilterMode": "all", "animateIcons": false, "defaultComposeTemplate": "services: {}\n",
		"scheduleRetentionDays": 12.0, "eventRetentionDays": 3.0, "scheduleCleanupEnabled": false,
		"externalStackPaths": []any{root}, "instanceName": "Prod",
		// the default of an unsupported key is accepted
		"defaultTimezone": "UTC", "primaryStackLocation": nil, "defaultScannerDns": []any{}, "scheduleCleanupCron": "0 3 * * *",
	}
	var put map[string]any
	h.must(200, "PUT", "/api/settings/general", written, &put)
	got = nil
	h.must(200, "GET", "/api/settings/general", nil, &got)
	for k, want := range written {
		if !reflect.DeepEqual(got[k], want) || !reflect.DeepEqual(put[k], want) {
			t.Errorf("after PUT %s = %#v (PUT answered %#v), want %#v", k, got[k], put[k], want)
		}
	}
	if got["showStoppedContainers"] != true || got["lightTheme"] != "default" {
		t.Errorf("keys not sent changed: %v %v", got["showStoppedContainers"], got["lightTheme"])
	}
	// The mapped keys are Berth's own settings.
	var sched struct {
		ExecutionRetentionDays int `json:"executionRetentionDays"`
	}
	h.must(200, "GET", "/api/schedules/settings", nil, &sched)
	var activity struct {
		RetentionDays int `json:"retentionDays"`
	}
	h.must(200, "GET", "/api/activity/settings", nil, &activity)
	var roots struct {
		Roots []string `json:"roots"`
	}
	h.must(200, "GET", "/api/settings/stack-roots", nil, &roots)
	if sched.ExecutionRetentionDays != 12 || activity.RetentionDays != 3 || len(roots.Roots) != 1 || roots.Roots[0] != root {
		t.Errorf("Berth's settings: schedules %+v, activity %+v, roots %+v", sched, activity, roots)
	}
	var schedules struct {
		Schedules []struct {
			ID       int64  `json:"id"`
			Type     string `json:"type"`
			Enabled  bool   `json:"enabled"`
			IsSystem bool   `json:"isSystem"`
		} `json:"schedules"`
	}
	h.must(200, "GET", "/api/schedules", nil, &schedules)
	for _, s := range schedules.Schedules {
		if s.IsSystem && s.ID == 1 && s.Enabled {
			t.Errorf("the execution cleanup is still enabled after scheduleCleanupEnabled false")
		}
	}

	// A value Berth cannot honour, or a bad one, is 400 and nothing changes.
	before, _ := json.Marshal(got)
	for _, c := range []struct {
		body map[string]any
		want string
	}{
		{map[string]any{"timeFormat": "24h", "defaultTrivyImage": "aquasec/trivy:latest"}, "defaultTrivyImage is not supported"},
		{map[string]any{"timeFormat": "24h", "eventCollectionMode": "poll"}, "eventCollectionMode is not supported"},
		{map[string]any{"timeFormat": "24h", "primaryStackLocation": "/srv/stacks"}, "primaryStackLocation is not supported"},
		{map[string]any{"timeFormat": "24h", "protectScannerImages": true}, "protectScannerImages is not supported"},
		{map[string]any{"timeFormat": "24h", "scheduleCleanupCron": "0 2 * * *"}, "scheduleCleanupCron is not supported"},
		{map[string]any{"timeFormat": "24h", "defaultScannerDns": []string{"1.1.1.1"}}, "defaultScannerDns is not supported"},
		{map[string]any{"timeFormat": "24h", "darkTheme": "purple"}, "Invalid value for darkTheme"},
		{map[string]any{"timeFormat": "24h", "confirmDestructive": "yes"}, "Invalid value for confirmDestructive"},
		{map[string]any{"timeFormat": "24h", "eventRetentionDays": 0}, "eventRetentionDays must be"},
		{map[string]any{"timeFormat": "24h", "externalStackPaths": []string{"relative/dir"}}, "stack root"},
	} {
		status, resp := h.do("POST", "/api/settings/general", c.body)
		if status != 400 || !strings.Contains(string(resp), c.want) {
			t.Errorf("POST %v = %d %s, want 400 %q", c.body, status, resp, c.want)
		}
	}
	got = nil
	h.must(200, "GET", "/api/settings/general", nil, &got)
	if after, _ := json.Marshal(got); string(after) != string(before) {
		t.Errorf("a refused write changed the settings:\nbefore %s\nafter  %s", before, after)
	}
}
