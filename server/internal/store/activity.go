package store

import (
	"context"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// ActivityEvent is one engine event of an environment, as the activity
// collector stored it.
type ActivityEvent struct {
	ID            int64
	EnvironmentID int64
	Type          string // container, image, volume, network
	Action        string // start, die, health_status, pull, …
	ActorID       string // the object's id (an image's reference for some image events)
	ActorName     string // the object's name, when the engine gives one
	Time          time.Time
}

// ActivityFilter selects activity events; zero fields select everything.
type ActivityFilter struct {
	// EnvironmentIDs restricts the events to these environments; nil means
	// every environment, an empty slice none.
	EnvironmentIDs []int64
	// Container is a container's name, full id, or an id prefix of at
	// least 12 characters.
	Container string
	// ContainerID is a full id or an id prefix of at least 12 characters;
	// ContainerName an exact name.
	ContainerID   string
	ContainerName string
	Type          string
	Action        string
	Actions       []string   // any of these actions (with Action, both must hold)
	Since         *time.Time // inclusive
	Until         *time.Time // exclusive
	AfterID       int64      // only events with a greater id (live streams)
	Limit         int        // 0 (or less): 100; at most 1000
	Offset        int
}

// Page sizes of ListActivity.
const (
	defaultActivityLimit = 100
	maxActivityLimit     = 1000
)

// activityRow is a row of the activity_events table.
type activityRow struct {
	ID            int64
	EnvironmentID int64
	Type          string
	Action        string
	ActorID       string `gorm:"column:actor_id"`
	ActorName     string
	OccurredAt    dbTime
}

func (activityRow) TableName() string { return "activity_events" }

func (r activityRow) event() ActivityEvent {
	return ActivityEvent{ID: r.ID, EnvironmentID: r.EnvironmentID, Type: r.Type, Action: r.Action,
		ActorID: r.ActorID, ActorName: r.ActorName, Time: r.OccurredAt.Time}
}

// AddActivity stores e and sets its ID. It reports false, and stores
// nothing, when the same occurrence is already stored (another server
// sharing the database stored it first) or its environment is gone.
func (s *Store) AddActivity(ctx context.Context, e *ActivityEvent) (bool, error) {
	r := activityRow{EnvironmentID: e.EnvironmentID, Type: e.Type, Action: e.Action, ActorID: e.ActorID,
		ActorName: e.ActorName, OccurredAt: timeValue(e.Time.UTC().Truncate(time.Microsecond))}
	res := s.db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&r)
	if res.Error != nil {
		if isForeignKeyViolation(res.Error) {
			return false, nil
		}
		return false, fmt.Errorf("store: add activity: %w", translate(res.Error))
	}
	if res.RowsAffected == 0 {
		return false, nil
	}
	e.ID = r.ID
	return true, nil
}

// ListActivity returns the page of events f selects, newest first, and how
// many events f selects in all, regardless of its Limit and Offset.
func (s *Store) ListActivity(ctx context.Context, f ActivityFilter) (events []ActivityEvent, total int, err error) {
	var n int64
	if err := activityWhere(s.db.WithContext(ctx).Model(&activityRow{}), f).Count(&n).Error; err != nil {
		return nil, 0, fmt.Errorf("store: list activity: %w", err)
	}
	var rows []activityRow
	err = activityWhere(s.db.WithContext(ctx), f).Order("occurred_at DESC, id DESC").
		Limit(activityLimit(f.Limit)).Offset(max(f.Offset, 0)).Find(&rows).Error
	if err != nil {
		return nil, 0, fmt.Errorf("store: list activity: %w", err)
	}
	return activityEvents(rows), int(n), nil
}

// ActivitySince returns, oldest first, at most f.Limit events f selects
// whose id is greater than f.AfterID: what a live stream has not sent yet.
func (s *Store) ActivitySince(ctx context.Context, f ActivityFilter) ([]ActivityEvent, error) {
	var rows []activityRow
	err := activityWhere(s.db.WithContext(ctx), f).Order("id ASC").Limit(activityLimit(f.Limit)).Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("store: activity since %d: %w", f.AfterID, err)
	}
	return activityEvents(rows), nil
}

