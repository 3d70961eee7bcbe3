package api

import (
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/activity"
	"github.com/berth-dev/berth/server/internal/auth"
	"github.com/berth-dev/berth/server/internal/dashboard"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// activityPerm is what a caller needs on an environment to see its activity.
const activityPerm = "activity:view"

// activityClearPerm is what clearing an environment's activity needs there.
const activityClearPerm = "environments:edit"

// activityJSON is one stored engine event.
type activityJSON struct {
	ID              int64  `json:"id"`
	EnvironmentID   int64  `json:"environmentId"`
	EnvironmentName string `json:"environmentName"`
	Type            string `json:"type"`
	Action          string `json:"action"`
	ActorID         string `json:"actorId"`
	ActorName       string `json:"actorName"`
	// ContainerID and ContainerName repeat the actor of container events.
	ContainerID   string `json:"containerId,omitempty"`
	ContainerName string `json:"containerName,omitempty"`
	Timestamp     string `json:"timestamp"` // RFC 3339, UTC
}

func toActivityJSON(e store.ActivityEvent, names map[int64]string) activityJSON {
	out := activityJSON{ID: e.ID, EnvironmentID: e.EnvironmentID, EnvironmentName: names[e.EnvironmentID], Type: e.Type,
		Action: e.Action, ActorID: e.ActorID, ActorName: e.ActorName, Timestamp: e.Time.UTC().Format(time.RFC3339)}
	if e.Type == "container" {
		out.ContainerID, out.ContainerName = e.ActorID, e.ActorName
	}
	return out
}

// activityFilter reads the filters of the activity endpoints and narrows
// them to the environments the caller may see with perm: env (or
// environmentId, environment_id) for one environment, labels (environments
// bearing any of them), container (name or id), containerId, containerName,
// type, action, actions (any of them), since and until (RFC 3339), fromDate
// and toDate (ISO 8601, inclusive), limit and offset. It also returns the
// names of the environments.
func (s *Server) activityFilter(c *gin.Context, perm string) (store.ActivityFilter, map[int64]string, error) {
	q := c.Request.URL.Query()
	f := store.ActivityFilter{Container: q.Get("container"), Type: q.Get("type"), Action: q.Get("action"),
		ContainerID: q.Get("containerId"), ContainerName: q.Get("containerName"), Actions: splitList(c.QueryArray("actions"))}
	for _, name := range []string{"since", "until"} {
		v := q.Get(name)
		if v == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return f, nil, fault.Invalidf("%s must be an RFC 3339 time", name)
		}
		if name == "since" {
			f.Since = &t
		} else {
			f.Until = &t
		}
	}
	from, to, err := dateRange(c.Query("fromDate"), c.Query("toDate"))
	if err != nil {
		return f, nil, err
	}
	narrowRange(&f.Since, &f.Until, from, to)
	if f.Limit, err = queryInt(c, "limit", 0); err != nil {
		return f, nil, err
	}
	if f.Limit > 1000 {
		return f, nil, fault.Invalidf("limit must be at most 1000")
	}
	if f.Offset, err = queryInt(c, "offset", 0); err != nil {
		return f, nil, err
	}
	envs, err := s.store.ListEnvironments(c.Request.Context())
	if err != nil {
		return f, nil, err
	}
	names := make(map[int64]string, len(envs))
	for _, e := range envs {
		names[e.ID] = e.Name
	}
	var labelled []int64 // nil: no labels filter
	if labels := splitList(c.QueryArray("labels")); labels != nil {
		labelled = labelledEnvironments(envs, labels)
	}
	param := "env"
	for _, alias := range []string{"environmentId", "environment_id"} { // the reference's names
		if c.Query(param) == "" && c.Query(alias) != "" {
			param = alias
		}
	}
	if c.Query(param) != "" {
		env, err := s.environment(c, param)
		if err != nil {
			return f, nil, err
		}
		if err := mayReach(c, perm, &env.ID); err != nil {
			return f, nil, err
		}
		f.EnvironmentIDs = intersectIDs([]int64{env.ID}, labelled)
		return f, names, nil
	}
	if ident := identityOf(c); ident != nil && !ident.Access.Admin {
		f.EnvironmentIDs = []int64{}
		for _, e := range envs {
			if ident.Access.Check(perm, &e.ID) == auth.Allowed {
				f.EnvironmentIDs = append(f.EnvironmentIDs, e.ID)
			}
		}
	}
	f.EnvironmentIDs = intersectIDs(f.EnvironmentIDs, labelled)
	return f, names, nil
}

