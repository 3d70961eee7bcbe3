package api_test

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/berth-dev/berth/server/internal/apitest"
	"github.com/berth-dev/berth/server/internal/scan"
	"github.com/berth-dev/berth/server/internal/store/storetest"
	"github.com/berth-dev/berth/shared/enginetest"
)

// updateGrace is the health gate of the auto-update tests: a new container
// that is still running after it is kept. The failing images of these tests
// exit at once.
const updateGrace = 3 * time.Second

// inspection is the part of a container inspection an update must keep.
type inspection struct {
	ID     string `json:"Id"`
	Name   string
	Image  string
	State  struct{ Running bool }
	Config struct {
		Hostname     string
		User         string
		Env          []string
		Cmd          []string
		Entrypoint   []string
		Image        string
		WorkingDir   string
		Labels       map[string]string
		ExposedPorts map[string]any
		StopSignal   string
		Tty          bool
	}
	HostConfig      json.RawMessage
	NetworkSettings struct {
		Networks map[string]struct {
			IPAMConfig *struct{ IPv4Address string }
			Aliases    []string
			IPAddress  string
		}
	}
	Mounts []mountPoint
}

type mountPoint struct {
	Type, Name, Source, Destination string
	RW                              bool
}

func inspect(t *testing.T, name string) inspection {
	t.Helper()
	var in inspection
	enginetest.Must(t, 200, "GET", "/containers/"+name+"/json", nil, nil, &in)
	return in
}

// kept is what must be the same before and after an update: the container's
// own configuration, without what only identifies the container (its id,
// and the aliases the engine derives from it) and without the image labels.
func kept(in inspection) any {
	type network struct {
		StaticIP string
		Aliases  []string
	}
	nets := map[string]network{}
	for name, n := range in.NetworkSettings.Networks {
		nw := network{}
		if n.IPAMConfig != nil {
			nw.StaticIP = n.IPAMConfig.IPv4Address
		}
		for _, a := range n.Aliases {
			if a != in.ID[:12] {
				nw.Aliases = append(nw.Aliases, a)
			}
		}
		slices.Sort(nw.Aliases)
		nets[name] = nw
	}
	labels := map[string]string{}
	for k, v := range in.Config.Labels {
		if k != "version" {
			labels[k] = v
		}
	}
	var hc map[string]any
	_ = json.Unmarshal(in.HostConfig, &hc)
	// The client library writes capabilities in their CAP_ form when it
	// creates a container; the engine takes both.
	if caps, ok := hc["CapAdd"].([]any); ok {
		for i, c := range caps {
			caps[i] = strings.TrimPrefix(fmt.Sprint(c), "CAP_")
		}
	}
	mounts := slices.Clone(in.Mounts)
	slices.SortFunc(mounts, func(a, b mountPoint) int { return strings.Compare(a.Destination, b.Destination) })
	c := in.Config
	return map[string]any{"name": in.Name, "running": in.State.Running, "hostname": c.Hostname, "user": c.User,
		"env": c.Env, "cmd": c.Cmd, "entrypoint": c.Entrypoint, "image": c.Image, "workdir": c.WorkingDir,
		"labels": labels, "ports": c.ExposedPorts, "stopSignal": c.StopSignal, "tty": c.Tty, "hostConfig": hc,
		"networks": nets, "mounts": mounts}
}

// newUpdateHarness is a harness with the test registry configured and a
// short health gate.
func newUpdateHarness(t *testing.T, cfg scan.Config) (*harness, testRegistry) {
	t.Helper()
	reg := requireRegistry(t)
	enginetest.Require(t)
	h := startHarnessWith(t, apitest.Options{DBPath: filepath.Join(t.TempDir(), "berth.db"), Box: storetest.Box(t),
		UpdateGrace: updateGrace, Scan: cfg})
	h.must(201, "POST", "/api/registries", map[string]any{"name": "reg-" + h.label, "url": reg.host,
		"username": reg.user, "password": reg.password}, nil)
	return h, reg
}

