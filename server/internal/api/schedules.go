package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/auth"
	"github.com/berth-dev/berth/server/internal/schedule"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// executionJSON is the wire form of an execution (COMPAT.md).
type executionJSON struct {
	ID            int64           `json:"id"`
	ScheduleType  string          `json:"scheduleType"`
	ScheduleID    int64           `json:"scheduleId"`
	EnvironmentID *int64          `json:"environmentId"`
	EntityName    string          `json:"entityName"`
	TriggeredBy   string          `json:"triggeredBy"`
	TriggeredAt   time.Time       `json:"triggeredAt"`
	StartedAt     *time.Time      `json:"startedAt"`
	CompletedAt   *time.Time      `json:"completedAt"`
	Duration      *int64          `json:"duration"` // milliseconds
	Status        string          `json:"status"`
	ErrorMessage  *string         `json:"errorMessage"`
	Details       json.RawMessage `json:"details"`
	Logs          string          `json:"logs"`
}

func toExecutionJSON(e store.Execution) executionJSON {
	out := executionJSON{ID: e.ID, ScheduleType: e.ScheduleType, ScheduleID: e.ScheduleID, EnvironmentID: e.EnvironmentID,
		EntityName: e.EntityName, TriggeredBy: e.TriggeredBy, TriggeredAt: e.TriggeredAt, StartedAt: e.StartedAt,
		CompletedAt: e.CompletedAt, Duration: e.DurationMS, Status: e.Status, ErrorMessage: e.ErrorMessage,
		Details: json.RawMessage("null"), Logs: e.Logs}
	if e.Details != "" && json.Valid([]byte(e.Details)) {
		out.Details = json.RawMessage(e.Details)
	}
	return out
}

// scheduleJSON is the wire form of a schedule (the spec's schedule info).
type scheduleJSON struct {
	ID                    int64           `json:"id"`
	Type                  string          `json:"type"`
	Name                  string          `json:"name"`
	EntityName            string          `json:"entityName"`
	Description           string          `json:"description,omitempty"`
	EnvironmentID         *int64          `json:"environmentId"`
	EnvironmentName       *string         `json:"environmentName"`
	Enabled               bool            `json:"enabled"`
	ScheduleType          string          `json:"scheduleType"`
	CronExpression        *string         `json:"cronExpression"`
	Timezone              string          `json:"timezone"`
	NextRun               *string         `json:"nextRun"`
	LastExecution         *executionJSON  `json:"lastExecution"`
	RecentExecutions      []executionJSON `json:"recentExecutions"`
	IsSystem              bool            `json:"isSystem"`
	EnvHasScanning        *bool           `json:"envHasScanning,omitempty"`
	VulnerabilityCriteria *string         `json:"vulnerabilityCriteria,omitempty"`
	AutoUpdate            *bool           `json:"autoUpdate,omitempty"`
	PruneMode             string          `json:"pruneMode,omitempty"`
}

func (s *Server) toScheduleJSON(in schedule.Info) scheduleJSON {
	d := in.Definition
	out := scheduleJSON{ID: d.ID, Type: string(d.Type), Name: d.Name, EntityName: d.EntityName, Description: d.Description,
		EnvironmentID: d.EnvironmentID, EnvironmentName: d.EnvironmentName, Enabled: d.Enabled, ScheduleType: d.ScheduleType,
		Timezone: s.zoneName(d.Timezone), IsSystem: d.IsSystem, PruneMode: d.PruneMode,
		RecentExecutions: convert(in.RecentExecutions, toExecutionJSON)}
	if d.Cron != "" {
		cron := d.Cron
		out.CronExpression = &cron
	}
	if in.NextRun != nil {
		next := in.NextRun.Format(time.RFC3339)
		out.NextRun = &next
	}
	if in.LastExecution != nil {
		last := toExecutionJSON(*in.LastExecution)
		out.LastExecution = &last
	}
	switch d.Type {
	case schedule.ContainerUpdate, schedule.EnvUpdateCheck:
		scanning, criteria := d.EnvHasScanning, d.VulnerabilityCriteria
		out.EnvHasScanning, out.VulnerabilityCriteria = &scanning, &criteria
		if d.Type == schedule.EnvUpdateCheck {
			auto := d.AutoUpdate
			out.AutoUpdate = &auto
		}
	}
	return out
}

// zoneName is the name of a schedule's zone: its environment's, else the
// server's.
func (s *Server) zoneName(tz string) string {
	if tz != "" {
		return tz
	}
	return zoneLabel(s.local)
}

