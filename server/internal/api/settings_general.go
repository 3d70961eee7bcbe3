package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/scan"
	"github.com/berth-dev/berth/server/internal/schedule"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// The general settings (GET|POST|PUT /api/settings/general) answer every key
// the reference answers. Each key is one of three kinds:
//   - a preference of the console or of a client (themes, formats, what the
//     lists show): stored as sent, after its check, and answered;
//   - a setting Berth has under another route (retention, the execution
//     cleanup, the external stack roots): read and written through it;
//   - a setting of behaviour Berth does not have (scanner images and
//     arguments, event polling, the backup image, …): answered with the
//     reference's default; a write of another value is refused.
// Keys the reference does not know are stored and answered as sent (the
// object was free-form before).

// defaultComposeTemplate is the reference's default compose template.
const defaultComposeTemplate = `version: "3.8"

services:
  app:
    image: nginx:alpine
    ports:
      - "8080:80"
    environment:
      - APP_ENV=${APP_ENV:-production}
    volumes:
      - ./html:/usr/share/nginx/html:ro
    restart: unless-stopped

# Add more services as needed
# networks:
#   default:
#     driver: bridge
`

// generalPreference is a stored preference: its default and its check
// (nil when any value of the default's JSON type is accepted).
type generalPreference struct {
	def   any
	check func(v any) bool
}

func oneOf(values ...string) func(any) bool {
	return func(v any) bool { s, ok := v.(string); return ok && slices.Contains(values, s) }
}

func wholeIn(lo, hi float64) func(any) bool {
	return func(v any) bool { n, ok := v.(float64); return ok && n == float64(int64(n)) && n >= lo && n <= hi }
}

var (
	fontSizes     = []string{"xsmall", "small", "normal", "medium", "large", "xlarge"}
	monospaceFont = []string{"system-mono", "jetbrains-mono", "fira-code", "source-code-pro", "cascadia-code", "ibm-plex-mono", "roboto-mono", "ubuntu-mono", "space-mono", "inconsolata", "hack", "anonymous-pro", "dm-mono", "red-hat-mono", "menlo", "consolas", "sf-mono"}
)

// generalPreferences are the preference keys, with the reference's
// defaults and accepted values.
var generalPreferences = map[string]generalPreference{
	"confirmDestructive":      {def: true},
	"showStoppedContainers":   {def: true},
	"highlightUpdates":        {def: true},
	"coloredActionButtons":    {def: false},
	"actionIconSize":          {def: "normal", check: oneOf("small", "normal", "large", "xlarge")},
	"timeFormat":              {def: "24h", check: oneOf("12h", "24h")},
	"dateFormat":              {def: "DD.MM.YYYY", check: oneOf("MM/DD/YYYY", "DD/MM/YYYY", "YYYY-MM-DD", "DD.MM.YYYY")},
	"downloadFormat":          {def: "tar", check: oneOf("tar", "tar.gz", "raw")},
	"logBufferSizeKb":         {def: 500.0, check: wholeIn(100, 5000)},
	"logMaxLines":             {def: 2000.0, check: wholeIn(100, 2000)},
	"lightTheme":              {def: "default", check: oneOf("default", "catppuccin", "rose-pine", "nord", "solarized", "gruvbox", "alucard", "github", "material", "atom-one")},
	"darkTheme":               {def: "default", check: oneOf("default", "catppuccin", "dracula", "rose-pine", "rose-pine-moon", "tokyo-night", "nord", "one-dark", "gruvbox", "solarized", "everforest", "kanagawa", "monokai", "monokai-pro", "material", "palenight", "github")},
	"font":                    {def: "system", check: oneOf("system", "geist", "inter", "plus-jakarta", "dm-sans", "outfit", "space-grotesk", "sofia-sans", "nunito", "poppins", "montserrat", "raleway", "manrope", "roboto", "open-sans", "lato", "source-sans", "work-sans", "fira-sans", "jetbrains-mono", "fira-code", "quicksand", "comfortaa")},
	"fontSize":                {def: "normal", check: oneOf(fontSizes...)},
	"gridFontSize":            {def: "normal", check: oneOf(fontSizes...)},
	"terminalFont":            {def: "system-mono", check: oneOf(monospaceFont...)},
	"editorFont":              {def: "system-mono", check: oneOf(monospaceFont...)},
	"compactPorts":            {def: false},
	"showExposedPorts":        {def: false},
	"showGitCommitHash":       {def: false},
	"formatLogTimestamps":     {def: false},
	"defaultComposeTemplate":  {def: defaultComposeTemplate},
	"labelFilterMode":         {def: "any", check: oneOf("any", "all")},
	"honorProxyLabels":        {def: true},
	"showImageChangelogLinks": {def: true},
	"useSelfhstIcons":         {def: false},
	"showWhatsNew":            {def: true},
	"animateIcons":            {def: true},
	"editorIndentGuides":      {def: false},
}

