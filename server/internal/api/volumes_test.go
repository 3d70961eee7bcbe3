package api_test

import (
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/berth-dev/berth/shared/enginetest"
)

// removeObjectsAtCleanup removes the test's labelled containers, networks
// and volumes when it ends (containers first: they hold the others).
func (h *harness) removeObjectsAtCleanup() {
	h.t.Cleanup(func() {
		enginetest.RemoveLabelled(h.t, h.label)
		enginetest.RemoveLabelledNetworks(h.t, h.label)
		enginetest.RemoveLabelledVolumes(h.t, h.label)
	})
}

// volumeJSON is the volume object of COMPAT.md; maps are pointers so that a
// null is told from an empty object.
type volumeJSON struct {
	Name       string             `json:"name"`
	Driver     string             `json:"driver"`
	Mountpoint string             `json:"mountpoint"`
	Scope      string             `json:"scope"`
	CreatedAt  string             `json:"createdAt"`
	Created    string             `json:"created"`
	Labels     *map[string]string `json:"labels"`
	Options    *map[string]string `json:"options"`
	UsedBy     *[]volumeUserJSON  `json:"usedBy"`
}

// volumeUserJSON is an entry of a volume's usedBy.
type volumeUserJSON struct {
	ContainerID   string `json:"containerId"`
	ContainerName string `json:"containerName"`
}

func TestVolumesCarryCreatedAndTheContainersUsingThem(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.removeObjectsAtCleanup()
	used, unused := "berth-used-"+h.label, "berth-unused-"+h.label
	for _, name := range []string{used, unused} {
		h.must(200, "POST", "/api/volumes?env=1", map[string]any{"name": name, "labels": map[string]string{enginetest.Label: h.label}}, nil)
	}
	ctName := "berth-user-" + h.label
	var ct struct {
		Success bool   `json:"success"`
		ID      string `json:"id"`
	}
	h.must(200, "POST", "/api/containers?env=1", map[string]any{
		"name": ctName, "image": enginetest.Image(), "command": []string{"true"},
		"volumes": []string{used + ":/data"}, "labels": map[string]string{enginetest.Label: h.label},
	}, &ct)

	var list []volumeJSON
	h.must(200, "GET", "/api/volumes?env=1", nil, &list)
	got := map[string]volumeJSON{}
	for _, v := range list {
		got[v.Name] = v
	}
	wantUsers := map[string][]volumeUserJSON{used: {{ContainerID: ct.ID, ContainerName: ctName}}, unused: {}}
	for name, want := range wantUsers {
		v, ok := got[name]
		if !ok {
			t.Fatalf("volume %s not listed", name)
		}
		if v.Created == "" || v.Created != v.CreatedAt {
			t.Errorf("%s: created = %q, createdAt = %q: want the same, non-empty value", name, v.Created, v.CreatedAt)
		}
		if v.UsedBy == nil {
			t.Fatalf("%s: usedBy is null or missing", name)
		}
		if diff := cmp.Diff(want, *v.UsedBy); diff != "" {
			t.Errorf("%s usedBy (-want +got):\n%s", name, diff)
		}
	}
	var inspected volumeJSON
	h.must(200, "GET", "/api/volumes/"+used+"?env=1", nil, &inspected)
	if inspected.UsedBy == nil || cmp.Diff(wantUsers[used], *inspected.UsedBy) != "" || inspected.Created != inspected.CreatedAt {
		t.Errorf("inspect %s = %+v, want created = createdAt and usedBy %v", used, inspected, wantUsers[used])
	}
}

// errorJSON is the error body.
type errorJSON struct {
	Error   string `json:"error"`
	Details string `json:"details"`
}

