package api_test

import (
	"archive/tar"
	"bytes"
	"io"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"testing"

	"github.com/berth-dev/berth/server/internal/helperimage"
	"github.com/berth-dev/berth/server/internal/helperimage/helperimagetest"
	"github.com/berth-dev/berth/shared/enginetest"
)

// importDecoy imports, as the image names refs, a filesystem holding only
// a marker file (docker import), labelled for the test; the images are
// removed when the test ends.
func importDecoy(t *testing.T, label string, refs ...string) {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	marker := []byte("a decoy: Berth must never run this image\n")
	if err := tw.WriteHeader(&tar.Header{Name: "decoy-marker", Mode: 0o644, Size: int64(len(marker))}); err != nil {
		t.Fatal(err)
	}
	_, _ = tw.Write(marker)
	_ = tw.Close()
	repo, tag, _ := strings.Cut(refs[0], ":")
	q := url.Values{"fromSrc": {"-"}, "repo": {repo}, "tag": {tag}, "changes": {"LABEL " + enginetest.Label + "=" + label}}
	req, _ := http.NewRequest("POST", "http://engine/images/create?"+q.Encode(), &buf)
	req.Header.Set("Content-Type", "application/x-tar")
	resp, err := enginetest.HTTPClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	t.Cleanup(func() {
		for _, ref := range refs {
			enginetest.Do(t, "DELETE", "/images/"+ref+"?force=1", nil, nil)
		}
	})
	if resp.StatusCode != 200 || bytes.Contains(body, []byte(`"error"`)) {
		t.Fatalf("docker import %s = %d %s", refs[0], resp.StatusCode, body)
	}
	id := enginetest.ImageID(t, refs[0])
	for _, ref := range refs[1:] {
		enginetest.TagImage(t, id, ref)
	}
}

// berthHelperImage returns the id of Berth's helper image on the local
// engine (this machine's architecture).
func berthHelperImage(t *testing.T) string {
	t.Helper()
	s, err := helperimagetest.Set()
	if err != nil {
		t.Fatal(err)
	}
	id, err := s.ID(runtime.GOARCH)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestHelpersRunOnlyBerthsImage: with decoys named */busybox and
// */alpine on the engine (the names helpers used to be picked by), every
// helper container — volume browse, export, clone, and the removal from a
// stopped container — is created from Berth's own helper image, by its id,
// and does its work; the image carries Berth's label.
func TestHelpersRunOnlyBerthsImage(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.removeObjectsAtCleanup()
	importDecoy(t, h.label, "evil-"+h.label+"/busybox:latest", "x-"+h.label+"/alpine:latest")
	want := berthHelperImage(t)
	src, dst := "berth-decoy-"+h.label, "berth-decoy-clone-"+h.label
	removeHelpersAtCleanup(t, src, dst)
	fillVolume(t, h.label, src, fillScript)
	created := enginetest.WatchCreates(t, enginetest.Socket, "berth.helper.volume="+src)

	var content struct {
		Content string `json:"content"`
	}
	h.must(200, "GET", "/api/volumes/"+src+"/browse/content?env=1&path=hello.txt", nil, &content)
	if content.Content != "hello\nworld\n" {
		t.Errorf("hello.txt = %q", content.Content)
	}
	helpers := volumeHelpers(t, src)
	if len(helpers) != 1 {
		t.Fatalf("browse helpers = %v, want one", helpers)
	}
	var ct struct{ Image string }
	enginetest.Must(t, 200, "GET", "/containers/"+helpers[0]+"/json", nil, nil, &ct)
	if ct.Image != want {
		t.Errorf("the browse helper runs %s, want Berth's helper image %s", ct.Image, want)
	}
	h.must(200, "POST", "/api/volumes/"+src+"/browse/release?env=1", nil, nil)

	status, body := h.do("GET", "/api/volumes/"+src+"/export?env=1", nil)
	if status != 200 {
		t.Fatalf("export = %d %s", status, body)
	}
	if _, files := tarNames(t, bytes.NewReader(body)); files["./sub/deeper/n.txt"] != "nested\n" {
		t.Errorf("export: %v", files)
	}
	h.must(200, "POST", "/api/volumes/"+src+"/clone?env=1", map[string]string{"name": dst}, nil)
	h.must(200, "GET", "/api/volumes/"+dst+"/browse/content?env=1&path=sub/deeper/n.txt", nil, &content)
	if content.Content != "nested\n" {
		t.Errorf("the clone's sub/deeper/n.txt = %q", content.Content)
	}
	h.must(200, "POST", "/api/volumes/"+dst+"/browse/release?env=1", nil, nil)
	images := created()
	if len(images) != 3 {
		t.Errorf("helpers created for %s: %v, want 3 (browse, export, clone)", src, images)
	}
	for id, img := range images {
		if img != want {
			t.Errorf("helper %.12s was created from %q, want Berth's helper image %s", id, img, want)
		}
	}

	// The removal from a stopped container.
	stopped := h.createContainer("berth-decoy-files-"+h.label, false, "sleep", "3600")
	filesCreated := enginetest.WatchCreates(t, enginetest.Socket, "berth.helper=container-files", "berth.helper.container="+stopped)
	h.must(200, "DELETE", fbURL(stopped, "delete", "path", "/bin/cat"), nil, nil)
	if status, _ := enginetest.Do(t, "HEAD", "/containers/"+stopped+"/archive?path=/bin/cat", nil, nil); status != 404 {
		t.Errorf("/bin/cat after the removal: engine answers %d, want 404", status)
	}
	images = filesCreated()
	if len(images) != 1 {
		t.Errorf("removal helpers created: %v, want 1", images)
	}
	for id, img := range images {
		if img != want {
			t.Errorf("removal helper %.12s was created from %q, want Berth's helper image %s", id, img, want)
		}
	}

	var img struct {
		ID     string `json:"Id"`
		Config struct{ Labels map[string]string }
	}
	enginetest.Must(t, 200, "GET", "/images/"+want+"/json", nil, nil, &img)
	if img.ID != want || img.Config.Labels[helperimage.Label] != helperimage.Format {
		t.Errorf("Berth's helper image = %s labelled %v, want %s with %s=%s", img.ID, img.Config.Labels, want,
			helperimage.Label, helperimage.Format)
	}
}