// generalUnsupported are the keys of behaviour Berth does not have: the
// reference's default, and why another value is refused.
var generalUnsupported = map[string]struct {
	def any
	why string
}{
	"defaultGrypeArgs": {"-o json -v {image}", "Berth's scanners run with fixed arguments"},
	"defaultTrivyArgs": {"image --format json {image}", "Berth's scanners run with fixed arguments"},
	// The images Berth's scanners run (pinned with Berth), not the
	// reference's: the answer says what happens.
	"defaultGrypeImage":         {scan.DefaultGrypeImage, "Berth's scanners are pinned with Berth, not configured by image"},
	"defaultTrivyImage":         {scan.DefaultTrivyImage, "Berth's scanners are pinned with Berth, not configured by image"},
	"defaultScannerNetworkMode": {"", "Berth's scanners are not configured by network mode"},
	"defaultScannerDns":         {[]any{}, "Berth's scanners are not configured with DNS servers"},
	// Berth's image prune does not spare the scanner images (an unused one
	// goes with every unused image and is pulled again when a scan needs
	// it): false, the truth, and true is refused.
	"protectScannerImages":      {false, "Berth's image prune does not spare scanner images (they are pulled again when a scan needs them)"},
	"defaultBackupImage":        {"fnsys/dockhand-backup:latest", "Berth has no backups"},
	"defaultTimezone":           {"UTC", "Berth's schedules carry their own timezone"},
	"eventCollectionMode":       {"stream", "Berth collects engine events from the event stream only"},
	"eventPollInterval":         {60000.0, "Berth collects engine events from the event stream only"},
	"metricsCollectionInterval": {30000.0, "Berth's metrics interval is fixed"},
	"primaryStackLocation":      {nil, "Berth creates stacks under DATA_DIR/stacks"},
	"eventCleanupEnabled":       {true, "Berth applies the activity retention (eventRetentionDays) continuously"},
	"eventCleanupCron":          {"0 3 * * *", "Berth applies the activity retention (eventRetentionDays) continuously"},
}

// generalMapped are the keys backed by a setting Berth has elsewhere.
var generalMapped = []string{"scheduleRetentionDays", "eventRetentionDays", "scheduleCleanupEnabled", "scheduleCleanupCron", "externalStackPaths"}

// generalSettings answers the general settings: the defaults, the stored
// object over them, and the settings Berth keeps elsewhere.
func (s *Server) generalSettings(ctx context.Context) (map[string]any, error) {
	out := map[string]any{}
	for k, p := range generalPreferences {
		out[k] = p.def
	}
	for k, u := range generalUnsupported {
		out[k] = u.def
	}
	stored, err := s.storedGeneral(ctx)
	if err != nil {
		return nil, err
	}
	for k, v := range stored {
		if _, unsupported := generalUnsupported[k]; !unsupported {
			out[k] = v
		}
	}
	retention, err := s.schedules.Retention(ctx)
	if err != nil {
		return nil, err
	}
	out["scheduleRetentionDays"] = retention.ExecutionDays
	activity, err := s.activity.Retention(ctx)
	if err != nil {
		return nil, err
	}
	out["eventRetentionDays"] = activity.Days
	if out["scheduleCleanupEnabled"], err = s.schedules.SystemEnabled(ctx, schedule.SystemExecutionCleanup); err != nil {
		return nil, err
	}
	out["scheduleCleanupCron"] = schedule.SystemCron(schedule.SystemExecutionCleanup)
	if out["externalStackPaths"], err = s.stacks.Roots(ctx); err != nil {
		return nil, err
	}
	return out, nil
}

// storedGeneral is the stored object of preferences ({} when none).
func (s *Server) storedGeneral(ctx context.Context) (map[string]any, error) {
	v, err := s.store.GetSetting(ctx, generalSettingsKey)
	if errors.Is(err, store.ErrNotFound) {
		return map[string]any{}, nil
	}
	if err != nil {
		return nil, err
	}
	obj := map[string]any{}
	if err := json.Unmarshal([]byte(v), &obj); err != nil || obj == nil {
		return map[string]any{}, nil
	}
	return obj, nil
}

// getGeneralSettings answers GET /api/settings/general.
func (s *Server) getGeneralSettings(c *gin.Context) error {
	out, err := s.generalSettings(c.Request.Context())
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, out)
}

