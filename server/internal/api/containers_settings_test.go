package api_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/berth-dev/berth/shared/enginetest"
)

// containerDoc is the part of the engine's inspection the tests read.
type containerDoc struct {
	ID     string `json:"Id"`
	Name   string
	State  struct{ Running bool }
	Config struct {
		Cmd, Entrypoint, Env []string
		WorkingDir, User     string
		Hostname, StopSignal string
		Tty, OpenStdin       bool
		Labels               map[string]string
		Volumes              map[string]any
		Healthcheck          *struct{ Test []string }
		ExposedPorts         map[string]any
	}
	HostConfig struct {
		RestartPolicy struct {
			Name              string
			MaximumRetryCount int
		}
		PortBindings    map[string][]struct{ HostIP, HostPort string }
		Dns, DnsSearch  []string
		DnsOptions      []string
		CapAdd, CapDrop []string
		SecurityOpt     []string
		ExtraHosts      []string
		Memory, ShmSize int64
		NanoCpus        int64
		Ulimits         []struct {
			Name       string
			Soft, Hard int64
		}
		LogConfig struct {
			Type   string
			Config map[string]string
		}
		Tmpfs          map[string]string
		Init           *bool
		ReadonlyRootfs bool
	}
}

func (h *harness) inspectDoc(id string) containerDoc {
	h.t.Helper()
	var d containerDoc
	h.must(http.StatusOK, "GET", "/api/containers/"+id+"?env=1", nil, &d)
	return d
}

// POST /api/containers reads every field of the reference's create options:
// each lands on the engine (today's code ignored cmd, entrypoint,
// workingDir, user, hostname, the reference's ports object, volumes object,
// restartMaxRetries, dns, capDrop, ulimits, logging, healthcheck, …).
func TestCreateContainerReadsTheReferenceOptions(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var out struct{ ID string }
	h.must(http.StatusOK, "POST", "/api/containers?env=1", map[string]any{
		"name": "berth-opts-" + h.label, "image": enginetest.Image(),
		"cmd": []string{"300"}, "entrypoint": []string{"sleep"}, "workingDir": "/tmp", "user": "nobody",
		"hostname": "opts-host", "env": []string{"A=1"}, "labels": map[string]string{enginetest.Label: h.label, "x": "y"},
		"ports":         map[string]any{"8080/tcp": map[string]any{"HostIp": "127.0.0.1", "HostPort": ""}},
		"volumes":       map[string]any{"/data": map[string]any{}},
		"restartPolicy": "on-failure", "restartMaxRetries": 2,
		"dns": []string{"9.9.9.9"}, "dnsSearch": []string{"example.test"}, "dnsOptions": []string{"ndots:2"},
		"capAdd": []string{"NET_ADMIN"}, "capDrop": []string{"MKNOD"}, "securityOpt": []string{"no-new-privileges:true"},
		"extraHosts": []string{"db.test:10.1.2.3"}, "memory": 64 << 20, "shmSize": 32 << 20, "nanoCpus": 500000000,
		"ulimits":   []map[string]any{{"name": "nofile", "soft": 1024, "hard": 2048}},
		"logDriver": "json-file", "logOptions": map[string]string{"max-size": "1m"},
		"tmpfs": map[string]string{"/scratch": "size=1m"}, "init": true, "readonlyRootfs": true,
		"tty": true, "stdinOpen": true, "stopSignal": "SIGINT",
		"healthcheck":      map[string]any{"test": []string{"CMD", "true"}, "interval": 5_000_000_000, "retries": 2},
		"startAfterCreate": true,
	}, &out)
	d := h.inspectDoc(out.ID)
	c, hc := d.Config, d.HostConfig
	check := func(what string, ok bool, got any) {
		if !ok {
			t.Errorf("%s did not land: %+v", what, got)
		}
	}
	check("cmd", slices.Equal(c.Cmd, []string{"300"}), c.Cmd)
	check("entrypoint", slices.Equal(c.Entrypoint, []string{"sleep"}), c.Entrypoint)
	check("workingDir", c.WorkingDir == "/tmp", c.WorkingDir)
	check("user", c.User == "nobody", c.User)
	check("hostname", c.Hostname == "opts-host", c.Hostname)
	check("env", slices.Contains(c.Env, "A=1"), c.Env)
	check("labels", c.Labels["x"] == "y", c.Labels)
	check("ports", len(hc.PortBindings["8080/tcp"]) == 1 && hc.PortBindings["8080/tcp"][0].HostIP == "127.0.0.1", hc.PortBindings)
	check("volumes", c.Volumes["/data"] != nil, c.Volumes)
	check("restart policy", hc.RestartPolicy.Name == "on-failure" && hc.RestartPolicy.MaximumRetryCount == 2, hc.RestartPolicy)
	check("dns", slices.Equal(hc.Dns, []string{"9.9.9.9"}) && slices.Equal(hc.DnsSearch, []string{"example.test"}) &&
		slices.Equal(hc.DnsOptions, []string{"ndots:2"}), hc)
	check("capabilities", slices.ContainsFunc(hc.CapAdd, func(s string) bool { return strings.HasSuffix(s, "NET_ADMIN") }) &&
		slices.ContainsFunc(hc.CapDrop, func(s string) bool { return strings.HasSuffix(s, "MKNOD") }), hc)
	check("securityOpt", slices.Contains(hc.SecurityOpt, "no-new-privileges:true"), hc.SecurityOpt)
	check("extraHosts", slices.Contains(hc.ExtraHosts, "db.test:10.1.2.3"), hc.ExtraHosts)
	check("resources", hc.Memory == 64<<20 && hc.ShmSize == 32<<20 && hc.NanoCpus == 500000000, hc)
	check("ulimits", len(hc.Ulimits) == 1 && hc.Ulimits[0].Name == "nofile" && hc.Ulimits[0].Hard == 2048, hc.Ulimits)
	check("logging", hc.LogConfig.Type == "json-file" && hc.LogConfig.Config["max-size"] == "1m", hc.LogConfig)
	check("tmpfs", hc.Tmpfs["/scratch"] == "size=1m", hc.Tmpfs)
	check("init", hc.Init != nil && *hc.Init, hc.Init)
	check("readonlyRootfs", hc.ReadonlyRootfs, hc.ReadonlyRootfs)
	check("tty/stdin", c.Tty && c.OpenStdin, c)
	check("stopSignal", c.StopSignal == "SIGINT", c.StopSignal)
	check("healthcheck", c.Healthcheck != nil && slices.Equal(c.Healthcheck.Test, []string{"CMD", "true"}), c.Healthcheck)
	check("started", d.State.Running, d.State)

	// A field the engine cannot take is refused, not ignored.
	status, body := h.do("POST", "/api/containers?env=1", map[string]any{"image": enginetest.Image(), "dns": []string{"not-an-ip"}})
	if status != http.StatusBadRequest {
		t.Errorf("bad dns = %d %s, want 400", status, body)
	}
}

