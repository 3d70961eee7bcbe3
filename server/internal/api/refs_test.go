package api_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/berth-dev/berth/shared/enginetest"
)

// The engine SDK builds paths such as "/volumes/"+name and then cleans them,
// so a name "../images/x" used to reach DELETE /images/x: the permission
// checked was the route's, not the object's. These tests send such names
// through Berth's routes (escaped: %2F stays inside the path parameter and
// reaches the handler decoded) and check that the engine object they aim at
// is untouched.

// refused asserts a 400 whose error or details contain want (the decoded
// reference, which shows the handler received "../", not "..%2F").
func (h *harness) refused(method, path, want string) {
	h.t.Helper()
	status, body := h.do(method, path, nil)
	var e struct{ Error, Details string }
	_ = json.Unmarshal(body, &e)
	if status != http.StatusBadRequest || !strings.Contains(e.Error+" "+e.Details, want) {
		h.t.Errorf("%s %s = %d %s, want 400 naming %q", method, path, status, body, want)
	}
}

// engineAnswers reports whether the engine answers 200 for GET path (the raw
// Engine API, not Berth).
func engineAnswers(t *testing.T, path string) bool {
	t.Helper()
	status, _ := enginetest.Do(t, "GET", path, nil, nil)
	return status == http.StatusOK
}

// referenceTargets makes the objects the tests aim at: a labelled image
// tag, a stopped container and a volume, all removed at cleanup.
func referenceTargets(h *harness) (image, container, volume string) {
	h.t.Helper()
	h.removeObjectsAtCleanup()
	image = "berth-refs-" + h.label + ":target"
	id := enginetest.BuildImage(h.t, enginetest.Image(), image, h.label)
	enginetest.RemoveImages(h.t, h.label, &id)
	container = "refs-" + h.label
	h.createContainer(container, false, "true")
	volume = "refs-" + h.label
	h.must(200, "POST", "/api/volumes?env=1", map[string]any{"name": volume,
		"labels": map[string]string{enginetest.Label: h.label}}, nil)
	return image, container, volume
}

func TestVolumeRoutesCannotReachImagesContainersOrTheEngine(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	image, container, _ := referenceTargets(h)

	h.refused("DELETE", "/api/volumes/..%2Fimages%2F"+url.PathEscape(image)+"?env=1",
		`Invalid volume name "../images/`+image+`"`)
	h.refused("DELETE", "/api/volumes/..%2Fcontainers%2F"+container+"?env=1&force=true",
		`Invalid volume name "../containers/`+container+`"`)
	h.refused("GET", "/api/volumes/..%2Finfo?env=1", `Invalid volume name "../info"`)
	h.refused("GET", "/api/volumes/..%2Finfo/inspect?env=1", `Invalid volume name "../info"`)

	if !engineAnswers(t, "/images/"+image+"/json") {
		t.Errorf("image %s is gone after DELETE /api/volumes/..%%2Fimages%%2F…", image)
	}
	if !engineAnswers(t, "/containers/"+container+"/json") {
		t.Errorf("container %s is gone after DELETE /api/volumes/..%%2Fcontainers%%2F…", container)
	}
}

func TestContainerAndNetworkRoutesCannotReachAVolume(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, _, volume := referenceTargets(h)

	h.refused("DELETE", "/api/containers/..%2Fvolumes%2F"+volume+"?env=1&force=true",
		`Invalid container id or name "../volumes/`+volume+`"`)
	h.refused("GET", "/api/containers/..%2F..%2Finfo?env=1", `Invalid container id or name "../../info"`)
	h.refused("POST", "/api/containers/..%2F..%2Finfo/pause?env=1", `Invalid container id or name "../../info"`)
	h.refused("DELETE", "/api/networks/..%2Fvolumes%2F"+volume+"?env=1",
		`Invalid network id or name "../volumes/`+volume+`"`)
	h.refused("GET", "/api/networks/..%2Finfo?env=1", `Invalid network id or name "../info"`)

	if !engineAnswers(t, "/volumes/"+volume) {
		t.Errorf("volume %s is gone after DELETE through a container or network route", volume)
	}
}

func TestImageRoutesTakeOnlyImageReferences(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	image, container, _ := referenceTargets(h)

	h.refused("GET", "/api/images/..%2F..%2Finfo?env=1", `Invalid image reference "../../info"`)
	h.refused("DELETE", "/api/images/..%2Fcontainers%2F"+container+"?env=1&force=true",
		`Invalid image reference "../containers/`+container+`"`)
	h.refused("GET", "/api/images/..%2F..%2Finfo/history?env=1", `Invalid image reference "../../info"`)

	if !engineAnswers(t, "/containers/"+container+"/json") {
		t.Errorf("container %s is gone after DELETE /api/images/..%%2Fcontainers%%2F…", container)
	}
	// A real reference with a slash, escaped in the path, still works.
	h.must(200, "GET", "/api/images/"+url.PathEscape("docker.io/library/"+image)+"?env=1", nil, nil)
}

func TestExecResizeRefusesAnIDThatIsNotAnExec(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.removeObjectsAtCleanup()
	name := "refs-exec-" + h.label
	h.createContainer(name, true, "sleep", "60")

	// /exec/../containers/<name>/resize would resize the container's TTY.
	h.refused("POST", "/api/containers/exec/..%2Fcontainers%2F"+name+"/resize?h=10&w=20&envId=1",
		`Invalid exec id "../containers/`+name+`"`)
	h.refused("POST", "/api/containers/exec/abc/resize?h=10&w=20&envId=1", `Invalid exec id "abc"`)
}

func TestContainerIsAddressedByTheEnginesSlashName(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.removeObjectsAtCleanup()
	name := "refs-slash-" + h.label
	id := h.createContainer(name, false, "true")
	var doc struct{ ID, Name string }
	h.must(200, "GET", "/api/containers/%2F"+name+"?env=1", nil, &doc)
	if doc.ID != id || doc.Name != "/"+name {
		t.Errorf("GET /api/containers/%%2F%s = %+v, want id %s", name, doc, id)
	}
	h.refused("GET", "/api/containers/%2F%2F"+name+"?env=1", `Invalid container id or name "//`+name+`"`)
}