// zoneLabel names loc: its IANA name, or for the process's local zone
// without one, its abbreviation (e.g. UTC).
func zoneLabel(loc *time.Location) string {
	if loc == nil {
		loc = time.Local
	}
	if n := loc.String(); n != "Local" {
		return n
	}
	abbr, _ := time.Now().In(loc).Zone()
	return abbr
}

// notFoundAs maps the store's ErrNotFound to f.
func notFoundAs(err, f error) error {
	if errors.Is(err, store.ErrNotFound) {
		return f
	}
	return err
}

// mayReach reports whether the caller may act with perm on a schedule of
// environment envID (nil: a system schedule, which needs perm everywhere).
func mayReach(c *gin.Context, perm string, envID *int64) error {
	ident := identityOf(c)
	if ident == nil {
		return nil
	}
	return denial(ident.Access.Check(perm, envID))
}

// sees reports whether the caller may see the schedules of envID (nil:
// system schedules, which every holder of schedules:view sees).
func sees(ident *auth.Identity, envID *int64) bool {
	return ident == nil || envID == nil || ident.Access.Check("schedules:view", envID) == auth.Allowed
}

func (s *Server) listSchedules(c *gin.Context) error {
	list, err := s.schedules.List(c.Request.Context())
	if err != nil {
		return err
	}
	ident := identityOf(c)
	out := make([]scheduleJSON, 0, len(list))
	for _, in := range list {
		if sees(ident, in.EnvironmentID) {
			out = append(out, s.toScheduleJSON(in))
		}
	}
	return writeJSON(c, http.StatusOK, map[string]any{"schedules": out})
}

// queryInt reads an optional non-negative integer query parameter.
func queryInt(c *gin.Context, name string, def int) (int, error) {
	v := c.Query(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fault.Invalidf("Query parameter %s must be a non-negative integer", name)
	}
	return n, nil
}

// Pages of the executions list.
const (
	defaultExecutionLimit = 50
	maxExecutionLimit     = 500
)

func (s *Server) listExecutions(c *gin.Context) error {
	ctx := c.Request.Context()
	limit, err := queryInt(c, "limit", defaultExecutionLimit)
	if err != nil {
		return err
	}
	if limit == 0 || limit > maxExecutionLimit {
		limit = min(max(limit, defaultExecutionLimit), maxExecutionLimit)
	}
	offset, err := queryInt(c, "offset", 0)
	if err != nil {
		return err
	}
	f := store.ExecutionFilter{ScheduleType: c.Query("scheduleType"), Status: c.Query("status"),
		TriggeredBy: c.Query("triggeredBy"), Statuses: splitList(c.QueryArray("statuses")), Limit: limit, Offset: offset}
	if f.Since, f.Until, err = dateRange(c.Query("fromDate"), c.Query("toDate")); err != nil {
		return err
	}
	if f.ScheduleType != "" {
		if _, err := schedule.ParseType(f.ScheduleType); err != nil {
			return err
		}
	}
	for _, q := range []struct {
		name string
		dst  *int64
	}{{"scheduleId", &f.ScheduleID}, {"environmentId", &f.EnvironmentID}} {
		n, err := queryInt(c, q.name, 0)
		if err != nil {
			return err
		}
		*q.dst = int64(n)
	}
	if err := s.visibleExecutions(c, &f); err != nil {
		return err
	}
	list, total, err := s.store.ListExecutions(ctx, f)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, map[string]any{"executions": convert(list, toExecutionJSON), "total": total,
		"limit": limit, "offset": offset})
}

// visibleExecutions limits f to the executions the caller may see: of
// f.EnvironmentID when given (once the caller may reach it), else of the
// environments the caller sees, and those of no environment.
func (s *Server) visibleExecutions(c *gin.Context, f *store.ExecutionFilter) error {
	ident := identityOf(c)
	if f.EnvironmentID != 0 {
		return mayReach(c, "schedules:view", &f.EnvironmentID)
	}
	if ident == nil || ident.Access.Admin {
		return nil
	}
	envs, err := s.store.ListEnvironments(c.Request.Context())
	if err != nil {
		return err
	}
	f.EnvironmentIDs = []int64{}
	for _, e := range envs {
		if sees(ident, &e.ID) {
			f.EnvironmentIDs = append(f.EnvironmentIDs, e.ID)
		}
	}
	return nil
}

// schedulePoll is how often the schedules stream looks for executions of
// other servers sharing the database (this server's wake it at once).
const schedulePoll = 2 * time.Second

