package autoupdate

import (
	"fmt"

	"github.com/berth-dev/berth/server/internal/scan"
	"github.com/berth-dev/berth/shared/fault"
)

// The vulnerability criteria: when an update is blocked.
const (
	Never           = "never"             // never
	Any             = "any"               // the new image has any vulnerability
	CriticalHigh    = "critical_high"     // it has a critical or high one
	Critical        = "critical"          // it has a critical one
	MoreThanCurrent = "more_than_current" // it has more than the running image (none known: proceed)
)

// CheckCriteria validates a criteria value; "" is never.
func CheckCriteria(v string) (string, error) {
	switch v {
	case "":
		return Never, nil
	case Never, Any, CriticalHigh, Critical, MoreThanCurrent:
		return v, nil
	}
	return "", fault.Invalidf("Invalid vulnerabilityCriteria %q: use never, any, critical_high, critical or more_than_current", v)
}

// Worst merges the results of several scanners of one image: per severity,
// the highest count any of them found.
func Worst(results []scan.Result) scan.Summary {
	var s scan.Summary
	for _, r := range results {
		m := r.Summary
		s.Critical, s.High, s.Medium = max(s.Critical, m.Critical), max(s.High, m.High), max(s.Medium, m.Medium)
		s.Low, s.Negligible, s.Unknown = max(s.Low, m.Low), max(s.Negligible, m.Negligible), max(s.Unknown, m.Unknown)
	}
	return s
}

// Blocked applies criteria to the scan of the new image (next) and of the
// running one (current; nil when it has no scan data). It returns why the
// update is blocked, or "" to proceed.
func Blocked(criteria string, next scan.Summary, current *scan.Summary) string {
	switch criteria {
	case Any:
		if n := next.Total(); n > 0 {
			return fmt.Sprintf("the new image has %d vulnerabilities (criteria: any)", n)
		}
	case CriticalHigh:
		if next.Critical+next.High > 0 {
			return fmt.Sprintf("the new image has %d critical and %d high vulnerabilities (criteria: critical_high)", next.Critical, next.High)
		}
	case Critical:
		if next.Critical > 0 {
			return fmt.Sprintf("the new image has %d critical vulnerabilities (criteria: critical)", next.Critical)
		}
	case MoreThanCurrent:
		if current != nil && next.Total() > current.Total() {
			return fmt.Sprintf("the new image has %d vulnerabilities, more than the %d of the running image (criteria: more_than_current)",
				next.Total(), current.Total())
		}
	}
	return ""
}