// autoUpdate configures container name's auto-update and returns its id.
func (h *harness) autoUpdate(name, criteria string) int64 {
	h.t.Helper()
	var a struct{ ID int64 }
	h.must(200, "POST", "/api/auto-update/"+name+"?env=1", map[string]any{"enabled": true, "cronExpression": "0 3 * * *",
		"vulnerabilityCriteria": criteria}, &a)
	return a.ID
}

func randomOctet() int {
	b := make([]byte, 1)
	_, _ = rand.Read(b)
	return int(b[0])
}

// createNetwork makes a labelled bridge network with a /24 subnet of its own
// and returns its name and subnet prefix ("172.29.N.").
func createNetwork(t *testing.T, name, label string) string {
	t.Helper()
	for range 10 {
		prefix := fmt.Sprintf("172.29.%d.", randomOctet())
		code, data := enginetest.Do(t, "POST", "/networks/create", nil, map[string]any{"Name": name,
			"Labels": map[string]string{enginetest.Label: label},
			"IPAM":   map[string]any{"Config": []map[string]string{{"Subnet": prefix + "0/24"}}}})
		if code == 201 {
			t.Cleanup(func() {
				enginetest.RemoveLabelled(t, label) // the containers first
				enginetest.RemoveLabelledNetworks(t, label)
			})
			return prefix
		}
		if !bytes.Contains(data, []byte("overlap")) {
			t.Fatalf("create network: %d %s", code, data)
		}
	}
	t.Fatal("no free subnet for the test network")
	return ""
}