// streamSchedules sends, as SSE, an "execution" event (an execution
// without its logs) each time an execution the caller may see starts or
// ends, on any server sharing the database; first "connected", then the
// executions running at that moment. Query environmentId narrows it to one
// environment.
func (s *Server) streamSchedules(c *gin.Context) error {
	ctx := c.Request.Context()
	var f store.ExecutionFilter
	envID, err := queryInt(c, "environmentId", 0)
	if err != nil {
		return err
	}
	f.EnvironmentID = int64(envID)
	if err := s.visibleExecutions(c, &f); err != nil {
		return err
	}
	latest := f
	latest.Limit = 1
	last, _, err := s.store.ListExecutions(ctx, latest)
	if err != nil {
		return err
	}
	var after int64
	if len(last) > 0 {
		after = last[0].ID
	}
	running := f
	running.Status, running.Limit = store.ExecutionRunning, maxExecutionLimit
	now, _, err := s.store.ListExecutions(ctx, running)
	if err != nil {
		return err
	}
	es := startEvents(c)
	defer es.Close()
	if err := es.Send("connected", map[string]any{}); err != nil {
		return err
	}
	watched := map[int64]bool{} // running executions, whose end is still to be sent
	send := func(list []store.Execution) error {
		for i := len(list) - 1; i >= 0; i-- { // oldest first
			e := list[i]
			after = max(after, e.ID)
			watched[e.ID] = e.Status == store.ExecutionRunning
			if !watched[e.ID] {
				delete(watched, e.ID)
			}
			out := toExecutionJSON(e)
			out.Logs = ""
			if err := es.Send("execution", out); err != nil {
				return err
			}
		}
		return nil
	}
	if err := send(now); err != nil {
		return err
	}
	tick := time.NewTicker(schedulePoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-s.schedules.Executions():
		case <-tick.C:
		}
		fresh := f
		fresh.AfterID, fresh.Limit = after, maxExecutionLimit
		list, _, err := s.store.ListExecutions(ctx, fresh)
		if err != nil {
			s.log.Warn("schedules stream: read executions", "err", err)
			return es.Send("error", map[string]string{"error": "Failed to read executions"})
		}
		ended := f
		ended.IDs, ended.Limit = make([]int64, 0, len(watched)), maxExecutionLimit
		for id := range watched {
			ended.IDs = append(ended.IDs, id)
		}
		changed, _, err := s.store.ListExecutions(ctx, ended)
		if err != nil {
			s.log.Warn("schedules stream: read executions", "err", err)
			return es.Send("error", map[string]string{"error": "Failed to read executions"})
		}
		var done []store.Execution
		for _, e := range changed {
			if e.Status != store.ExecutionRunning {
				done = append(done, e)
			}
		}
		if err := send(append(list, done...)); err != nil {
			return nil // the client left
		}
	}
}

var errExecutionNotFound = fault.New(fault.NotFound, "Execution not found")

// executionOf returns the execution of the {id} path parameter once the
// caller may act with perm in its environment.
func (s *Server) executionOf(c *gin.Context, perm string) (store.Execution, error) {
	id, err := pathID(c, "Execution")
	if err != nil {
		return store.Execution{}, err
	}
	e, err := s.store.GetExecution(c.Request.Context(), id)
	if err != nil {
		return store.Execution{}, notFoundAs(err, errExecutionNotFound)
	}
	if e.EnvironmentID != nil {
		if err := mayReach(c, perm, e.EnvironmentID); err != nil {
			return store.Execution{}, err
		}
	}
	return e, nil
}

func (s *Server) getExecution(c *gin.Context) error {
	e, err := s.executionOf(c, "schedules:view")
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, toExecutionJSON(e))
}

func (s *Server) deleteExecution(c *gin.Context) error {
	e, err := s.executionOf(c, "schedules:edit")
	if err != nil {
		return err
	}
	if e.Status == store.ExecutionRunning {
		return fault.New(fault.Conflict, "A running execution cannot be deleted")
	}
	if err := s.store.DeleteExecution(c.Request.Context(), e.ID); err != nil {
		return notFoundAs(err, errExecutionNotFound)
	}
	return writeJSON(c, http.StatusOK, success)
}

// scheduleOf resolves the {type} and {id} path parameters to a schedule
// once the caller may act with perm in its environment.
func (s *Server) scheduleOf(c *gin.Context, perm string) (schedule.Definition, error) {
	t, err := schedule.ParseType(c.Param("type"))
	if err != nil {
		return schedule.Definition{}, err
	}
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id <= 0 {
		return schedule.Definition{}, fault.New(fault.Invalid, "Invalid schedule ID")
	}
	d, err := s.schedules.Definition(c.Request.Context(), t, id)
	if err != nil {
		return schedule.Definition{}, err
	}
	if d.IsSystem && perm != "schedules:run" {
		perm = "settings:edit" // switching system jobs is an administrator's setting
	}
	if err := mayReach(c, perm, d.EnvironmentID); err != nil {
		return schedule.Definition{}, err
	}
	noteAudit(c, string(d.Type)+"/"+strconv.FormatInt(d.ID, 10), d.Name)
	return d, nil
}

