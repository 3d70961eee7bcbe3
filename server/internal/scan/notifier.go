package scan

import "fmt"

// Notifier receives scan findings worth a notification (notify.Service).
type Notifier interface {
	Emit(envID int64, eventType, title, message string)
}

// UseNotifier makes finished scans report what they found.
func (s *Service) UseNotifier(n Notifier) { s.notifier = n }

// notifyFindings reports a scan's findings: vulnerability_critical when
// there are critical ones, vulnerability_high when high ones, and
// vulnerability_any when any. Nil-safe.
func (s *Service) notifyFindings(envID int64, r Result) {
	if s.notifier == nil || r.Summary.Total() == 0 {
		return
	}
	msg := fmt.Sprintf("%s found %d vulnerabilities in %s (%d critical, %d high).", r.Scanner, r.Summary.Total(),
		r.ImageName, r.Summary.Critical, r.Summary.High)
	if r.Summary.Critical > 0 {
		s.notifier.Emit(envID, "vulnerability_critical", "Critical vulnerabilities in "+r.ImageName, msg)
	}
	if r.Summary.High > 0 {
		s.notifier.Emit(envID, "vulnerability_high", "High vulnerabilities in "+r.ImageName, msg)
	}
	s.notifier.Emit(envID, "vulnerability_any", "Vulnerabilities in "+r.ImageName, msg)
}
