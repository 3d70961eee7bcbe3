package schedule

import (
	"regexp"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/berth-dev/berth/shared/fault"
)

// ErrInvalidCron is the spec's refusal of a cron expression.
var ErrInvalidCron = fault.New(fault.Invalid, "Invalid cron expression")

// fieldForm is one field of the spec's forms: *, */n, n, n-m, and lists of
// n or n-m separated by commas.
var fieldForm = regexp.MustCompile(`^(\*|\*/[0-9]+|[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*)$`)

var parser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow)

// ParseCron validates a 5-field cron expression and returns its schedule in
// UTC. Weekday 7 is Sunday, as 0 is.
func ParseCron(expr string) (cron.Schedule, error) {
	return ParseCronIn(expr, time.UTC)
}

// ParseCronIn validates a 5-field cron expression and returns its schedule
// in the time zone loc: "0 3 * * *" is 03:00 on loc's clock, whatever its
// offset that day. When the clocks go back, a fixed time (an hour field
// other than * or */n) that occurs twice runs once, at its first occurrence;
// schedules over every hour keep running through the repeated hour. A time
// the clocks skip when they go forward does not run that day.
func ParseCronIn(expr string, loc *time.Location) (cron.Schedule, error) {
	fields := strings.Fields(expr)
	if len(fields) != 5 {
		return nil, ErrInvalidCron
	}
	for _, f := range fields {
		if !fieldForm.MatchString(f) {
			return nil, ErrInvalidCron
		}
	}
	fields[4] = sundayAsZero(fields[4])
	s, err := parser.Parse(strings.Join(fields, " "))
	if err != nil {
		return nil, ErrInvalidCron
	}
	spec, ok := s.(*cron.SpecSchedule)
	if !ok {
		return nil, ErrInvalidCron
	}
	if loc == nil {
		loc = time.UTC
	}
	spec.Location = loc
	if strings.HasPrefix(fields[1], "*") {
		return spec, nil
	}
	return onceAWallClock{spec}, nil
}

// onceAWallClock is a schedule that fires once per wall-clock time of its
// zone: robfig/cron fires a time that occurs twice (clocks going back) twice.
type onceAWallClock struct{ spec *cron.SpecSchedule }

// Next returns the first activation after t, skipping the second
// occurrence of a wall-clock time.
func (o onceAWallClock) Next(t time.Time) time.Time {
	for range 4 {
		n := o.spec.Next(t)
		if n.IsZero() || !o.repeated(n) {
			return n
		}
		t = n
	}
	return o.spec.Next(t)
}

// repeated reports whether n's wall-clock time (in the schedule's zone)
// already occurred shortly before n: clocks went back in between.
func (o onceAWallClock) repeated(n time.Time) bool {
	wall := n.In(o.spec.Location)
	for _, back := range []time.Duration{30 * time.Minute, time.Hour, 2 * time.Hour} {
		p := n.Add(-back).In(o.spec.Location)
		if p.Day() == wall.Day() && p.Hour() == wall.Hour() && p.Minute() == wall.Minute() {
			return true
		}
	}
	return false
}

// sundayAsZero rewrites weekday 7 (Sunday) as 0, which is all robfig/cron
// knows: "7" becomes "0", a range "n-7" becomes "n-6,0".
func sundayAsZero(field string) string {
	parts := strings.Split(field, ",")
	for i, p := range parts {
		switch lo, hi, isRange := strings.Cut(p, "-"); {
		case p == "7":
			parts[i] = "0"
		case isRange && hi == "7" && lo == "7":
			parts[i] = "0"
		case isRange && hi == "7":
			parts[i] = lo + "-6,0"
		}
	}
	return strings.Join(parts, ",")
}

// Schedule types: how a cron expression repeats.
const (
	Daily  = "daily"
	Weekly = "weekly"
	Custom = "custom"
)

// number is a single value of a field.
var number = regexp.MustCompile(`^[0-9]+$`)

// DetectScheduleType names how expr repeats: daily (a fixed minute and
// hour, every day), weekly (a fixed minute and hour on one weekday), or
// custom. expr is assumed valid.
func DetectScheduleType(expr string) string {
	f := strings.Fields(expr)
	if len(f) != 5 || !number.MatchString(f[0]) || !number.MatchString(f[1]) || f[2] != "*" || f[3] != "*" {
		return Custom
	}
	switch {
	case f[4] == "*":
		return Daily
	case number.MatchString(f[4]):
		return Weekly
	}
	return Custom
}

// CheckScheduleType validates an explicit schedule type; "" asks for
// detection from expr.
func CheckScheduleType(scheduleType, expr string) (string, error) {
	switch scheduleType {
	case "":
		return DetectScheduleType(expr), nil
	case Daily, Weekly, Custom:
		return scheduleType, nil
	}
	return "", fault.Invalidf("Invalid scheduleType %q: use daily, weekly or custom", scheduleType)
}
