package api_test

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"

	"github.com/berth-dev/berth/server/internal/apitest"
	"github.com/berth-dev/berth/shared/enginetest"
)

// TestOpenAPIDescribesLiveAnswers reads the served document, then asks a
// sample of routes of a Berth on the real engine (with a container, a
// volume and a network of its own, so that the lists are not empty) and
// validates every answer against the document's schemas.
func TestOpenAPIDescribesLiveAnswers(t *testing.T) {
	h := newHarness(t)
	// Its volume and network go too (after the browse helper, released below).
	t.Cleanup(func() {
		enginetest.RemoveLabelledNetworks(t, h.label)
		enginetest.RemoveLabelledVolumes(t, h.label)
	})
	id := h.createContainer("openapi-"+h.label, true, "sleep", "300")
	h.must(200, "POST", "/api/volumes?env=1", map[string]any{"name": "openapi-" + h.label,
		"labels": map[string]string{enginetest.Label: h.label}}, nil)
	// The browse helper container of the volume goes before the volume.
	t.Cleanup(func() { h.do("POST", "/api/volumes/openapi-"+h.label+"/browse/release?env=1", nil) })
	h.must(200, "POST", "/api/networks?env=1", map[string]any{"name": "openapi-" + h.label,
		"labels": map[string]string{enginetest.Label: h.label}}, nil)

	status, spec := h.do("GET", "/api/openapi.json", nil)
	if status != 200 {
		t.Fatalf("GET /api/openapi.json = %d %s", status, spec)
	}
	doc, err := libopenapi.NewDocument(spec)
	if err != nil {
		t.Fatal(err)
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		t.Fatal(errs)
	}

	for _, path := range []string{
		"/api/health",
		"/api/auth/session",
		"/api/auth/providers",
		"/api/containers?env=1&all=true",
		"/api/containers/" + id + "/stats?env=1",
		"/api/containers/" + id + "/top?env=1",
		"/api/images?env=1",
		"/api/volumes?env=1",
		"/api/volumes/openapi-" + h.label + "?env=1",
		"/api/networks?env=1",
		"/api/environments",
		"/api/environments/1",
		"/api/stacks?env=1",
		"/api/schedules",
		"/api/schedules/executions",
		"/api/dashboard/stats",
		"/api/users",
		"/api/roles",
		// Routes typed later: ad hoc answers spelled out in openapi_types_*.go.
		"/api/containers/" + id + "?env=1",
		"/api/containers/" + id + "/files?env=1&path=/etc",
		"/api/containers/" + id + "/shells?env=1",
		"/api/containers/stats?env=1",
		"/api/containers/pending-updates?env=1",
		"/api/networks/openapi-" + h.label + "?env=1",
		"/api/volumes/openapi-" + h.label + "/browse?env=1",
		"/api/config-sets",
		"/api/labels",
		"/api/templates/sources",
		"/api/stacks/base-path?env=1",
		"/api/stacks/sources?env=1",
		"/api/stacks/default-path?env=1&name=openapi",
		"/api/git/credentials",
		"/api/git/repositories",
		"/api/registries",
		"/api/system",
		"/api/host?env=1",
		"/api/system/disk?env=1",
		"/api/settings/scanner?env=1",
		"/api/schedules/settings",
		"/api/activity?env=1",
		"/api/activity/stats?env=1",
		"/api/notifications/trigger-test",
		"/api/environments/1/timezone",
		"/api/environments/1/disk-warning",
		"/api/license",
		"/api/profile/preferences",
		"/api/preferences/grid",
		"/api/dependencies",
	} {
		t.Run(path, func(t *testing.T) {
			req, err := http.NewRequest("GET", h.url+path, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := h.http.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			if len(body) < 2 {
				t.Fatalf("empty answer %q", body)
			}
			resp.Body = io.NopCloser(bytes.NewReader(body))
			// The validator matches the document's paths against the
			// request's; give it the path alone (servers: "/").
			vreq := req.Clone(req.Context())
			vreq.URL = &url.URL{Path: req.URL.Path, RawQuery: req.URL.RawQuery}
			ok, verrs := v.ValidateHttpResponse(vreq, resp)
			for _, e := range verrs {
				t.Errorf("%s: %s", e.Message, e.Reason)
				for _, se := range e.SchemaValidationErrors {
					t.Errorf("  at %s: %s", se.FieldPath, se.Reason)
				}
			}
			if !ok && len(verrs) == 0 {
				t.Error("invalid, without a reason")
			}
			if t.Failed() {
				t.Logf("answer: %.2000s", body)
			}
		})
	}

	// A route of the document that answers an error: its body is the
	// described error shape.
	req, _ := http.NewRequest("GET", h.url+"/api/volumes/no-such-volume-"+h.label+"?env=1", nil)
	resp, err := h.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Fatalf("missing volume: %d %s", resp.StatusCode, body)
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	vreq := req.Clone(req.Context())
	vreq.URL = &url.URL{Path: req.URL.Path, RawQuery: req.URL.RawQuery}
	if ok, verrs := v.ValidateHttpResponse(vreq, resp); !ok {
		for _, e := range verrs {
			t.Errorf("404 answer: %s: %s", e.Message, e.Reason)
		}
	}
}

// TestOpenAPINeedsASignedInUser: the document is for any signed-in user,
// with the console's session or an API token, not for strangers; and the
// viewer's page is public (signed out, it says so itself).
func TestOpenAPINeedsASignedInUser(t *testing.T) {
	h := newAuthHarness(t, apitest.Options{})
	if status, body := h.do("GET", "/api/openapi.json", nil); status != 401 {
		t.Fatalf("signed out: %d %s", status, body)
	}
	if status, body := h.do("GET", "/api/docs", nil); status != 200 {
		t.Fatalf("GET /api/docs signed out: %d %.200s", status, body)
	}
	user, password := h.setupAdmin()
	h.as(h.login(user, password))
	status, body := h.do("GET", "/api/openapi.json", nil)
	if status != 200 || !bytes.Contains(body, []byte(`"openapi":"3.1.0"`)) {
		t.Fatalf("with a session: %d %.200s", status, body)
	}
	var tok struct {
		Token string `json:"token"`
	}
	h.must(201, "POST", "/api/auth/tokens", map[string]any{"name": "openapi", "password": password}, &tok)
	h.headers = map[string]string{"Authorization": "Bearer " + tok.Token}
	status, body = h.do("GET", "/api/openapi.json", nil)
	if status != 200 || !bytes.Contains(body, []byte(`"/api/containers"`)) {
		t.Fatalf("with an API token: %d %.200s", status, body)
	}
}
