package api_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/berth-dev/berth/server/internal/apitest"
	"github.com/berth-dev/berth/server/internal/scan"
	"github.com/berth-dev/berth/server/internal/store/storetest"
	"github.com/berth-dev/berth/shared/enginetest"
)

// Removing a scanner removes its image and its database volume from the
// environment's engine, and nothing of the other scanner; clearing the
// cache removes the remaining database volumes and empties the configured
// database directory, but never one holding Berth's data directory.
func TestScannerRemovalAndCacheClearing(t *testing.T) {
	t.Parallel()
	enginetest.Require(t)
	label := randomLabel()
	prefix := "berth-test-" + label + "-"
	grypeImg, trivyImg := "berth-test-"+label+"/grype:1", "berth-test-"+label+"/trivy:1"
	grypeID := enginetest.BuildImage(t, enginetest.Image(), grypeImg, label)
	trivyID := enginetest.BuildImage(t, enginetest.Image(), trivyImg, label, "ENV X=trivy")
	enginetest.RemoveImages(t, label, &grypeID, &trivyID)
	t.Cleanup(func() { enginetest.RemoveLabelledVolumes(t, label) })
	for _, v := range []string{prefix + "grype-db", prefix + "trivy-db"} {
		enginetest.Must(t, 201, "POST", "/volumes/create", nil, map[string]any{"Name": v, "Labels": map[string]string{enginetest.Label: label}}, nil)
	}
	base := t.TempDir()
	dbPath := filepath.Join(base, "data", "berth.db")
	if err := os.MkdirAll(filepath.Dir(dbPath), 0o750); err != nil {
		t.Fatal(err)
	}
	grypeDir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(grypeDir, "5"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(grypeDir, "5", "vulnerability.db"), []byte("db"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := startHarnessWith(t, apitest.Options{DBPath: dbPath, Box: storetest.Box(t), Scan: scan.Config{
		GrypePath: "none-here", TrivyPath: "none-here", GrypeImage: grypeImg, TrivyImage: trivyImg, VolumePrefix: prefix,
		GrypeDBDir: grypeDir, TrivyCacheDir: base}})

	h.expectRefusals([]refusal{
		{"without removeImages", "DELETE", "/api/settings/scanner?env=1", nil, 400, "removeImages parameter required"},
		{"without env", "DELETE", "/api/settings/scanner?removeImages=true", nil, 400, "Environment ID required"},
		{"unknown scanner", "DELETE", "/api/settings/scanner?removeImages=true&env=1&scanner=clam", nil, 400, "Invalid scanner"},
	})
	var removed struct {
		Success bool     `json:"success"`
		Removed []string `json:"removed"`
		Errors  []string `json:"errors"`
	}
	h.must(200, "DELETE", "/api/settings/scanner?removeImages=true&env=1&scanner=grype", nil, &removed)
	if !removed.Success || !slices.Equal(removed.Removed, []string{"grype"}) || len(removed.Errors) != 0 {
		t.Errorf("removal = %+v", removed)
	}
	exists := func(path string) bool {
		status, _ := enginetest.Do(t, "GET", path, nil, nil)
		return status == 200
	}
	if exists("/images/"+grypeID+"/json") || exists("/volumes/"+prefix+"grype-db") {
		t.Error("grype's image or database volume is still there")
	}
	if !exists("/images/"+trivyID+"/json") || !exists("/volumes/"+prefix+"trivy-db") {
		t.Error("removing grype removed trivy's image or volume")
	}

	var cleared struct {
		Success             bool     `json:"success"`
		RemovedVolumes      []string `json:"removedVolumes"`
		RemovedDirs         []string `json:"removedDirs"`
		SkippedEnvironments []string `json:"skippedEnvironments"`
	}
	h.must(200, "DELETE", "/api/settings/scanner/cache", nil, &cleared)
	if !cleared.Success || !slices.Equal(cleared.RemovedVolumes, []string{prefix + "trivy-db"}) ||
		!slices.Equal(cleared.RemovedDirs, []string{grypeDir}) || len(cleared.SkippedEnvironments) != 0 {
		t.Errorf("cleared = %+v", cleared)
	}
	if exists("/volumes/" + prefix + "trivy-db") {
		t.Error("trivy's database volume is still there")
	}
	if left, err := os.ReadDir(grypeDir); err != nil || len(left) != 0 {
		t.Errorf("grype's database directory holds %v, %v", left, err)
	}
	if _, err := os.Stat(dbPath); err != nil {
		t.Errorf("the database went with a cache directory holding it: %v", err)
	}
	if !exists("/images/" + trivyID + "/json") {
		t.Error("clearing the cache removed a scanner image")
	}
}