// runSchedule starts a schedule now; with ?wait=true it answers once the
// run has finished, with its execution.
func (s *Server) runSchedule(c *gin.Context) error {
	d, err := s.scheduleOf(c, "schedules:run")
	if err != nil {
		return err
	}
	wait, err := queryBool(c, "wait", false)
	if err != nil {
		return err
	}
	e, done, err := s.schedules.Trigger(c.Request.Context(), d.Type, d.ID, schedule.TriggerManual)
	if err != nil {
		return err
	}
	out := map[string]any{"success": true, "message": "Schedule triggered successfully", "executionId": e.ID}
	if wait {
		select {
		case <-done:
		case <-c.Request.Context().Done():
			return c.Request.Context().Err()
		}
		if e, err = s.store.GetExecution(c.Request.Context(), e.ID); err != nil {
			return err
		}
		out["execution"] = toExecutionJSON(e)
	}
	return writeJSON(c, http.StatusOK, out)
}

func (s *Server) toggleSchedule(c *gin.Context) error {
	d, err := s.scheduleOf(c, "schedules:edit")
	if err != nil {
		return err
	}
	on, err := s.schedules.Toggle(c.Request.Context(), d.Type, d.ID)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, map[string]any{"success": true, "enabled": on})
}

func (s *Server) deleteSchedule(c *gin.Context) error {
	d, err := s.scheduleOf(c, "schedules:edit")
	if err != nil {
		return err
	}
	if err := s.schedules.Delete(c.Request.Context(), d.Type, d.ID); err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, success)
}

func (s *Server) toggleSystemSchedule(c *gin.Context) error {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id <= 0 {
		return fault.New(fault.Invalid, "Invalid system schedule ID")
	}
	on, err := s.schedules.ToggleSystem(c.Request.Context(), id)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, map[string]any{"success": true, "enabled": on})
}

func (s *Server) getScheduleSettings(c *gin.Context) error {
	ctx := c.Request.Context()
	r, err := s.schedules.Retention(ctx)
	if err != nil {
		return err
	}
	hide, err := s.hideSystemJobs(ctx, identityOf(c))
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, scheduleSettingsAnswer{ExecutionDays: r.ExecutionDays, EventDays: r.EventDays, HideSystemJobs: hide})
}

func (s *Server) putScheduleSettings(c *gin.Context) error {
	ctx := c.Request.Context()
	r, err := s.schedules.Retention(ctx)
	if err != nil {
		return err
	}
	var req retentionInput
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	if req.ExecutionDays != nil {
		r.ExecutionDays = *req.ExecutionDays
	}
	if req.EventDays != nil {
		r.EventDays = *req.EventDays
	}
	if err := s.schedules.SetRetention(ctx, r); err != nil {
		return err
	}
	if req.HideSystemJobs != nil {
		if err := s.store.SetSetting(ctx, hideSystemJobsKey(identityOf(c)), strconv.FormatBool(*req.HideSystemJobs)); err != nil {
			return err
		}
	}
	hide, err := s.hideSystemJobs(ctx, identityOf(c))
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, scheduleSettingsAnswer{ExecutionDays: r.ExecutionDays, EventDays: r.EventDays, HideSystemJobs: hide})
}

// hideSystemJobsKey is the settings key of the hideSystemJobs preference:
// the signed-in user's own, or the global one (no authentication).
func hideSystemJobsKey(ident *auth.Identity) string {
	if ident == nil || ident.User.ID == 0 {
		return "schedules.hide_system_jobs"
	}
	return fmt.Sprintf("user.%d.schedules.hide_system_jobs", ident.User.ID)
}

// hideSystemJobs is the caller's hideSystemJobs preference: the user's,
// else the global one, else false (system jobs shown).
func (s *Server) hideSystemJobs(ctx context.Context, ident *auth.Identity) (bool, error) {
	v, err := s.store.GetSetting(ctx, hideSystemJobsKey(ident))
	if errors.Is(err, store.ErrNotFound) {
		return s.store.BoolSetting(ctx, hideSystemJobsKey(nil), false)
	}
	if err != nil {
		return false, err
	}
	return v == "true", nil
}

// schedulesChanged refreshes the scheduler after a change of a schedule's
// owner (a git stack, an environment, a container) made by another route.
func (s *Server) schedulesChanged(c *gin.Context) {
	if s.schedules != nil {
		s.schedules.Changed(c.Request.Context())
	}
}
