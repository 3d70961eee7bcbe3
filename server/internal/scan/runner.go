package scan

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/berth-dev/berth/shared/engine"
)

// Config tells how to run the scanners.
type Config struct {
	GrypePath     string // binary; "" looks for "grype" on PATH; none: run the image below on the engine
	TrivyPath     string // binary; "" looks for "trivy" on PATH
	GrypeDBDir    string // GRYPE_DB_CACHE_DIR ("" the tool's default)
	TrivyCacheDir string // trivy --cache-dir ("" the tool's default)
	Offline       bool   // never update the vulnerability databases (air-gapped hosts, tests)
	GrypeImage    string // container image for the engine-side run (default anchore/grype:v0.120.1)
	TrivyImage    string // default aquasec/trivy:0.74.0
	Timeout       time.Duration
	WorkDir       string // temporary image tarballs ("" the system's temp directory)
	// VolumePrefix starts the names of the volumes caching the scanners'
	// databases on the engines ("" for "berth-": berth-grype-db,
	// berth-trivy-db).
	VolumePrefix string
}

// Default container images and limits.
const (
	DefaultGrypeImage = "anchore/grype:v0.120.1"
	DefaultTrivyImage = "aquasec/trivy:0.74.0"
	DefaultTimeout    = 10 * time.Minute
)

// ErrScannerMissing reports a scanner that is neither installed nor
// available as an image on the environment.
var ErrScannerMissing = errors.New("scanner not available")

// tool is one scanner's way of running.
type tool struct {
	name    string // scanner_a / scanner_b
	label   string // Grype / Trivy
	binary  string
	image   string
	args    func(target string) []string // for a binary run on a tarball
	ctrArgs func(image string) []string  // for a container run against the engine
	env     []string
	parse   func([]byte) ([]Vulnerability, error)
}

func (cfg Config) tools() map[string]tool {
	grypeEnv := []string{"GRYPE_CHECK_FOR_APP_UPDATE=false"}
	if cfg.GrypeDBDir != "" {
		grypeEnv = append(grypeEnv, "GRYPE_DB_CACHE_DIR="+cfg.GrypeDBDir)
	}
	if cfg.Offline {
		grypeEnv = append(grypeEnv, "GRYPE_DB_AUTO_UPDATE=false", "GRYPE_DB_VALIDATE_AGE=false")
	}
	trivyFlags := []string{"--format", "json", "--scanners", "vuln", "--quiet", "--disable-telemetry", "--skip-version-check"}
	if cfg.TrivyCacheDir != "" {
		trivyFlags = append(trivyFlags, "--cache-dir", cfg.TrivyCacheDir)
	}
	if cfg.Offline {
		trivyFlags = append(trivyFlags, "--skip-db-update", "--skip-java-db-update", "--offline-scan")
	}
	return map[string]tool{
		ScannerA: {name: ScannerA, label: "Grype", binary: lookPath(cfg.GrypePath, "grype"), image: or(cfg.GrypeImage, DefaultGrypeImage),
			args:    func(tar string) []string { return []string{"docker-archive:" + tar, "-o", "json"} },
			ctrArgs: func(img string) []string { return []string{"docker:" + img, "-o", "json"} },
			env:     grypeEnv, parse: ParseGrype},
		ScannerB: {name: ScannerB, label: "Trivy", binary: lookPath(cfg.TrivyPath, "trivy"), image: or(cfg.TrivyImage, DefaultTrivyImage),
			args:    func(tar string) []string { return append([]string{"image", "--input", tar}, trivyFlags...) },
			ctrArgs: func(img string) []string { return append([]string{"image", img}, trivyFlags...) },
			env:     nil, parse: ParseTrivy},
	}
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// lookPath returns the configured binary, or the one named on PATH, or "".
func lookPath(configured, name string) string {
	if configured != "" {
		return configured
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	return ""
}

// run scans image (resolved on env's engine) with t and returns the raw
// report: with the binary (when it can run) on a saved tarball of the image, or else with the
// scanner's image as a container on the engine.
func (cfg Config) run(ctx context.Context, c *engine.Client, t tool, imageRef string) ([]byte, error) {
	if t.usableBinary() != "" {
		return cfg.runBinary(ctx, c, t, imageRef)
	}
	return cfg.runContainer(ctx, c, t, imageRef)
}

func (cfg Config) runBinary(ctx context.Context, c *engine.Client, t tool, imageRef string) ([]byte, error) {
	dir, err := os.MkdirTemp(cfg.WorkDir, "berth-scan-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	tar := filepath.Join(dir, "image.tar")
	f, err := os.OpenFile(tar, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	err = c.SaveImage(ctx, imageRef, f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, t.binary, t.args(tar)...)
	cmd.Env = append(os.Environ(), t.env...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%s failed: %v: %s", t.label, err, lastLine(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// runContainer runs the scanner image on the environment's engine with the
// engine socket mounted and a named volume caching its database.
func (cfg Config) runContainer(ctx context.Context, c *engine.Client, t tool, imageRef string) ([]byte, error) {
	if _, err := c.InspectImage(ctx, t.image); err != nil {
		if errors.Is(err, engine.ErrNotFound) {
			return nil, fmt.Errorf("%w: %s is not installed here and its image %s is not on this environment (pull it, or install the binary)",
				ErrScannerMissing, t.label, t.image)
		}
		return nil, err
	}
	cache := "/root/.cache"
	volume := cfg.cacheVolume(t)
	out, err := c.Run(ctx, engine.RunSpec{
		Image: t.image, Cmd: t.ctrArgs(imageRef), Env: t.env,
		Binds:  []string{engine.DefaultSocket + ":/var/run/docker.sock", volume + ":" + cache},
		Labels: map[string]string{"berth.scanner": t.name},
	})
	if err != nil {
		return nil, err
	}
	if out.ExitCode != 0 {
		return nil, fmt.Errorf("%s exited with %d: %s", t.label, out.ExitCode, lastLine(string(out.Stderr)))
	}
	return out.Stdout, nil
}

// cacheVolume is the volume caching t's database on an engine.
func (cfg Config) cacheVolume(t tool) string {
	return or(cfg.VolumePrefix, "berth-") + strings.ToLower(t.label) + "-db"
}

// lastLine is the last non-empty line of a tool's error output.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
