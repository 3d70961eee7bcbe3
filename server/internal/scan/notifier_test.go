package scan

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

type recorder struct{ got []string }

func (r *recorder) Emit(_ int64, eventType, _, _ string) { r.got = append(r.got, eventType) }

func TestScanFindingsNotifyBySeverity(t *testing.T) {
	for _, tc := range []struct {
		sum  Summary
		want []string
	}{
		{Summary{Critical: 1, High: 2}, []string{"vulnerability_critical", "vulnerability_high", "vulnerability_any"}},
		{Summary{High: 1}, []string{"vulnerability_high", "vulnerability_any"}},
		{Summary{Low: 4}, []string{"vulnerability_any"}},
		{Summary{}, nil},
	} {
		r := &recorder{}
		s := &Service{}
		s.notifyFindings(1, Result{ImageName: "img", Summary: tc.sum})
		s.UseNotifier(r)
		s.notifyFindings(1, Result{ImageName: "img", Summary: tc.sum})
		if diff := cmp.Diff(tc.want, r.got); diff != "" {
			t.Errorf("%+v (-want +got):\n%s", tc.sum, diff)
		}
	}
}
