package scan

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/berth-dev/berth/shared/fault"
)

// Finding is one vulnerability of one image, from the image's newest stored
// scans (the scanners' findings merged: one per vulnerability and package),
// with the containers that run the image and their stacks.
type Finding struct {
	CVE          string    `json:"cve"`
	Severity     string    `json:"severity"`
	Package      string    `json:"package"`
	Version      string    `json:"version"`
	FixedVersion string    `json:"fixedVersion"`
	Fixable      bool      `json:"fixable"`
	Description  string    `json:"description"`
	URLs         []string  `json:"urls"`
	ImageID      string    `json:"imageId"`
	ImageName    string    `json:"imageName"`
	Scanners     []string  `json:"scanners"`
	ScannedAt    time.Time `json:"scannedAt"`
	Containers   []string  `json:"containers"`
	Stacks       []string  `json:"stacks"`
}

// ImageUse is what runs an image: container names and their stacks.
type ImageUse struct {
	Containers []string
	Stacks     []string
}

// Findings returns the findings of the newest stored scans of env's images.
// present, when not nil, keeps only the images it holds (those still on
// the engine) and names what runs them.
func (s *Service) Findings(ctx context.Context, envID int64, present map[string]ImageUse) ([]Finding, error) {
	recs, err := s.store.LatestScanResults(ctx, envID)
	if err != nil {
		return nil, fault.Wrap(fault.Internal, errResults.Message, err)
	}
	type key struct{ image, cve, pkg, version string }
	at := map[key]int{}
	var out []Finding
	for _, rec := range recs {
		use, ok := present[rec.ImageID]
		if present != nil && !ok {
			continue
		}
		var r Result
		if err := json.Unmarshal([]byte(rec.Result), &r); err != nil {
			return nil, fault.Wrap(fault.Internal, errResults.Message, fmt.Errorf("scan result %d: %w", rec.ID, err))
		}
		for _, v := range r.Vulnerabilities {
			k := key{rec.ImageID, v.ID, v.Package, v.Version}
			if i, seen := at[k]; seen {
				f := &out[i]
				f.Scanners = append(f.Scanners, rec.Scanner)
				f.FixedVersion = cmp.Or(f.FixedVersion, v.FixedVersion)
				f.Fixable = f.FixedVersion != ""
				if rank(v.Severity) < rank(f.Severity) {
					f.Severity = v.Severity
				}
				if rec.ScannedAt.After(f.ScannedAt) {
					f.ScannedAt = rec.ScannedAt
				}
				continue
			}
			at[k] = len(out)
			out = append(out, Finding{CVE: v.ID, Severity: v.Severity, Package: v.Package, Version: v.Version,
				FixedVersion: v.FixedVersion, Fixable: v.FixedVersion != "", Description: v.Description,
				URLs: nonNil(v.URLs), ImageID: rec.ImageID, ImageName: rec.ImageName, Scanners: []string{rec.Scanner},
				ScannedAt: rec.ScannedAt.UTC(), Containers: nonNil(use.Containers), Stacks: nonNil(use.Stacks)})
		}
	}
	return out, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// rank is a severity's place, most severe first.
func rank(severity string) int {
	if i := slices.Index(severities, severity); i >= 0 {
		return i
	}
	return len(severities)
}

// FindingFilter selects and orders findings (the reference's grid
// parameters).
type FindingFilter struct {
	Q         string   // in the CVE, package, image, description, containers or stacks (case insensitive)
	Severity  []string // any of these severities (empty: all)
	Image     string   // image name or id
	Container string
	Stack     string
	Fixable   *bool
	Sort      string // severity (default), cve, package, image, version, fixedVersion, scannedAt
	Desc      bool
}

// SortKeys are the orders FindingFilter.Sort may name.
var SortKeys = []string{"severity", "cve", "package", "version", "fixedVersion", "image", "scannedAt"}

// Validate refuses what a filter cannot mean.
func (f FindingFilter) Validate() error {
	for _, s := range f.Severity {
		if !slices.Contains(severities, s) {
			return fault.Invalidf("Unknown severity '%s' (one of %s)", s, strings.Join(severities, ", "))
		}
	}
	if f.Sort != "" && !slices.Contains(SortKeys, f.Sort) {
		return fault.Invalidf("Unknown sort '%s' (one of %s)", f.Sort, strings.Join(SortKeys, ", "))
	}
	return nil
}

// Apply returns the findings f selects, in its order (most severe first,
// then CVE, image and package, unless it names another).
func (f FindingFilter) Apply(all []Finding) []Finding {
	q := strings.ToLower(strings.TrimSpace(f.Q))
	out := []Finding{}
	for _, x := range all {
		switch {
		case len(f.Severity) > 0 && !slices.Contains(f.Severity, x.Severity),
			f.Image != "" && x.ImageName != f.Image && x.ImageID != f.Image,
			f.Container != "" && !slices.Contains(x.Containers, f.Container),
			f.Stack != "" && !slices.Contains(x.Stacks, f.Stack),
			f.Fixable != nil && x.Fixable != *f.Fixable,
			q != "" && !x.matches(q):
			continue
		}
		out = append(out, x)
	}
	by := func(a, b Finding) int {
		switch f.Sort {
		case "cve":
			return strings.Compare(a.CVE, b.CVE)
		case "package":
			return strings.Compare(a.Package, b.Package)
		case "version":
			return strings.Compare(a.Version, b.Version)
		case "fixedVersion":
			return strings.Compare(a.FixedVersion, b.FixedVersion)
		case "image":
			return strings.Compare(a.ImageName, b.ImageName)
		case "scannedAt":
			return a.ScannedAt.Compare(b.ScannedAt)
		}
		return rank(a.Severity) - rank(b.Severity)
	}
	slices.SortStableFunc(out, func(a, b Finding) int {
		c := by(a, b)
		if f.Desc {
			c = -c
		}
		return cmp.Or(c, strings.Compare(a.CVE, b.CVE), strings.Compare(a.ImageName, b.ImageName),
			strings.Compare(a.Package, b.Package), strings.Compare(a.ImageID, b.ImageID))
	})
	return out
}

func (x Finding) matches(q string) bool {
	for _, s := range append([]string{x.CVE, x.Package, x.ImageName, x.Description}, append(x.Containers, x.Stacks...)...) {
		if strings.Contains(strings.ToLower(s), q) {
			return true
		}
	}
	return false
}

// FindingCounts are the totals of some findings and the filter values
// they offer.
type FindingCounts struct {
	Total      int      `json:"total"`
	Summary    Summary  `json:"summary"`
	Fixable    int      `json:"fixable"`
	Images     []string `json:"images"`
	Containers []string `json:"containers"`
	Stacks     []string `json:"stacks"`
}

// Count totals findings by severity and lists their images, containers
// and stacks (sorted, once each).
func Count(findings []Finding) FindingCounts {
	c := FindingCounts{Images: []string{}, Containers: []string{}, Stacks: []string{}}
	vulns := make([]Vulnerability, len(findings))
	for i, f := range findings {
		vulns[i].Severity = f.Severity
		if f.Fixable {
			c.Fixable++
		}
		c.Images = append(c.Images, f.ImageName)
		c.Containers = append(c.Containers, f.Containers...)
		c.Stacks = append(c.Stacks, f.Stacks...)
	}
	c.Total, c.Summary = len(findings), summarize(vulns)
	for _, l := range []*[]string{&c.Images, &c.Containers, &c.Stacks} {
		slices.Sort(*l)
		*l = slices.Compact(*l)
	}
	return c
}

// FindingsCSV is findings as CSV rows, a header first.
func FindingsCSV(findings []Finding) [][]string {
	rows := [][]string{{"cve", "severity", "package", "version", "fixedVersion", "image", "imageId", "containers",
		"stacks", "scanners", "scannedAt", "description"}}
	for _, f := range findings {
		rows = append(rows, []string{f.CVE, f.Severity, f.Package, f.Version, f.FixedVersion, f.ImageName, f.ImageID,
			strings.Join(f.Containers, " "), strings.Join(f.Stacks, " "), strings.Join(f.Scanners, " "),
			f.ScannedAt.Format(time.RFC3339), f.Description})
	}
	return rows
}

// ResultCSV is one stored result's findings as CSV rows, a header first.
func ResultCSV(r Result) [][]string {
	rows := [][]string{{"id", "severity", "package", "version", "fixedVersion", "description", "urls"}}
	for _, v := range r.Vulnerabilities {
		rows = append(rows, []string{v.ID, v.Severity, v.Package, v.Version, v.FixedVersion, v.Description,
			strings.Join(v.URLs, " ")})
	}
	return rows
}
