package helperimage

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"
)

// epoch is the time of every file and of the image: the same bytes give
// the same image.
var epoch = time.Unix(0, 0).UTC()

// Image is an image made by Build: a tarball the engine's image load API
// takes, and the ids it gets there.
type Image struct {
	Tarball []byte // "docker save" and OCI layout in one
	// IDs are the ids an engine may give the image: the digest of its
	// config (the classic image store), then of its manifest (the
	// containerd image store).
	IDs []string
}

// File is a file or directory of an image's layer, owned by root and
// dated epoch; Name is relative (no leading slash).
type File struct {
	Name string
	Dir  bool
	Mode int64
	Data []byte
}

// Spec is what Build puts in an image.
type Spec struct {
	Files      []File // the one layer's content, in order (directories before what they hold)
	Cmd        []string
	Labels     map[string]string
	Repository string // the repository of the tag that names the content, for people listing images
	CreatedBy  string // the history entry
}

// platform is an image platform in OCI terms.
type platform struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
	Variant      string `json:"variant,omitempty"`
}

// platforms are the architectures berth-helper is built for, by GOARCH;
// the arm build is GOARM=6, which ARMv7 runs too.
var platforms = map[string]platform{
	"amd64": {Architecture: "amd64", OS: "linux"},
	"arm64": {Architecture: "arm64", OS: "linux", Variant: "v8"},
	"arm":   {Architecture: "arm", OS: "linux", Variant: "v6"},
}

type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int               `json:"size"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Platform    *platform         `json:"platform,omitempty"`
}

// blob is the content of a file of blobs/sha256/.
type blob struct {
	digest string // sha256:<hex>
	data   []byte
}

func newBlob(data []byte) blob {
	sum := sha256.Sum256(data)
	return blob{digest: "sha256:" + hex.EncodeToString(sum[:]), data: data}
}

func (b blob) path() string { return "blobs/sha256/" + b.digest[len("sha256:"):] }

func (b blob) descriptor(mediaType string) descriptor {
	return descriptor{MediaType: mediaType, Digest: b.digest, Size: len(b.data)}
}

// build makes the image of program (berth-helper for p): one layer
// holding it at /berth-helper, labelled Label=Format, run as
// "/berth-helper idle" unless told otherwise.
func build(p platform, program []byte) (*Image, error) {
	return buildImage(p, Spec{
		Files: []File{{Name: Program[1:], Mode: 0o755, Data: program}},
		Cmd:   []string{Program, "idle"}, Labels: map[string]string{Label: Format},
		Repository: Repository, CreatedBy: "berth helper image",
	})
}

// Build makes the one-layer image s for the architecture arch (GOARCH),
// with fixed times: the same content gives the same image id.
func Build(arch string, s Spec) (*Image, error) {
	p, ok := platforms[arch]
	if !ok {
		return nil, fmt.Errorf("helperimage: no image platform for %q", arch)
	}
	return buildImage(p, s)
}

func buildImage(p platform, s Spec) (*Image, error) {
	content := make([]tarFile, 0, len(s.Files))
	for _, f := range s.Files {
		content = append(content, tarFile{name: f.Name, dir: f.Dir, mode: f.Mode, data: f.Data})
	}
	layer, err := tarOf(content)
	if err != nil {
		return nil, err
	}
	layerBlob := newBlob(layer)
	cfg := map[string]any{
		"architecture": p.Architecture, "os": p.OS,
		"created": epoch.Format(time.RFC3339),
		"config": map[string]any{
			"Cmd":        s.Cmd,
			"Labels":     s.Labels,
			"WorkingDir": "/",
		},
		"rootfs":  map[string]any{"type": "layers", "diff_ids": []string{layerBlob.digest}},
		"history": []map[string]string{{"created": epoch.Format(time.RFC3339), "created_by": s.CreatedBy}},
	}
	if p.Variant != "" {
		cfg["variant"] = p.Variant
	}
	config, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	configBlob := newBlob(config)
	manifest, err := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.oci.image.manifest.v1+json",
		"config":        configBlob.descriptor("application/vnd.oci.image.config.v1+json"),
		"layers":        []descriptor{layerBlob.descriptor("application/vnd.oci.image.layer.v1.tar")},
	})
	if err != nil {
		return nil, err
	}
	manifestBlob := newBlob(manifest)
	// The tag names the content, so that loading never moves it to
	// another image of Berth's.
	tag := configBlob.digest[len("sha256:") : len("sha256:")+12]
	md := manifestBlob.descriptor("application/vnd.oci.image.manifest.v1+json")
	md.Platform = &p
	md.Annotations = map[string]string{
		"io.containerd.image.name":          "docker.io/" + s.Repository + ":" + tag,
		"org.opencontainers.image.ref.name": tag,
	}
	index, err := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.oci.image.index.v1+json",
		"manifests":     []descriptor{md},
	})
	if err != nil {
		return nil, err
	}
	legacy, err := json.Marshal([]map[string]any{{
		"Config": configBlob.path(), "RepoTags": []string{s.Repository + ":" + tag}, "Layers": []string{layerBlob.path()},
	}})
	if err != nil {
		return nil, err
	}
	files := []tarFile{{name: "blobs/", dir: true}, {name: "blobs/sha256/", dir: true}}
	for _, b := range []blob{layerBlob, configBlob, manifestBlob} {
		files = append(files, tarFile{name: b.path(), mode: 0o444, data: b.data})
	}
	files = append(files,
		tarFile{name: "index.json", mode: 0o444, data: index},
		tarFile{name: "manifest.json", mode: 0o444, data: legacy},
		tarFile{name: "oci-layout", mode: 0o444, data: []byte(`{"imageLayoutVersion":"1.0.0"}`)})
	tarball, err := tarOf(files)
	if err != nil {
		return nil, err
	}
	return &Image{Tarball: tarball, IDs: []string{configBlob.digest, manifestBlob.digest}}, nil
}

type tarFile struct {
	name string
	dir  bool
	mode int64
	data []byte
}

// tarOf writes files, in order, owned by root, dated epoch.
func tarOf(files []tarFile) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		hdr := &tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.data)), ModTime: epoch,
			Typeflag: tar.TypeReg, Format: tar.FormatUSTAR}
		if f.dir {
			hdr.Typeflag, hdr.Size = tar.TypeDir, 0
			if f.mode == 0 {
				hdr.Mode = 0o755
			}
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