// POST /api/containers/{id}/update merges the body over the container's
// configuration: a change of env and labels recreates it (new id, the old
// one gone, the values present, the name kept); a resource-only change is
// made in place (same id); a recreate whose new container cannot start
// leaves the original running under its name.
func TestUpdateContainerRecreatesWithMergedSettings(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	name := "berth-upd-" + h.label
	var created struct{ ID string }
	h.must(http.StatusOK, "POST", "/api/containers?env=1", map[string]any{"name": name, "image": enginetest.Image(),
		"cmd": []string{"sleep", "300"}, "env": []string{"A=1"}, "labels": map[string]string{enginetest.Label: h.label},
		"memory": 64 << 20, "startAfterCreate": true}, &created)

	type answer struct {
		Success   bool
		ID        string `json:"id"`
		Recreated bool
	}
	var a answer
	h.must(http.StatusOK, "POST", "/api/containers/"+name+"/update?env=1", map[string]any{
		"env": []string{"A=2", "B=3"}, "labels": map[string]string{enginetest.Label: h.label, "x": "y"}}, &a)
	if !a.Success || !a.Recreated || len(a.ID) != 64 || a.ID == created.ID {
		t.Fatalf("env+labels update = %+v (old %s): want a new id", a, created.ID)
	}
	if status, _ := h.do("GET", "/api/containers/"+created.ID+"?env=1", nil); status != http.StatusNotFound {
		t.Errorf("the old container is still there (%d)", status)
	}
	d := h.inspectDoc(name)
	if d.ID != a.ID || !d.State.Running || !slices.Contains(d.Config.Env, "A=2") || !slices.Contains(d.Config.Env, "B=3") ||
		slices.Contains(d.Config.Env, "A=1") || d.Config.Labels["x"] != "y" {
		t.Errorf("recreated container = %+v", d)
	}
	if !slices.Equal(d.Config.Cmd, []string{"sleep", "300"}) || d.HostConfig.Memory != 64<<20 {
		t.Errorf("what was not sent changed: cmd %v memory %d", d.Config.Cmd, d.HostConfig.Memory)
	}

	var inPlace answer
	h.must(http.StatusOK, "POST", "/api/containers/"+name+"/update?env=1", map[string]any{"memory": 128 << 20}, &inPlace)
	if inPlace.ID != a.ID || inPlace.Recreated {
		t.Errorf("resource-only update = %+v, want the same id %s in place", inPlace, a.ID)
	}
	if got := h.inspectDoc(name).HostConfig.Memory; got != 128<<20 {
		t.Errorf("memory after update = %d", got)
	}

	status, body := h.do("POST", "/api/containers/"+name+"/update?env=1", map[string]any{"entrypoint": []string{"/no/such/binary"}})
	if status < 500 || !strings.Contains(string(body), "rolled back") {
		t.Errorf("failing recreate = %d %s, want 500 naming the rollback", status, body)
	}
	d = h.inspectDoc(name)
	if d.ID != a.ID || !d.State.Running || d.Name != "/"+name {
		t.Errorf("after the failed recreate: %s running=%v name %s, want the original %s running", d.ID, d.State.Running, d.Name, a.ID)
	}
	var list []struct {
		Names []string
		Name  string
	}
	h.must(http.StatusOK, "GET", "/api/containers?env=1", nil, &list)
	for _, c := range list {
		if strings.Contains(c.Name, name+"-berth-old") {
			t.Errorf("the set-aside container stays: %s", c.Name)
		}
	}
}

