package engine_test

import (
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/enginetest"
)

// composeContainer creates (and with run starts) a container of service
// in project, labelled as compose labels its containers, named name; it
// returns its id.
func composeContainer(t *testing.T, label, project, service, name string, run, oneoff bool) string {
	t.Helper()
	off := "False"
	if oneoff {
		off = "True"
	}
	body := map[string]any{
		"Image": enginetest.Image(), "Cmd": []string{"sleep", "3600"}, "StopSignal": "SIGKILL",
		"Labels": map[string]string{enginetest.Label: label, engine.ComposeProjectLabel: project,
			engine.ComposeServiceLabel: service, "com.docker.compose.container-number": "1", engine.ComposeOneoffLabel: off},
	}
	var created struct{ ID string }
	enginetest.Must(t, 201, "POST", "/containers/create?name="+url.QueryEscape(name), nil, body, &created)
	if run {
		enginetest.Must(t, 204, "POST", "/containers/"+created.ID+"/start", nil, nil, nil)
	}
	return created.ID
}

// projectState is name → "id state" of the containers of project.
func projectState(t *testing.T, project string) map[string]string {
	t.Helper()
	f, _ := json.Marshal(map[string][]string{"label": {engine.ComposeProjectLabel + "=" + project}})
	var list []struct {
		ID    string `json:"Id"`
		Names []string
		State string
	}
	enginetest.Must(t, 200, "GET", "/containers/json?all=1&filters="+url.QueryEscape(string(f)), nil, nil, &list)
	out := map[string]string{}
	for _, c := range list {
		out[strings.TrimPrefix(c.Names[0], "/")] = c.ID + " " + c.State
	}
	return out
}

// What an interrupted compose recreate leaves is finished as compose would
// have: the new container under a temporary name whose old one is still
// there replaces it, one whose old one is gone takes the final name, one
// whose final name another container holds is removed; containers created
// but never started start; one-off containers, containers merely named like
// temporary ones and containers created after Before are left alone; a second pass has nothing to do.
func TestRepairRecreatesFinishesWhatAnInterruptedUpLeft(t *testing.T) {
	c := localClient(t)
	label := newLabel(t)
	p := "repair" + label
	oldApp := composeContainer(t, label, p, "app", p+"-app-1", true, false)
	newApp := composeContainer(t, label, p, "app", oldApp[:12]+"_"+p+"-app-1", false, false)
	newWeb := composeContainer(t, label, p, "web", "0123456789ab_"+p+"-web-1", false, false)
	db := composeContainer(t, label, p, "db", p+"-db-1", true, false)
	strayDB := composeContainer(t, label, p, "db", "ba9876543210_"+p+"-db-1", false, false)
	worker := composeContainer(t, label, p, "worker", p+"-worker-1", false, false)
	oneoff := composeContainer(t, label, p, "app", "abcdefabcdef_"+p+"-app-run-1", false, true)
	// Named like a temporary container, but not of its own service.
	lookalike := composeContainer(t, label, p, "lookalike", "abcdefabcdef_"+p+"-web-1", true, false)

	projects, err := c.InterruptedProjects(t.Context(), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if !projects[p] {
		t.Errorf("InterruptedProjects = %v, want %s among them", projects, p)
	}
	before := projectState(t, p)
	notes, err := c.RepairRecreates(t.Context(), p, engine.RepairOptions{Start: true, Before: time.Now().Add(-time.Hour)})
	if err != nil || len(notes) != 0 {
		t.Fatalf("repair of containers all created after Before = %q, %v; want nothing done", notes, err)
	}
	if diff := cmp.Diff(before, projectState(t, p)); diff != "" {
		t.Fatalf("repair of containers all created after Before changed them (-before +after):\n%s", diff)
	}

	notes, err = c.RepairRecreates(t.Context(), p, engine.RepairOptions{Start: true})
	if err != nil {
		t.Fatalf("RepairRecreates: %v (did %q)", err, notes)
	}
	want := map[string]string{
		p + "-app-1":                       newApp + " running",
		p + "-web-1":                       newWeb + " running",
		p + "-db-1":                        db + " running",
		p + "-worker-1":                    worker + " running",
		"abcdefabcdef_" + p + "-app-run-1": oneoff + " created",
		"abcdefabcdef_" + p + "-web-1":     lookalike + " running",
	}
	if diff := cmp.Diff(want, projectState(t, p)); diff != "" {
		t.Errorf("after the repair (-want +got):\n%s\ndid: %q", diff, notes)
	}
	if code, _ := enginetest.Do(t, "GET", "/containers/"+oldApp+"/json", nil, nil); code != 404 {
		t.Errorf("the replaced container: %d, want 404 (removed)", code)
	}
	if code, _ := enginetest.Do(t, "GET", "/containers/"+strayDB+"/json", nil, nil); code != 404 {
		t.Errorf("the stray container: %d, want 404 (removed)", code)
	}
	if !slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, p+"-app-1") }) {
		t.Errorf("notes %q do not tell about %s-app-1", notes, p)
	}

	projects, err = c.InterruptedProjects(t.Context(), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if projects[p] {
		t.Errorf("InterruptedProjects after the repair still has %s", p)
	}
	if notes, err := c.RepairRecreates(t.Context(), p, engine.RepairOptions{Start: true}); err != nil || len(notes) != 0 {
		t.Errorf("second repair = %q, %v; want nothing to do", notes, err)
	}
}