// listActivity answers a page of the stored events, newest first:
// {events, total, limit, offset}.
func (s *Server) listActivity(c *gin.Context) error {
	f, names, err := s.activityFilter(c, activityPerm)
	if err != nil {
		return err
	}
	list, total, err := s.store.ListActivity(c.Request.Context(), f)
	if err != nil {
		return err
	}
	limit := f.Limit
	if limit == 0 {
		limit = 100
	}
	out := make([]activityJSON, 0, len(list))
	for _, e := range list {
		out = append(out, toActivityJSON(e, names))
	}
	return writeJSON(c, http.StatusOK, map[string]any{"events": out, "total": total, "limit": limit, "offset": f.Offset})
}

// activityPoll is how often the live stream looks for events stored by
// other servers sharing the database (this server's wake it at once).
const activityPoll = 2 * time.Second

// streamActivity sends, as SSE, "connected" and then an "activity" event
// (an event as listActivity lists it, its id as the SSE id) for each event
// stored from then on that the filters select, on any server sharing the
// database. A client that reconnects with a Last-Event-ID header first gets
// the events stored after that one that it missed meanwhile.
func (s *Server) streamActivity(c *gin.Context) error {
	ctx := c.Request.Context()
	f, names, err := s.activityFilter(c, activityPerm)
	if err != nil {
		return err
	}
	if f.AfterID, err = s.store.LastActivityID(ctx); err != nil {
		return err
	}
	if last, err := strconv.ParseInt(c.GetHeader("Last-Event-ID"), 10, 64); err == nil && last >= 0 {
		f.AfterID = min(last, f.AfterID) // an id from another database's stream counts for no more than ours
	}
	f.Offset, f.Limit, f.Since, f.Until = 0, 500, nil, nil
	es := startEvents(c)
	defer es.Close()
	if err := es.Send("connected", map[string]any{}); err != nil {
		return err
	}
	t := time.NewTicker(activityPoll)
	defer t.Stop()
	for {
		wake := s.activity.Stored()
		list, err := s.store.ActivitySince(ctx, f)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		for _, e := range list {
			f.AfterID = e.ID
			if err := es.SendID(strconv.FormatInt(e.ID, 10), "activity", toActivityJSON(e, names)); err != nil {
				return err
			}
		}
		if len(list) == f.Limit {
			continue // more to send at once
		}
		select {
		case <-ctx.Done():
			return nil
		case <-wake:
		case <-t.C:
		}
	}
}

// activityStats counts the events the filters select (by default those of
// the last 24 hours) per action and per hour: {total, since, until,
// byAction: [{action, count}], byHour: [{hour, count}]}.
func (s *Server) activityStats(c *gin.Context) error {
	f, _, err := s.activityFilter(c, activityPerm)
	if err != nil {
		return err
	}
	now := s.now().UTC()
	if f.Until == nil {
		f.Until = &now
	}
	if f.Since == nil {
		since := f.Until.Add(-24 * time.Hour)
		f.Since = &since
	}
	byAction, byHour, err := s.store.ActivityStats(c.Request.Context(), f)
	if err != nil {
		return err
	}
	type actionCount struct {
		Action string `json:"action"`
		Count  int64  `json:"count"`
	}
	type hourCount struct {
		Hour  string `json:"hour"` // the hour's start, RFC 3339
		Count int64  `json:"count"`
	}
	var total int64
	actions := make([]actionCount, 0, len(byAction))
	for _, a := range byAction {
		actions = append(actions, actionCount{a.Key, a.Count})
		total += a.Count
	}
	hours := make([]hourCount, 0, len(byHour))
	for _, h := range byHour {
		hours = append(hours, hourCount{h.Key + ":00:00Z", h.Count})
	}
	return writeJSON(c, http.StatusOK, map[string]any{"total": total, "since": f.Since.UTC().Format(time.RFC3339),
		"until": f.Until.UTC().Format(time.RFC3339), "byAction": actions, "byHour": hours})
}