// Removing a memory or CPU limit through POST …/update recreates the
// container (the engine's update takes 0 as "unchanged" and refuses -1), and
// the new one has no limit: its configuration says 0 and the engine's
// memory reading of its cgroup is no longer the old limit. An empty health
// check test goes back to the image's: the container has no health check of
// its own (the test image has none), neither NONE nor the old one.
func TestUpdateContainerRemovesLimitsAndGoesBackToTheImagesHealthCheck(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	name := "berth-unlimit-" + h.label
	var created struct{ ID string }
	h.must(http.StatusOK, "POST", "/api/containers?env=1", map[string]any{"name": name, "image": enginetest.Image(),
		"cmd": []string{"sleep", "300"}, "labels": map[string]string{enginetest.Label: h.label},
		"memory": 64 << 20, "nanoCpus": 500_000_000, "startAfterCreate": true,
		"healthcheck": map[string]any{"test": []string{"CMD", "true"}, "interval": 30_000_000_000}}, &created)
	memLimit := func(id string) int64 {
		var st struct {
			MemoryStats struct{ Limit int64 } `json:"memory_stats"`
		}
		enginetest.Must(t, 200, "GET", "/containers/"+id+"/stats?stream=false&one-shot=true", nil, nil, &st)
		return st.MemoryStats.Limit
	}
	if got := memLimit(created.ID); got != 64<<20 {
		t.Fatalf("cgroup memory limit before = %d, want 64 MiB", got)
	}
	type answer struct {
		ID        string `json:"id"`
		Recreated bool
	}
	var a answer
	h.must(http.StatusOK, "POST", "/api/containers/"+name+"/update?env=1", map[string]any{"memory": 0}, &a)
	if !a.Recreated || a.ID == created.ID {
		t.Fatalf("memory limit removed = %+v (old %s): want a recreate", a, created.ID)
	}
	d := h.inspectDoc(name)
	if d.HostConfig.Memory != 0 || !d.State.Running || d.HostConfig.NanoCpus != 500_000_000 {
		t.Errorf("after removing the memory limit: memory %d running %v nanoCpus %d", d.HostConfig.Memory, d.State.Running, d.HostConfig.NanoCpus)
	}
	if got := memLimit(a.ID); got <= 64<<20 {
		t.Errorf("cgroup memory limit after removing it = %d, want none (the host's memory)", got)
	}
	var b answer
	h.must(http.StatusOK, "POST", "/api/containers/"+name+"/update?env=1", map[string]any{"nanoCpus": 0, "healthcheck": map[string]any{"test": []string{}}}, &b)
	if !b.Recreated || b.ID == a.ID {
		t.Fatalf("CPU limit removed = %+v: want a recreate", b)
	}
	d = h.inspectDoc(name)
	if d.HostConfig.NanoCpus != 0 || d.Config.Healthcheck != nil {
		t.Errorf("after removing the CPU limit and the own health check: nanoCpus %d healthcheck %+v", d.HostConfig.NanoCpus, d.Config.Healthcheck)
	}
	// Setting a limit again is still made in place.
	var c answer
	h.must(http.StatusOK, "POST", "/api/containers/"+name+"/update?env=1", map[string]any{"memory": 96 << 20, "memorySwap": 192 << 20}, &c)
	if c.Recreated || c.ID != b.ID {
		t.Errorf("memory limit set again = %+v, want in place on %s", c, b.ID)
	}
}
