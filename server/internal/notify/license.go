package notify

import (
	"context"
	"fmt"
	"time"
)

// LicenseExpiry tells when the installed license expires (false: none
// installed, or a perpetual one). *license.Manager is one.
type LicenseExpiry interface {
	Expiry() (time.Time, bool)
}

// licenseInterval is how often the license's expiry is looked at.
const licenseInterval = 6 * time.Hour

// licenseWarnings are the days before expiry at which license_expiring is
// sent: once when fewer than 30 days remain, then at 14, 7, 3 and 1.
var licenseWarnings = []int{1, 3, 7, 14, 30}

// licenseLoop checks the license's expiry every licenseInterval, until Close.
func (s *Service) licenseLoop() {
	if s.o.License == nil {
		return
	}
	tick := time.NewTicker(licenseInterval)
	defer tick.Stop()
	for {
		s.checkLicense(s.ctx, time.Now())
		select {
		case <-s.ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// checkLicense emits license_expiring when the license's expiry entered a
// new warning window at now, and reports whether it did. The window is kept
// in the state the servers on the database share, so that one server tells
// it, once per window.
func (s *Service) checkLicense(ctx context.Context, now time.Time) bool {
	at, ok := s.o.License.Expiry()
	if !ok || !now.Before(at) {
		return false
	}
	left := at.Sub(now)
	window := 0
	for _, days := range licenseWarnings {
		if left <= time.Duration(days)*24*time.Hour {
			window = days
			break
		}
	}
	if window == 0 {
		return false
	}
	state := fmt.Sprintf("%s:%d", at.UTC().Format(time.RFC3339), window)
	changed, err := s.o.Store.SwitchNotificationState(ctx, "license:expiring", state, "")
	if err != nil {
		if ctx.Err() == nil {
			s.o.Log.Warn("notification: cannot record the license state", "err", err)
		}
		return false
	}
	if !changed {
		return false
	}
	daysLeft := int(left.Hours()/24) + 1
	if left < 24*time.Hour {
		daysLeft = 1
	}
	s.Emit(0, "license_expiring", "Berth license expiring",
		fmt.Sprintf("The Berth enterprise license expires on %s (in %d day%s).", at.UTC().Format("2006-01-02 15:04 MST"),
			daysLeft, map[bool]string{true: "", false: "s"}[daysLeft == 1]))
	return true
}
