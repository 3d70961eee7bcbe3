package api_test

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/shared/enginetest"
	"github.com/berth-dev/berth/shared/testwait"
)

// engine2 is the raw Engine API of the second engine (scripts/lib/engine2.sh),
// which these tests may prune: the shared engine's images are other suites'.
type engine2 struct {
	t      *testing.T
	socket string
	hc     *http.Client
}

func newEngine2(t *testing.T) *engine2 {
	t.Helper()
	enginetest.RequireEnv(t, "second engine", "BERTH_TEST_ENGINE2_SOCKET")
	// These tests prune every unused image there: alone, so that no agent
	// test's image is taken between its pull and its container.
	enginetest.OwnEngine2(t)
	socket := os.Getenv("BERTH_TEST_ENGINE2_SOCKET")
	return &engine2{t: t, socket: socket, hc: &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", socket)
		},
	}}}
}

// do calls the engine and decodes a JSON answer into out (when not nil).
func (e *engine2) do(want int, method, path, contentType string, body io.Reader, out any) {
	e.t.Helper()
	req, err := http.NewRequest(method, "http://engine"+path, body)
	if err != nil {
		e.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := e.hc.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		e.t.Fatalf("%s %s = %d %s, want %d", method, path, resp.StatusCode, b, want)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			e.t.Fatalf("%s %s: %v in %s", method, path, err, b)
		}
	}
}

// importImage makes an image of one file (no base image needed), labelled
// with label, tagged repo:tag unless repo is empty (then it is dangling).
func (e *engine2) importImage(label, repo, content string) string {
	e.t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	_ = tw.WriteHeader(&tar.Header{Name: "content", Mode: 0o644, Size: int64(len(content))})
	_, _ = tw.Write([]byte(content))
	_ = tw.Close()
	q := url.Values{"fromSrc": {"-"}, "changes": {fmt.Sprintf("LABEL %s=%s", enginetest.Label, label)}}
	if repo != "" {
		q.Set("repo", repo)
		q.Set("tag", "1")
	}
	req, _ := http.NewRequest("POST", "http://engine/images/create?"+q.Encode(), &buf)
	req.Header.Set("Content-Type", "application/x-tar")
	resp, err := e.hc.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	// The import's progress ends with {"status": "sha256:<id>"}.
	var id string
	for dec := json.NewDecoder(resp.Body); ; {
		var m struct{ Status, Error string }
		if err := dec.Decode(&m); err != nil {
			break
		}
		if m.Error != "" {
			e.t.Fatalf("import: %s", m.Error)
		}
		if strings.HasPrefix(m.Status, "sha256:") {
			id = m.Status
		}
	}
	if resp.StatusCode != http.StatusOK || id == "" {
		e.t.Fatalf("import of %q = %d, no image id", content, resp.StatusCode)
	}
	return id
}

type engineImage struct {
	ID       string
	RepoTags []string
}

// images lists the images of label, or every image when label is empty.
func (e *engine2) images(label string) []engineImage {
	e.t.Helper()
	q := url.Values{"all": {"true"}}
	if label != "" {
		q.Set("filters", fmt.Sprintf(`{"label":[%q]}`, enginetest.Label+"="+label))
	}
	var out []engineImage
	e.do(200, "GET", "/images/json?"+q.Encode(), "", nil, &out)
	return out
}

