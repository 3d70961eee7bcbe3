package api

// The body of a backup configuration's create and update, and the checks of
// what it asks for.

import (
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/berth-dev/berth/server/internal/backupjobs"
	"github.com/berth-dev/berth/server/internal/schedule"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// backupConfigRequest is the body of POST and PUT /api/backup/configs:
// the reference's fields and Berth's (name, paths, includeStackDir,
// excludes, hooks). On PUT, absent fields keep their value.
type backupConfigRequest struct {
	DestinationID    *int64               `json:"destinationId"`
	TargetName       *string              `json:"targetName"`
	Type             *string              `json:"type"`
	EnvironmentID    *int64               `json:"environmentId"`
	Name             *string              `json:"name"`
	Enabled          *bool                `json:"enabled"`
	AllVolumes       *bool                `json:"allVolumes"`
	SelectedVolumes  *[]string            `json:"selectedVolumes"`
	Paths            *[]string            `json:"paths"`
	IncludeStackDir  *bool                `json:"includeStackDir"`
	Excludes         *[]string            `json:"excludes"`
	StopBeforeBackup *bool                `json:"stopBeforeBackup"`
	Schedule         *string              `json:"schedule"`
	Retention        *backupRetentionJSON `json:"retention"`
	Options          json.RawMessage      `json:"options"`
	Tags             *[]string            `json:"tags"`
	PreHook          *string              `json:"preHook"`
	PostHook         *string              `json:"postHook"`
	HookService      *string              `json:"hookService"`
}

// Bounds of a configuration's fields.
const (
	maxBackupList = 200
	maxBackupHook = 4096
)

// apply writes req onto b and checks the result.
func (req backupConfigRequest) apply(b *store.BackupConfig) error {
	if req.Name != nil {
		b.Name = strings.TrimSpace(*req.Name)
	}
	if req.DestinationID != nil {
		b.DestinationID = *req.DestinationID
	}
	if req.Enabled != nil {
		b.Enabled = *req.Enabled
	}
	if req.AllVolumes != nil {
		b.AllVolumes = *req.AllVolumes
	}
	if req.SelectedVolumes != nil {
		b.Volumes = *req.SelectedVolumes
	}
	if req.Paths != nil {
		b.Paths = *req.Paths
	}
	if req.IncludeStackDir != nil {
		b.IncludeStackDir = *req.IncludeStackDir
	}
	if req.Excludes != nil {
		b.Excludes = *req.Excludes
	}
	if req.Tags != nil {
		b.Tags = *req.Tags
	}
	if req.StopBeforeBackup != nil {
		b.StopDuringBackup = *req.StopBeforeBackup
	}
	if req.Schedule != nil {
		b.Schedule = strings.TrimSpace(*req.Schedule)
	}
	if r := req.Retention; r != nil {
		b.Retention = store.BackupRetention{KeepLast: r.KeepLast, KeepDaily: r.KeepDaily, KeepWeekly: r.KeepWeekly,
			KeepMonthly: r.KeepMonthly, KeepYearly: r.KeepYearly}
	}
	if len(req.Options) > 0 && string(req.Options) != "null" {
		var obj map[string]any
		if json.Unmarshal(req.Options, &obj) != nil {
			return fault.Invalidf("options must be an object")
		}
		b.Options = string(req.Options)
	}
	if req.PreHook != nil {
		b.PreHook = *req.PreHook
	}
	if req.PostHook != nil {
		b.PostHook = *req.PostHook
	}
	if req.HookService != nil {
		b.HookContainer = strings.TrimSpace(*req.HookService)
	}
	return validateBackupConfig(b)
}

func validateBackupConfig(b *store.BackupConfig) error {
	if b.DestinationID <= 0 {
		return fault.Invalidf("destinationId is required")
	}
	if b.Type == store.BackupBerth {
		if err := validateSelfConfig(b); err != nil {
			return err
		}
	}
	if b.TargetName == "" {
		return fault.Invalidf("targetName is required")
	}
	if !engine.ValidName(b.TargetName) {
		return fault.Invalidf("Invalid targetName %q", b.TargetName)
	}
	if b.Type != store.BackupContainer && b.Type != store.BackupStack && b.Type != store.BackupBerth {
		return fault.Invalidf("Invalid type %q (container, stack or berth)", b.Type)
	}
	if b.Name == "" {
		b.Name = b.TargetName
	}
	if len(b.Name) > 200 {
		return fault.Invalidf("name is longer than 200 characters")
	}
	if b.Schedule != "" {
		if _, err := schedule.ParseCron(b.Schedule); err != nil {
			return fault.Invalidf("Invalid cron expression %q", b.Schedule)
		}
	}
	r := b.Retention
	for _, n := range []int{r.KeepLast, r.KeepDaily, r.KeepWeekly, r.KeepMonthly, r.KeepYearly} {
		if n < 0 || n > 10000 {
			return fault.Invalidf("Invalid retention: each keep count is between 0 and 10000")
		}
	}
	for _, l := range []struct {
		name string
		v    []string
	}{{"selectedVolumes", b.Volumes}, {"paths", b.Paths}, {"excludes", b.Excludes}, {"tags", b.Tags}} {
		if len(l.v) > maxBackupList {
			return fault.Invalidf("%s has more than %d items", l.name, maxBackupList)
		}
		for _, v := range l.v {
			if strings.TrimSpace(v) == "" || strings.ContainsAny(v, "\x00\n") {
				return fault.Invalidf("%s holds an empty or invalid item", l.name)
			}
		}
	}
	if !b.AllVolumes && len(b.Volumes) == 0 && len(b.Paths) == 0 && !(b.Type == store.BackupStack && b.IncludeStackDir) &&
		b.Type != store.BackupBerth {
		return fault.Invalidf("Nothing to back up: allVolumes is false and no volume or path is selected")
	}
	for _, p := range b.Paths {
		if !filepath.IsAbs(p) || filepath.Clean(p) != p || p == "/" {
			return fault.Invalidf("Invalid path %q: an absolute, clean host path other than /", p)
		}
	}
	for _, t := range b.Tags {
		if strings.HasPrefix(t, "berth:") || strings.Contains(t, ",") {
			return fault.Invalidf("Invalid tag %q: berth: tags are Berth's own, and a tag has no comma", t)
		}
	}
	for _, h := range []string{b.PreHook, b.PostHook} {
		if len(h) > maxBackupHook {
			return fault.Invalidf("A hook is longer than %d characters", maxBackupHook)
		}
	}
	if (b.PreHook != "" || b.PostHook != "") && b.Type == store.BackupStack && b.HookContainer == "" {
		return fault.Invalidf("hookService is required for the hooks of a stack (the service whose container runs them)")
	}
	return nil
}

// validateSelfConfig checks a configuration of Berth itself: its target
// is "berth" ("" becomes it), and what only a container or stack has is
// refused rather than ignored.
func validateSelfConfig(b *store.BackupConfig) error {
	if b.TargetName == "" {
		b.TargetName = backupjobs.SelfTarget
	}
	if b.TargetName != backupjobs.SelfTarget {
		return fault.Invalidf("The targetName of a backup of Berth itself is %q", backupjobs.SelfTarget)
	}
	if b.Name == "" {
		b.Name = "Berth"
	}
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"allVolumes", b.AllVolumes}, {"selectedVolumes", len(b.Volumes) > 0}, {"paths", len(b.Paths) > 0},
		{"excludes", len(b.Excludes) > 0}, {"includeStackDir", b.IncludeStackDir}, {"stopBeforeBackup", b.StopDuringBackup},
		{"preHook", b.PreHook != ""}, {"postHook", b.PostHook != ""}, {"hookService", b.HookContainer != ""},
	} {
		if f.set {
			return fault.Invalidf("%s does not apply to a backup of Berth itself: it backs up Berth's own archive "+
				"(database, encryption key, stack files; git with options.includeGit), not a container's or stack's data", f.name)
		}
	}
	_, err := backupjobs.ParseSelfOptions(b.Options)
	return err
}

// errSelfBackupAdmin refuses a non-admin a configuration of Berth itself.
var errSelfBackupAdmin = fault.New(fault.Forbidden,
	"Only an admin may manage or download a backup of Berth itself: its archive holds the encryption key and every secret")

var errBackupConfigNotFound = fault.New(fault.NotFound, "Backup configuration not found")