// Image v1 pushed and running; v2 pushed under the same tag; the schedule
// run recreates the container on v2 with the same configuration.
func TestAutoUpdateRecreatesOnTheNewImageWithTheSameConfiguration(t *testing.T) {
	t.Parallel()
	h, reg := newUpdateHarness(t, scan.Config{})
	ref := reg.host + "/berth-test/au-" + h.label + ":1"
	name := "au-" + h.label
	var v1, v2 string
	enginetest.RemoveImages(t, h.label, &v1, &v2)
	v1 = enginetest.BuildImage(t, enginetest.Image(), ref, h.label, "LABEL version=1", `CMD ["sleep", "3600"]`)
	enginetest.Push(t, ref, reg.user, reg.password)

	prefix := createNetwork(t, "au-net-"+h.label, h.label)
	enginetest.Must(t, 201, "POST", "/networks/create", nil, map[string]any{"Name": "au-net2-" + h.label,
		"Labels": map[string]string{enginetest.Label: h.label}}, nil)
	enginetest.Must(t, 201, "POST", "/volumes/create", nil, map[string]any{"Name": "au-vol-" + h.label,
		"Labels": map[string]string{enginetest.Label: h.label}}, nil)
	t.Cleanup(func() {
		enginetest.RemoveLabelled(t, h.label) // the containers first
		enginetest.RemoveLabelledVolumes(t, h.label)
	})
	bind := t.TempDir()
	var ct struct{ ID string }
	enginetest.Must(t, 201, "POST", "/containers/create?name="+name, nil, map[string]any{
		"Image": ref, "Hostname": "au-host", "User": "0:0", "WorkingDir": "/tmp", "Env": []string{"A=1", "B=two words"},
		"Cmd": []string{"sleep", "3600"}, "Labels": map[string]string{enginetest.Label: h.label, "role": "web"},
		"ExposedPorts": map[string]any{"8080/tcp": map[string]any{}}, "StopSignal": "SIGTERM",
		"HostConfig": map[string]any{
			"Binds":         []string{"au-vol-" + h.label + ":/data", bind + ":/host:ro"},
			"PortBindings":  map[string]any{"8080/tcp": []map[string]string{{"HostIp": "127.0.0.1", "HostPort": ""}}},
			"RestartPolicy": map[string]any{"Name": "unless-stopped"},
			"Memory":        64 << 20, "NanoCpus": 500_000_000, "CapAdd": []string{"NET_ADMIN"},
			"NetworkMode": "au-net-" + h.label, "ExtraHosts": []string{"berth.example:10.1.2.3"},
		},
		"NetworkingConfig": map[string]any{"EndpointsConfig": map[string]any{"au-net-" + h.label: map[string]any{
			"IPAMConfig": map[string]string{"IPv4Address": prefix + "10"}, "Aliases": []string{"web-alias"}}}},
	}, &ct)
	enginetest.Must(t, 200, "POST", "/networks/au-net2-"+h.label+"/connect", nil, map[string]any{"Container": ct.ID,
		"EndpointConfig": map[string]any{"Aliases": []string{"second-alias"}}}, nil)
	enginetest.Must(t, 204, "POST", "/containers/"+ct.ID+"/start", nil, nil, nil)
	before := inspect(t, name)
	if before.Image != v1 || !before.State.Running || before.NetworkSettings.Networks["au-net-"+h.label].IPAddress != prefix+"10" {
		t.Fatalf("before = %+v", before)
	}
	id := h.autoUpdate(name, "never")

	// Nothing newer yet: up to date, nothing touched.
	e := h.runSchedule("container_update", id)
	if e.Status != "success" || !strings.Contains(e.Logs, "Up to date") || inspect(t, name).ID != before.ID {
		t.Fatalf("run without a new image = %+v", e)
	}

	v2 = enginetest.BuildImage(t, enginetest.Image(), ref, h.label, "LABEL version=2", `CMD ["sleep", "3600"]`)
	enginetest.Push(t, ref, reg.user, reg.password)
	enginetest.TagImage(t, v1, ref) // the engine runs v1; v2 exists only in the registry
	e = h.runSchedule("container_update", id)
	var d struct {
		UpdateAvailable bool
		NewImageID      string
		NewContainerID  string
		PreviousImageID string
	}
	_ = json.Unmarshal(e.Details, &d)
	if e.Status != "success" || !d.UpdateAvailable || d.NewImageID != v2 || d.PreviousImageID != v1 || d.NewContainerID == "" {
		t.Fatalf("update = %+v\n%s", e, e.Logs)
	}
	after := inspect(t, name)
	if after.ID == before.ID || after.ID != d.NewContainerID || after.Image != v2 || after.Config.Labels["version"] != "2" {
		t.Fatalf("after: id %s image %s labels %v", after.ID, after.Image, after.Config.Labels)
	}
	if diff := cmp.Diff(kept(before), kept(after)); diff != "" {
		t.Errorf("configuration changed by the update (-before +after):\n%s", diff)
	}
	if code, _ := enginetest.Do(t, "GET", "/containers/"+before.ID+"/json", nil, nil); code != 404 {
		t.Errorf("the old container is still there (%d)", code)
	}
	if enginetest.ImageID(t, ref) != v2 {
		t.Error("the container's tag does not name v2 after the update")
	}
	s := h.schedules()[fmt.Sprintf("container_update/%d", id)]
	if s.LastExecution == nil || s.LastExecution.ID != e.ID || s.LastExecution.Status != "success" || len(s.RecentExecutions) != 2 {
		t.Errorf("schedule after the update = %+v", s)
	}
	// And again: up to date on v2.
	if e := h.runSchedule("container_update", id); e.Status != "success" || inspect(t, name).ID != after.ID {
		t.Errorf("run after the update = %+v", e)
	}
}

