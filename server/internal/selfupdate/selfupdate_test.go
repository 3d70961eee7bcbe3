package selfupdate

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/enginetest"
)

// A container's mount table names its id; a host's does not.
func TestDetectFindsTheContainerID(t *testing.T) {
	id := strings.Repeat("ab", 32)
	in := "1 0 0:1 / / rw - overlay overlay rw\n" +
		"2 1 8:1 /var/lib/docker/containers/" + id + "/hostname /etc/hostname rw - ext4 /dev/sda1 rw\n"
	if got := Detect(strings.NewReader(in)); got != id {
		t.Errorf("Detect = %q, want %s", got, id)
	}
	if got := Detect(strings.NewReader("1 0 0:1 / / rw - ext4 /dev/sda1 rw\n")); got != "" {
		t.Errorf("Detect on a host = %q", got)
	}
}

type handOverFixture struct {
	c                *engine.Client
	label, name, ref string
	port             string
	old              string
}

// newFixture runs a container on a tiny local image (v1) with a published
// port, environment and a command of its own, as Berth's would be.
func newFixture(t *testing.T) *handOverFixture {
	enginetest.Require(t)
	label := strconv.FormatInt(time.Now().UnixNano(), 36)
	f := &handOverFixture{label: label, name: "berth-selfupdate-" + label, ref: "berth-test/selfupdate-" + label}
	engines := engine.NewManager(slog.New(slog.DiscardHandler))
	t.Cleanup(engines.Close)
	c, err := engines.Client(t.Context(), engine.Endpoint{ID: 1, ConnectionType: engine.Socket})
	if err != nil {
		t.Fatal(err)
	}
	f.c = c
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, f.port, _ = net.SplitHostPort(l.Addr().String())
	l.Close()
	var v1 string
	enginetest.RemoveImages(t, label, &v1)
	v1 = enginetest.BuildImage(t, enginetest.Image(), f.ref+":1", label, "LABEL version=1")
	var ct struct{ ID string }
	enginetest.Must(t, 201, "POST", "/containers/create?name="+f.name, nil, map[string]any{"Image": f.ref + ":1",
		"Cmd": []string{"sleep", "3600"}, "Env": []string{"BERTH_SETTING=kept"}, "ExposedPorts": map[string]any{"3000/tcp": map[string]any{}},
		"Labels":     map[string]string{enginetest.Label: label},
		"HostConfig": map[string]any{"PortBindings": map[string]any{"3000/tcp": []map[string]string{{"HostIp": "127.0.0.1", "HostPort": f.port}}}}}, &ct)
	enginetest.Must(t, 204, "POST", "/containers/"+ct.ID+"/start", nil, nil, nil)
	f.old = ct.ID
	return f
}

// version builds image :tag of the fixture with a health check cmd.
func (f *handOverFixture) version(t *testing.T, tag, health string) string {
	id := enginetest.BuildImage(t, enginetest.Image(), f.ref+":"+tag, f.label, "LABEL version="+tag,
		`HEALTHCHECK --interval=1s --timeout=1s --retries=1 CMD `+health)
	t.Cleanup(func() { enginetest.Do(t, "DELETE", "/images/"+id+"?force=1", nil, nil) })
	return id
}

type inspected struct {
	ID     string
	Name   string
	Image  string
	State  struct{ Running bool }
	Config struct {
		Env []string
		Cmd []string
	}
	HostConfig struct {
		PortBindings map[string][]struct{ HostIP, HostPort string }
	}
}

func inspectName(t *testing.T, name string) (inspected, bool) {
	status, body := enginetest.Do(t, "GET", "/containers/"+name+"/json", nil, nil)
	var in inspected
	if status != 200 {
		return in, false
	}
	if err := json.Unmarshal(body, &in); err != nil {
		t.Fatal(err)
	}
	return in, true
}

var testGate = Gate{Grace: 2 * time.Second, Healthy: 20 * time.Second, Poll: 200 * time.Millisecond}

// A healthy new image takes over: same name, port, environment and
// command, on the new image; the old container is gone.
func TestHandOverToAHealthyImage(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	v2 := f.version(t, "2", "true")
	var steps []string
	id, err := HandOver(context.Background(), f.c, f.old, f.ref+":2", testGate, func(s string) { steps = append(steps, s) })
	if err != nil {
		t.Fatalf("HandOver: %v (steps %v)", err, steps)
	}
	in, ok := inspectName(t, f.name)
	if !ok || in.ID != id || in.Image != v2 || !in.State.Running {
		t.Fatalf("after the hand-over %s is %+v", f.name, in)
	}
	if strings.Join(in.Config.Cmd, " ") != "sleep 3600" || !strings.Contains(strings.Join(in.Config.Env, " "), "BERTH_SETTING=kept") {
		t.Errorf("configuration not kept: %+v", in.Config)
	}
	if b := in.HostConfig.PortBindings["3000/tcp"]; len(b) != 1 || b[0].HostPort != f.port {
		t.Errorf("port binding = %+v, want %s", in.HostConfig.PortBindings, f.port)
	}
	if _, ok := inspectName(t, f.old); ok {
		t.Error("the old container is still there")
	}
}

// An image whose health check fails is not kept: the copy is removed and
// the old container runs again under its name, on the old image.
func TestHandOverRollsBackAnUnhealthyImage(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.version(t, "bad", "false")
	var steps []string
	_, err := HandOver(context.Background(), f.c, f.old, f.ref+":bad", testGate, func(s string) { steps = append(steps, s) })
	if err == nil || !strings.Contains(err.Error(), "rolled back: the new container turned unhealthy") {
		t.Fatalf("HandOver = %v, want a rollback (steps %v)", err, steps)
	}
	in, ok := inspectName(t, f.name)
	if !ok || in.ID != f.old || !in.State.Running {
		t.Fatalf("after the rollback %s is %+v, want the old container running", f.name, in)
	}
	status, body := enginetest.Do(t, "GET", "/containers/json?all=1&filters="+`{"label":["`+enginetest.Label+`=`+f.label+`"]}`, nil, nil)
	var list []struct{ ID string }
	if err := json.Unmarshal(body, &list); status != 200 || err != nil || len(list) != 1 {
		t.Errorf("containers of the test = %d %s, want only the old one", status, body)
	}
}
