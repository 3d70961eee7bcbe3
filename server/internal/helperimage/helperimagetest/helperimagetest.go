// Package helperimagetest gives tests the helper image without `make`:
// berth-helper built now, from this checkout, for this machine's
// architecture (the one of the test engines).
package helperimagetest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/berth-dev/berth/server/internal/helperimage"
)

var (
	once  sync.Once
	built *helperimage.Set
	err   error
)

// Set returns the helper image set of berth-helper built for
// runtime.GOARCH (once per process; the go build cache makes it quick).
func Set() (*helperimage.Set, error) {
	once.Do(func() { built, err = build() })
	return built, err
}

func build() (*helperimage.Set, error) {
	dir, err := os.MkdirTemp("", "berth-helper-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "berth-helper")
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w", "-o", out,
		"github.com/berth-dev/berth/server/cmd/berth-helper")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH)
	if b, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("helperimagetest: building berth-helper: %w: %s", err, b)
	}
	program, err := os.ReadFile(out)
	if err != nil {
		return nil, err
	}
	return helperimage.New(map[string][]byte{runtime.GOARCH: program}), nil
}
