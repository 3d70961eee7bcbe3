package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/apitest"
	"github.com/berth-dev/berth/server/internal/helperimage/helperimagetest"
	"github.com/berth-dev/berth/server/internal/scan"
	"github.com/berth-dev/berth/server/internal/store/storetest"
	"github.com/berth-dev/berth/shared/enginetest"
)

// scanEnv is what scripts/test-env.sh prepares: both scanners built from the
// module proxy, offline databases listing CVE-2099-0001 (High) and
// CVE-2099-0002 (Critical), and three images.
type scanEnv struct {
	cfg              scan.Config
	vulnImage, clean string
	crit             string // one critical vulnerability (CVE-2099-0002)
}

func requireScanners(t *testing.T) scanEnv {
	t.Helper()
	e := scanEnv{cfg: scan.Config{GrypePath: os.Getenv("BERTH_TEST_GRYPE"), TrivyPath: os.Getenv("BERTH_TEST_TRIVY"),
		GrypeDBDir: os.Getenv("BERTH_TEST_GRYPE_DB"), TrivyCacheDir: os.Getenv("BERTH_TEST_TRIVY_CACHE"), Offline: true},
		vulnImage: os.Getenv("BERTH_TEST_SCAN_IMAGE"), clean: os.Getenv("BERTH_TEST_SCAN_CLEAN_IMAGE"),
		crit: os.Getenv("BERTH_TEST_SCAN_CRIT_IMAGE")}
	enginetest.RequireEnv(t, "scanners", "BERTH_TEST_GRYPE", "BERTH_TEST_TRIVY", "BERTH_TEST_SCAN_IMAGE",
		"BERTH_TEST_SCAN_CLEAN_IMAGE", "BERTH_TEST_SCAN_CRIT_IMAGE")
	return e
}

func newScanHarness(t *testing.T, cfg scan.Config) *harness {
	t.Helper()
	enginetest.Require(t)
	return startHarnessWith(t, apitest.Options{DBPath: filepath.Join(t.TempDir(), "berth.db"), Box: storetest.Box(t), Scan: cfg})
}

// wantTestVulnerability checks a result against the fixture's one finding.
func wantTestVulnerability(t *testing.T, scanner string, r scan.Result) {
	t.Helper()
	if r.Scanner != scanner || r.ImageID == "" || !strings.HasPrefix(r.ImageID, "sha256:") || r.ScannedAt.IsZero() || r.ScanDuration <= 0 {
		t.Errorf("%s result header = %+v", scanner, r)
	}
	want := scan.Summary{High: 1}
	if r.Summary != want || len(r.Vulnerabilities) != 1 {
		t.Fatalf("%s summary = %+v, %d findings", scanner, r.Summary, len(r.Vulnerabilities))
	}
	v := r.Vulnerabilities[0]
	if v.ID != "CVE-2099-0001" || v.Severity != "high" || v.Package != "berth-demo" || v.Version != "1.0-1" ||
		v.FixedVersion != "1.0-2" || !strings.Contains(v.Description, "Berth test vulnerability") ||
		!contains(v.URLs, "https://example.invalid/CVE-2099-0001") {
		t.Errorf("%s finding = %+v", scanner, v)
	}
}

