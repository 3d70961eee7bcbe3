// Package scan provides vulnerability scanning of images with two scanners
// (scanner_a = Grype, scanner_b = Trivy): running them, parsing their JSON
// into one result shape, coalescing duplicate scans, and keeping results.
package scan

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Scanner names of the API.
const (
	ScannerA = "scanner_a" // Grype
	ScannerB = "scanner_b" // Trivy
)

// Severities, most severe first.
var severities = []string{"critical", "high", "medium", "low", "negligible", "unknown"}

// Vulnerability is one finding.
type Vulnerability struct {
	ID           string   `json:"id"`
	Severity     string   `json:"severity"`
	Package      string   `json:"package"`
	Version      string   `json:"version"`
	FixedVersion string   `json:"fixedVersion,omitempty"`
	Description  string   `json:"description"`
	URLs         []string `json:"urls"`
}

// Summary counts findings by severity.
type Summary struct {
	Critical   int `json:"critical"`
	High       int `json:"high"`
	Medium     int `json:"medium"`
	Low        int `json:"low"`
	Negligible int `json:"negligible"`
	Unknown    int `json:"unknown"`
}

// Total is the number of findings.
func (s Summary) Total() int {
	return s.Critical + s.High + s.Medium + s.Low + s.Negligible + s.Unknown
}

// Result is one scanner's verdict on one image.
type Result struct {
	ImageID         string          `json:"imageId"`
	ImageName       string          `json:"imageName"`
	Scanner         string          `json:"scanner"`
	ScannedAt       time.Time       `json:"scannedAt"`
	ScanDuration    int64           `json:"scanDuration"` // milliseconds
	Summary         Summary         `json:"summary"`
	Vulnerabilities []Vulnerability `json:"vulnerabilities"`
}

// summarize counts vulns by severity.
func summarize(vulns []Vulnerability) Summary {
	var s Summary
	for _, v := range vulns {
		switch v.Severity {
		case "critical":
			s.Critical++
		case "high":
			s.High++
		case "medium":
			s.Medium++
		case "low":
			s.Low++
		case "negligible":
			s.Negligible++
		default:
			s.Unknown++
		}
	}
	return s
}

// severityOf normalizes a scanner's severity word; when it is missing or
// unknown, the CVSS base score decides by the spec's ranges (critical
// 9.0–10.0, high 7.0–8.9, medium 4.0–6.9, low 0.1–3.9).
func severityOf(word string, cvss float64) string {
	w := strings.ToLower(strings.TrimSpace(word))
	if slices.Contains(severities, w) && w != "unknown" {
		return w
	}
	switch {
	case cvss >= 9.0:
		return "critical"
	case cvss >= 7.0:
		return "high"
	case cvss >= 4.0:
		return "medium"
	case cvss >= 0.1:
		return "low"
	}
	return "unknown"
}

// sortVulns orders findings by severity, then id and package.
func sortVulns(v []Vulnerability) {
	rank := func(s string) int { return slices.Index(severities, s) }
	slices.SortStableFunc(v, func(a, b Vulnerability) int {
		if d := rank(a.Severity) - rank(b.Severity); d != 0 {
			return d
		}
		if c := strings.Compare(a.ID, b.ID); c != 0 {
			return c
		}
		return strings.Compare(a.Package, b.Package)
	})
}

