package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/enginetest"
)

// Every literal path of the reference's container routes is a route of its
// own, never a container id: none answers "Container not found" (the
// router's 404 for a literal taken as {id}) or the router's 404/405.
func TestContainerRouteLiteralsAreNotContainerIDs(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	// The reference 1.0.42's operations on literal paths under
	// /api/containers (those that start work on the engine are sent a body
	// that is refused, or left out: POST check-updates runs a full check).
	cases := []struct{ method, path string }{
		{"GET", "/api/containers/check-updates?env=1"},
		{"POST", "/api/containers/batch-update?env=1"},
		{"POST", "/api/containers/batch-update-stream?env=1"},
		{"GET", "/api/containers/pending-updates?env=1"},
		{"DELETE", "/api/containers/pending-updates?env=1&containerName=none-" + h.label},
		{"GET", "/api/containers/sizes?env=1"},
		{"GET", "/api/containers/stats?env=1"},
	}
	for _, tc := range cases {
		status, body := h.do(tc.method, tc.path, map[string]any{})
		if status == http.StatusNotFound || status == http.StatusMethodNotAllowed || strings.Contains(string(body), "Container not found") {
			t.Errorf("%s %s = %d %s: taken as a container id or not routed", tc.method, tc.path, status, body)
		}
	}
}

// GET /api/containers/check-updates answers the cached pending updates in
// the reference's shape (today's code took check-updates for a container
// id and answered 404); the environment is required.
func TestGetCheckUpdatesAnswersCachedPendingUpdates(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	now := time.Now().UTC().Truncate(time.Second)
	if err := h.store.ReplacePendingUpdates(context.Background(), 1, []store.PendingUpdate{{ContainerName: "web-" + h.label,
		ContainerID: "id-web", Image: "nginx:1", CurrentImageID: "sha256:old", NewDigest: "sha256:new", CheckedAt: now}}); err != nil {
		t.Fatal(err)
	}
	var out struct {
		EnvironmentID  *int64 `json:"environmentId"`
		PendingUpdates []struct {
			ContainerID, ContainerName, CurrentImage, NewDigest string
			CheckedAt                                           time.Time
		}
	}
	h.must(http.StatusOK, "GET", "/api/containers/check-updates?env=1", nil, &out)
	if out.EnvironmentID == nil || *out.EnvironmentID != 1 || len(out.PendingUpdates) != 1 {
		t.Fatalf("check-updates = %+v", out)
	}
	p := out.PendingUpdates[0]
	if p.ContainerID != "id-web" || p.ContainerName != "web-"+h.label || p.CurrentImage != "nginx:1" ||
		p.NewDigest != "sha256:new" || !p.CheckedAt.Equal(now) {
		t.Errorf("pending update = %+v", p)
	}
	status, body := h.do("GET", "/api/containers/check-updates", nil)
	if status != http.StatusBadRequest || !strings.Contains(string(body), "Environment ID required") {
		t.Errorf("without env = %d %s, want 400 Environment ID required", status, body)
	}
}

// GET /api/containers/{id}/version-notes answers what is known locally: a
// note per version linking to the GitHub release the image's source label
// names, the version labels, and the digest the last check found; a
// container without labels answers notes too (never a 500 for "no notes").
func TestVersionNotesAnswersWhatIsKnownLocally(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	name := "berth-notes-" + h.label
	h.must(http.StatusOK, "POST", "/api/containers?env=1", map[string]any{"name": name, "image": enginetest.Image(),
		"cmd": []string{"sleep", "300"}, "labels": map[string]string{enginetest.Label: h.label,
			"org.opencontainers.image.source":   "https://github.com/example/app.git",
			"org.opencontainers.image.version":  "1.2.3",
			"org.opencontainers.image.revision": "abc123"}}, nil)
	if err := h.store.ReplacePendingUpdates(context.Background(), 1, []store.PendingUpdate{{ContainerName: name,
		ContainerID: "x", Image: enginetest.Image(), NewDigest: "sha256:next", CheckedAt: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	type answer struct {
		ChangelogURL, Source, Message string
		Notes                         []struct{ Version, URL string }
		Local                         struct {
			Version, Revision, Source, AvailableDigest, ImageID string
			CurrentDigests                                      []string
		}
	}
	var out answer
	h.must(http.StatusOK, "GET", "/api/containers/"+name+"/version-notes?env=1&versions=1.2.4,v1.3.0", nil, &out)
	if out.Source != "example/app" || out.ChangelogURL != "https://github.com/example/app/releases" ||
		!strings.Contains(out.Message, "does not fetch") {
		t.Errorf("answer = %+v", out)
	}
	if len(out.Notes) != 2 || out.Notes[0].Version != "1.2.4" || out.Notes[1].URL != "https://github.com/example/app/releases/tag/v1.3.0" {
		t.Errorf("notes = %+v", out.Notes)
	}
	if out.Local.Version != "1.2.3" || out.Local.Revision != "abc123" || out.Local.AvailableDigest != "sha256:next" ||
		out.Local.ImageID == "" || out.Local.CurrentDigests == nil {
		t.Errorf("local = %+v", out.Local)
	}

	plain := "berth-nonotes-" + h.label
	h.createContainer(plain, false, "sleep", "300")
	out = answer{}
	h.must(http.StatusOK, "GET", "/api/containers/"+plain+"/version-notes?env=1&versions=2.0", nil, &out)
	if len(out.Notes) != 1 || out.Notes[0].Version != "2.0" || out.Source != "" {
		t.Errorf("unlabelled answer = %+v", out)
	}
	status, body := h.do("GET", "/api/containers/missing-"+h.label+"/version-notes?env=1&versions=1", nil)
	if status != http.StatusNotFound || !strings.Contains(string(body), "Container not found") {
		t.Errorf("missing container = %d %s", status, body)
	}
}
