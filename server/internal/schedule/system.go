package schedule

import (
	"context"
	"strconv"

	"github.com/berth-dev/berth/shared/fault"
)

// The system schedules: fixed small ids, never deleted.
const (
	SystemExecutionCleanup int64 = 1 // executions past their retention
	SystemEventCleanup     int64 = 2 // expired sessions; audit entries past their retention (when one is set)
)

// system is a system schedule's fixed part.
type system struct {
	id          int64
	name        string
	description string
	cron        string
}

var systems = []system{
	{SystemExecutionCleanup, "Schedule execution cleanup", "Delete schedule executions older than the retention", "0 3 * * *"},
	{SystemEventCleanup, "Event cleanup", "Delete expired sessions and, when a retention is set, older audit entries", "30 3 * * *"},
}

// Retention settings (days) and their defaults.
const (
	settingExecutionRetention = "schedules.execution_retention_days"
	settingEventRetention     = "schedules.event_retention_days"
	DefaultExecutionRetention = 30
	DefaultEventRetention     = 0 // keep the audit log
)

func systemEnabledKey(id int64) string {
	return "schedules.system." + strconv.FormatInt(id, 10) + ".enabled"
}

var errUnknownSystem = fault.New(fault.NotFound, "Unknown system schedule")

func (s *Service) systemDefinitions(ctx context.Context) ([]Definition, error) {
	out := make([]Definition, 0, len(systems))
	for _, sys := range systems {
		d, err := s.systemDefinition(ctx, sys.id)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

func (s *Service) systemDefinition(ctx context.Context, id int64) (Definition, error) {
	for _, sys := range systems {
		if sys.id != id {
			continue
		}
		enabled, err := s.store.BoolSetting(ctx, systemEnabledKey(id), true)
		if err != nil {
			return Definition{}, err
		}
		return Definition{Type: SystemCleanup, ID: id, Name: sys.name, EntityName: sys.name, Description: sys.description,
			Enabled: enabled, ScheduleType: DetectScheduleType(sys.cron), Cron: sys.cron, IsSystem: true}, nil
	}
	return Definition{}, errUnknownSystem
}

// ToggleSystem switches a system schedule on or off and returns its new state.
func (s *Service) ToggleSystem(ctx context.Context, id int64) (bool, error) {
	d, err := s.systemDefinition(ctx, id)
	if err != nil {
		return false, err
	}
	if err := s.store.SetSetting(ctx, systemEnabledKey(id), strconv.FormatBool(!d.Enabled)); err != nil {
		return false, err
	}
	s.refreshSoon(ctx)
	return !d.Enabled, nil
}

// Retention is how long the system cleanups keep what they delete, in days
// (0 keeps it forever).
type Retention struct {
	ExecutionDays int `json:"executionRetentionDays"`
	EventDays     int `json:"eventRetentionDays"`
}

// Retention returns the retention settings.
func (s *Service) Retention(ctx context.Context) (Retention, error) {
	var r Retention
	var err error
	if r.ExecutionDays, err = s.store.IntSetting(ctx, settingExecutionRetention, DefaultExecutionRetention); err != nil {
		return r, err
	}
	r.EventDays, err = s.store.IntSetting(ctx, settingEventRetention, DefaultEventRetention)
	return r, err
}

// SetRetention stores the retention settings.
func (s *Service) SetRetention(ctx context.Context, r Retention) error {
	if r.ExecutionDays < 0 || r.ExecutionDays > 3650 || r.EventDays < 0 || r.EventDays > 3650 {
		return fault.New(fault.Invalid, "Retention must be a whole number of days from 0 to 3650")
	}
	if err := s.store.SetSetting(ctx, settingExecutionRetention, strconv.Itoa(r.ExecutionDays)); err != nil {
		return err
	}
	return s.store.SetSetting(ctx, settingEventRetention, strconv.Itoa(r.EventDays))
}

// runSystem runs a system cleanup.
func (s *Service) runSystem(ctx context.Context, d Definition, run *Run) error {
	r, err := s.Retention(ctx)
	if err != nil {
		return err
	}
	now := s.now()
	switch d.ID {
	case SystemExecutionCleanup:
		if r.ExecutionDays == 0 {
			run.Logf("Execution retention is 0 (keep forever): nothing to delete")
			return nil
		}
		n, err := s.store.DeleteExecutionsBefore(ctx, now.AddDate(0, 0, -r.ExecutionDays))
		if err != nil {
			return err
		}
		run.Logf("Deleted %d executions older than %d days", n, r.ExecutionDays)
		run.Detail("deleted", n)
	case SystemEventCleanup:
		n, err := s.store.DeleteExpiredSessions(ctx, now)
		if err != nil {
			return err
		}
		run.Logf("Deleted %d expired sessions", n)
		run.Detail("sessionsDeleted", n)
		if r.EventDays > 0 {
			a, err := s.store.DeleteAuditBefore(ctx, now.AddDate(0, 0, -r.EventDays))
			if err != nil {
				return err
			}
			run.Logf("Deleted %d audit entries older than %d days", a, r.EventDays)
			run.Detail("auditDeleted", a)
		} else {
			run.Logf("Audit retention is 0: the audit log is kept")
		}
	default:
		return errUnknownSystem
	}
	return nil
}

// SystemEnabled reports whether the system schedule id is on.
func (s *Service) SystemEnabled(ctx context.Context, id int64) (bool, error) {
	d, err := s.systemDefinition(ctx, id)
	return d.Enabled, err
}

// SetSystemEnabled switches the system schedule id on or off.
func (s *Service) SetSystemEnabled(ctx context.Context, id int64, on bool) error {
	d, err := s.systemDefinition(ctx, id)
	if err != nil || d.Enabled == on {
		return err
	}
	if err := s.store.SetSetting(ctx, systemEnabledKey(id), strconv.FormatBool(on)); err != nil {
		return err
	}
	s.refreshSoon(ctx)
	return nil
}

// SystemCron is the fixed cron expression of the system schedule id ("" for
// an unknown id).
func SystemCron(id int64) string {
	for _, sys := range systems {
		if sys.id == id {
			return sys.cron
		}
	}
	return ""
}