func TestScanWithBothRealScanners(t *testing.T) {
	t.Parallel()
	env := requireScanners(t)
	h := newScanHarness(t, env.cfg)

	h.headers["Accept"] = "application/json"
	for _, scanner := range []string{scan.ScannerA, scan.ScannerB} {
		var res struct {
			Stage    string
			Progress int
			Result   scan.Result
			Results  []scan.Result
		}
		h.must(200, "POST", "/api/images/scan?env=1", map[string]string{"imageName": env.vulnImage, "scanner": scanner}, &res)
		if res.Stage != "complete" || res.Progress != 100 || len(res.Results) != 1 {
			t.Fatalf("%s: %+v", scanner, res)
		}
		wantTestVulnerability(t, scanner, res.Result)

		var clean struct {
			Stage  string
			Result scan.Result
		}
		h.must(200, "POST", "/api/images/scan?env=1", map[string]string{"imageName": env.clean, "scanner": scanner}, &clean)
		if clean.Stage != "complete" || clean.Result.Summary.Total() != 0 || len(clean.Result.Vulnerabilities) != 0 {
			t.Errorf("%s on the clean image: %+v", scanner, clean.Result)
		}

		var crit struct {
			Stage  string
			Result scan.Result
		}
		h.must(200, "POST", "/api/images/scan?env=1", map[string]string{"imageName": env.crit, "scanner": scanner}, &crit)
		if crit.Stage != "complete" || crit.Result.Summary != (scan.Summary{Critical: 1}) || len(crit.Result.Vulnerabilities) != 1 {
			t.Fatalf("%s on the critical image: %+v", scanner, crit.Result)
		}
		if v := crit.Result.Vulnerabilities[0]; v.ID != "CVE-2099-0002" || v.Severity != "critical" || v.Package != "berth-crit" ||
			v.Version != "1.0-1" || v.FixedVersion != "1.0-2" {
			t.Errorf("%s finding on the critical image = %+v", scanner, v)
		}
	}
	delete(h.headers, "Accept")

	// Stored results, per scanner and latest of any.
	var found struct {
		Found  bool
		Result scan.Result
	}
	h.must(200, "GET", "/api/images/scan?env=1&scanner=scanner_b&image="+url.QueryEscape(env.vulnImage), nil, &found)
	if !found.Found {
		t.Fatal("stored Trivy result not found")
	}
	wantTestVulnerability(t, scan.ScannerB, found.Result)
	h.must(200, "GET", "/api/images/scan?env=1&image="+url.QueryEscape(found.Result.ImageID), nil, &found)
	if !found.Found {
		t.Error("stored result not found by image id")
	}
	h.must(200, "GET", "/api/images/scan?env=1&image=never-scanned:1", nil, &found)
	if found.Found {
		t.Error("found a result for an image never scanned")
	}
	if status, body := h.do("GET", "/api/images/scan?env=1", nil); status != 400 || !strings.Contains(string(body), "Image name is required") {
		t.Errorf("lookup without image = %d %s", status, body)
	}
	if status, body := h.do("POST", "/api/images/scan?env=1", map[string]string{}); status != 400 || !strings.Contains(string(body), "Image name is required") {
		t.Errorf("scan without image = %d %s", status, body)
	}

	// The environment's setting "both", followed as a job over SSE.
	h.must(200, "POST", "/api/settings/scanner?env=1", map[string]string{"scanner": "both"}, nil)
	var setting struct{ Scanner string }
	h.must(200, "GET", "/api/settings/scanner?env=1", nil, &setting)
	if setting.Scanner != "both" {
		t.Fatalf("setting = %+v", setting)
	}
	var job struct{ JobID string }
	h.must(200, "POST", "/api/images/scan?env=1", map[string]string{"imageName": env.vulnImage}, &job)
	evs := h.followJob(job.JobID)
	var stages []string
	for _, e := range evs {
		var d struct {
			Stage    string
			Progress int
		}
		_ = json.Unmarshal([]byte(e.Data), &d)
		stages = append(stages, d.Stage)
		if d.Stage == "scanning" && d.Progress != 0 {
			t.Errorf("scanning at progress %d, want 0", d.Progress)
		}
	}
	if len(stages) < 4 || stages[0] != "scanning" || stages[len(stages)-1] != "complete" || !contains(stages, "analyzing") || !contains(stages, "processing") {
		t.Errorf("stages = %v", stages)
	}
	var final struct{ Results []scan.Result }
	_ = json.Unmarshal([]byte(evs[len(evs)-1].Data), &final)
	if len(final.Results) != 2 {
		t.Fatalf("both scanners: %d results", len(final.Results))
	}
	wantTestVulnerability(t, scan.ScannerA, final.Results[0])
	wantTestVulnerability(t, scan.ScannerB, final.Results[1])
}

