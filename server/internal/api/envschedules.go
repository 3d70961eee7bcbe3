package api

import (
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/autoupdate"
	"github.com/berth-dev/berth/server/internal/schedule"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// updateCheckSettings is the wire form of an environment's update check.
type updateCheckSettings struct {
	Enabled               bool   `json:"enabled"`
	Cron                  string `json:"cron"`
	AutoUpdate            bool   `json:"autoUpdate"`
	VulnerabilityCriteria string `json:"vulnerabilityCriteria"`
	// The reference's newer-version-tag (semver) detection: Berth's check
	// compares the digest of the tag a container runs, so these are always
	// the reference's defaults (semver detection off).
	CheckPinnedVersions     bool   `json:"checkPinnedVersions"`
	SemverMaxBump           string `json:"semverMaxBump"`
	SemverMatchFlavor       bool   `json:"semverMatchFlavor"`
	SemverIncludePrerelease bool   `json:"semverIncludePrerelease"`
}

// updateCheckSettingsOf is the wire form of es.
func updateCheckSettingsOf(es store.EnvSchedule) updateCheckSettings {
	return updateCheckSettings{Enabled: es.Enabled, Cron: es.CronExpression, AutoUpdate: es.AutoUpdate,
		VulnerabilityCriteria: es.VulnerabilityCriteria, SemverMaxBump: "major", SemverMatchFlavor: true}
}

// errNoSemver refuses the reference's semver detection settings other than
// their defaults.
func errNoSemver(field string) error {
	return fault.Invalidf("%s is not supported: Berth's update check compares the registry digest of the tag a container runs and does not look for newer version tags (checkPinnedVersions false, semverMaxBump \"major\", semverMatchFlavor true and semverIncludePrerelease false are accepted)", field)
}

func (s *Server) getUpdateCheck(c *gin.Context) error {
	es, err := s.store.GetEnvSchedule(c.Request.Context(), envOf(c).ID, store.EnvUpdateCheck)
	if err != nil {
		return notFoundAs(err, errEnvNotFound)
	}
	return writeJSON(c, http.StatusOK, map[string]any{"settings": updateCheckSettingsOf(es)})
}

// setUpdateCheck saves an environment's update check; absent fields keep
// their value.
func (s *Server) setUpdateCheck(c *gin.Context) error {
	ctx := c.Request.Context()
	es, err := s.store.GetEnvSchedule(ctx, envOf(c).ID, store.EnvUpdateCheck)
	if err != nil {
		return notFoundAs(err, errEnvNotFound)
	}
	var req struct {
		Enabled               *bool   `json:"enabled"`
		Cron                  *string `json:"cron"`
		CronExpression        *string `json:"cronExpression"`
		AutoUpdate            *bool   `json:"autoUpdate"`
		VulnerabilityCriteria *string `json:"vulnerabilityCriteria"`

		CheckPinnedVersions     *bool   `json:"checkPinnedVersions"`
		SemverMaxBump           *string `json:"semverMaxBump"`
		SemverMatchFlavor       *bool   `json:"semverMatchFlavor"`
		SemverIncludePrerelease *bool   `json:"semverIncludePrerelease"`
	}
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	switch {
	case req.CheckPinnedVersions != nil && *req.CheckPinnedVersions:
		return errNoSemver("checkPinnedVersions")
	case req.SemverMaxBump != nil && *req.SemverMaxBump != "major":
		return errNoSemver("semverMaxBump")
	case req.SemverMatchFlavor != nil && !*req.SemverMatchFlavor:
		return errNoSemver("semverMatchFlavor")
	case req.SemverIncludePrerelease != nil && *req.SemverIncludePrerelease:
		return errNoSemver("semverIncludePrerelease")
	}
	setFlag(&es.Enabled, req.Enabled)
	setFlag(&es.AutoUpdate, req.AutoUpdate)
	if cron := first(req.Cron, req.CronExpression); req.Cron != nil || req.CronExpression != nil {
		es.CronExpression = strings.Join(strings.Fields(cron), " ")
	}
	if _, err := schedule.ParseCron(es.CronExpression); err != nil {
		return err
	}
	if req.VulnerabilityCriteria != nil {
		if es.VulnerabilityCriteria, err = autoupdate.CheckCriteria(*req.VulnerabilityCriteria); err != nil {
			return err
		}
	}
	if err := s.store.SaveEnvSchedule(ctx, &es); err != nil {
		return notFoundAs(err, errEnvNotFound)
	}
	s.schedulesChanged(c)
	return writeJSON(c, http.StatusOK, map[string]any{"success": true, "settings": updateCheckSettingsOf(es)})
}

// imagePruneSettings is the wire form of an environment's image prune.
type imagePruneSettings struct {
	Enabled        bool   `json:"enabled"`
	CronExpression string `json:"cronExpression"`
	PruneMode      string `json:"pruneMode"`
}

func (s *Server) getImagePrune(c *gin.Context) error {
	es, err := s.store.GetEnvSchedule(c.Request.Context(), envOf(c).ID, store.EnvImagePrune)
	if err != nil {
		return notFoundAs(err, errEnvNotFound)
	}
	return writeJSON(c, http.StatusOK, map[string]any{"settings": imagePruneSettings{Enabled: es.Enabled,
		CronExpression: es.CronExpression, PruneMode: es.PruneMode}})
}

// setImagePrune saves an environment's image prune; absent fields keep
// their value.
func (s *Server) setImagePrune(c *gin.Context) error {
	ctx := c.Request.Context()
	es, err := s.store.GetEnvSchedule(ctx, envOf(c).ID, store.EnvImagePrune)
	if err != nil {
		return notFoundAs(err, errEnvNotFound)
	}
	var req struct {
		Enabled        *bool   `json:"enabled"`
		CronExpression *string `json:"cronExpression"`
		Cron           *string `json:"cron"`
		PruneMode      *string `json:"pruneMode"`
	}
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	setFlag(&es.Enabled, req.Enabled)
	if cron := first(req.CronExpression, req.Cron); req.CronExpression != nil || req.Cron != nil {
		es.CronExpression = strings.Join(strings.Fields(cron), " ")
	}
	if _, err := schedule.ParseCron(es.CronExpression); err != nil {
		return err
	}
	if req.PruneMode != nil {
		switch *req.PruneMode {
		case "dangling", "all":
			es.PruneMode = *req.PruneMode
		default:
			return fault.Invalidf("Invalid pruneMode %q: use dangling or all", *req.PruneMode)
		}
	}
	if err := s.store.SaveEnvSchedule(ctx, &es); err != nil {
		return notFoundAs(err, errEnvNotFound)
	}
	s.schedulesChanged(c)
	return writeJSON(c, http.StatusOK, map[string]any{"success": true, "settings": imagePruneSettings{Enabled: es.Enabled,
		CronExpression: es.CronExpression, PruneMode: es.PruneMode}})
}

// pruneImagesNow runs the environment's image prune now and answers when it
// finished.
func (s *Server) pruneImagesNow(c *gin.Context) error {
	e, done, err := s.schedules.Trigger(c.Request.Context(), schedule.ImagePrune, envOf(c).ID, schedule.TriggerManual)
	if err != nil {
		return err
	}
	select {
	case <-done:
	case <-c.Request.Context().Done():
		return c.Request.Context().Err()
	}
	if e, err = s.store.GetExecution(c.Request.Context(), e.ID); err != nil {
		return err
	}
	if e.Status != store.ExecutionSuccess {
		msg := "Image prune failed"
		if e.ErrorMessage != nil {
			msg = *e.ErrorMessage
		}
		return fault.New(fault.Invalid, msg)
	}
	return writeJSON(c, http.StatusOK, map[string]any{"success": true, "execution": toExecutionJSON(e)})
}

func (s *Server) getTimezone(c *gin.Context) error {
	env := envOf(c)
	tz := zoneLabel(s.local)
	if env.Timezone != nil {
		tz = *env.Timezone
	}
	return writeJSON(c, http.StatusOK, map[string]string{"timezone": tz})
}

// setTimezone sets the zone of an environment's schedules (an IANA name;
// "" goes back to the server's).
func (s *Server) setTimezone(c *gin.Context) error {
	var req timezoneInput
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	if req.Timezone == nil {
		return fault.New(fault.Invalid, "timezone is required")
	}
	tz := strings.TrimSpace(*req.Timezone)
	var value *string
	if tz != "" {
		if _, err := time.LoadLocation(tz); err != nil || strings.EqualFold(tz, "local") {
			return fault.New(fault.Invalid, "Invalid timezone")
		}
		value = &tz
	}
	if err := s.store.SetEnvironmentTimezone(c.Request.Context(), envOf(c).ID, value); err != nil {
		return notFoundAs(err, errEnvNotFound)
	}
	s.schedulesChanged(c)
	if tz == "" {
		tz = zoneLabel(s.local)
	}
	return writeJSON(c, http.StatusOK, map[string]any{"success": true, "timezone": tz})
}

// setFlag sets *dst to *src when src is given.
func setFlag(dst, src *bool) {
	if src != nil {
		*dst = *src
	}
}

func (s *Server) getDiskWarning(c *gin.Context) error {
	dw, err := s.store.GetDiskWarning(c.Request.Context(), envOf(c).ID)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, diskWarningOf(dw, false))
}