// A v2 whose process exits at once is rolled back: the old container runs
// again on v1, the tag names v1, and the execution failed with the reason.
func TestAutoUpdateRollsBackWhenTheNewContainerExits(t *testing.T) {
	t.Parallel()
	h, reg := newUpdateHarness(t, scan.Config{})
	ref := reg.host + "/berth-test/au-rb-" + h.label + ":1"
	name := "au-rb-" + h.label
	var v1, v2 string
	enginetest.RemoveImages(t, h.label, &v1, &v2)
	v1 = enginetest.BuildImage(t, enginetest.Image(), ref, h.label, "LABEL version=1")
	enginetest.Push(t, ref, reg.user, reg.password)
	var ct struct{ ID string }
	enginetest.Must(t, 201, "POST", "/containers/create?name="+name, nil, map[string]any{"Image": ref, "Cmd": []string{"sleep", "3600"},
		"Labels":     map[string]string{enginetest.Label: h.label},
		"HostConfig": map[string]any{"RestartPolicy": map[string]any{"Name": "unless-stopped"}}}, &ct)
	enginetest.Must(t, 204, "POST", "/containers/"+ct.ID+"/start", nil, nil, nil)
	id := h.autoUpdate(name, "never")

	v2 = enginetest.BuildImage(t, enginetest.Image(), ref, h.label, "LABEL version=2", `ENTRYPOINT ["/bin/false"]`)
	enginetest.Push(t, ref, reg.user, reg.password)
	enginetest.TagImage(t, v1, ref)
	e := h.runSchedule("container_update", id)
	if e.Status != "failed" || e.ErrorMessage == nil || !strings.HasPrefix(*e.ErrorMessage, "Update rolled back: the new container") {
		t.Fatalf("update of a failing image = %+v\n%s", e, e.Logs)
	}
	after := inspect(t, name)
	if after.ID != ct.ID || after.Image != v1 || !after.State.Running {
		t.Errorf("after the rollback: %s on %s, running %v; want %s on %s, running", after.ID, after.Image, after.State.Running, ct.ID, v1)
	}
	if enginetest.ImageID(t, ref) != v1 {
		t.Error("the tag was not given back to v1")
	}
	var list []struct{ Names []string }
	enginetest.Must(t, 200, "GET", "/containers/json?all=1&filters="+urlQuery(`{"label":["`+enginetest.Label+`=`+h.label+`"]}`), nil, nil, &list)
	if len(list) != 1 || list[0].Names[0] != "/"+name {
		t.Errorf("containers after the rollback = %+v, want only %s", list, name)
	}
}

