package scan

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/berth-dev/berth/server/internal/hostpath"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// ScannerNames maps the names clients use for the scanners (grype, trivy,
// and Berth's own) to Berth's; "" is both.
func ScannerNames(name string) ([]string, error) {
	switch name {
	case "":
		return []string{ScannerA, ScannerB}, nil
	case "grype", ScannerA:
		return []string{ScannerA}, nil
	case "trivy", ScannerB:
		return []string{ScannerB}, nil
	}
	return nil, fault.Invalidf("Invalid scanner %q: grype or trivy (scanner_a, scanner_b), or none for both", name)
}

// Removal is what RemoveScanners did: the scanners whose image went, and
// the failures ("<scanner>: <error>").
type Removal struct {
	Removed []string `json:"removed"`
	Errors  []string `json:"errors,omitempty"`
}

// RemoveScanners removes the images of the scanners names (Berth's names)
// from env's engine, and the volumes caching their databases there.
func (s *Service) RemoveScanners(ctx context.Context, env store.Environment, names []string) (Removal, error) {
	out := Removal{Removed: []string{}}
	c, err := s.engines.Client(ctx, env.Endpoint())
	if err != nil {
		return out, fault.Wrap(fault.Internal, "Failed to remove the scanner images", err)
	}
	images, err := c.ListImages(ctx)
	if err != nil {
		return out, fault.Wrap(fault.Internal, "Failed to remove the scanner images", err)
	}
	for _, n := range names {
		t := s.tools[n]
		repo, _, _ := strings.Cut(t.image, ":")
		i := slices.IndexFunc(images, func(im engine.Image) bool {
			return slices.ContainsFunc(im.RepoTags, func(tag string) bool { return tag == t.image || strings.HasPrefix(tag, repo+":") })
		})
		if i >= 0 {
			if _, err := c.RemoveImage(ctx, images[i].ID, true); err != nil && !errors.Is(err, engine.ErrNotFound) {
				out.Errors = append(out.Errors, strings.ToLower(t.label)+": "+err.Error())
			} else {
				out.Removed = append(out.Removed, strings.ToLower(t.label))
			}
		}
		if err := c.RemoveVolume(ctx, s.cfg.cacheVolume(t), true); err != nil && !errors.Is(err, engine.ErrNotFound) {
			out.Errors = append(out.Errors, strings.ToLower(t.label)+" database: "+err.Error())
		}
	}
	return out, nil
}

// Cleared is what ClearCache removed, and the environments it could not
// reach.
type Cleared struct {
	RemovedVolumes      []string `json:"removedVolumes"`
	RemovedDirs         []string `json:"removedDirs"`
	SkippedEnvironments []string `json:"skippedEnvironments"`
}

// ClearCache removes the scanners' vulnerability databases: the volumes
// caching them on every environment's engine (one that cannot be reached,
// or whose volume is in use by a scan, is skipped) and the database
// directories configured for the installed scanners (GRYPE_DB_DIR,
// TRIVY_CACHE_DIR), unless one holds keep (Berth's data directory). The
// next scan downloads them again.
func (s *Service) ClearCache(ctx context.Context, keep string) (Cleared, error) {
	out := Cleared{RemovedVolumes: []string{}, RemovedDirs: []string{}, SkippedEnvironments: []string{}}
	envs, err := s.store.ListEnvironments(ctx)
	if err != nil {
		return out, err
	}
	for _, env := range envs {
		c, err := s.engines.Client(ctx, env.Endpoint())
		if err != nil {
			out.SkippedEnvironments = append(out.SkippedEnvironments, env.Name)
			continue
		}
		skipped := false
		for _, n := range []string{ScannerA, ScannerB} {
			v := s.cfg.cacheVolume(s.tools[n])
			err := c.RemoveVolume(ctx, v, false)
			switch {
			case err == nil:
				if !slices.Contains(out.RemovedVolumes, v) {
					out.RemovedVolumes = append(out.RemovedVolumes, v)
				}
			case errors.Is(err, engine.ErrNotFound):
			default:
				s.log.Warn("scanner cache volume not removed", "environment", env.Name, "volume", v, "err", err)
				skipped = true
			}
		}
		if skipped {
			out.SkippedEnvironments = append(out.SkippedEnvironments, env.Name)
		}
	}
	for _, dir := range []string{s.cfg.GrypeDBDir, s.cfg.TrivyCacheDir} {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		if filepath.Clean(dir) == "/" || keep != "" && hostpath.Within(filepath.Clean(dir), keep) {
			s.log.Warn("scanner database directory not cleared: it holds Berth's data directory", "dir", dir)
			continue
		}
		if _, err := os.Stat(dir); err != nil {
			continue
		}
		if err := clearDir(dir); err != nil {
			return out, fault.Wrap(fault.Internal, "Failed to clear scanner cache", err)
		}
		out.RemovedDirs = append(out.RemovedDirs, dir)
	}
	return out, nil
}

// clearDir removes what dir holds, keeping dir (it may be a mount point).
func clearDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}