// LastActivityID returns the greatest id of the stored events (0 when there
// are none): where a live stream starts.
func (s *Store) LastActivityID(ctx context.Context) (int64, error) {
	var id int64
	err := s.db.WithContext(ctx).Model(&activityRow{}).Select("COALESCE(MAX(id), 0)").Scan(&id).Error
	if err != nil {
		return 0, fmt.Errorf("store: last activity id: %w", err)
	}
	return id, nil
}

// ActivityCount is a number of events under a key (an action, an hour).
type ActivityCount struct {
	Key   string
	Count int64
}

// ActivityStats counts the events f selects per action (most frequent
// first) and per hour (UTC, "2006-01-02T15", in time order).
func (s *Store) ActivityStats(ctx context.Context, f ActivityFilter) (byAction, byHour []ActivityCount, err error) {
	type bucket struct {
		Bucket string
		N      int64
	}
	var actions, hours []bucket
	err = activityWhere(s.db.WithContext(ctx).Model(&activityRow{}), f).
		Select("action AS bucket, COUNT(*) AS n").Group("action").Order("n DESC, bucket").
		Scan(&actions).Error
	if err != nil {
		return nil, nil, fmt.Errorf("store: activity stats: %w", err)
	}
	hour := "substr(occurred_at, 1, 13)"
	if s.dialect == dialectPostgres {
		hour = `to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24')`
	}
	err = activityWhere(s.db.WithContext(ctx).Model(&activityRow{}), f).
		Select(hour + " AS bucket, COUNT(*) AS n").Group(hour).Order("bucket").Scan(&hours).Error
	if err != nil {
		return nil, nil, fmt.Errorf("store: activity stats: %w", err)
	}
	counts := func(bs []bucket) []ActivityCount {
		out := make([]ActivityCount, len(bs))
		for i, b := range bs {
			out[i] = ActivityCount{Key: b.Bucket, Count: b.N}
		}
		return out
	}
	return counts(actions), counts(hours), nil
}

// ActivityContainer is a container seen in the activity: its last event and
// how many events it has.
type ActivityContainer struct {
	Last   ActivityEvent
	Events int64
}

// maxActivityContainers bounds ActivityContainers.
const maxActivityContainers = 1000

// ActivityContainers returns the containers the events f selects are about
// (f.Type is ignored), the most recently active first, at most 1000. A
// container's last event is the one stored last (events are stored as the
// engine sends them, in order).
func (s *Store) ActivityContainers(ctx context.Context, f ActivityFilter) ([]ActivityContainer, error) {
	f.Type, f.Limit, f.Offset = "container", 0, 0
	type group struct {
		LastID int64
		Events int64
	}
	var groups []group
	err := activityWhere(s.db.WithContext(ctx).Model(&activityRow{}), f).
		Select("MAX(id) AS last_id, COUNT(*) AS events").Group("environment_id, actor_id").
		Order("MAX(occurred_at) DESC").Limit(maxActivityContainers).Scan(&groups).Error
	if err != nil {
		return nil, fmt.Errorf("store: activity containers: %w", err)
	}
	if len(groups) == 0 {
		return []ActivityContainer{}, nil
	}
	ids := make([]int64, len(groups))
	for i, g := range groups {
		ids[i] = g.LastID
	}
	var rows []activityRow
	if err := s.db.WithContext(ctx).Where("id IN ?", ids).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: activity containers: %w", err)
	}
	byID := make(map[int64]activityRow, len(rows))
	for _, r := range rows {
		byID[r.ID] = r
	}
	out := make([]ActivityContainer, 0, len(groups))
	for _, g := range groups {
		if r, ok := byID[g.LastID]; ok {
			out = append(out, ActivityContainer{Last: r.event(), Events: g.Events})
		}
	}
	slices.SortStableFunc(out, func(a, b ActivityContainer) int { return b.Last.Time.Compare(a.Last.Time) })
	return out, nil
}

