// Command trivydb writes a tiny Trivy vulnerability database for Berth's scan
// tests: trivy.db and metadata.json in the directory given by -dir (Trivy reads
// them from <cache-dir>/db). It lists two made-up vulnerabilities of Debian 12
// packages, both fixed in 1.0-2: CVE-2099-0001 (High) in berth-demo and
// CVE-2099-0002 (Critical) in berth-crit.
//
// The database is built by trivy-db's own pipeline (vulndb.TrivyDB.Build): a
// data source puts the advisory and the vulnerability details the way trivy-db's
// Debian and NVD sources do, then Build normalises the details into the
// "vulnerability" bucket, copies the advisory into the "debian 12" bucket, drops
// the intermediate buckets and writes metadata.json with trivy-db's schema
// version, exactly as for the published database.
package main

import (
	"flag"
	"log"
	"os"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/aquasecurity/trivy-db/pkg/db"
	"github.com/aquasecurity/trivy-db/pkg/types"
	"github.com/aquasecurity/trivy-db/pkg/vulndb"
	"github.com/aquasecurity/trivy-db/pkg/vulnsrc"
	"github.com/aquasecurity/trivy-db/pkg/vulnsrc/bucket"
	"github.com/aquasecurity/trivy-db/pkg/vulnsrc/vulnerability"
)

// The fixture; internal/scan/testdata/trivy-*.json show what Trivy reports for
// CVE-2099-0001.
const (
	debianMajor  = "12" // bookworm
	fixedVersion = "1.0-2"
	sourceName   = "berth-fixture"
)

// vuln is one made-up vulnerability of the fixture.
type vuln struct {
	id, pkg, title string
	severity       types.Severity
	cvssVector     string
	cvssScore      float64
}

var vulns = []vuln{
	{"CVE-2099-0001", "berth-demo", "Berth test vulnerability", types.SeverityHigh,
		"CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:N/A:N", 7.5},
	{"CVE-2099-0002", "berth-crit", "Berth critical test vulnerability", types.SeverityCritical,
		"CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H", 9.8},
}

// Fixed dates, so that the findings do not change from one build to the next.
var published = time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)

// source is a trivy-db data source (vulnsrc.VulnSrc) holding the fixture.
type source struct{ dbc db.Config }

func (source) Name() types.SourceID { return sourceName }

func (s source) Update(string) error {
	platform := bucket.NewDebian(debianMajor).Name() // "debian 12"
	return s.dbc.BatchUpdate(func(tx *bolt.Tx) error {
		if err := s.dbc.PutDataSource(tx, platform, types.DataSource{
			ID:   vulnerability.Debian,
			Name: "Debian Security Tracker",
			URL:  "https://salsa.debian.org/security-tracker-team/security-tracker",
		}); err != nil {
			return err
		}
		for _, v := range vulns {
			if err := s.put(tx, platform, v); err != nil {
				return err
			}
		}
		return nil
	})
}

// put writes v as trivy-db's Debian source (the per-package advisory with the
// fix and the distribution's severity, a short title) and its NVD source
// (CVSS, severity, description, references, dates) do.
func (s source) put(tx *bolt.Tx, platform string, v vuln) error {
	advisory := types.Advisory{FixedVersion: fixedVersion, Severity: v.severity}
	if err := s.dbc.PutAdvisoryDetail(tx, v.id, v.pkg, []string{platform}, advisory); err != nil {
		return err
	}
	if err := s.dbc.PutVulnerabilityDetail(tx, v.id, vulnerability.Debian, types.VulnerabilityDetail{Title: v.title}); err != nil {
		return err
	}
	if err := s.dbc.PutVulnerabilityDetail(tx, v.id, vulnerability.NVD, types.VulnerabilityDetail{
		ID:               v.id,
		CvssScoreV3:      v.cvssScore,
		CvssVectorV3:     v.cvssVector,
		SeverityV3:       v.severity,
		References:       []string{"https://example.invalid/" + v.id},
		Description:      v.title,
		PublishedDate:    &published,
		LastModifiedDate: &published,
	}); err != nil {
		return err
	}
	return s.dbc.PutVulnerabilityID(tx, v.id)
}

func main() {
	log.SetFlags(0)
	dir := flag.String("dir", "", "output directory: <trivy cache dir>/db")
	flag.Parse()
	if *dir == "" {
		log.Fatal("usage: trivydb -dir <trivy cache dir>/db")
	}
	if err := os.RemoveAll(*dir); err != nil {
		log.Fatal(err)
	}
	if err := db.Init(*dir); err != nil {
		log.Fatal(err)
	}
	// The next update is far away: tests scan with --skip-db-update anyway.
	tdb := vulndb.New(*dir, *dir, 100*365*24*time.Hour,
		vulndb.WithVulnSrcs(map[types.SourceID]vulnsrc.VulnSrc{sourceName: source{}}))
	err := tdb.Build([]string{sourceName})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		log.Fatal(err)
	}
}
