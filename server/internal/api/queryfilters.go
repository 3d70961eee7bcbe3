package api

import (
	"slices"
	"strings"
	"time"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// splitList reads a multi-valued filter (the values of c.QueryArray) as the
// reference's clients send it, comma-separated ("a,b"), or repeated
// (name=a&name=b); empty items are dropped. Nil when there are none.
func splitList(values []string) []string {
	var out []string
	for _, v := range values {
		for _, item := range strings.Split(v, ",") {
			if item = strings.TrimSpace(item); item != "" && !slices.Contains(out, item) {
				out = append(out, item)
			}
		}
	}
	return out
}

// dateRange reads the reference's fromDate and toDate filters (ISO 8601: a
// time in RFC 3339, or a calendar date, taken as UTC). Both ends are
// inclusive: a date as toDate takes in the whole day. It answers the
// half-open range [since, until) the store filters take; nil for an
// absent end.
func dateRange(fromDate, toDate string) (since, until *time.Time, err error) {
	parse := func(name, v string) (time.Time, bool, error) {
		v = strings.TrimSpace(v)
		if v == "" {
			return time.Time{}, false, nil
		}
		if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
			return t, false, nil
		}
		for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02T15:04"} {
			if t, err := time.Parse(layout, v); err == nil {
				return t, false, nil
			}
		}
		if t, err := time.Parse(time.DateOnly, v); err == nil {
			return t, true, nil
		}
		return time.Time{}, false, fault.Invalidf("%s must be an ISO 8601 date or time", name)
	}
	from, _, err := parse("fromDate", fromDate)
	if err != nil {
		return nil, nil, err
	}
	to, day, err := parse("toDate", toDate)
	if err != nil {
		return nil, nil, err
	}
	if !from.IsZero() {
		since = &from
	}
	if !to.IsZero() {
		if day {
			to = to.AddDate(0, 0, 1)
		} else {
			to = to.Add(time.Microsecond) // the stores keep microseconds
		}
		until = &to
	}
	return since, until, nil
}

// narrowRange intersects [*since, *until) with [from, to) (nil: unbounded).
func narrowRange(since, until **time.Time, from, to *time.Time) {
	if from != nil && (*since == nil || from.After(**since)) {
		*since = from
	}
	if to != nil && (*until == nil || to.Before(**until)) {
		*until = to
	}
}

// labelledEnvironments are the ids of the environments bearing at least one
// of labels (the reference's labels filter of activity and audit).
func labelledEnvironments(envs []store.Environment, labels []string) []int64 {
	ids := []int64{}
	for _, e := range envs {
		for _, l := range e.Labels {
			if slices.Contains(labels, l) {
				ids = append(ids, e.ID)
				break
			}
		}
	}
	return ids
}

// intersectIDs is the ids both lists hold; nil stands for every id.
func intersectIDs(a, b []int64) []int64 {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	out := []int64{}
	for _, id := range a {
		if slices.Contains(b, id) {
			out = append(out, id)
		}
	}
	return out
}
