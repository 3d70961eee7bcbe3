package engine_test

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/enginetest"
)

// TestRemoveStoppedPath removes paths from a stopped container's
// filesystem: a file and a directory the container wrote, a file of the
// image (its directory exists only in the image's layers, and keeps its
// mode and owner), a path under a symbolic link; then the container is
// started and sees what the engine shows. A running container is refused,
// and no helper container is left behind.
func TestRemoveStoppedPath(t *testing.T) {
	t.Parallel()
	c := localClient(t)
	label := newObjectLabel(t)
	// Started a second time the container tells by its exit code what it
	// sees: 3 /bin/cat, 4 /work/sub, 5 /work/keep, 6 /bin/sh missing.
	id := runContainer(t, c, label, engine.CreateSpec{Cmd: []string{"sh", "-c", `if [ -e /started ]; then
		[ -e /bin/cat ] && exit 3; [ -e /work/sub ] && exit 4; [ -e /work/keep ] && exit 5; [ -e /bin/sh ] || exit 6; exit 0
	fi
	touch /started && mkdir -p /work/sub && echo a > /work/a && echo b > /work/sub/b && echo keep > /work/keep && ln -s /work /lnk`}})
	waitExit(t, id)
	// Any image does for the helper here (it is never started); Berth
	// passes its own helper image's id.
	img := enginetest.ImageID(t, enginetest.Image())

	binBefore, err := c.StatPath(t.Context(), id, "/bin")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/work/a", "/work/sub", "/bin/cat"} {
		if err := c.RemoveStoppedPath(t.Context(), id, p, img); err != nil {
			t.Fatalf("RemoveStoppedPath(%s): %v", p, err)
		}
		if _, err := c.StatPath(t.Context(), id, p); !errors.Is(err, engine.ErrNotFound) {
			t.Fatalf("%s after removal: %v, want not found", p, err)
		}
	}
	// A path through the absolute link /lnk -> /work removes /work's entry.
	if err := c.RemoveStoppedPath(t.Context(), id, "/lnk/keep", img); err != nil {
		t.Fatal(err)
	}
	if _, err := c.StatPath(t.Context(), id, "/work/keep"); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("/work/keep after removal through the link: %v", err)
	}
	if st, err := c.StatPath(t.Context(), id, "/lnk"); err != nil || st.Mode&os.ModeSymlink == 0 {
		t.Fatalf("the link itself: %+v %v", st, err)
	}
	binAfter, err := c.StatPath(t.Context(), id, "/bin")
	if err != nil || binAfter.Mode != binBefore.Mode {
		t.Fatalf("/bin mode %v → %v (%v)", binBefore.Mode, binAfter.Mode, err)
	}
	if _, err := c.StatPath(t.Context(), id, "/bin/sh"); err != nil {
		t.Fatalf("/bin/sh must remain: %v", err)
	}
	if err := c.RemoveStoppedPath(t.Context(), id, "/", img); !errors.Is(err, engine.ErrInvalid) {
		t.Fatalf("removing the root: %v", err)
	}
	// The helper's image is given by id, never by a name anyone could give
	// another image.
	if err := c.RemoveStoppedPath(t.Context(), id, "/bin/ls", enginetest.Image()); !errors.Is(err, engine.ErrInvalid) {
		t.Fatalf("a helper image by name: %v, want ErrInvalid", err)
	}

	// The container, started, sees the same.
	if err := c.StartContainer(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	waitExit(t, id)
	if _, st, err := c.InspectContainer(t.Context(), id); err != nil || st.ExitCode != 0 {
		t.Fatalf("the started container saw otherwise: exit code %d (%v)", st.ExitCode, err)
	}

	// A running container is refused.
	running := runContainer(t, c, label, engine.CreateSpec{Cmd: []string{"sleep", "600"}})
	if err := c.RemoveStoppedPath(t.Context(), running, "/bin/cat", img); !errors.Is(err, engine.ErrConflict) {
		t.Fatalf("running container: %v, want ErrConflict", err)
	}
	if err := c.CheckStoppedRemoval(t.Context(), running, "/bin/cat"); !errors.Is(err, engine.ErrConflict) {
		t.Fatalf("CheckStoppedRemoval(running): %v", err)
	}
	if err := c.CheckStoppedRemoval(t.Context(), id, "/bin/sh"); err != nil {
		t.Fatalf("CheckStoppedRemoval(stopped): %v", err)
	}

	// A path on a volume is not in the container's layer: refused, and the
	// volume keeps it.
	vol := "berth-ov-" + label
	if _, err := c.CreateVolume(t.Context(), engine.VolumeSpec{Name: vol, Labels: map[string]string{enginetest.Label: label}}); err != nil {
		t.Fatal(err)
	}
	withVol := runContainer(t, c, label, engine.CreateSpec{Cmd: []string{"sh", "-c", "echo v > /data/v"}, Binds: []string{vol + ":/data"}})
	waitExit(t, withVol)
	for _, p := range []string{"/data/v", "/data"} {
		if err := c.RemoveStoppedPath(t.Context(), withVol, p, img); !errors.Is(err, engine.ErrOnMount) {
			t.Fatalf("RemoveStoppedPath(%s) on a volume: %v, want ErrOnMount", p, err)
		}
	}
	if _, err := c.StatPath(t.Context(), withVol, "/data/v"); err != nil {
		t.Fatalf("/data/v must remain: %v", err)
	}

	helpers, err := c.ContainersLabelled(t.Context(), map[string]string{engine.HelperLabel + ".container": id})
	if err != nil || len(helpers) != 0 {
		t.Fatalf("helpers left: %v %v", helpers, err)
	}
}

// A helper of a removal that Berth did not remove (it stopped meanwhile) is
// removed by a later sweep once it is older than FilesHelperStale; a recent
// one (a removal in progress) is kept.
func TestRemoveFilesHelpersRemovesLeftovers(t *testing.T) {
	t.Parallel()
	c := localClient(t)
	label := newObjectLabel(t)
	target := "leftover-" + label // only this test's helper is swept
	id, err := c.CreateHelper(t.Context(), engine.HelperSpec{Image: enginetest.ImageID(t, enginetest.Image()), Cmd: []string{"true"},
		Labels: map[string]string{engine.HelperLabel: "container-files", engine.HelperLabel + ".container": target,
			enginetest.Label: label}})
	if err != nil {
		t.Fatal(err)
	}
	only := map[string]string{engine.HelperLabel + ".container": target}
	if n := c.RemoveFilesHelpers(t.Context(), only, time.Now().Add(-engine.FilesHelperStale)); n != 0 {
		t.Fatalf("a recent helper was removed (%d)", n)
	}
	if left, _ := c.ContainersLabelled(t.Context(), only); len(left) != 1 || left[0] != id {
		t.Fatalf("helpers after the sweep of stale ones = %v, want the recent one", left)
	}
	// Seen from a minute later, it is a leftover.
	if n := c.RemoveFilesHelpers(t.Context(), only, time.Now().Add(time.Minute)); n != 1 {
		t.Fatalf("removed %d leftovers, want 1", n)
	}
	if left, err := c.ContainersLabelled(t.Context(), only); err != nil || len(left) != 0 {
		t.Fatalf("helpers left: %v %v", left, err)
	}
}
