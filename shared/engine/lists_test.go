package engine_test

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/url"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/enginetest"
)

// engineListItem is an entry of the engine's own container list, with the
// fields a Container carries.
type engineListItem struct {
	ID      string `json:"Id"`
	Names   []string
	Image   string
	ImageID string
	Command string
	Created int64
	State   string
	Status  string
	Labels  map[string]string
	Ports   []struct {
		IP          string
		PrivatePort int
		PublicPort  int
		Type        string
	}
	Mounts []struct {
		Type, Name, Source, Destination, Mode string
		RW                                    bool
	}
	NetworkSettings struct {
		Networks map[string]struct{ IPAddress string }
	}
}

// rawList is the engine's own list of the containers labelled label.
func rawList(t *testing.T, label string) []engineListItem {
	t.Helper()
	filters, _ := json.Marshal(map[string][]string{"label": {enginetest.Label + "=" + label}})
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet,
		"http://engine/containers/json?all=1&filters="+url.QueryEscape(string(filters)), nil)
	resp, err := enginetest.HTTPClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var items []engineListItem
	if err := json.NewDecoder(resp.Body).Decode(&items); err != nil {
		t.Fatal(err)
	}
	return items
}

// dockerPs is `docker ps -a --format json` of the containers labelled label.
func dockerPs(t *testing.T, label string) []map[string]string {
	t.Helper()
	docker, err := exec.LookPath("docker")
	if err != nil {
		t.Fatalf("the docker CLI is needed: %v", err)
	}
	out, err := exec.CommandContext(t.Context(), docker, "ps", "-a", "--no-trunc", "--format", "json",
		"--filter", "label="+enginetest.Label+"="+label).Output()
	if err != nil {
		t.Fatalf("docker ps: %v", err)
	}
	var rows []map[string]string
	for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var row map[string]any
		if err := json.Unmarshal(line, &row); err != nil {
			t.Fatalf("docker ps line %s: %v", line, err)
		}
		r := map[string]string{}
		for k, v := range row {
			if s, ok := v.(string); ok {
				r[k] = s
			}
		}
		rows = append(rows, r)
	}
	return rows
}

// statusWord is the part of a status text that does not move with time.
func statusWord(s string) string {
	switch {
	case strings.HasPrefix(s, "Up "):
		return "Up"
	case strings.HasPrefix(s, "Exited ("):
		code, _, _ := strings.Cut(s, ")")
		return code + ")"
	}
	return s
}

// TestListIsWhatTheEngineAndDockerPsSay lists containers of every kind the
// answer describes (running with a published port, a named volume, a bind
// mount and a network address; created; exited with a code) and compares
// each field with the engine's own list and with `docker ps -a`.
func TestListIsWhatTheEngineAndDockerPsSay(t *testing.T) {
	c := localClient(t)
	// The named volume is created by the engine with the container; it is
	// removed after the containers (cleanups run last-registered first).
	vol := "berth-test-vol-" + strings.ToLower(rand.Text()[:12])
	t.Cleanup(func() { enginetest.Do(t, http.MethodDelete, "/volumes/"+vol, nil, nil) })
	label := newLabel(t)
	running := runContainer(t, c, label, engine.CreateSpec{Cmd: []string{"sleep", "300"},
		PortBindings: map[string][]engine.HostPort{"8080/tcp": {{HostIP: "127.0.0.1", HostPort: ""}}},
		Binds:        []string{vol + ":/data", "/tmp:/host-tmp:ro"}})
	created := createContainer(t, c, label, engine.CreateSpec{Cmd: []string{"true"}})
	exited := runContainer(t, c, label, engine.CreateSpec{Cmd: []string{"sh", "-c", "exit 3"}})
	waitExit(t, exited)

	list, err := c.ListContainers(t.Context(), true)
	if err != nil {
		t.Fatalf("ListContainers: %v", err)
	}
	raw := rawList(t, label)
	ps := dockerPs(t, label)
	if len(raw) != 3 || len(ps) != 3 {
		t.Fatalf("the engine lists %d, docker ps %d of our containers, want 3", len(raw), len(ps))
	}
	for _, want := range raw {
		i := slices.IndexFunc(list, func(ct engine.Container) bool { return ct.ID == want.ID })
		if i < 0 {
			t.Errorf("ListContainers lacks %s", want.ID)
			continue
		}
		got := list[i]
		ports := []engine.Port{}
		for _, p := range want.Ports {
			ports = append(ports, engine.Port{IP: p.IP, PrivatePort: p.PrivatePort, PublicPort: p.PublicPort, Type: p.Type})
		}
		mounts := []engine.Mount{}
		for _, m := range want.Mounts {
			mounts = append(mounts, engine.Mount{Type: m.Type, Name: m.Name, Source: m.Source, Destination: m.Destination, Mode: m.Mode, RW: m.RW})
		}
		nets := map[string]engine.NetIP{}
		for name, n := range want.NetworkSettings.Networks {
			nets[name] = engine.NetIP{IPAddress: n.IPAddress}
		}
		wantC := engine.Container{ID: want.ID, Name: strings.TrimPrefix(want.Names[0], "/"), Image: want.Image,
			ImageID: want.ImageID, State: want.State, Status: got.Status, Created: want.Created, Ports: ports,
			Networks: nets, Mounts: mounts, Labels: want.Labels, Command: want.Command}
		if want.State == "exited" {
			code := 3
			wantC.ExitCode = &code
		}
		sortMounts := func(ms []engine.Mount) {
			sort.Slice(ms, func(a, b int) bool { return ms[a].Destination < ms[b].Destination })
		}
		sortMounts(wantC.Mounts)
		sortMounts(got.Mounts)
		if diff := cmp.Diff(wantC, got); diff != "" {
			t.Errorf("container %s (-engine +ListContainers):\n%s", want.Name(), diff)
		}
		if statusWord(got.Status) != statusWord(want.Status) {
			t.Errorf("container %s: status %q, the engine says %q", want.Name(), got.Status, want.Status)
		}

		j := slices.IndexFunc(ps, func(r map[string]string) bool { return r["ID"] == want.ID })
		if j < 0 {
			t.Errorf("docker ps lacks %s", want.ID)
			continue
		}
		row := ps[j]
		if row["Names"] != got.Name || row["Image"] != got.Image || row["State"] != got.State ||
			statusWord(row["Status"]) != statusWord(got.Status) {
			t.Errorf("container %s: docker ps says names %q image %q state %q status %q; ListContainers %q %q %q %q",
				want.ID[:12], row["Names"], row["Image"], row["State"], row["Status"], got.Name, got.Image, got.State, got.Status)
		}
	}
	// The kinds the test meant to cover are there.
	byID := map[string]engine.Container{}
	for _, ct := range list {
		byID[ct.ID] = ct
	}
	r := byID[running]
	if r.State != "running" || len(r.Ports) != 1 || r.Ports[0].PublicPort == 0 || r.Ports[0].IP != "127.0.0.1" ||
		len(r.Mounts) != 2 || len(r.Networks) == 0 {
		t.Errorf("running container = %+v, want a published port, two mounts and a network", r)
	}
	if byID[created].State != "created" || byID[exited].ExitCode == nil {
		t.Errorf("created = %+v, exited = %+v", byID[created], byID[exited])
	}
}

