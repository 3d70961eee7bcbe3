package autoupdate

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/enginetest"
)

// crashed is the state an update leaves when Berth stops in its middle,
// made by hand on the real engine: the old container (on v1) stopped and
// renamed aside, the new one (on v2, same reference) running under the
// name, the reference moved to v2.
type crashed struct {
	svc            *Service
	env            store.Environment
	label          string
	name, ref      string
	v1, v2         string
	oldID, newID   string
	recoveryDetail recovery
}

func newCrashed(t *testing.T) *crashed {
	t.Helper()
	enginetest.Require(t)
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	label := "recover-" + hex.EncodeToString(b)
	s, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "berth.db"), storetest.Box(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	env := store.Environment{Name: "local", ConnectionType: "socket", Labels: []string{}, AgentCapabilities: []string{}}
	if err := s.CreateEnvironment(t.Context(), &env); err != nil {
		t.Fatal(err)
	}
	engines := engine.NewManager(slog.New(slog.DiscardHandler))
	t.Cleanup(engines.Close)
	c := &crashed{svc: New(Options{Engines: engines, Store: s}), env: env, label: label, name: label,
		ref: "berth-test/" + label + ":1"}
	enginetest.RemoveImages(t, label, &c.v1, &c.v2)
	c.v1 = enginetest.BuildImage(t, enginetest.Image(), c.ref, label, "LABEL version=1")
	run := func(name string) string {
		var ct struct{ ID string }
		enginetest.Must(t, 201, "POST", "/containers/create?name="+name, nil, map[string]any{"Image": c.ref,
			"Cmd": []string{"sleep", "3600"}, "Labels": map[string]string{enginetest.Label: label}}, &ct)
		enginetest.Must(t, 204, "POST", "/containers/"+ct.ID+"/start", nil, nil, nil)
		return ct.ID
	}
	c.oldID = run(c.name)
	aside := c.name + "-berth-old-" + c.oldID[:12]
	c.v2 = enginetest.BuildImage(t, enginetest.Image(), c.ref, label, "LABEL version=2") // moves the reference
	enginetest.Must(t, 204, "POST", "/containers/"+c.oldID+"/stop?t=1", nil, nil, nil)
	enginetest.Must(t, 204, "POST", "/containers/"+c.oldID+"/rename?name="+aside, nil, nil, nil)
	c.newID = run(c.name)
	c.recoveryDetail = recovery{Environment: env.ID, Container: c.oldID, Name: c.name, Aside: aside, Ref: c.ref,
		OldImage: c.v1, Running: true, NewContainer: c.newID}
	return c
}

// recover runs Recover on an interrupted execution carrying rec.
func (c *crashed) recover(t *testing.T, rec recovery) string {
	t.Helper()
	details, _ := json.Marshal(map[string]any{recoveryKey: rec, "newContainerId": rec.NewContainer})
	note, err := c.svc.Recover(t.Context(), store.Execution{ID: 1, ScheduleType: "container_update", Details: string(details),
		Status: store.ExecutionFailed})
	if err != nil {
		t.Fatalf("Recover: %v", err)
	}
	return note
}

type containerState struct {
	ID    string `json:"Id"`
	Name  string
	Image string
	State struct{ Running bool }
}

func containerNamed(t *testing.T, name string) (containerState, bool) {
	t.Helper()
	code, data := enginetest.Do(t, "GET", "/containers/"+name+"/json", nil, nil)
	if code == 404 {
		return containerState{}, false
	}
	var st containerState
	if code != 200 || json.Unmarshal(data, &st) != nil {
		t.Fatalf("inspect %s: %d %s", name, code, data)
	}
	return st, true
}

// wantRolledBack checks that the old container is back, under its name, on
// v1 and running; the new one is gone; the reference names v1 again.
func (c *crashed) wantRolledBack(t *testing.T, note string) {
	t.Helper()
	if !strings.Contains(note, "rolled back") {
		t.Errorf("note = %q", note)
	}
	got, ok := containerNamed(t, c.name)
	if !ok || got.ID != c.oldID || got.Image != c.v1 || !got.State.Running {
		t.Errorf("%s after recovery = %+v, want the old container %s running on v1", c.name, got, c.oldID[:12])
	}
	if _, ok := containerNamed(t, c.newID); ok {
		t.Error("the new container is still there")
	}
	if _, ok := containerNamed(t, c.recoveryDetail.Aside); ok {
		t.Error("a container is still named aside")
	}
	if enginetest.ImageID(t, c.ref) != c.v1 {
		t.Error("the reference still names the new image")
	}
}

// Berth stopped while the new container was in its grace period: the
// update is rolled back.
func TestRecoverRollsBackAnUnprovenUpdate(t *testing.T) {
	c := newCrashed(t)
	c.wantRolledBack(t, c.recover(t, c.recoveryDetail))
}

// Berth stopped right after creating the new container, before recording
// its id: the container under the name, made from the same reference, is
// taken for it.
func TestRecoverFindsANewContainerItDidNotRecord(t *testing.T) {
	c := newCrashed(t)
	rec := c.recoveryDetail
	rec.NewContainer = ""
	c.wantRolledBack(t, c.recover(t, rec))
}

// Berth stopped after the new container proved itself, before the old one
// was removed: the update is completed.
func TestRecoverCompletesAProvenUpdate(t *testing.T) {
	c := newCrashed(t)
	rec := c.recoveryDetail
	rec.Proven = true
	if note := c.recover(t, rec); !strings.Contains(note, "completed") {
		t.Errorf("note = %q", note)
	}
	got, ok := containerNamed(t, c.name)
	if !ok || got.ID != c.newID || got.Image != c.v2 || !got.State.Running {
		t.Errorf("%s after recovery = %+v, want the new container running on v2", c.name, got)
	}
	if _, ok := containerNamed(t, c.oldID); ok {
		t.Error("the old container is still there")
	}
	if enginetest.ImageID(t, c.ref) != c.v2 {
		t.Error("the reference does not name the new image")
	}
	// Recovering again finds nothing left to do.
	if note := c.recover(t, rec); !strings.Contains(note, "nothing to put right") {
		t.Errorf("second recovery note = %q", note)
	}
}

// An execution that checkpointed no recovery detail left nothing to do.
func TestRecoverWithoutADetailDoesNothing(t *testing.T) {
	svc := New(Options{})
	for _, details := range []string{"", `{"reason":"x"}`, "not json"} {
		note, err := svc.Recover(t.Context(), store.Execution{Details: details})
		if note != "" || err != nil {
			t.Errorf("Recover(%q) = %q, %v", details, note, err)
		}
	}
}