func (e *engine2) hasImage(id string) bool {
	e.t.Helper()
	req, _ := http.NewRequest("GET", "http://engine/images/"+id+"/json", nil)
	resp, err := e.hc.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// guardImages creates a stopped container (labelled label) of every image
// on the engine but the test's own, so that a prune of unused images
// removes none of them; the cleanup removes the containers.
func (e *engine2) guardImages(label string) {
	e.t.Helper()
	e.t.Cleanup(func() {
		var cs []struct{ ID string }
		e.do(200, "GET", "/containers/json?all=true&filters="+url.QueryEscape(fmt.Sprintf(`{"label":[%q]}`, enginetest.Label+"="+label)), "", nil, &cs)
		for _, c := range cs {
			e.do(204, "DELETE", "/containers/"+c.ID+"?force=true", "", nil, nil)
		}
	})
	mine := map[string]bool{}
	for _, im := range e.images(label) {
		mine[im.ID] = true
	}
	for _, im := range e.images("") {
		if mine[im.ID] {
			continue
		}
		body, _ := json.Marshal(map[string]any{"Image": im.ID, "Cmd": []string{"guard"}, "Labels": map[string]string{enginetest.Label: label}})
		e.do(201, "POST", "/containers/create", "application/json", bytes.NewReader(body), nil)
	}
}

func (e *engine2) removeImages(label string) {
	for _, im := range e.images(label) {
		req, _ := http.NewRequest("DELETE", "http://engine/images/"+im.ID+"?force=true", nil)
		if resp, err := e.hc.Do(req); err == nil {
			resp.Body.Close()
		}
	}
}

// TestPruneImagesReadsDangling: ?dangling=false (the reference's query)
// prunes every unused image, its absence only dangling ones; run on the
// second engine, every image there but the test's own kept in use meanwhile.
func TestPruneImagesReadsDangling(t *testing.T) {
	h := newHarness(t)
	e := newEngine2(t)
	var env struct{ ID int64 }
	h.must(201, "POST", "/api/environments", map[string]any{"name": "prune-" + h.label, "socketPath": e.socket}, &env)
	t.Cleanup(func() { e.removeImages(h.label) })

	dangling := e.importImage(h.label, "", "dangling "+h.label)
	tagged := e.importImage(h.label, "berth-test/prune-"+h.label, "tagged, unused "+h.label+"!")
	e.guardImages(h.label)
	base := fmt.Sprintf("/api/prune/images?env=%d", env.ID)

	h.expectRefusals([]refusal{
		{"dangling not a boolean", "POST", base + "&dangling=some", nil, 400, "Query parameter dangling must be true or false"},
		{"dangling and all disagree", "POST", base + "&dangling=true&all=true", nil, 400, ""},
	})
	if !e.hasImage(dangling) || !e.hasImage(tagged) {
		t.Fatal("a refused prune removed images")
	}

	// A client that asks for JSON gets the answer itself (COMPAT: the job's
	// final payload); the job form is checked at the end.
	h.headers["Accept"] = "application/json"
	h.must(200, "POST", base, nil, nil)
	if e.hasImage(dangling) {
		t.Errorf("the default prune left the dangling image %s", dangling)
	}
	if !e.hasImage(tagged) {
		t.Fatalf("the default prune removed the tagged image %s: it prunes dangling images only", tagged)
	}
	h.must(200, "POST", base+"&dangling=true", nil, nil)
	if !e.hasImage(tagged) {
		t.Fatalf("dangling=true removed the tagged image %s", tagged)
	}

	var rep struct {
		Deleted []struct{ Untagged, Deleted string }
		Result  struct {
			ImagesDeleted []struct{ Untagged, Deleted string }
		}
	}
	h.must(200, "POST", base+"&dangling=false", nil, &rep)
	if len(rep.Result.ImagesDeleted) != len(rep.Deleted) {
		t.Errorf("the reference's result.ImagesDeleted = %+v, want the same as deleted %+v", rep.Result, rep.Deleted)
	}
	if e.hasImage(tagged) {
		t.Errorf("dangling=false left the unused tagged image %s (answer %+v)", tagged, rep)
	}
	found := false
	for _, d := range rep.Deleted {
		found = found || strings.TrimPrefix(d.Deleted, "sha256:") == strings.TrimPrefix(tagged, "sha256:")
	}
	if !found {
		t.Errorf("the answer's deleted = %+v, want %s among them", rep.Deleted, tagged)
	}

	// Without Accept: application/json, a job: {jobId} at once, its result
	// the same answer.
	again := e.importImage(h.label, "", "dangling again "+h.label)
	delete(h.headers, "Accept")
	var started struct{ JobID string }
	h.must(200, "POST", base, nil, &started)
	if started.JobID == "" {
		t.Fatal("no jobId without Accept: application/json")
	}
	var snap struct {
		Status string
		Result struct {
			Success bool
			Result  struct{ ImagesDeleted []struct{ Deleted string } }
		}
	}
	testwait.Within(t, time.Minute, "the prune job to end", func() bool {
		h.must(200, "GET", "/api/jobs/"+started.JobID, nil, &snap)
		return snap.Status != "running"
	})
	if snap.Status != "done" || !snap.Result.Success || e.hasImage(again) {
		t.Errorf("prune job = %+v; the dangling image still there: %v", snap, e.hasImage(again))
	}
}