// activityContainers answers the containers seen in the activity the
// filters select, the most recently active first: {containers:
// [{environmentId, containerId, containerName, events, lastAction, lastTimestamp}]}.
func (s *Server) activityContainers(c *gin.Context) error {
	f, names, err := s.activityFilter(c, activityPerm)
	if err != nil {
		return err
	}
	list, err := s.store.ActivityContainers(c.Request.Context(), f)
	if err != nil {
		return err
	}
	out := make([]activityContainerJSON, 0, len(list))
	for _, ct := range list {
		e := ct.Last
		out = append(out, activityContainerJSON{EnvironmentID: e.EnvironmentID, EnvironmentName: names[e.EnvironmentID],
			ContainerID: e.ActorID, ContainerName: e.ActorName, Events: ct.Events, LastAction: e.Action,
			LastTimestamp: e.Time.UTC().Format(time.RFC3339)})
	}
	return writeJSON(c, http.StatusOK, map[string]any{"containers": out})
}

// clearActivity deletes the stored events of environment env, or, without
// env, of every environment (which needs the permission on all of them):
// {success: true, deleted}.
func (s *Server) clearActivity(c *gin.Context) error {
	var envID *int64
	param := "env"
	if c.Query(param) == "" && c.Query("environmentId") != "" {
		param = "environmentId"
	}
	if c.Query(param) != "" {
		env, err := s.environment(c, param)
		if err != nil {
			return err
		}
		envID = &env.ID
	}
	if err := mayReach(c, activityClearPerm, envID); err != nil {
		return err
	}
	n, err := s.store.DeleteActivity(c.Request.Context(), envID)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, map[string]any{"success": true, "deleted": n})
}

// getActivitySettings answers the retention: {retentionDays, maxEvents}.
func (s *Server) getActivitySettings(c *gin.Context) error {
	r, err := s.activity.Retention(c.Request.Context())
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, r)
}

// putActivitySettings stores the retention and applies it at once.
func (s *Server) putActivitySettings(c *gin.Context) error {
	r, err := s.activity.Retention(c.Request.Context()) // fields left out keep their value
	if err != nil {
		return err
	}
	if err := bindJSON(c, &r); err != nil {
		return err
	}
	if err := s.activity.SetRetention(c.Request.Context(), r); err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, r)
}

// Activity returns the activity collector, which the caller runs
// (activity.Service.Run) for as long as the server serves.
func (s *Server) Activity() *activity.Service { return s.activity }

// dashboardStreamEvery is how often the dashboard stream gathers the
// figures again.
const dashboardStreamEvery = 15 * time.Second

// streamDashboardStats sends the dashboard's figures as SSE: "connected",
// then a "stats" event per environment the caller may view (or only ?env=N)
// as soon as its figures are gathered, an offline one within the time
// limit without delaying the others, then "done" for the pass; a new pass
// starts every dashboardStreamEvery until the client leaves.
func (s *Server) streamDashboardStats(c *gin.Context) error {
	ctx := c.Request.Context()
	ident := identityOf(c)
	var envs []store.Environment
	if c.Query("env") != "" {
		env, err := s.environment(c, "env")
		if err != nil {
			return err
		}
		if err := mayReach(c, dashboardPerm, &env.ID); err != nil {
			return err
		}
		envs = []store.Environment{env}
	}
	es := startEvents(c)
	defer es.Close()
	if err := es.Send("connected", map[string]any{}); err != nil {
		return err
	}
	single := envs != nil
	t := time.NewTicker(dashboardStreamEvery)
	defer t.Stop()
	for {
		if !single {
			all, err := s.store.ListEnvironments(ctx)
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
			envs = envs[:0]
			for _, e := range all {
				if ident == nil || ident.Access.Check(dashboardPerm, &e.ID) == auth.Allowed {
					envs = append(envs, e)
				}
			}
		}
		err := s.dashboard.Each(ctx, envs, func(st dashboard.Stats) error { return es.Send("stats", st) })
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			return nil
		}
		if err := es.Send("done", map[string]int{"environments": len(envs)}); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// activityContainerJSON is a container of the activity list: its count of
// events and its last one.
type activityContainerJSON struct {
	EnvironmentID   int64  `json:"environmentId"`
	EnvironmentName string `json:"environmentName"`
	ContainerID     string `json:"containerId"`
	ContainerName   string `json:"containerName"`
	Events          int64  `json:"events"`
	LastAction      string `json:"lastAction"`
	LastTimestamp   string `json:"lastTimestamp"`
}
