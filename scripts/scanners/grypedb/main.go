// Command grypedb writes a tiny Grype vulnerability database (schema v6) for
// Berth's scan tests: vulnerability.db and import.json in the directory given by
// -dir, ready for `grype db import <dir>/vulnerability.db`. It lists one made-up
// vulnerability, CVE-2099-0001, in the Debian package berth-demo of Debian 12,
// fixed in 1.0-2 (a made-up id: Grype ignores some real ones on purpose).
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
	"time"

	grypedb "github.com/anchore/grype/grype/db"
	"github.com/anchore/grype/grype/db/provider"
	v6 "github.com/anchore/grype/grype/db/v6"
)

// The fixture; internal/scan/testdata/grype-*.json show what Grype reports for it.
const (
	vulnID       = "CVE-2099-0001"
	pkgName      = "berth-demo"
	namespace    = "debian:12" // Grype's namespace for Debian 12 (bookworm) packages
	fixedVersion = "1.0-2"
	description  = "Berth test vulnerability"
	reference    = "https://example.invalid/CVE-2099-0001"
	cvssVector   = "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:N/A:N"
	cvssScore    = 7.5
	published    = "2099-01-01T00:00:00.000" // NVD's format

	// vunnel's schemas: Grype's processors take major version 1 of the record schemas.
	schemaBase     = "https://raw.githubusercontent.com/anchore/vunnel/main/schema/"
	osSchemaURL    = schemaBase + "vulnerability/os/schema-1.0.0.json"
	nvdSchemaURL   = schemaBase + "vulnerability/nvd/schema-1.0.0.json"
	stateSchemaVer = "1.0.3"
	stateSchemaURL = schemaBase + "provider-workspace-state/schema-1.0.3.json"
)

// osRecord is a vunnel OS vulnerability record, as Grype's OS transformer reads it.
func osRecord() any {
	return map[string]any{
		"Vulnerability": map[string]any{
			"Name":          vulnID,
			"NamespaceName": namespace,
			"Severity":      "High",
			"Description":   description,
			"Link":          reference,
			"CVSS": []any{map[string]any{
				"version":       "3.1",
				"vector_string": cvssVector,
				"status":        "N/A",
				"base_metrics": map[string]any{
					"base_score":           cvssScore,
					"base_severity":        "High",
					"exploitability_score": 3.9,
					"impact_score":         3.6,
				},
			}},
			"FixedIn": []any{map[string]any{
				"Name":           pkgName,
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
func nvdRecord() any {
	return map[string]any{
		"cve": map[string]any{
			"id":               vulnID,
			"sourceIdentifier": "cve@mitre.org",
			"published":        published,
			"lastModified":     published,
			"vulnStatus":       "Analyzed",
			"descriptions":     []any{map[string]any{"lang": "en", "value": description}},
			"metrics": map[string]any{
				"cvssMetricV31": []any{map[string]any{
					"source": "nvd@nist.gov",
					"type":   "Primary",
					"cvssData": map[string]any{
						"version":      "3.1",
						"vectorString": cvssVector,
						"baseScore":    cvssScore,
						"baseSeverity": "HIGH",
					},
					"exploitabilityScore": 3.9,
					"impactScore":         3.6,
				}},
			},
			"references": []any{map[string]any{"url": reference, "source": "cve@mitre.org"}},
		},
	}
}

// writeProvider writes the vunnel workspace <root>/<name> holding one record and
// returns its state.
func writeProvider(root, name, file, schemaURL, identifier string, item any, now time.Time) provider.State {
	envelope, err := json.Marshal(map[string]any{"schema": schemaURL, "identifier": identifier, "item": item})
	if err != nil {
		log.Fatal(err)
	}
	ws := provider.NewWorkspaceWriter(root, name)
	result, err := ws.WriteResult(file, envelope)
	if err != nil {
		log.Fatal(err)
	}
	if err := ws.WriteListing([]provider.File{*result}); err != nil {
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
		URLs:      []string{reference},
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
	states := provider.States{
		writeProvider(work, "nvd", vulnID+".json", nvdSchemaURL, vulnID, nvdRecord(), now),
		writeProvider(work, "debian", "debian@12/"+vulnID+".json", osSchemaURL, namespace+"/"+vulnID, osRecord(), now),
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
