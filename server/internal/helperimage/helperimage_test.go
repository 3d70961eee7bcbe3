package helperimage

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"testing"

	"github.com/berth-dev/berth/shared/fault"
)

// TestImageIsTheSameBytesEveryTime: the image is a function of the
// program: built twice (two Sets, as two servers would) it is the same
// tarball, its id is the digest of its config, and its manifest.json and
// index.json name blobs it holds.
func TestImageIsTheSameBytesEveryTime(t *testing.T) {
	program := []byte("\x7fELF not really a program")
	a, err := build(platforms["amd64"], program)
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(map[string][]byte{"amd64": program}).image("amd64")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Tarball, b.Tarball) || a.IDs[0] != b.IDs[0] {
		t.Fatalf("two builds differ: ids %v and %v", a.IDs, b.IDs)
	}
	other, err := build(platforms["amd64"], append(program, '!'))
	if err != nil {
		t.Fatal(err)
	}
	if other.IDs[0] == a.IDs[0] {
		t.Errorf("another program gives the same id %s", a.IDs[0])
	}

	files := map[string][]byte{}
	tr := tar.NewReader(bytes.NewReader(a.Tarball))
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		files[hdr.Name] = data
	}
	var legacy []struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	if err := json.Unmarshal(files["manifest.json"], &legacy); err != nil || len(legacy) != 1 || len(legacy[0].Layers) != 1 {
		t.Fatalf("manifest.json = %s (%v)", files["manifest.json"], err)
	}
	config := files[legacy[0].Config]
	sum := sha256.Sum256(config)
	if id := "sha256:" + hex.EncodeToString(sum[:]); id != a.IDs[0] {
		t.Errorf("config digest %s, id %s", id, a.IDs[0])
	}
	var cfg struct {
		Architecture string
		Config       struct {
			Cmd    []string
			Labels map[string]string
		}
		RootFS struct {
			DiffIDs []string `json:"diff_ids"`
		}
	}
	if err := json.Unmarshal(config, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Architecture != "amd64" || cfg.Config.Labels[Label] != Format || len(cfg.Config.Cmd) != 2 || cfg.Config.Cmd[0] != Program {
		t.Errorf("config = %s", config)
	}
	layer := files[legacy[0].Layers[0]]
	lsum := sha256.Sum256(layer)
	if len(cfg.RootFS.DiffIDs) != 1 || cfg.RootFS.DiffIDs[0] != "sha256:"+hex.EncodeToString(lsum[:]) {
		t.Errorf("diff_ids %v do not name the layer", cfg.RootFS.DiffIDs)
	}
	lt := tar.NewReader(bytes.NewReader(layer))
	hdr, err := lt.Next()
	if err != nil || hdr.Name != Program[1:] || hdr.Mode != 0o755 {
		t.Fatalf("layer's first entry = %+v, %v", hdr, err)
	}
	if got, _ := io.ReadAll(lt); !bytes.Equal(got, program) {
		t.Errorf("the layer does not hold the program")
	}
	var index struct {
		Manifests []struct{ Digest string }
	}
	if err := json.Unmarshal(files["index.json"], &index); err != nil || len(index.Manifests) != 1 ||
		index.Manifests[0].Digest != a.IDs[1] || files["blobs/sha256/"+a.IDs[1][len("sha256:"):]] == nil {
		t.Errorf("index.json = %s (%v), want the manifest %s", files["index.json"], err, a.IDs[1])
	}
}

func TestWithoutProgramsHelpersAreRefused(t *testing.T) {
	s := New(nil)
	_, err := s.Ensure(t.Context(), nil)
	if f, ok := fault.As(err); !ok || f.Kind != fault.Unavailable || f.Message != "Helper image not built: run make" {
		t.Errorf("Ensure without programs = %v, want 503 Helper image not built: run make", err)
	}
}

func TestGOARCH(t *testing.T) {
	for in, want := range map[string]string{"x86_64": "amd64", "aarch64": "arm64", "arm64": "arm64", "armv7l": "arm", "armv6l": "arm", "s390x": "s390x"} {
		if got := GOARCH(in); got != want {
			t.Errorf("GOARCH(%s) = %s, want %s", in, got, want)
		}
	}
}
