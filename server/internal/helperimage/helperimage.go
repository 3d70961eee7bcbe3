// Package helperimage makes the image Berth's helper containers run, and
// puts it on engines. The image is Berth's own: one layer holding
// berth-helper (package helperbin, a static binary embedded in the server
// by the Makefile) at /berth-helper, labelled Label=Format, made in Go
// with fixed times so that the same program gives the same bytes. It is
// loaded through the engine's image load API (which works through agents)
// and used by its id, which the content fixes: the same on every engine.
// No image is ever picked by its name, which anyone who can load an image
// chooses.
package helperimage

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// What the image is.
const (
	// Program is where the image holds berth-helper.
	Program = "/berth-helper"
	// Label marks the image; its value is Format.
	Label = "berth.helper.image"
	// Format is the version of the image's layout (not of Berth: the
	// image changes only when berth-helper does).
	Format = "1"
	// Repository names the image's tag (the first 12 digits of its id),
	// for people listing images; Berth never uses the tag.
	Repository = "berth/helper"
)

// bin holds berth-helper-linux-<GOARCH> for each architecture, built by
// `make helper`; with only its .gitkeep, Berth starts but refuses helpers.
//
//go:embed all:bin
var bin embed.FS

// errNotBuilt is the refusal of a server built without `make`.
var errNotBuilt = fault.New(fault.Unavailable, "Helper image not built: run make")

// Set is the helper image of each architecture berth-helper was built for;
// it puts the image an engine needs on that engine. It is safe for
// concurrent use.
type Set struct {
	programs map[string][]byte // by GOARCH

	mu     sync.Mutex
	images map[string]*Image         // built on first use, by GOARCH
	arch   map[*engine.Client]string // an engine's GOARCH, asked once
}

// New returns the Set of the berth-helper programs given, by GOARCH
// ("amd64", "arm64", "arm"); other architectures are ignored.
func New(programs map[string][]byte) *Set {
	s := &Set{programs: map[string][]byte{}, images: map[string]*Image{}, arch: map[*engine.Client]string{}}
	for arch, p := range programs {
		if _, ok := platforms[arch]; ok && len(p) > 0 {
			s.programs[arch] = p
		}
	}
	return s
}

// Embedded returns the Set of the programs embedded in this binary (none
// when it was built without `make`).
func Embedded() *Set {
	programs := map[string][]byte{}
	for arch := range platforms {
		if p, err := bin.ReadFile("bin/berth-helper-linux-" + arch); err == nil {
			programs[arch] = p
		}
	}
	return New(programs)
}

// Built reports whether s holds a program for the architecture arch
// (GOARCH).
func (s *Set) Built(arch string) bool { return len(s.programs[arch]) > 0 }

// ID returns the id the helper image of arch (GOARCH) has on an engine
// with the classic image store (on one with the containerd store, the
// digest of its manifest).
func (s *Set) ID(arch string) (string, error) {
	im, err := s.image(arch)
	if err != nil {
		return "", err
	}
	return im.IDs[0], nil
}

// Program returns berth-helper for arch (GOARCH), for another image that
// holds it too.
func (s *Set) Program(arch string) ([]byte, error) {
	if len(s.programs) == 0 {
		return nil, errNotBuilt
	}
	p, ok := s.programs[arch]
	if !ok {
		return nil, fault.New(fault.Unavailable, fmt.Sprintf("No helper image for this engine's architecture (%s)", arch))
	}
	return p, nil
}

// Ensure returns the id of the helper image on c's engine, loading the
// image there first if the engine does not have it. The id is checked: an
// image the engine holds under another id is never used.
func (s *Set) Ensure(ctx context.Context, c *engine.Client) (string, error) {
	if len(s.programs) == 0 {
		return "", errNotBuilt
	}
	arch, err := s.Arch(ctx, c)
	if err != nil {
		return "", err
	}
	im, err := s.image(arch)
	if err != nil {
		return "", err
	}
	return Ensure(ctx, c, im, "Berth's helper image")
}

// load serialises the loads of Ensure.
var load sync.Mutex

// Ensure returns the id of im on c's engine, loading it there first if the
// engine does not have it; what names the image in an error. The id is
// checked: an image the engine holds under another id is never used.
func Ensure(ctx context.Context, c *engine.Client, im *Image, what string) (string, error) {
	if id, err := present(ctx, c, im); err != nil || id != "" {
		return id, err
	}
	load.Lock()
	defer load.Unlock()
	if id, err := present(ctx, c, im); err != nil || id != "" {
		return id, err
	}
	if err := c.LoadImage(ctx, bytes.NewReader(im.Tarball)); err != nil {
		return "", err
	}
	id, err := present(ctx, c, im)
	if err == nil && id == "" {
		err = fault.New(fault.Internal, "The engine did not load "+what+" under its id")
	}
	return id, err
}

// present returns the id of im on c's engine, "" if it is not there.
func present(ctx context.Context, c *engine.Client, im *Image) (string, error) {
	for _, id := range im.IDs {
		info, err := c.InspectImage(ctx, id)
		if errors.Is(err, engine.ErrNotFound) {
			continue
		}
		if err != nil {
			return "", err
		}
		if info.ID == id {
			return id, nil
		}
	}
	return "", nil
}

// image returns the image of arch, built on first use.
func (s *Set) image(arch string) (*Image, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if im, ok := s.images[arch]; ok {
		return im, nil
	}
	p, ok := s.programs[arch]
	if !ok {
		if len(s.programs) == 0 {
			return nil, errNotBuilt
		}
		return nil, fault.New(fault.Unavailable, fmt.Sprintf("No helper image for this engine's architecture (%s)", arch))
	}
	im, err := build(platforms[arch], p)
	if err != nil {
		return nil, fmt.Errorf("helperimage: building the %s image: %w", arch, err)
	}
	s.images[arch] = im
	return im, nil
}

// Arch returns the GOARCH of c's engine (asked once per client).
func (s *Set) Arch(ctx context.Context, c *engine.Client) (string, error) {
	s.mu.Lock()
	arch, ok := s.arch[c]
	s.mu.Unlock()
	if ok {
		return arch, nil
	}
	info, err := c.Info(ctx)
	if err != nil {
		return "", err
	}
	arch = GOARCH(info.Arch)
	s.mu.Lock()
	s.arch[c] = arch
	s.mu.Unlock()
	return arch, nil
}

// GOARCH is the Go name of an engine's architecture as its info tells it
// (uname's: x86_64, aarch64, armv7l…).
func GOARCH(engineArch string) string {
	a := strings.ToLower(engineArch)
	switch {
	case a == "x86_64" || a == "amd64":
		return "amd64"
	case a == "aarch64" || a == "arm64" || strings.HasPrefix(a, "armv8"):
		return "arm64"
	case strings.HasPrefix(a, "arm"):
		return "arm"
	}
	return a
}
