package autoupdate

import (
	"strings"
	"testing"

	"github.com/berth-dev/berth/server/internal/scan"
)

// The spec's criteria table, each value against images with and without
// findings of each severity.
func TestBlockedFollowsTheCriteriaTable(t *testing.T) {
	clean := scan.Summary{}
	low := scan.Summary{Low: 2}
	high := scan.Summary{High: 1, Medium: 3}
	critical := scan.Summary{Critical: 1}
	cases := []struct {
		criteria string
		next     scan.Summary
		current  *scan.Summary
		blocked  bool
	}{
		{Never, critical, nil, false},
		{Never, scan.Summary{Critical: 9, High: 9}, &clean, false},
		{Any, clean, nil, false},
		{Any, low, nil, true},
		{Any, scan.Summary{Negligible: 1}, nil, true},
		{Any, scan.Summary{Unknown: 1}, nil, true},
		{CriticalHigh, low, nil, false},
		{CriticalHigh, high, nil, true},
		{CriticalHigh, critical, nil, true},
		{Critical, high, nil, false},
		{Critical, critical, nil, true},
		{MoreThanCurrent, critical, nil, false}, // no scan data for the running image: proceed
		{MoreThanCurrent, high, &low, true},     // 4 > 2
		{MoreThanCurrent, low, &high, false},
		{MoreThanCurrent, low, &low, false}, // equal is not more
		{"", critical, nil, false},
	}
	for _, c := range cases {
		why := Blocked(c.criteria, c.next, c.current)
		if (why != "") != c.blocked {
			t.Errorf("Blocked(%q, %+v, %v) = %q, want blocked %v", c.criteria, c.next, c.current, why, c.blocked)
		}
		if why != "" && !strings.Contains(why, c.criteria) {
			t.Errorf("reason %q does not name the criteria %s", why, c.criteria)
		}
	}
}

func TestCheckCriteria(t *testing.T) {
	for _, v := range []string{Never, Any, CriticalHigh, Critical, MoreThanCurrent} {
		if got, err := CheckCriteria(v); err != nil || got != v {
			t.Errorf("CheckCriteria(%q) = %q, %v", v, got, err)
		}
	}
	if got, err := CheckCriteria(""); err != nil || got != Never {
		t.Errorf(`CheckCriteria("") = %q, %v; want never`, got, err)
	}
	for _, v := range []string{"high", "CRITICAL", "none", " any"} {
		if _, err := CheckCriteria(v); err == nil {
			t.Errorf("CheckCriteria(%q) accepted", v)
		}
	}
}

// With two scanners, the worst count of each severity decides.
func TestWorstMergesScanners(t *testing.T) {
	got := Worst([]scan.Result{{Summary: scan.Summary{High: 1, Low: 5}}, {Summary: scan.Summary{Critical: 1, High: 0, Low: 2}}})
	if want := (scan.Summary{Critical: 1, High: 1, Low: 5}); got != want {
		t.Errorf("Worst = %+v, want %+v", got, want)
	}
}

func TestReferenceHelpers(t *testing.T) {
	for ref, want := range map[string]string{
		"127.0.0.1:5000/berth-test/web:1": "127.0.0.1:5000/berth-test/web",
		"nginx:latest":                    "nginx",
		"registry.example:443/a/b":        "registry.example:443/a/b",
	} {
		if got := repository(ref); got != want {
			t.Errorf("repository(%q) = %q, want %q", ref, got, want)
		}
	}
	digests := []string{"r/web@sha256:aaa", "other/web@sha256:bbb"}
	if !hasDigest(digests, "sha256:bbb") || hasDigest(digests, "sha256:ccc") || hasDigest(nil, "sha256:aaa") {
		t.Error("hasDigest")
	}
	id := "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	for _, ref := range []string{id, "0123456789ab", "sha256:0123456789abcdef", "r/web@sha256:0123"} {
		if !pinned(ref, id) {
			t.Errorf("%q not seen as pinned", ref)
		}
	}
	for _, ref := range []string{"nginx", "cafe:1", "r/web:1", "deadbeefcafe"} {
		if pinned(ref, id) {
			t.Errorf("%q seen as pinned", ref)
		}
	}
}