func TestVolumeCreateListInspectDelete(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.removeObjectsAtCleanup()
	name := "berth-vol-" + h.label
	labels := map[string]string{enginetest.Label: h.label, "purpose": "round-trip"}
	opts := map[string]string{"type": "tmpfs", "device": "tmpfs", "o": "size=1m"}
	var created struct {
		Success bool   `json:"success"`
		Name    string `json:"name"`
	}
	h.must(200, "POST", "/api/volumes?env=1", map[string]any{"name": name, "driverOpts": opts, "labels": labels}, &created)
	if !created.Success || created.Name != name {
		t.Fatalf("create = %+v", created)
	}

	var inspected, again volumeJSON
	h.must(200, "GET", "/api/volumes/"+name+"?env=1", nil, &inspected)
	h.must(200, "GET", "/api/volumes/"+name+"/inspect?env=1", nil, &again)
	if diff := cmp.Diff(inspected, again); diff != "" {
		t.Errorf("the two inspect paths differ (-{name} +{name}/inspect):\n%s", diff)
	}
	if inspected.Name != name || inspected.Driver != "local" || inspected.Scope != "local" ||
		!strings.HasSuffix(inspected.Mountpoint, "/"+name+"/_data") || inspected.CreatedAt == "" {
		t.Errorf("inspected = %+v", inspected)
	}
	if inspected.Labels == nil || !cmp.Equal(*inspected.Labels, labels) {
		t.Errorf("labels = %v, want %v", inspected.Labels, labels)
	}
	if inspected.Options == nil || !cmp.Equal(*inspected.Options, opts) {
		t.Errorf("options = %v, want %v", inspected.Options, opts)
	}

	var list []volumeJSON
	h.must(200, "GET", "/api/volumes?env=1", nil, &list)
	found := false
	for _, v := range list {
		if v.Labels == nil || v.Options == nil {
			t.Errorf("listed volume %s has null labels or options", v.Name)
		}
		if v.Name == name {
			found = true
			if diff := cmp.Diff(inspected, v); diff != "" {
				t.Errorf("list item differs from the inspection (-inspect +list):\n%s", diff)
			}
		}
	}
	if !found {
		t.Fatalf("volume %s not listed", name)
	}

	var ok map[string]bool
	h.must(200, "DELETE", "/api/volumes/"+name+"?env=1", nil, &ok)
	if !ok["success"] {
		t.Errorf("delete = %v", ok)
	}
	for _, m := range []string{"GET", "DELETE"} {
		var e errorJSON
		h.must(404, m, "/api/volumes/"+name+"?env=1", nil, &e)
		if e.Error != "Volume not found" {
			t.Errorf("%s after delete: %+v", m, e)
		}
	}
}

func TestVolumeWithoutOptionsHasEmptyObjectsNotNull(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.removeObjectsAtCleanup()
	name := "berth-plain-" + h.label
	h.must(200, "POST", "/api/volumes?env=1", map[string]any{"name": name, "labels": map[string]string{enginetest.Label: h.label}}, nil)
	_, body := h.do("GET", "/api/volumes/"+name+"?env=1", nil)
	if !strings.Contains(string(body), `"options":{}`) {
		t.Errorf("volume without driver options = %s, want \"options\":{}", body)
	}
}

func TestVolumeNameRules(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.removeObjectsAtCleanup()
	const invalid = "Invalid volume name: use 2 to 255 letters, digits, '_', '.' or '-', starting with a letter or digit"
	tests := []struct {
		name      any // string, or nil for a body without the field
		want      int
		wantError string
	}{
		{nil, 400, "Volume name is required"},
		{"", 400, "Volume name is required"},
		{"   ", 400, "Volume name is required"},
		{"bad name", 400, invalid},
		{"-x", 400, invalid},
		{"_x", 400, invalid},
		{".x", 400, invalid},
		{"a/b", 400, invalid},
		{"a", 400, invalid},
		{strings.Repeat("v", 300), 400, invalid},
		{"ok-" + h.label, 200, ""},
		{"0.v_" + h.label, 200, ""},
		{strings.Repeat("v", 255-len(h.label)) + h.label, 200, ""},
	}
	for _, tt := range tests {
		body := map[string]any{"labels": map[string]string{enginetest.Label: h.label}}
		if tt.name != nil {
			body["name"] = tt.name
		}
		status, data := h.do("POST", "/api/volumes?env=1", body)
		if status != tt.want {
			t.Errorf("name %.20q: %d %s, want %d", tt.name, status, data, tt.want)
			continue
		}
		if tt.wantError != "" && !strings.Contains(string(data), `"error":"`+tt.wantError+`"`) {
			t.Errorf("name %.20q: %s, want error %q", tt.name, data, tt.wantError)
		}
	}
	// Nothing with a rejected name reached the engine.
	var list []volumeJSON
	h.must(200, "GET", "/api/volumes?env=1", nil, &list)
	n := 0
	for _, v := range list {
		if v.Labels != nil && (*v.Labels)[enginetest.Label] == h.label {
			n++
		}
	}
	if n != 3 {
		t.Errorf("%d labelled volumes exist, want the 3 valid ones", n)
	}
}

