package engine_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/enginetest"
)

// newObjectLabel returns a unique label value; at cleanup the containers,
// then the networks and volumes carrying it are removed (in that order, as
// containers hold the others).
func newObjectLabel(t *testing.T) string {
	t.Helper()
	v := newLabel(t)
	t.Cleanup(func() {
		enginetest.RemoveLabelled(t, v)
		enginetest.RemoveLabelledNetworks(t, v)
		enginetest.RemoveLabelledVolumes(t, v)
	})
	return v
}

func TestVolumeCreateInspectListRemove(t *testing.T) {
	t.Parallel()
	c := localClient(t)
	label := newObjectLabel(t)
	name := "berth-vol-" + label
	spec := engine.VolumeSpec{
		Name: name, Driver: "local",
		DriverOpts: map[string]string{"type": "tmpfs", "device": "tmpfs", "o": "size=1m"},
		Labels:     map[string]string{enginetest.Label: label, "purpose": "test"},
	}
	created, err := c.CreateVolume(t.Context(), spec)
	if err != nil {
		t.Fatal(err)
	}
	want := engine.Volume{Name: name, Driver: "local", Mountpoint: created.Mountpoint, Scope: "local",
		CreatedAt: created.CreatedAt, Labels: spec.Labels, Options: spec.DriverOpts}
	if diff := cmp.Diff(want, created); diff != "" || created.Mountpoint == "" || created.CreatedAt == "" {
		t.Errorf("created volume (-want +got):\n%s", diff)
	}
	got, err := c.InspectVolume(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(created, got); diff != "" {
		t.Errorf("inspected volume (-created +inspected):\n%s", diff)
	}
	list, err := c.ListVolumes(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, v := range list {
		found = found || v.Name == name
		if v.Labels == nil || v.Options == nil {
			t.Errorf("listed volume %s has nil labels or options", v.Name)
		}
	}
	if !found {
		t.Errorf("volume %s not listed", name)
	}
	if err := c.RemoveVolume(t.Context(), name, false); err != nil {
		t.Fatal(err)
	}
	if _, err := c.InspectVolume(t.Context(), name); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("inspect after remove = %v, want ErrNotFound", err)
	}
	if err := c.RemoveVolume(t.Context(), name, false); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("second remove = %v, want ErrNotFound", err)
	}
}

// The engine's create returns an existing volume as if it had created it;
// CreateVolume refuses, and the existing volume is left as it was.
func TestVolumeCreateOfAnExistingNameIsAConflict(t *testing.T) {
	t.Parallel()
	c := localClient(t)
	label := newObjectLabel(t)
	name := "berth-dup-" + label
	first, err := c.CreateVolume(t.Context(), engine.VolumeSpec{Name: name, Labels: map[string]string{enginetest.Label: label}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.CreateVolume(t.Context(), engine.VolumeSpec{Name: name, Labels: map[string]string{enginetest.Label: label, "x": "y"},
		DriverOpts: map[string]string{"type": "tmpfs", "device": "tmpfs"}})
	var e *engine.Error
	if !errors.Is(err, engine.ErrConflict) || !errors.As(err, &e) || !strings.Contains(e.Msg, `"`+name+`" already exists`) {
		t.Fatalf("second create = %v, want ErrConflict naming the volume", err)
	}
	after, err := c.InspectVolume(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(first, after); diff != "" {
		t.Errorf("existing volume changed (-before +after):\n%s", diff)
	}
}

func TestVolumeInUseIsAConflictEvenWithForce(t *testing.T) {
	t.Parallel()
	c := localClient(t)
	label := newObjectLabel(t)
	name := "berth-used-" + label
	if _, err := c.CreateVolume(t.Context(), engine.VolumeSpec{Name: name, Labels: map[string]string{enginetest.Label: label}}); err != nil {
		t.Fatal(err)
	}
	id := createContainer(t, c, label, engine.CreateSpec{Cmd: []string{"true"}, Binds: []string{name + ":/data"}})
	for _, force := range []bool{false, true} {
		if err := c.RemoveVolume(t.Context(), name, force); !errors.Is(err, engine.ErrConflict) {
			t.Errorf("remove in-use volume (force %v) = %v, want ErrConflict", force, err)
		}
	}
	if _, err := c.InspectVolume(t.Context(), name); err != nil {
		t.Errorf("volume gone after refused removal: %v", err)
	}
	if err := c.RemoveContainer(t.Context(), id, true); err != nil {
		t.Fatal(err)
	}
	if err := c.RemoveVolume(t.Context(), name, false); err != nil {
		t.Errorf("remove after the container went: %v", err)
	}
}