// With scanning on, criteria critical_high blocks a v2 with a high
// vulnerability (the scanner fixture's CVE-2099-0001): the execution is
// skipped with the reason and the container stays on v1. critical lets the
// same image through, then blocks a v3 with a critical one (CVE-2099-0002):
// the container stays on v2 and the tag does not move.
func TestAutoUpdateBlockedByVulnerabilityCriteria(t *testing.T) {
	t.Parallel()
	env := requireScanners(t)
	h, reg := newUpdateHarness(t, env.cfg)
	h.must(200, "POST", "/api/settings/scanner?env=1", map[string]string{"scanner": scan.ScannerB}, nil)
	ref := reg.host + "/berth-test/au-scan-" + h.label + ":1"
	name := "au-scan-" + h.label
	var v1, v2, v3 string
	enginetest.RemoveImages(t, h.label, &v1, &v2, &v3)
	v1 = enginetest.BuildImage(t, env.clean, ref, h.label, "LABEL version=1")
	enginetest.Push(t, ref, reg.user, reg.password)
	var ct struct{ ID string }
	enginetest.Must(t, 201, "POST", "/containers/create?name="+name, nil, map[string]any{"Image": ref, "Cmd": []string{"sleep", "3600"},
		"Labels": map[string]string{enginetest.Label: h.label}}, &ct)
	enginetest.Must(t, 204, "POST", "/containers/"+ct.ID+"/start", nil, nil, nil)
	id := h.autoUpdate(name, "critical_high")
	if s := h.schedules()[fmt.Sprintf("container_update/%d", id)]; s.EnvHasScanning == nil || !*s.EnvHasScanning {
		t.Errorf("envHasScanning = %v", s.EnvHasScanning)
	}

	v2 = enginetest.BuildImage(t, env.vulnImage, ref, h.label, "LABEL version=2")
	enginetest.Push(t, ref, reg.user, reg.password)
	enginetest.TagImage(t, v1, ref)
	e := h.runSchedule("container_update", id)
	if e.Status != "skipped" || e.ErrorMessage == nil || !strings.Contains(*e.ErrorMessage, "blocked") ||
		!strings.Contains(*e.ErrorMessage, "1 high") || !strings.Contains(*e.ErrorMessage, "critical_high") {
		t.Fatalf("update of a vulnerable image = %+v\n%s", e, e.Logs)
	}
	if after := inspect(t, name); after.ID != ct.ID || after.Image != v1 || !after.State.Running {
		t.Errorf("after the block: %s on %s", after.ID, after.Image)
	}
	if enginetest.ImageID(t, ref) != v1 {
		t.Error("the tag moved although the update was blocked")
	}

	h.autoUpdate(name, "critical")
	e = h.runSchedule("container_update", id)
	onV2 := inspect(t, name)
	if e.Status != "success" || onV2.Image != v2 {
		t.Fatalf("criteria critical with only a high vulnerability = %+v\n%s", e, e.Logs)
	}

	v3 = enginetest.BuildImage(t, env.crit, ref, h.label, "LABEL version=3")
	enginetest.Push(t, ref, reg.user, reg.password)
	enginetest.TagImage(t, v2, ref)
	e = h.runSchedule("container_update", id)
	if e.Status != "skipped" || e.ErrorMessage == nil || !strings.Contains(*e.ErrorMessage, "blocked") ||
		!strings.Contains(*e.ErrorMessage, "1 critical vulnerabilities (criteria: critical)") {
		t.Fatalf("criteria critical with a critical vulnerability = %+v\n%s", e, e.Logs)
	}
	if after := inspect(t, name); after.ID != onV2.ID || after.Image != v2 || !after.State.Running {
		t.Errorf("after the critical block: %s on %s, want %s on %s", after.ID, after.Image, onV2.ID, v2)
	}
	if enginetest.ImageID(t, ref) != v2 {
		t.Error("the tag moved although the update was blocked")
	}

	// A batch update's vulnerabilityCriteria replaces the container's own
	// for that batch: critical_high blocks v3 as well, never lets it through.
	type batchAnswer struct {
		Success bool
		Results []struct{ Status, Error string }
	}
	var blocked, through batchAnswer
	h.must(200, "POST", "/api/containers/batch-update?env=1", map[string]any{"containers": []string{name},
		"vulnerabilityCriteria": "critical_high"}, &blocked)
	if len(blocked.Results) != 1 || blocked.Results[0].Status != "skipped" || inspect(t, name).Image != v2 {
		t.Fatalf("batch with criteria critical_high = %+v", blocked)
	}
	h.must(200, "POST", "/api/containers/batch-update?env=1", map[string]any{"containers": []string{name},
		"vulnerabilityCriteria": "never"}, &through)
	if len(through.Results) != 1 || through.Results[0].Status != "updated" || inspect(t, name).Image != v3 {
		t.Fatalf("batch with criteria never = %+v", through)
	}
}

