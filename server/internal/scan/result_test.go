package scan

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The golden files are real reports of Grype v0.120.1 and Trivy v0.74.0 on
// the test images of scripts/test-env.sh, with the offline databases that
// list only CVE-2099-0001.
func TestParsersOnRealReports(t *testing.T) {
	grypeWant := []Vulnerability{{ID: "CVE-2099-0001", Severity: "high", Package: "berth-demo", Version: "1.0-1",
		FixedVersion: "1.0-2", Description: "Berth test vulnerability",
		URLs: []string{"https://example.invalid/CVE-2099-0001", "https://nvd.nist.gov/vuln/detail/CVE-2099-0001"}}}
	trivyWant := []Vulnerability{{ID: "CVE-2099-0001", Severity: "high", Package: "berth-demo", Version: "1.0-1",
		FixedVersion: "1.0-2", Description: "Berth test vulnerability",
		URLs: []string{"https://avd.aquasec.com/nvd/cve-2099-0001", "https://example.invalid/CVE-2099-0001"}}}
	cases := []struct {
		file  string
		parse func([]byte) ([]Vulnerability, error)
		want  []Vulnerability
	}{
		{"grype-vuln.json", ParseGrype, grypeWant},
		{"grype-clean.json", ParseGrype, []Vulnerability{}},
		{"trivy-vuln.json", ParseTrivy, trivyWant},
		{"trivy-clean.json", ParseTrivy, []Vulnerability{}},
	}
	for _, c := range cases {
		data, err := os.ReadFile("testdata/" + c.file)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.parse(data)
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.file, diff)
		}
		if s := summarize(got); s.Total() != len(c.want) || (len(c.want) == 1 && s.High != 1) {
			t.Errorf("%s summary = %+v", c.file, s)
		}
	}
}

func TestSeverityFromWordOrCVSS(t *testing.T) {
	cases := []struct {
		word string
		cvss float64
		want string
	}{
		{"CRITICAL", 0, "critical"}, {"High", 0, "high"}, {"Negligible", 9.8, "negligible"},
		{"", 9.0, "critical"}, {"", 10, "critical"}, {"Unknown", 8.9, "high"}, {"", 7.0, "high"},
		{"", 6.9, "medium"}, {"", 4.0, "medium"}, {"", 3.9, "low"}, {"", 0.1, "low"}, {"", 0, "unknown"}, {"weird", 0, "unknown"},
	}
	for _, c := range cases {
		if got := severityOf(c.word, c.cvss); got != c.want {
			t.Errorf("severityOf(%q, %v) = %q, want %q", c.word, c.cvss, got, c.want)
		}
	}
}

func TestParsersRejectGarbageAndSortBySeverity(t *testing.T) {
	if _, err := ParseGrype([]byte("not json")); err == nil {
		t.Error("ParseGrype accepted garbage")
	}
	if _, err := ParseTrivy([]byte("{")); err == nil {
		t.Error("ParseTrivy accepted garbage")
	}
	report := []byte(`{"Results":[{"Vulnerabilities":[
		{"VulnerabilityID":"B","PkgName":"p","InstalledVersion":"1","Severity":"LOW"},
		{"VulnerabilityID":"A","PkgName":"p","InstalledVersion":"1","Severity":"CRITICAL"},
		{"VulnerabilityID":"A","PkgName":"p","InstalledVersion":"1","Severity":"CRITICAL"}]}]}`)
	got, err := ParseTrivy(report)
	if err != nil || len(got) != 2 || got[0].ID != "A" || got[1].ID != "B" {
		t.Errorf("sorted, deduplicated = %+v, %v", got, err)
	}
}

func FuzzParsers(f *testing.F) {
	for _, name := range []string{"grype-vuln.json", "trivy-vuln.json"} {
		if data, err := os.ReadFile("testdata/" + name); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, parse := range []func([]byte) ([]Vulnerability, error){ParseGrype, ParseTrivy} {
			vulns, err := parse(data)
			if err != nil {
				continue
			}
			for _, v := range vulns {
				if !contains(severities, v.Severity) || v.URLs == nil {
					t.Fatalf("bad finding %+v", v)
				}
			}
		}
	})
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
