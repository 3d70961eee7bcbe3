// Command grypedb writes a tiny Grype vulnerability database (schema v6) for
// Berth's scan tests: vulnerability.db and import.json in the directory given by
// -dir, ready for `grype db import <dir>/vulnerability.db`. It lists two made-up
// vulnerabilities of Debian 12 packages, both fixed in 1.0-2: CVE-2099-0001
// (High) in berth-demo and CVE-2099-0002 (Critical) in berth-crit (made-up ids:
// Grype ignores some real ones on purpose).
//
// The database is built the way grype-db builds the published one, with Grype's
// own packages: the records are written as vunnel provider workspaces
// (provider.WorkspaceWriter: a result file, its listing and the provider state)
// — a "debian" OS record (the package, its fix, severity, CVSS) and an "nvd"
// record (description, CVSS, reference; no CPE configurations, so it matches
// nothing by itself and only shows as the related vulnerability) — and
// grype/db.Build runs Grype's v6 processors, transformers and writer over them,
// then hydrates the database and writes its import metadata.
package main

import (
	"encoding/json"
	"flag"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	grypedb "github.com/anchore/grype/grype/db"
	"github.com/anchore/grype/grype/db/provider"
	v6 "github.com/anchore/grype/grype/db/v6"
)

// The fixture; internal/scan/testdata/grype-*.json show what Grype reports for
// CVE-2099-0001.
const (
	namespace    = "debian:12" // Grype's namespace for Debian 12 (bookworm) packages
	fixedVersion = "1.0-2"
	published    = "2099-01-01T00:00:00.000" // NVD's format
)

// vuln is one made-up vulnerability of the fixture.
type vuln struct {
	id, pkg, description string
	severity             string // "High", "Critical"
	cvssVector           string
	cvssScore            float64
	exploitability       float64
	impact               float64
}

var vulns = []vuln{
	{"CVE-2099-0001", "berth-demo", "Berth test vulnerability", "High",
		"CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:N/A:N", 7.5, 3.9, 3.6},
	{"CVE-2099-0002", "berth-crit", "Berth critical test vulnerability", "Critical",
		"CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H", 9.8, 3.9, 5.9},
}

func (v vuln) reference() string { return "https://example.invalid/" + v.id }

const (
	// vunnel's schemas: Grype's processors take major version 1 of the record schemas.
	schemaBase     = "https://raw.githubusercontent.com/anchore/vunnel/main/schema/"
	osSchemaURL    = schemaBase + "vulnerability/os/schema-1.0.0.json"
	nvdSchemaURL   = schemaBase + "vulnerability/nvd/schema-1.0.0.json"
	stateSchemaVer = "1.0.3"
	stateSchemaURL = schemaBase + "provider-workspace-state/schema-1.0.3.json"
)

// osRecord is a vunnel OS vulnerability record, as Grype's OS transformer reads it.
func osRecord(v vuln) any {
	return map[string]any{
		"Vulnerability": map[string]any{
			"Name":          v.id,
			"NamespaceName": namespace,
			"Severity":      v.severity,
			"Description":   v.description,
			"Link":          v.reference(),
			"CVSS": []any{map[string]any{
				"version":       "3.1",
				"vector_string": v.cvssVector,
				"status":        "N/A",
				"base_metrics": map[string]any{
					"base_score":           v.cvssScore,
					"base_severity":        v.severity,
					"exploitability_score": v.exploitability,
					"impact_score":         v.impact,
				},
			}},
			"FixedIn": []any{map[string]any{
				"Name":           v.pkg,
				"NamespaceName":  namespace,
				"Version":        fixedVersion,
				"VersionFormat":  "dpkg",
				"VendorAdvisory": map[string]any{"AdvisorySummary": []any{}, "NoAdvisory": false},
			}},
			"Metadata": map[string]any{},
		},
	}
}

// nvdRecord is a vunnel NVD record (NVD API 2.0 "cve" object).
func nvdRecord(v vuln) any {
	return map[string]any{
		"cve": map[string]any{
			"id":               v.id,
			"sourceIdentifier": "cve@mitre.org",
			"published":        published,
			"lastModified":     published,
			"vulnStatus":       "Analyzed",
			"descriptions":     []any{map[string]any{"lang": "en", "value": v.description}},
			"metrics": map[string]any{
				"cvssMetricV31": []any{map[string]any{
					"source": "nvd@nist.gov",
					"type":   "Primary",
					"cvssData": map[string]any{
						"version":      "3.1",
						"vectorString": v.cvssVector,
						"baseScore":    v.cvssScore,
						"baseSeverity": strings.ToUpper(v.severity),
					},
					"exploitabilityScore": v.exploitability,
					"impactScore":         v.impact,
				}},
			},
			"references": []any{map[string]any{"url": v.reference(), "source": "cve@mitre.org"}},
		},
	}
}

// record is one result file of a vunnel provider workspace.
type record struct {
	file, identifier string
	item             any
}

// writeProvider writes the vunnel workspace <root>/<name> holding records and
// returns its state.
func writeProvider(root, name, schemaURL string, records []record, now time.Time) provider.State {
	ws := provider.NewWorkspaceWriter(root, name)
	var files []provider.File
	for _, r := range records {
		envelope, err := json.Marshal(map[string]any{"schema": schemaURL, "identifier": r.identifier, "item": r.item})
		if err != nil {
			log.Fatal(err)
		}
		result, err := ws.WriteResult(r.file, envelope)
		if err != nil {
			log.Fatal(err)
		}
		files = append(files, *result)
	}
	if err := ws.WriteListing(files); err != nil {
		log.Fatal(err)
	}
	listing, err := provider.NewFile(ws.ListingPath())
	if err != nil {
		log.Fatal(err)
	}
	listing.Path = "results/listing.xxh64" // relative to the workspace, as vunnel writes it
	if err := ws.WriteState(provider.State{
		Provider:  name,
		Version:   1,
		Processor: "berth-test-fixture",
		Schema:    provider.Schema{Version: stateSchemaVer, URL: stateSchemaURL},
		URLs:      []string{"https://example.invalid/"},
		Timestamp: now,
		Listing:   listing,
		Store:     "flat-file",
	}); err != nil {
		log.Fatal(err)
	}
	// ReadState loads the listing (the only way to fill a State's result files).
	state, err := provider.ReadState(filepath.Join(ws.Path(), "metadata.json"))
	if err != nil {
		log.Fatal(err)
	}
	return *state
}

func main() {
	log.SetFlags(0)
	dir := flag.String("dir", "", "output directory (vulnerability.db, import.json)")
	flag.Parse()
	if *dir == "" {
		log.Fatal("usage: grypedb -dir DIR")
	}
	if err := os.RemoveAll(*dir); err != nil {
		log.Fatal(err)
	}
	work, err := os.MkdirTemp("", "grypedb-workspace-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(work)

	now := time.Now().UTC().Truncate(time.Second)
	var nvd, debian []record
	for _, v := range vulns {
		nvd = append(nvd, record{v.id + ".json", v.id, nvdRecord(v)})
		debian = append(debian, record{"debian@12/" + v.id + ".json", namespace + "/" + v.id, osRecord(v)})
	}
	states := provider.States{
		writeProvider(work, "nvd", nvdSchemaURL, nvd, now),
		writeProvider(work, "debian", osSchemaURL, debian, now),
	}
	if err := grypedb.Build(grypedb.BuildConfig{
		SchemaVersion: v6.ModelVersion,
		Directory:     *dir,
		States:        states,
		Timestamp:     now,
		Hydrate:       true,
	}); err != nil {
		log.Fatal(err)
	}
}