// DeleteActivity deletes the events of environment envID, or of every
// environment when envID is nil, and returns how many.
func (s *Store) DeleteActivity(ctx context.Context, envID *int64) (int64, error) {
	q := s.db.WithContext(ctx)
	if envID != nil {
		q = q.Where("environment_id = ?", *envID)
	} else {
		q = q.Where("1 = 1")
	}
	res := q.Delete(&activityRow{})
	if res.Error != nil {
		return 0, fmt.Errorf("store: delete activity: %w", res.Error)
	}
	return res.RowsAffected, nil
}

// PruneActivity deletes the events that occurred before t and, of the rest,
// all but the newest maxRows (maxRows 0: no cap), in one transaction, and
// returns how many it deleted.
func (s *Store) PruneActivity(ctx context.Context, before time.Time, maxRows int) (int64, error) {
	var deleted int64
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Where("occurred_at < ?", timeValue(before)).Delete(&activityRow{})
		if res.Error != nil {
			return res.Error
		}
		deleted = res.RowsAffected
		if maxRows <= 0 {
			return nil
		}
		var keep []int64
		if err := tx.Model(&activityRow{}).Order("id DESC").Offset(maxRows-1).Limit(1).Pluck("id", &keep).Error; err != nil {
			return err
		}
		if len(keep) == 0 {
			return nil
		}
		res = tx.Where("id < ?", keep[0]).Delete(&activityRow{})
		if res.Error != nil {
			return res.Error
		}
		deleted += res.RowsAffected
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("store: prune activity: %w", err)
	}
	return deleted, nil
}

func activityLimit(limit int) int {
	if limit <= 0 {
		return defaultActivityLimit
	}
	return min(limit, maxActivityLimit)
}

func activityEvents(rows []activityRow) []ActivityEvent {
	out := make([]ActivityEvent, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.event())
	}
	return out
}

// minActivityIDPrefix is the shortest id prefix a container filter matches.
const minActivityIDPrefix = 12

// activityWhere narrows q to the events f selects.
func activityWhere(q *gorm.DB, f ActivityFilter) *gorm.DB {
	if f.EnvironmentIDs != nil {
		if len(f.EnvironmentIDs) == 0 {
			return q.Where("1 = 0")
		}
		q = q.Where("environment_id IN ?", f.EnvironmentIDs)
	}
	if c := f.Container; c != "" {
		if n := utf8.RuneCountInString(c); n >= minActivityIDPrefix {
			q = q.Where("(actor_name = ? OR substr(actor_id, 1, ?) = ?)", c, n, c)
		} else {
			q = q.Where("(actor_name = ? OR actor_id = ?)", c, c)
		}
	}
	if id := f.ContainerID; id != "" {
		if n := utf8.RuneCountInString(id); n >= minActivityIDPrefix {
			q = q.Where("substr(actor_id, 1, ?) = ?", n, id)
		} else {
			q = q.Where("actor_id = ?", id)
		}
	}
	if f.ContainerName != "" {
		q = q.Where("actor_name = ?", f.ContainerName)
	}
	if f.Type != "" {
		q = q.Where("type = ?", f.Type)
	}
	if f.Action != "" {
		q = q.Where("action = ?", f.Action)
	}
	if len(f.Actions) > 0 {
		q = q.Where("action IN ?", f.Actions)
	}
	if f.Since != nil {
		q = q.Where("occurred_at >= ?", timeValue(*f.Since))
	}
	if f.Until != nil {
		q = q.Where("occurred_at < ?", timeValue(*f.Until))
	}
	if f.AfterID > 0 {
		q = q.Where("id > ?", f.AfterID)
	}
	return q
}
