package api_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/berth-dev/berth/server/internal/scan"
	"github.com/berth-dev/berth/shared/enginetest"
)

// POST /api/images/load takes a docker save tarball as the request body
// and loads it into the environment's engine: an image saved, removed and
// loaded is back under its name. A missing or JSON body is refused.
func TestImageLoadFromADockerSaveTarball(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ref := "berth-test/load-" + h.label + ":1"
	var id string
	enginetest.RemoveImages(t, h.label, &id)
	id = enginetest.BuildImage(t, enginetest.Image(), ref, h.label, "LABEL berth.load="+h.label)
	status, tarball := enginetest.Do(t, "GET", "/images/"+url.PathEscape(ref)+"/get", nil, nil)
	if status != 200 || len(tarball) < 1024 {
		t.Fatalf("docker save = %d, %d bytes", status, len(tarball))
	}
	enginetest.Must(t, 200, "DELETE", "/images/"+url.PathEscape(ref)+"?force=1", nil, nil, nil)
	if st, _ := enginetest.Do(t, "GET", "/images/"+url.PathEscape(ref)+"/json", nil, nil); st != 404 {
		t.Fatalf("the image is still there after removal: %d", st)
	}

	req, _ := http.NewRequest("POST", h.url+"/api/images/load?env=1", bytes.NewReader(tarball))
	req.Header.Set("Content-Type", "application/x-tar")
	resp, err := h.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var out struct {
		Success bool
		Loaded  string
	}
	if err := json.Unmarshal(body, &out); err != nil || resp.StatusCode != 200 || !out.Success || out.Loaded != "Loaded image: "+ref {
		t.Fatalf("load = %d %s, want success and Loaded image: %s", resp.StatusCode, body, ref)
	}
	var inspect struct{ ID string }
	enginetest.Must(t, 200, "GET", "/images/"+url.PathEscape(ref)+"/json", nil, nil, &inspect)
	if inspect.ID != id {
		t.Errorf("loaded image id = %s, want %s", inspect.ID, id)
	}

	// The same tarball as the file of a form (the console's upload).
	enginetest.Must(t, 200, "DELETE", "/images/"+url.PathEscape(ref)+"?force=1", nil, nil, nil)
	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	fw, _ := mw.CreateFormFile("file", "image.tar")
	fw.Write(tarball)
	mw.Close()
	req, _ = http.NewRequest("POST", h.url+"/api/images/load?env=1", &form)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	if resp, err = h.http.Do(req); err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "Loaded image: "+ref) {
		t.Errorf("load of a form = %d %s", resp.StatusCode, body)
	}
	enginetest.Must(t, 200, "GET", "/images/"+url.PathEscape(ref)+"/json", nil, nil, &inspect)

	for _, c := range []struct {
		contentType, body, msg string
	}{
		{"application/x-tar", "", "Request body (an image tar) is required"},
		{"application/json", `{"file":"x"}`, "Send the image tar as the request body (Content-Type application/x-tar) or as the file of a form"},
	} {
		req, _ := http.NewRequest("POST", h.url+"/api/images/load?env=1", strings.NewReader(c.body))
		req.Header.Set("Content-Type", c.contentType)
		resp, err := h.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 400 || !strings.Contains(string(b), c.msg) {
			t.Errorf("load of %q = %d %s, want 400 %q", c.body, resp.StatusCode, b, c.msg)
		}
	}
	// Not a tarball: the engine's refusal is a 4xx, not a success.
	req, _ = http.NewRequest("POST", h.url+"/api/images/load?env=1", strings.NewReader(strings.Repeat("not a tar ", 200)))
	req.Header.Set("Content-Type", "application/x-tar")
	if resp, err = h.http.Do(req); err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode < 400 || strings.Contains(string(b), `"success":true`) {
		t.Errorf("load of garbage = %d %s, want an error", resp.StatusCode, b)
	}
}

// finding is an entry of GET /api/vulnerabilities.
type finding struct {
	CVE, Severity, Package, Version, FixedVersion string
	Fixable                                       bool
	ImageID, ImageName                            string
	Scanners, Containers, Stacks                  []string
}