// diskWarningOf is the answer of disk warning dw.
func diskWarningOf(dw store.DiskWarning, success bool) diskWarningAnswer {
	return diskWarningAnswer{Success: success, Settings: dw, Enabled: dw.Enabled, Mode: dw.Mode,
		Threshold: dw.ThresholdPercent, ThresholdGb: dw.ThresholdGb}
}

// setDiskWarning saves an environment's disk space warning; absent fields
// keep their value.
func (s *Server) setDiskWarning(c *gin.Context) error {
	ctx := c.Request.Context()
	dw, err := s.store.GetDiskWarning(ctx, envOf(c).ID)
	if err != nil {
		return err
	}
	var req diskWarningInput
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	setFlag(&dw.Enabled, req.Enabled)
	if req.Mode != nil {
		if *req.Mode != store.DiskPercentage && *req.Mode != store.DiskAbsolute {
			return fault.Invalidf("Invalid mode %q: use \"percentage\" (threshold, a share of the filesystem) or \"absolute\" (thresholdGb, the engine's disk use in GB)", *req.Mode)
		}
		dw.Mode = *req.Mode
	}
	for _, p := range []struct {
		name string
		v    *int
	}{{"thresholdPercent", req.ThresholdPercent}, {"threshold", req.Threshold}} {
		if p.v == nil {
			continue
		}
		if *p.v < 1 || *p.v > 99 {
			return fault.Invalidf("Invalid %s %d: use a whole percentage from 1 to 99", p.name, *p.v)
		}
		if req.ThresholdPercent != nil && req.Threshold != nil && *req.ThresholdPercent != *req.Threshold {
			return fault.Invalidf("threshold and thresholdPercent name the same setting: send one, or the same value")
		}
		dw.ThresholdPercent = *p.v
	}
	if req.ThresholdGb != nil {
		if *req.ThresholdGb < 1 {
			return fault.Invalidf("Invalid thresholdGb %v: use a number of GB of at least 1", *req.ThresholdGb)
		}
		dw.ThresholdGb = *req.ThresholdGb
	}
	if err := s.store.SetDiskWarning(ctx, envOf(c).ID, dw); err != nil {
		return err
	}
	if s.notify != nil {
		s.notify.CheckDiskSoon(envOf(c).ID) // a threshold already crossed is told now
	}
	return writeJSON(c, http.StatusOK, diskWarningOf(dw, true))
}
