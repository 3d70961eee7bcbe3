package engine_test

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/enginetest"
)

// TestHelperReadsAVolumeCreatedAndRunning fills a labelled volume, reads it
// through a created (never started) helper's archive, and through a running
// helper's exec output, binary bytes included; the helpers are found by
// their labels.
func TestHelperReadsAVolumeCreatedAndRunning(t *testing.T) {
	t.Parallel()
	c := localClient(t)
	label := newObjectLabel(t)
	vol := "berth-vc-" + label
	labels := map[string]string{enginetest.Label: label}
	if _, err := c.CreateVolume(t.Context(), engine.VolumeSpec{Name: vol, Labels: labels}); err != nil {
		t.Fatal(err)
	}
	out, err := c.Run(t.Context(), engine.RunSpec{Image: enginetest.Image(), Cmd: []string{"sh", "-c", `printf 'x\000y' > /d/f`},
		Binds: []string{vol + ":/d"}, Labels: labels})
	if err != nil || out.ExitCode != 0 {
		t.Fatalf("fill: %v %+v", err, out)
	}
	mount := engine.VolumeMount{Volume: vol, Target: "/volume", ReadOnly: true}
	img := enginetest.ImageID(t, enginetest.Image())
	// Helpers run an image given by id, never by a name.
	if _, err := c.CreateHelper(t.Context(), engine.HelperSpec{Image: enginetest.Image(), Cmd: []string{"true"},
		Mounts: []engine.VolumeMount{mount}, Labels: labels}); !errors.Is(err, engine.ErrInvalid) {
		t.Fatalf("a helper of an image by name: %v, want ErrInvalid", err)
	}

	created, err := c.CreateHelper(t.Context(), engine.HelperSpec{Image: img, Cmd: []string{"true"},
		Mounts: []engine.VolumeMount{mount}, Labels: labels})
	if err != nil {
		t.Fatal(err)
	}
	rc, _, err := c.CopyFrom(t.Context(), created, "/volume/f")
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(rc)
	if _, err := tr.Next(); err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(tr)
	rc.Close()
	if err != nil || !bytes.Equal(data, []byte("x\x00y")) {
		t.Errorf("archive of a created helper: %q %v, want x\\0y", data, err)
	}

	running, err := c.CreateHelper(t.Context(), engine.HelperSpec{Image: img, Cmd: []string{"sleep", "600"},
		Mounts: []engine.VolumeMount{mount}, Labels: labels, Start: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.ExecOutput(t.Context(), running, []string{"sh", "-c", "cat /volume/f; echo oops >&2"}, 1024)
	if err != nil || !bytes.Equal(got, []byte("x\x00y")) {
		t.Errorf("exec output = %q %v, want x\\0y (stderr left out)", got, err)
	}
	if _, err := c.ExecOutput(t.Context(), running, []string{"cat", "/volume/f"}, 2); !errors.Is(err, engine.ErrOutputTooLarge) {
		t.Errorf("exec output over the limit: err = %v, want ErrOutputTooLarge", err)
	}
	// The volume is mounted read-only.
	if got, _ := c.ExecOutput(t.Context(), running, []string{"sh", "-c", "echo z > /volume/g 2>/dev/null || printf ro"}, 64); string(got) != "ro" {
		t.Errorf("write into the helper's mount: %q, want refused", got)
	}

	ids, err := c.ContainersLabelled(t.Context(), labels)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(ids, created) || !slices.Contains(ids, running) {
		t.Errorf("labelled containers %v, want %s and %s among them", ids, created, running)
	}
}

func TestImageSaveStreamOfAMissingImageIsNotFound(t *testing.T) {
	t.Parallel()
	c := localClient(t)
	if _, err := c.ImageSaveStream(t.Context(), "berth-test/none-"+newLabel(t)+":1"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("err = %v, want ErrNotFound", err)
	}
	rc, err := c.ImageSaveStream(t.Context(), enginetest.Image())
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	found := false
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		found = found || h.Name == "manifest.json"
	}
	if !found {
		t.Error("no manifest.json in the saved image")
	}
}

// TestHelperBindsHostPathsAndJoinsTheHostNetwork runs helpers with a host
// path bound read-only (a missing one refused) or created, in the host's
// network or in none, and refuses a bind path that is not clean and
// absolute; WaitHelper answers the exit code.
func TestHelperBindsHostPathsAndJoinsTheHostNetwork(t *testing.T) {
	t.Parallel()
	c := localClient(t)
	label := newObjectLabel(t)
	labels := map[string]string{enginetest.Label: label}
	img := enginetest.ImageID(t, enginetest.Image())
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("host"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(spec engine.HelperSpec) (int64, error) {
		t.Helper()
		spec.Image, spec.Labels, spec.Start = img, labels, true
		id, err := c.CreateHelper(t.Context(), spec)
		if err != nil {
			return 0, err
		}
		defer c.RemoveContainer(context.WithoutCancel(t.Context()), id, true)
		return c.WaitHelper(t.Context(), id)
	}
	// Read-only: reading works, writing fails.
	code, err := run(engine.HelperSpec{Cmd: []string{"sh", "-c", `test "$(cat /h/f)" = host && ! echo x > /h/g`},
		Binds: []engine.BindMount{{Source: dir, Target: "/h", ReadOnly: true}}})
	if err != nil || code != 0 {
		t.Errorf("read-only bind: exit %d, %v", code, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "g")); err == nil {
		t.Error("a read-only bind was written")
	}
	// A missing source is refused, unless Create.
	missing := filepath.Join(dir, "new")
	if _, err := run(engine.HelperSpec{Cmd: []string{"true"}, Binds: []engine.BindMount{{Source: missing, Target: "/h"}}}); err == nil {
		t.Error("a bind of a missing host path was accepted")
	}
	code, err = run(engine.HelperSpec{Cmd: []string{"sh", "-c", "echo x > /h/g"}, Binds: []engine.BindMount{{Source: missing, Target: "/h", Create: true}}})
	if err != nil || code != 0 {
		t.Errorf("created bind: exit %d, %v", code, err)
	}
	if b, err := os.ReadFile(filepath.Join(missing, "g")); err != nil || string(b) != "x\n" {
		t.Errorf("created bind: %q %v", b, err)
	}
	// The host's network has the host's interfaces; none has only lo.
	hostLinks, err := run(engine.HelperSpec{Cmd: []string{"sh", "-c", "test $(ls /sys/class/net | wc -l) -gt 1"}, HostNetwork: true})
	if err != nil || hostLinks != 0 {
		t.Errorf("host network: exit %d, %v", hostLinks, err)
	}
	noLinks, err := run(engine.HelperSpec{Cmd: []string{"sh", "-c", "test $(ls /sys/class/net | wc -l) -eq 1"}})
	if err != nil || noLinks != 0 {
		t.Errorf("no network: exit %d, %v", noLinks, err)
	}
	for _, p := range []string{"relative", "/a/../b", "/a:b", "/a,b", ""} {
		if _, err := c.CreateHelper(t.Context(), engine.HelperSpec{Image: img, Cmd: []string{"true"}, Labels: labels,
			Binds: []engine.BindMount{{Source: p, Target: "/h"}}}); !errors.Is(err, engine.ErrInvalid) {
			t.Errorf("bind of %q: %v, want ErrInvalid", p, err)
		}
	}
	if code, err := run(engine.HelperSpec{Cmd: []string{"sh", "-c", "exit 7"}}); err != nil || code != 7 {
		t.Errorf("WaitHelper = %d, %v; want 7", code, err)
	}
}
