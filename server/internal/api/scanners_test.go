package api_test

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/berth-dev/berth/server/internal/scan"
	"github.com/berth-dev/berth/shared/enginetest"
)

// scannersState is GET /api/images/scanners.
type scannersState struct {
	Setting  string
	Usable   bool
	Scanners []scan.Status
}

func (s scannersState) of(name string) scan.Status {
	for _, st := range s.Scanners {
		if st.Scanner == name {
			return st
		}
	}
	return scan.Status{}
}

// The console offers Scan only when a scanner can run: the server tells,
// per scanner, whether its binary runs or its image is on the engine, and
// otherwise where to get it. A scanner image that a configured registry
// serves is pulled in one request and named as the scanner's image, after
// which the scanner is usable.
func TestScannerStatusAndPullFromARegistry(t *testing.T) {
	t.Parallel()
	enginetest.Require(t)
	reg := requireRegistry(t)
	label := randomLabel()
	grypeImg := "berth-test-" + label + "/grype:1" // named like a scanner image, built here
	remote := reg.host + "/" + grypeImg
	bin := t.TempDir()
	notExec, trivy := filepath.Join(bin, "grype"), filepath.Join(bin, "trivy")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(trivy, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	h := newScanHarness(t, scan.Config{GrypePath: notExec, GrypeImage: grypeImg, TrivyPath: trivy,
		TrivyImage: "berth-test-" + label + "/trivy:1", Offline: true})
	removeImages(t, grypeImg, remote)

	state := func() scannersState {
		t.Helper()
		var s scannersState
		h.must(200, "GET", "/api/images/scanners?env=1", nil, &s)
		return s
	}
	s := state()
	g, tr := s.of(scan.ScannerA), s.of(scan.ScannerB)
	if !s.Usable || s.Setting != "none" || !tr.Usable || tr.Via != scan.ViaBinary || tr.Binary != trivy {
		t.Errorf("with a runnable trivy binary: %+v", s)
	}
	if g.Usable || g.ImagePresent || g.PullFrom != nil || !strings.Contains(g.BinaryProblem, "is not executable") ||
		!strings.Contains(g.Reason, "GRYPE_PATH") || !strings.Contains(g.Reason, grypeImg) {
		t.Errorf("grype without binary, image or registry: %+v", g)
	}
	h.expectRefusals([]refusal{
		{"no registry serves it", "POST", "/api/images/scanners/pull?env=1", map[string]string{"scanner": scan.ScannerA}, 404, "No configured registry serves " + grypeImg},
		{"unknown scanner", "POST", "/api/images/scanners/pull?env=1", map[string]string{"scanner": "clam"}, 400, "scanner must be scanner_a or scanner_b"},
	})

	// The image on the engine makes grype usable; in a registry only, pullable.
	id := enginetest.BuildImage(t, enginetest.Image(), grypeImg, label)
	enginetest.RemoveImages(t, label, &id)
	if g := state().of(scan.ScannerA); !g.Usable || g.Via != scan.ViaImage || !g.ImagePresent {
		t.Errorf("grype with its image on the engine: %+v", g)
	}
	var created struct{ ID int64 }
	h.must(201, "POST", "/api/registries", map[string]any{"name": "mirror-" + label, "url": reg.host, "username": reg.user, "password": reg.password}, &created)
	var job struct{ JobID string }
	h.must(200, "POST", "/api/images/push?env=1", map[string]any{"imageId": id, "registryId": created.ID, "newTag": grypeImg}, &job)
	if final := lastData(t, h.followJob(job.JobID)); final["status"] != "complete" || final["targetTag"] != remote {
		t.Fatalf("push = %v", final)
	}
	for _, n := range []string{grypeImg, remote} {
		h.must(200, "DELETE", "/api/images/"+url.PathEscape(n)+"?env=1&force=true", nil, nil)
	}
	g = state().of(scan.ScannerA)
	if g.Usable || g.ImagePresent || g.PullFrom == nil || g.PullFrom.RegistryID != created.ID || g.PullFrom.Reference != remote ||
		!strings.Contains(g.Reason, "pull its image from mirror-"+label) {
		t.Fatalf("grype served by a registry: %+v (pullFrom %+v)", g, g.PullFrom)
	}

	h.must(200, "POST", "/api/images/scanners/pull?env=1", map[string]string{"scanner": scan.ScannerA}, &job)
	evs := h.followJob(job.JobID)
	if final := lastData(t, evs); final["status"] != "complete" || !strings.Contains(final["message"].(string), grypeImg) {
		t.Fatalf("scanner pull = %v", final)
	}
	if g := state().of(scan.ScannerA); !g.Usable || g.Via != scan.ViaImage || g.PullFrom != nil {
		t.Errorf("grype after its pull: %+v", g)
	}
}
