package engine_test

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
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