// putGeneralSettings answers POST|PUT /api/settings/general: the keys sent
// are written (the others keep their value), all checked before any is.
func (s *Server) putGeneralSettings(c *gin.Context) error {
	ctx := c.Request.Context()
	raw, err := readObject(c, "Settings")
	if err != nil {
		return err
	}
	var body map[string]any
	if err := json.Unmarshal([]byte(raw), &body); err != nil {
		return fault.New(fault.Invalid, "Settings must be a JSON object")
	}
	keys := make([]string, 0, len(body))
	for k := range body {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	stored, err := s.storedGeneral(ctx)
	if err != nil {
		return err
	}
	mapped := map[string]any{}
	for _, k := range keys {
		v := body[k]
		if p, ok := generalPreferences[k]; ok {
			if !sameJSONType(v, p.def) || (p.check != nil && !p.check(v)) {
				return fault.Invalidf("Invalid value for %s", k)
			}
			stored[k] = v
			continue
		}
		if u, ok := generalUnsupported[k]; ok {
			if !isDefaultValue(k, v, u.def) {
				return fault.Invalidf("%s is not supported: %s (only its default, %s, is accepted)", k, u.why, jsonText(u.def))
			}
			continue
		}
		if slices.Contains(generalMapped, k) {
			mapped[k] = v
			continue
		}
		stored[k] = v
	}
	if err := s.applyMappedGeneral(ctx, mapped); err != nil {
		return err
	}
	b, err := json.Marshal(stored)
	if err != nil {
		return err
	}
	if err := s.store.SetSetting(ctx, generalSettingsKey, string(b)); err != nil {
		return err
	}
	return s.getGeneralSettings(c)
}

// applyMappedGeneral writes the keys backed by Berth's own settings, each
// checked before the first is written.
func (s *Server) applyMappedGeneral(ctx context.Context, m map[string]any) error {
	retention, err := s.schedules.Retention(ctx)
	if err != nil {
		return err
	}
	activity, err := s.activity.Retention(ctx)
	if err != nil {
		return err
	}
	var roots []string
	var cleanup *bool
	for k, v := range m {
		switch k {
		case "scheduleRetentionDays", "eventRetentionDays":
			n, ok := v.(float64)
			if !ok || n != float64(int(n)) {
				return fault.Invalidf("%s must be a whole number of days", k)
			}
			if k == "scheduleRetentionDays" {
				retention.ExecutionDays = int(n)
			} else {
				activity.Days = int(n)
			}
		case "scheduleCleanupEnabled":
			b, ok := v.(bool)
			if !ok {
				return fault.Invalidf("Invalid value for %s", k)
			}
			cleanup = &b
		case "scheduleCleanupCron":
			if cron := schedule.SystemCron(schedule.SystemExecutionCleanup); v != cron {
				return fault.Invalidf("scheduleCleanupCron is not supported: Berth's execution cleanup runs at a fixed time (only %q is accepted)", cron)
			}
		case "externalStackPaths":
			list, ok := v.([]any)
			if !ok {
				return fault.Invalidf("externalStackPaths must be a list of directories")
			}
			roots = []string{}
			for _, p := range list {
				s, ok := p.(string)
				if !ok {
					return fault.Invalidf("externalStackPaths must be a list of directories")
				}
				if strings.TrimSpace(s) != "" {
					roots = append(roots, s)
				}
			}
		}
	}
	if _, ok := m["scheduleRetentionDays"]; ok && (retention.ExecutionDays < 0 || retention.ExecutionDays > 3650) {
		return fault.Invalidf("scheduleRetentionDays must be a whole number of days from 0 to 3650")
	}
	if _, ok := m["eventRetentionDays"]; ok && (activity.Days < 1 || activity.Days > 365) {
		return fault.Invalidf("eventRetentionDays must be a whole number of days from 1 to 365")
	}
	if roots != nil {
		if _, err := s.stacks.SetRoots(ctx, roots); err != nil {
			return err
		}
	}
	if _, ok := m["scheduleRetentionDays"]; ok {
		if err := s.schedules.SetRetention(ctx, retention); err != nil {
			return err
		}
	}
	if _, ok := m["eventRetentionDays"]; ok {
		if err := s.activity.SetRetention(ctx, activity); err != nil {
			return err
		}
	}
	if cleanup != nil {
		return s.schedules.SetSystemEnabled(ctx, schedule.SystemExecutionCleanup, *cleanup)
	}
	return nil
}

// sameJSONType reports whether v decoded from JSON has def's JSON type.
func sameJSONType(v, def any) bool {
	return v != nil && reflect.TypeOf(v) == reflect.TypeOf(def)
}

// isDefaultValue reports whether v (decoded JSON) is the default def; for
// primaryStackLocation the reference takes "" as null.
func isDefaultValue(key string, v, def any) bool {
	if key == "primaryStackLocation" && v == "" {
		return true
	}
	if l, ok := v.([]any); ok && len(l) == 0 {
		d, ok := def.([]any)
		return ok && len(d) == 0
	}
	return reflect.DeepEqual(v, def)
}

// jsonText is v as JSON text.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