// ParseGrype reads Grype's JSON report (-o json).
func ParseGrype(data []byte) ([]Vulnerability, error) {
	var doc struct {
		Matches []struct {
			Vulnerability struct {
				ID          string   `json:"id"`
				Severity    string   `json:"severity"`
				Description string   `json:"description"`
				URLs        []string `json:"urls"`
				DataSource  string   `json:"dataSource"`
				Fix         struct {
					Versions []string `json:"versions"`
					State    string   `json:"state"`
				} `json:"fix"`
				CVSS []struct {
					Metrics struct {
						BaseScore float64 `json:"baseScore"`
					} `json:"metrics"`
				} `json:"cvss"`
			} `json:"vulnerability"`
			RelatedVulnerabilities []struct {
				Description string   `json:"description"`
				URLs        []string `json:"urls"`
				DataSource  string   `json:"dataSource"`
				CVSS        []struct {
					Metrics struct {
						BaseScore float64 `json:"baseScore"`
					} `json:"metrics"`
				} `json:"cvss"`
			} `json:"relatedVulnerabilities"`
			Artifact struct {
				Name    string `json:"name"`
				Version string `json:"version"`
			} `json:"artifact"`
		} `json:"matches"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("grype report: %w", err)
	}
	out := make([]Vulnerability, 0, len(doc.Matches))
	seen := map[string]bool{}
	for _, m := range doc.Matches {
		v := m.Vulnerability
		key := v.ID + "\x00" + m.Artifact.Name + "\x00" + m.Artifact.Version
		if seen[key] {
			continue
		}
		seen[key] = true
		score := 0.0
		for _, c := range v.CVSS {
			score = max(score, c.Metrics.BaseScore)
		}
		desc := v.Description
		// References: the match's own, then those of related records (NVD).
		urls := appendUnique(nil, v.URLs...)
		urls = appendUnique(urls, v.DataSource)
		for _, r := range m.RelatedVulnerabilities {
			if desc == "" {
				desc = r.Description
			}
			urls = appendUnique(urls, r.URLs...)
			urls = appendUnique(urls, r.DataSource)
			for _, c := range r.CVSS {
				score = max(score, c.Metrics.BaseScore)
			}
		}
		out = append(out, Vulnerability{ID: v.ID, Severity: severityOf(v.Severity, score), Package: m.Artifact.Name,
			Version: m.Artifact.Version, FixedVersion: strings.Join(v.Fix.Versions, ", "), Description: desc, URLs: urls})
	}
	sortVulns(out)
	return out, nil
}

// ParseTrivy reads Trivy's JSON report (--format json). A clean image has no
// Vulnerabilities list at all.
func ParseTrivy(data []byte) ([]Vulnerability, error) {
	var doc struct {
		Results []struct {
			Vulnerabilities []struct {
				VulnerabilityID  string   `json:"VulnerabilityID"`
				PkgName          string   `json:"PkgName"`
				InstalledVersion string   `json:"InstalledVersion"`
				FixedVersion     string   `json:"FixedVersion"`
				Severity         string   `json:"Severity"`
				Title            string   `json:"Title"`
				Description      string   `json:"Description"`
				PrimaryURL       string   `json:"PrimaryURL"`
				References       []string `json:"References"`
				CVSS             map[string]struct {
					V3Score float64 `json:"V3Score"`
					V2Score float64 `json:"V2Score"`
				} `json:"CVSS"`
			} `json:"Vulnerabilities"`
		} `json:"Results"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("trivy report: %w", err)
	}
	out := []Vulnerability{}
	seen := map[string]bool{}
	for _, r := range doc.Results {
		for _, v := range r.Vulnerabilities {
			key := v.VulnerabilityID + "\x00" + v.PkgName + "\x00" + v.InstalledVersion
			if seen[key] {
				continue
			}
			seen[key] = true
			score := 0.0
			for _, c := range v.CVSS {
				score = max(score, c.V3Score, c.V2Score)
			}
			desc := v.Description
			if desc == "" {
				desc = v.Title
			}
			urls := appendUnique(nil, v.PrimaryURL)
			urls = appendUnique(urls, v.References...)
			out = append(out, Vulnerability{ID: v.VulnerabilityID, Severity: severityOf(v.Severity, score),
				Package: v.PkgName, Version: v.InstalledVersion, FixedVersion: v.FixedVersion, Description: desc, URLs: urls})
		}
	}
	sortVulns(out)
	return out, nil
}

// appendUnique appends the non-empty values not already in list (never nil).
func appendUnique(list []string, values ...string) []string {
	if list == nil {
		list = []string{}
	}
	for _, v := range values {
		if v != "" && !slices.Contains(list, v) {
			list = append(list, v)
		}
	}
	return list
}