// The vulnerability view against the real scanners: scan-all scans the
// images the environment's containers use (a job); the findings carry the
// containers and stacks running each image, filter, page and count; the
// exports (json, csv) hold the same; a stored scan exports on its own.
func TestVulnerabilityViewAndScanAll(t *testing.T) {
	t.Parallel()
	env := requireScanners(t)
	h := newScanHarness(t, env.cfg)
	stack := "vulnstack-" + h.label
	for i, img := range []string{env.vulnImage, env.crit} {
		labels := map[string]string{enginetest.Label: h.label}
		if i == 0 {
			labels["com.docker.compose.project"] = stack
		}
		enginetest.Must(t, 201, "POST", fmt.Sprintf("/containers/create?name=vuln%d-%s", i, h.label), nil,
			map[string]any{"Image": img, "Cmd": []string{"true"}, "Labels": labels}, nil)
	}

	// Nothing scanned yet: no finding.
	var page struct {
		Findings      []finding
		Total         int
		Limit, Offset int
	}
	h.must(200, "GET", "/api/vulnerabilities?env=1&container=vuln0-"+h.label, nil, &page)
	if page.Total != 0 || len(page.Findings) != 0 {
		t.Fatalf("findings before any scan = %+v", page)
	}

	h.headers["Accept"] = "application/json"
	var done scan.ScanAllResult
	h.must(200, "POST", "/api/vulnerabilities/scan-all?env=1", nil, &done)
	delete(h.headers, "Accept")
	if done.Stage != "complete" || done.Scanned < 2 || done.Scanned != done.Total-len(done.Failed) {
		t.Fatalf("scan-all = %+v, want at least our two images scanned", done)
	}

	h.must(200, "GET", "/api/vulnerabilities?env=1&container=vuln0-"+h.label, nil, &page)
	if page.Total != 1 || len(page.Findings) != 1 {
		t.Fatalf("findings of vuln0 = %+v, want one", page)
	}
	f := page.Findings[0]
	if f.CVE != "CVE-2099-0001" || f.Severity != "high" || f.Package != "berth-demo" || f.FixedVersion != "1.0-2" || !f.Fixable ||
		len(f.Scanners) != 2 || f.ImageName != env.vulnImage || len(f.Stacks) != 1 || f.Stacks[0] != stack ||
		!contains(f.Containers, "vuln0-"+h.label) {
		t.Errorf("finding = %+v, want CVE-2099-0001 of both scanners, run by vuln0 of %s", f, stack)
	}
	h.must(200, "GET", "/api/vulnerabilities?env=1&stack="+stack, nil, &page)
	if page.Total != 1 || page.Findings[0].CVE != "CVE-2099-0001" {
		t.Errorf("findings of the stack = %+v", page)
	}
	h.must(200, "GET", "/api/vulnerabilities?env=1&severity=critical&q="+url.QueryEscape("vuln1-"+h.label), nil, &page)
	if page.Total != 1 || page.Findings[0].CVE != "CVE-2099-0002" || page.Findings[0].Package != "berth-crit" {
		t.Errorf("critical findings of vuln1 = %+v", page)
	}
	h.must(200, "GET", "/api/vulnerabilities?env=1&fixable=false&q="+url.QueryEscape(h.label), nil, &page)
	if page.Total != 0 {
		t.Errorf("unfixable findings = %+v, want none (both have a fixed version)", page)
	}
	// Most severe first; limit and offset page.
	h.must(200, "GET", "/api/vulnerabilities?env=1&q="+url.QueryEscape(h.label)+"&limit=1", nil, &page)
	if page.Total != 2 || len(page.Findings) != 1 || page.Findings[0].Severity != "critical" || page.Limit != 1 {
		t.Errorf("first page of one = %+v, want the critical finding of 2", page)
	}
	h.must(200, "GET", "/api/vulnerabilities?env=1&q="+url.QueryEscape(h.label)+"&limit=1&offset=1", nil, &page)
	if page.Total != 2 || len(page.Findings) != 1 || page.Findings[0].Severity != "high" {
		t.Errorf("second page of one = %+v, want the high finding", page)
	}

	var counts scan.FindingCounts
	h.must(200, "GET", "/api/vulnerabilities/count?env=1&q="+url.QueryEscape(h.label), nil, &counts)
	if counts.Total != 2 || counts.Summary != (scan.Summary{Critical: 1, High: 1}) || counts.Fixable != 2 ||
		!contains(counts.Containers, "vuln1-"+h.label) || !contains(counts.Stacks, stack) || !contains(counts.Images, env.crit) {
		t.Errorf("counts = %+v", counts)
	}

	var exported []finding
	h.must(200, "GET", "/api/vulnerabilities/export?env=1&format=json&q="+url.QueryEscape(h.label), nil, &exported)
	if len(exported) != 2 || exported[0].CVE != "CVE-2099-0002" {
		t.Errorf("json export = %+v", exported)
	}
	status, body := h.do("GET", "/api/vulnerabilities/export?env=1&format=csv&q="+url.QueryEscape(h.label), nil)
	rows, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
	if status != 200 || err != nil || len(rows) != 3 || rows[0][0] != "cve" || rows[1][0] != "CVE-2099-0002" || rows[2][0] != "CVE-2099-0001" {
		t.Errorf("csv export = %d %v %q", status, err, body)
	}
	h.wantError(400, "GET", "/api/vulnerabilities/export?env=1&format=sarif", "Unsupported format 'sarif' (json or csv)")
	h.wantError(400, "GET", "/api/vulnerabilities?env=1&severity=severe", "Unknown severity 'severe' (one of critical, high, medium, low, negligible, unknown)")

	// One image's stored scans, exported.
	var results []scan.Result
	h.must(200, "GET", "/api/images/scan/export?env=1&imageId="+url.QueryEscape(f.ImageID), nil, &results)
	if len(results) != 2 || results[0].Scanner != scan.ScannerA || results[1].Scanner != scan.ScannerB {
		t.Fatalf("scan export = %+v, want both scanners' results", results)
	}
	wantTestVulnerability(t, scan.ScannerA, results[0])
	status, body = h.do("GET", "/api/images/scan/export?env=1&format=csv&scanner=scanner_b&image="+url.QueryEscape(env.vulnImage), nil)
	rows, err = csv.NewReader(bytes.NewReader(body)).ReadAll()
	if status != 200 || err != nil || len(rows) != 2 || rows[1][0] != scan.ScannerB || rows[1][1] != "CVE-2099-0001" {
		t.Errorf("scan csv export = %d %v %q", status, err, body)
	}
	h.wantError(404, "GET", "/api/images/scan/export?env=1&image=never-scanned-"+h.label, "No scan results found for this image")
	h.wantError(400, "GET", "/api/images/scan/export?env=1", "imageId is required")

	// Without an environment: an empty page, as the reference answers.
	h.must(200, "GET", "/api/vulnerabilities", nil, &page)
	if page.Total != 0 || page.Findings == nil {
		t.Errorf("findings without env = %+v", page)
	}
}