func TestVolumeCreateFailures(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.removeObjectsAtCleanup()
	name := "berth-dup-" + h.label
	labels := map[string]string{enginetest.Label: h.label}
	h.must(200, "POST", "/api/volumes?env=1", map[string]any{"name": name, "labels": labels}, nil)

	var e errorJSON
	h.must(500, "POST", "/api/volumes?env=1", map[string]any{"name": name, "labels": labels}, &e)
	if e.Error != "Failed to create volume" || !strings.Contains(e.Details, `"`+name+`" already exists`) {
		t.Errorf("duplicate = %+v, want Failed to create volume with details naming it", e)
	}
	// An unknown driver is a missing plugin to the engine, not a missing
	// volume. (The engine looks for the plugin for about 15 s first.)
	e = errorJSON{}
	h.must(500, "POST", "/api/volumes?env=1", map[string]any{"name": "berth-plugin-" + h.label, "driver": "berth-no-such-driver", "labels": labels}, &e)
	if e.Error != "Failed to create volume" || e.Details == "" {
		t.Errorf("unknown driver = %+v, want Failed to create volume with details", e)
	}
	e = errorJSON{}
	h.must(400, "POST", "/api/volumes?env=1", map[string]any{"name": "berth-opts-" + h.label, "driverOpts": map[string]string{"foo": "bar", "device": "x"}}, &e)
	if !strings.Contains(e.Error, `"foo"`) {
		t.Errorf("unknown local option = %+v", e)
	}
	h.must(404, "POST", "/api/volumes?env=999999", map[string]any{"name": "berth-env-" + h.label}, &e)
	if e.Error != "Environment not found" {
		t.Errorf("unknown environment = %+v", e)
	}
}

func TestDeleteOfAVolumeInUseIsRefusedAndChangesNothing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.removeObjectsAtCleanup()
	name := "berth-used-" + h.label
	h.must(200, "POST", "/api/volumes?env=1", map[string]any{"name": name, "labels": map[string]string{enginetest.Label: h.label}}, nil)
	var c struct{ ID string }
	h.must(200, "POST", "/api/containers?env=1", map[string]any{
		"name": "berth-user-" + h.label, "image": enginetest.Image(), "command": []string{"sleep", "300"},
		"startAfterCreate": true, "volumes": []string{name + ":/data"}, "labels": map[string]string{enginetest.Label: h.label},
	}, &c)
	var before volumeJSON // read once the container mounts it: usedBy names it
	h.must(200, "GET", "/api/volumes/"+name+"?env=1", nil, &before)
	if before.UsedBy == nil || len(*before.UsedBy) != 1 || (*before.UsedBy)[0].ContainerID != c.ID {
		t.Errorf("usedBy of the mounted volume = %+v, want the container %s", before.UsedBy, c.ID)
	}

	for _, q := range []string{"", "&force=true"} {
		var e errorJSON
		h.must(409, "DELETE", "/api/volumes/"+name+"?env=1"+q, nil, &e)
		if e.Error != "Volume is in use by a container" || !strings.Contains(e.Details, c.ID) {
			t.Errorf("delete%s of a volume in use = %+v", q, e)
		}
	}
	var after volumeJSON
	h.must(200, "GET", "/api/volumes/"+name+"?env=1", nil, &after)
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("the volume changed (-before +after):\n%s", diff)
	}
	if st := h.inspectState(c.ID); !st.Running {
		t.Errorf("the container using the volume is %s, want running", st.Status)
	}
}

// Offline environments list no volumes and no networks, and say so fast; an
// engine that holds the connection without answering is busy: its lists and
// creates are refused with 503 saying so, never answered with an empty list.
func TestOfflineEnvironmentListsNoVolumesOrNetworks(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	hang := enginetest.NewHanging(t)
	var dead, stuck struct{ ID int64 }
	h.must(201, "POST", "/api/environments", map[string]any{"name": "dead-" + h.label, "socketPath": filepath.Join(t.TempDir(), "none.sock")}, &dead)
	host, port, _ := net.SplitHostPort(hang.Addr)
	p, _ := strconv.Atoi(port)
	h.must(201, "POST", "/api/environments", map[string]any{"name": "stuck-" + h.label, "connectionType": "direct", "host": host, "port": p}, &stuck)
	for _, env := range []int64{dead.ID, stuck.ID} {
		busy := env == stuck.ID
		for _, path := range []string{"/api/volumes?env=%d", "/api/networks?env=%d"} {
			url := fmt.Sprintf(path, env)
			status, body := h.do("GET", url, nil)
			switch {
			case busy && (status != 503 || !strings.Contains(string(body), "busy")):
				t.Errorf("GET %s = %d %s, want 503 saying busy", url, status, body)
			case !busy && (status != 200 || strings.TrimSpace(string(body)) != "[]"):
				t.Errorf("GET %s = %d %s, want 200 []", url, status, body)
			}
		}
		var e errorJSON
		h.must(503, "POST", fmt.Sprintf("/api/volumes?env=%d", env), map[string]any{"name": "berth-off-" + h.label}, &e)
		want := map[bool]string{false: "Environment is offline", true: engineBusy}[busy]
		if e.Error != "Failed to create volume" || e.Details != want {
			t.Errorf("create on env %d = %+v, want details %q", env, e, want)
		}
	}
}

// engineBusy is the details of an operation refused because the engine is busy.
const engineBusy = "The engine is busy: it accepts connections but did not answer in time. Try again shortly"