func (i engineListItem) Name() string { return strings.TrimPrefix(i.Names[0], "/") }

// TestSamplePassSamplesEveryRunningContainerWithItsCPUUse runs a few
// containers, one of them busy, and takes two passes: every running
// container is sampled in each, with a CPU interval to measure its use
// over (the busy one used CPU in it), and a stopped one is not.
func TestSamplePassSamplesEveryRunningContainerWithItsCPUUse(t *testing.T) {
	c := localClient(t)
	label := newLabel(t)
	var ids []string
	for range 4 {
		ids = append(ids, runContainer(t, c, label, engine.CreateSpec{Cmd: []string{"sleep", "300"}}))
	}
	busy := runContainer(t, c, label, engine.CreateSpec{Cmd: []string{"sh", "-c", "while :; do :; done"}})
	ids = append(ids, busy)
	stopped := createContainer(t, c, label, engine.CreateSpec{Cmd: []string{"sleep", "300"}})

	for pass := range 2 {
		got := map[string]engine.ContainerSample{}
		err := c.SampleRunningOf(t.Context(), 8*time.Second, append(slices.Clone(ids), stopped), func(s engine.ContainerSample) error {
			if _, dup := got[s.ID]; dup {
				t.Errorf("pass %d: %s sampled twice", pass, s.ID[:12])
			}
			got[s.ID] = s
			return nil
		})
		if err != nil {
			t.Fatalf("pass %d: %v", pass, err)
		}
		if _, ok := got[stopped]; ok {
			t.Errorf("pass %d sampled a container that is not running", pass)
		}
		for _, id := range ids {
			s, ok := got[id]
			switch {
			case !ok:
				t.Errorf("pass %d: no sample of running container %s", pass, id[:12])
			case s.Name == "" || s.MemoryUsage == 0 || s.MemoryLimit == 0:
				t.Errorf("pass %d: sample of %s = %+v, want its name and memory", pass, id[:12], s)
			case s.PreSystemCPU == 0 || s.SystemCPU <= s.PreSystemCPU || s.CPUTotal < s.PreCPUTotal:
				t.Errorf("pass %d: sample of %s has no CPU interval: cpu %d→%d, system %d→%d", pass, id[:12],
					s.PreCPUTotal, s.CPUTotal, s.PreSystemCPU, s.SystemCPU)
			case id == busy && s.CPUTotal == s.PreCPUTotal:
				t.Errorf("pass %d: the busy container used no CPU in its interval", pass)
			}
		}
	}
}
