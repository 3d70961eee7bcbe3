package selfupdate

import (
	"context"
	"encoding/json"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/enginetest"
)

type updaterInspect struct {
	Name   string
	State  struct{ Status string }
	Mounts []struct {
		Type, Name, Destination string
	}
	HostConfig struct{ Tmpfs map[string]string }
}

func inspectUpdater(t *testing.T, id string) (updaterInspect, bool) {
	t.Helper()
	status, body := enginetest.Do(t, "GET", "/containers/"+id+"/json", nil, nil)
	var in updaterInspect
	if status != 200 {
		return in, false
	}
	if err := json.Unmarshal(body, &in); err != nil {
		t.Fatal(err)
	}
	return in, true
}

// The updater of Berth's image (VOLUME /data) gets no anonymous volume, and
// each launch removes the updaters of this Berth's earlier self-updates
// that have ended, with the anonymous volume an updater of an earlier
// release was given; a running one, and another install's, stay.
func TestLaunchLeavesNoVolumesAndRemovesEndedUpdaters(t *testing.T) {
	enginetest.Require(t)
	label := strconv.FormatInt(time.Now().UnixNano(), 36)
	name := "berth-updater-test-" + label
	engines := engine.NewManager(slog.New(slog.DiscardHandler))
	t.Cleanup(engines.Close)
	c, err := engines.Client(t.Context(), engine.Endpoint{ID: 1, ConnectionType: engine.Socket})
	if err != nil {
		t.Fatal(err)
	}
	var img string
	enginetest.RemoveImages(t, label, &img)
	// As Berth's image: a volume at /data; its entrypoint ignores the
	// handover's arguments and ends at once.
	img = enginetest.BuildImage(t, enginetest.Image(), "berth-test/updater-"+label+":1", label,
		`VOLUME ["/data"]`, `ENTRYPOINT ["true"]`)

	created := []string{}
	t.Cleanup(func() {
		for _, id := range created {
			enginetest.Do(t, "DELETE", "/containers/"+id+"?force=1&v=1", nil, nil)
		}
	})
	create := func(name string, labels map[string]string, cmd ...string) string {
		t.Helper()
		var ct struct{ ID string }
		body := map[string]any{"Image": img, "Labels": labels, "Entrypoint": []string{}, "Cmd": cmd,
			"HostConfig": map[string]any{"Binds": []string{enginetest.Socket + ":/var/run/docker.sock"}}}
		enginetest.Must(t, 201, "POST", "/containers/create?name="+name, nil, body, &ct)
		created = append(created, ct.ID)
		return ct.ID
	}
	self := create(name, map[string]string{enginetest.Label: label}, "sleep", "3600")
	enginetest.Must(t, 204, "POST", "/containers/"+self+"/start", nil, nil, nil)

	// An ended updater of this Berth from an earlier release, with its
	// anonymous volume; a running one; another install's ended one.
	ended := create(name+"-updater-1", map[string]string{Label: self, enginetest.Label: label}, "true")
	enginetest.Must(t, 204, "POST", "/containers/"+ended+"/start", nil, nil, nil)
	old, _ := inspectUpdater(t, ended)
	oldVolume := ""
	for _, m := range old.Mounts {
		if m.Type == "volume" && m.Destination == "/data" {
			oldVolume = m.Name
		}
	}
	if oldVolume == "" {
		t.Fatalf("the earlier updater's mounts = %+v, want its anonymous volume at /data", old.Mounts)
	}
	t.Cleanup(func() { enginetest.Do(t, "DELETE", "/volumes/"+oldVolume, nil, nil) })
	running := create(name+"-updater-2", map[string]string{Label: self, enginetest.Label: label}, "sleep", "3600")
	enginetest.Must(t, 204, "POST", "/containers/"+running+"/start", nil, nil, nil)
	other := create("other-"+name+"-updater-1", map[string]string{Label: "x", enginetest.Label: label}, "true")
	waitExited := func(id string) {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for {
			if in, _ := inspectUpdater(t, id); in.State.Status == "exited" {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("container %s did not exit", id)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	waitExited(ended)

	id, err := Launch(context.Background(), c, self, img)
	if err != nil {
		t.Fatal(err)
	}
	created = append(created, id)
	in, ok := inspectUpdater(t, id)
	if !ok {
		t.Fatal("the updater is gone")
	}
	for _, m := range in.Mounts {
		if m.Type == "volume" {
			t.Errorf("the updater has a volume at %s (%s): it would be left behind", m.Destination, m.Name)
		}
	}
	if _, ok := in.HostConfig.Tmpfs["/data"]; !ok {
		t.Errorf("the updater's tmpfs = %v, want one at the image's volume /data", in.HostConfig.Tmpfs)
	}
	if _, ok := inspectUpdater(t, ended); ok {
		t.Error("the ended updater of an earlier update is still there")
	}
	if status, _ := enginetest.Do(t, "GET", "/volumes/"+oldVolume, nil, nil); status != 404 {
		t.Errorf("the ended updater's anonymous volume: GET = %d, want 404", status)
	}
	if in, _ := inspectUpdater(t, running); in.State.Status != "running" {
		t.Errorf("the running updater is %q, want it left running", in.State.Status)
	}
	if _, ok := inspectUpdater(t, other); !ok {
		t.Error("another install's updater was removed")
	}

	// The next launch removes this one once it ended.
	waitExited(id)
	next, err := Launch(context.Background(), c, self, img)
	if err != nil {
		t.Fatal(err)
	}
	created = append(created, next)
	if _, ok := inspectUpdater(t, id); ok {
		t.Error("the previous launch's ended updater is still there")
	}
}
