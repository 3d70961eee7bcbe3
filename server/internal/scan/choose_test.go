package scan

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/berth-dev/berth/shared/fault"
)

// The one rule for which scanners run (the console's scanChoice is the same):
// a requested scanner must run, else a 400 saying why; without one, the
// setting's scanners that can run, else the other, else a 400 saying why.
func TestChooseRunsWhatCanRunOrSaysWhy(t *testing.T) {
	grype := Status{Scanner: ScannerA, Name: "Grype", Usable: true}
	trivy := Status{Scanner: ScannerB, Name: "Trivy", Usable: true}
	noGrype := Status{Scanner: ScannerA, Name: "Grype", Reason: "Grype is not installed."}
	noTrivy := Status{Scanner: ScannerB, Name: "Trivy", Reason: "Trivy is not installed."}
	both := []string{ScannerA, ScannerB}
	cases := []struct {
		name     string
		wanted   []string
		explicit bool
		list     []Status
		want     []string
		refusal  string // the 400's message contains it
	}{
		{"setting both, both run", both, false, []Status{grype, trivy}, both, ""},
		{"setting both, only trivy runs", both, false, []Status{noGrype, trivy}, []string{ScannerB}, ""},
		{"setting grype, only trivy runs: trivy", []string{ScannerA}, false, []Status{noGrype, trivy}, []string{ScannerB}, ""},
		{"setting trivy, both run", []string{ScannerB}, false, []Status{grype, trivy}, []string{ScannerB}, ""},
		{"setting, none runs", both, false, []Status{noGrype, noTrivy}, nil, "No vulnerability scanner can run on this environment. Grype is not installed. Trivy is not installed."},
		{"asked for grype, only trivy runs", []string{ScannerA}, true, []Status{noGrype, trivy}, nil, "Grype is not installed."},
		{"asked for both, only grype runs", both, true, []Status{grype, noTrivy}, nil, "Trivy is not installed."},
		{"asked for trivy, it runs", []string{ScannerB}, true, []Status{noGrype, trivy}, []string{ScannerB}, ""},
	}
	for _, c := range cases {
		got, err := choose(c.wanted, c.explicit, c.list)
		if c.refusal == "" {
			if err != nil || !slices.Equal(got, c.want) {
				t.Errorf("%s: choose = %v, %v; want %v", c.name, got, err, c.want)
			}
			continue
		}
		var f *fault.Error
		if got != nil || !errors.As(err, &f) || f.Kind != fault.Invalid || !strings.Contains(f.Message, c.refusal) {
			t.Errorf("%s: choose = %v, %v; want a 400 saying %q", c.name, got, err, c.refusal)
		}
	}
}
