// Package schedule provides Berth's schedules. For now it holds the cron
// rule every schedule record is validated with: exactly five fields
// (minute hour day month weekday) in the forms the spec lists.
package schedule

import (
	"regexp"
	"strings"

	"github.com/robfig/cron/v3"

	"github.com/berth-dev/berth/shared/fault"
)

// ErrInvalidCron is the spec's refusal of a cron expression.
var ErrInvalidCron = fault.New(fault.Invalid, "Invalid cron expression")

// fieldForm is one field of the spec's forms: *, */n, n, n-m, and lists of
// n or n-m separated by commas.
var fieldForm = regexp.MustCompile(`^(\*|\*/[0-9]+|[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*)$`)

var parser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow)

// ParseCron validates a 5-field cron expression and returns its schedule.
// Weekday 7 is Sunday, as 0 is.
func ParseCron(expr string) (cron.Schedule, error) {
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
	return s, nil
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