func TestConcurrentScansOfOneImageAreCoalesced(t *testing.T) {
	t.Parallel()
	env := requireScanners(t)
	h := newScanHarness(t, env.cfg)
	var wg sync.WaitGroup
	results := make([]scan.Result, 3)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body, _ := json.Marshal(map[string]string{"imageName": env.vulnImage, "scanner": scan.ScannerB})
			req, _ := http.NewRequest("POST", h.url+"/api/images/scan?env=1", strings.NewReader(string(body)))
			req.Header.Set("Accept", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			var res struct{ Result scan.Result }
			_ = json.NewDecoder(resp.Body).Decode(&res)
			results[i] = res.Result
		}()
	}
	wg.Wait()
	distinct := map[time.Time]bool{}
	for _, r := range results {
		distinct[r.ScannedAt] = true
	}
	// Requests that overlap share one run; at most the late ones start a new run.
	if len(distinct) >= len(results) {
		t.Errorf("3 concurrent scans gave %d separate runs: %v", len(distinct), distinct)
	}
}

// A scanner that cannot run is refused before any job starts (400, saying
// why and how to get it), never answered 200 and then failed image by image:
// the one scan, the scan of every image in use, asked for by name, by the
// setting, or with no scanner at all able to run.
func TestAScannerThatCannotRunIsRefusedBeforeTheScan(t *testing.T) {
	enginetest.Require(t) // not parallel: it changes PATH
	// The helper image is built with go, found on PATH, before PATH is emptied.
	if _, err := helperimagetest.Set(); err != nil {
		t.Fatal(err)
	}
	// No binary configured or on PATH, and no scanner image on the engine.
	t.Setenv("PATH", t.TempDir())
	h := newScanHarness(t, scan.Config{Offline: true, GrypeImage: "berth-test/no-such-grype:0", TrivyImage: "berth-test/no-such-scanner:0"})
	img := enginetest.Image()
	trivy := "Trivy is not installed and its image berth-test/no-such-scanner:0 is not on this environment. To scan, set TRIVY_PATH"
	none := "No vulnerability scanner can run on this environment. Grype is not installed"
	h.expectRefusals([]refusal{
		{"trivy asked for", "POST", "/api/images/scan?env=1", map[string]string{"imageName": img, "scanner": scan.ScannerB}, 400, trivy},
		{"both asked for", "POST", "/api/images/scan?env=1", map[string]string{"imageName": img, "scanner": "both"}, 400, "Grype is not installed"},
		{"unknown scanner", "POST", "/api/images/scan?env=1", map[string]string{"imageName": img, "scanner": "clam"}, 400, "scanner must be scanner_a, scanner_b or both"},
		{"the setting, none can run", "POST", "/api/images/scan?env=1", map[string]string{"imageName": img}, 400, none},
		{"scan all, trivy asked for", "POST", "/api/vulnerabilities/scan-all?env=1&scanner=scanner_b", nil, 400, trivy},
		{"scan all, none can run", "POST", "/api/vulnerabilities/scan-all?env=1", nil, 400, none},
	})
	h.must(200, "POST", "/api/settings/scanner?env=1", map[string]string{"scanner": "scanner_b"}, nil)
	h.expectRefusals([]refusal{
		{"scan all, setting trivy", "POST", "/api/vulnerabilities/scan-all?env=1", nil, 400, none + " and its image berth-test/no-such-grype:0"},
	})
}