// An update check records pending updates without touching the containers.
func TestUpdateCheckRecordsPendingUpdates(t *testing.T) {
	t.Parallel()
	h, reg := newUpdateHarness(t, scan.Config{})
	ref := reg.host + "/berth-test/au-check-" + h.label + ":1"
	name := "au-check-" + h.label
	var v1, v2 string
	enginetest.RemoveImages(t, h.label, &v1, &v2)
	v1 = enginetest.BuildImage(t, enginetest.Image(), ref, h.label, "LABEL version=1")
	enginetest.Push(t, ref, reg.user, reg.password)
	var ct struct{ ID string }
	enginetest.Must(t, 201, "POST", "/containers/create?name="+name, nil, map[string]any{"Image": ref, "Cmd": []string{"sleep", "3600"},
		"Labels": map[string]string{enginetest.Label: h.label}}, &ct)
	v2 = enginetest.BuildImage(t, enginetest.Image(), ref, h.label, "LABEL version=2")
	enginetest.Push(t, ref, reg.user, reg.password)
	enginetest.TagImage(t, v1, ref)

	e := h.runSchedule("env_update_check", 1)
	var d struct{ PendingUpdates []string }
	_ = json.Unmarshal(e.Details, &d)
	if e.Status != "success" || !slices.Contains(d.PendingUpdates, name) {
		t.Fatalf("update check = %+v\n%s", e, e.Logs)
	}
	var pending struct {
		PendingUpdates []struct {
			ContainerName, ContainerID, Image, CurrentImageID, NewDigest string
		}
	}
	h.must(200, "GET", "/api/containers/pending-updates?env=1", nil, &pending)
	found := false
	for _, p := range pending.PendingUpdates {
		if p.ContainerName == name {
			found = p.ContainerID == ct.ID && p.Image == ref && p.CurrentImageID == v1 && strings.HasPrefix(p.NewDigest, "sha256:")
		}
	}
	if !found {
		t.Errorf("pending updates = %+v", pending)
	}
	if inspect(t, name).Image != v1 {
		t.Error("the check changed the container")
	}
	// The dashboard counts it (other tests' containers on the shared engine
	// may be pending too).
	var stats struct{ Containers struct{ PendingUpdates int } }
	h.must(200, "GET", "/api/dashboard/stats?env=1", nil, &stats)
	if stats.Containers.PendingUpdates < 1 || stats.Containers.PendingUpdates > len(pending.PendingUpdates) {
		t.Errorf("dashboard pendingUpdates = %d, want 1..%d", stats.Containers.PendingUpdates, len(pending.PendingUpdates))
	}
	// The reference's clients dismiss one by containerId: an id no pending
	// update has deletes nothing (it once cleared them all), the
	// container's own id deletes exactly its own.
	var gone struct{ Deleted int }
	h.must(200, "DELETE", "/api/containers/pending-updates?env=1&containerId="+strings.Repeat("0", 64), nil, &gone)
	if gone.Deleted != 0 || !hasPending(h, name) {
		t.Fatalf("dismissing an unknown containerId deleted %d (ours still there: %v)", gone.Deleted, hasPending(h, name))
	}
	h.must(200, "DELETE", "/api/containers/pending-updates?env=1&containerId="+ct.ID, nil, &gone)
	if gone.Deleted != 1 || hasPending(h, name) {
		t.Fatalf("dismissing by containerId deleted %d (ours still there: %v)", gone.Deleted, hasPending(h, name))
	}
	if e := h.runSchedule("env_update_check", 1); e.Status != "success" || !hasPending(h, name) {
		t.Fatalf("the next check did not find the update again: %+v", e)
	}
	// Deleting the container forgets its pending update.
	h.must(200, "DELETE", "/api/containers/"+name+"?env=1&force=true", nil, nil)
	h.must(200, "GET", "/api/containers/pending-updates?env=1", nil, &pending)
	for _, p := range pending.PendingUpdates {
		if p.ContainerName == name {
			t.Error("pending update survived its container")
		}
	}
}

// hasPending says whether container name has a pending update on
// environment 1.
func hasPending(h *harness, name string) bool {
	h.t.Helper()
	var pending struct {
		PendingUpdates []struct{ ContainerName string }
	}
	h.must(200, "GET", "/api/containers/pending-updates?env=1", nil, &pending)
	for _, p := range pending.PendingUpdates {
		if p.ContainerName == name {
			return true
		}
	}
	return false
}