func TestPullScansWhenTheEnvironmentAsksForIt(t *testing.T) {
	t.Parallel()
	env := requireScanners(t)
	reg := requireRegistry(t)
	h := newScanHarness(t, env.cfg)
	remote := reg.host + "/berth-test/scan-" + h.label + ":1"
	removeImages(t, remote)
	var created struct{ ID int64 }
	h.must(201, "POST", "/api/registries", map[string]any{"name": "r", "url": reg.host, "username": reg.user, "password": reg.password}, &created)
	var job struct{ JobID string }
	h.must(200, "POST", "/api/images/push?env=1", map[string]any{"imageId": env.vulnImage, "registryId": created.ID,
		"newTag": "berth-test/scan-" + h.label + ":1"}, &job)
	if final := lastData(t, h.followJob(job.JobID)); final["status"] != "complete" || final["targetTag"] != remote {
		t.Fatalf("push = %v", final)
	}
	h.must(200, "DELETE", "/api/images/"+url.PathEscape(remote)+"?env=1&force=true", nil, nil)
	h.must(200, "POST", "/api/settings/scanner?env=1", map[string]string{"scanner": "scanner_b"}, nil)

	h.must(200, "POST", "/api/images/pull?env=1", map[string]any{"image": remote}, &job)
	evs := h.followJob(job.JobID)
	var statuses []string
	var complete struct{ Results []scan.Result }
	for _, e := range evs {
		var d struct{ Status string }
		_ = json.Unmarshal([]byte(e.Data), &d)
		statuses = append(statuses, d.Status)
		if d.Status == "scan-complete" {
			_ = json.Unmarshal([]byte(e.Data), &complete)
		}
	}
	if !contains(statuses, "scanning") || !contains(statuses, "scan-progress") || !contains(statuses, "scan-complete") || statuses[len(statuses)-1] != "complete" {
		t.Fatalf("pull statuses = %v", statuses)
	}
	if len(complete.Results) != 1 {
		t.Fatalf("scan-complete results = %+v", complete)
	}
	wantTestVulnerability(t, scan.ScannerB, complete.Results[0])

	// scanAfterPull false skips it.
	h.must(200, "DELETE", "/api/images/"+url.PathEscape(remote)+"?env=1&force=true", nil, nil)
	h.must(200, "POST", "/api/images/pull?env=1", map[string]any{"image": remote, "scanAfterPull": false}, &job)
	for _, e := range h.followJob(job.JobID) {
		var d struct{ Status string }
		_ = json.Unmarshal([]byte(e.Data), &d)
		if strings.HasPrefix(d.Status, "scan") {
			t.Errorf("a scan ran although scanAfterPull was false: %s", e.Data)
		}
	}
}

// The reference's clients name the environment of a scanner setting in the
// body (envId) and may ask for the setting only; custom scanner arguments
// are refused, not ignored.
func TestScannerSettingReadsTheReferenceFields(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var env2 struct{ ID int64 }
	h.must(201, "POST", "/api/environments", map[string]any{"name": "scan-" + h.label, "socketPath": "/x.sock"}, &env2)
	h.must(200, "POST", "/api/settings/scanner", map[string]any{"scanner": "scanner_b", "envId": env2.ID}, nil)
	var one, two struct {
		Scanner   string
		Available map[string]string
	}
	h.must(200, "GET", "/api/settings/scanner?env=1&settingsOnly=true", nil, &one)
	h.must(200, "GET", fmt.Sprintf("/api/settings/scanner?env=%d", env2.ID), nil, &two)
	if one.Scanner == "scanner_b" || two.Scanner != "scanner_b" {
		t.Errorf("after envId %d: env 1 = %q, env %d = %q", env2.ID, one.Scanner, env2.ID, two.Scanner)
	}
	if one.Available != nil || two.Available == nil {
		t.Errorf("settingsOnly: available = %v; without it: %v", one.Available, two.Available)
	}
	for _, tc := range []struct {
		path string
		body map[string]any
		msg  string
	}{
		{"/api/settings/scanner?env=1", map[string]any{"scanner": "both", "envId": env2.ID}, "envId and env name different environments"},
		{"/api/settings/scanner", map[string]any{"scanner": "both", "envId": 999999}, "Environment not found"},
		{"/api/settings/scanner", map[string]any{"scanner": "both", "trivyArgs": "--output /tmp/x"}, "Custom scanner arguments are not supported"},
	} {
		status, body := h.do("POST", tc.path, tc.body)
		if status/100 != 4 || !strings.Contains(string(body), tc.msg) {
			t.Errorf("POST %s %v = %d %s, want %q", tc.path, tc.body, status, body, tc.msg)
		}
	}
	h.must(200, "GET", fmt.Sprintf("/api/settings/scanner?env=%d", env2.ID), nil, &two)
	if two.Scanner != "scanner_b" {
		t.Errorf("a refused change changed the setting: %q", two.Scanner)
	}
}
