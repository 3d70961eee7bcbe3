package scan

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/berth-dev/berth/server/internal/jobs"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// Settings of an environment's scanning.
const (
	SettingNone = "none"
	SettingBoth = "both"
)

var (
	errImageRequired = fault.New(fault.Invalid, "Image name is required")
	errResults       = fault.New(fault.Internal, "Failed to get scan results")
)

// Service scans images and keeps the results.
type Service struct {
	engines *engine.Manager
	store   *store.Store
	log     *slog.Logger
	cfg     Config
	tools   map[string]tool
	now     func() time.Time

	slots  map[string]chan struct{} // one scan per scanner at a time
	flight singleflight.Group       // duplicate in-flight scans of one image coalesced

	notifier Notifier // nil: no notifications
}

// New returns a Service.
func New(engines *engine.Manager, st *store.Store, log *slog.Logger, cfg Config) *Service {
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	s := &Service{engines: engines, store: st, log: log, cfg: cfg, tools: cfg.tools(), now: time.Now,
		slots: map[string]chan struct{}{ScannerA: make(chan struct{}, 1), ScannerB: make(chan struct{}, 1)}}
	return s
}

func settingKey(envID int64) string { return "scanner.env." + strconv.FormatInt(envID, 10) }

// Setting returns an environment's scanner setting (none, scanner_a,
// scanner_b or both; none unless set).
func (s *Service) Setting(ctx context.Context, envID int64) (string, error) {
	v, err := s.store.GetSetting(ctx, settingKey(envID))
	if errors.Is(err, store.ErrNotFound) {
		return SettingNone, nil
	}
	return v, err
}

// SetSetting changes an environment's scanner setting.
func (s *Service) SetSetting(ctx context.Context, envID int64, v string) error {
	switch v {
	case SettingNone, ScannerA, ScannerB, SettingBoth:
	default:
		return fault.New(fault.Invalid, "scanner must be none, scanner_a, scanner_b or both")
	}
	return s.store.SetSetting(ctx, settingKey(envID), v)
}

// Availability tells how each scanner would run: "binary", or "container"
// (the scanner's image on the environment's engine).
func (s *Service) Availability() map[string]string {
	out := map[string]string{}
	for name, t := range s.tools {
		out[name] = "container"
		if t.usableBinary() != "" {
			out[name] = "binary"
		}
	}
	return out
}

// scannersFor returns the scanners a scan uses: the requested one, else the
// environment's setting.
func (s *Service) scannersFor(ctx context.Context, envID int64, requested string) ([]string, error) {
	setting := requested
	if setting == "" {
		var err error
		if setting, err = s.Setting(ctx, envID); err != nil {
			return nil, err
		}
	}
	switch setting {
	case ScannerA, ScannerB:
		return []string{setting}, nil
	case SettingBoth:
		return []string{ScannerA, ScannerB}, nil
	case SettingNone:
		if requested == "" {
			return nil, nil
		}
	}
	return nil, fault.New(fault.Invalid, "scanner must be scanner_a or scanner_b")
}

// CheckRequest validates a scan request before its job starts.
func (s *Service) CheckRequest(ctx context.Context, envID int64, image, scanner string) error {
	if strings.TrimSpace(image) == "" {
		return errImageRequired
	}
	if scanner != "" && scanner != ScannerA && scanner != ScannerB {
		return fault.New(fault.Invalid, "scanner must be scanner_a or scanner_b")
	}
	return nil
}

// stage is one scan-job event.
func stage(name, msg string, progress int) map[string]any {
	return map[string]any{"stage": name, "message": msg, "progress": progress}
}

// Scan runs a scan job with the scanners names (see Choose): stages
// scanning (0), analyzing, processing, then complete with result (the
// first) and results (all), or error.
func (s *Service) Scan(ctx context.Context, env store.Environment, image string, names []string, emit jobs.Emit) (string, any, bool) {
	emit("progress", stage("scanning", "Scanning "+image, 0))
	results, err := s.scanAll(ctx, env, image, names, func(i int, label string) {
		emit("progress", stage("analyzing", "Analyzing "+image+" with "+label, 10+70*i/len(names)))
	})
	if err != nil {
		return "result", map[string]any{"stage": "error", "message": "Scan failed", "error": err.Error()}, true
	}
	emit("progress", stage("processing", "Processing results", 90))
	return "result", map[string]any{"stage": "complete", "message": summaryMessage(results), "progress": 100,
		"result": results[0], "results": results}, false
}

// ScanAfterPull scans a pulled image when env's setting asks for it, with
// the pull job's events (spec: scanning, scan-progress, scan-complete).
func (s *Service) ScanAfterPull(ctx context.Context, env store.Environment, image string, emit jobs.Emit) bool {
	names, err := s.scannersFor(ctx, env.ID, "")
	if err != nil || len(names) == 0 {
		return false
	}
	emit("progress", map[string]any{"status": "scanning", "message": "Scanning " + image + " for vulnerabilities"})
	results, err := s.scanAll(ctx, env, image, names, func(i int, label string) {
		emit("progress", map[string]any{"status": "scan-progress", "stage": "analyzing",
			"message": "Analyzing with " + label, "progress": 10 + 80*i/len(names)})
	})
	if err != nil {
		emit("progress", map[string]any{"status": "scan-progress", "stage": "error", "message": "Scan failed: " + err.Error(), "progress": 100})
		return true
	}
	emit("progress", map[string]any{"status": "scan-complete", "message": summaryMessage(results), "results": results})
	return true
}

// scanAll runs the scanners one after the other and stores each result.
func (s *Service) scanAll(ctx context.Context, env store.Environment, image string, names []string, progress func(int, string)) ([]Result, error) {
	c, err := s.engines.Client(ctx, env.Endpoint())
	if err != nil {
		return nil, fmt.Errorf("environment is offline: %w", err)
	}
	info, err := c.InspectImage(ctx, image)
	if err != nil {
		if errors.Is(err, engine.ErrNotFound) {
			return nil, fmt.Errorf("image %s not found on this environment", image)
		}
		return nil, err
	}
	name := image
	if strings.HasPrefix(image, "sha256:") && len(info.RepoTags) > 0 {
		name = info.RepoTags[0]
	}
	var results []Result
	for i, n := range names {
		progress(i, s.tools[n].label)
		r, err := s.scanOne(ctx, env, c, n, info.ID, name)
		if err != nil {
			return nil, err
		}
		results = append(results, r)
	}
	return results, nil
}

// scanOne runs one scanner on one image, at most one scan per scanner at a
// time; concurrent requests for the same image and scanner share one run.
func (s *Service) scanOne(ctx context.Context, env store.Environment, c *engine.Client, scanner, imageID, name string) (Result, error) {
	key := fmt.Sprintf("%d|%s|%s", env.ID, scanner, imageID)
	v, err, _ := s.flight.Do(key, func() (any, error) {
		// The shared run must not die with the first requester's context.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.Timeout)
		defer cancel()
		slot := s.slots[scanner]
		select {
		case slot <- struct{}{}:
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for %s: %w", s.tools[scanner].label, ctx.Err())
		}
		defer func() { <-slot }()
		start := s.now()
		raw, err := s.cfg.run(ctx, c, s.tools[scanner], imageID)
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				return nil, fmt.Errorf("%s did not finish within %v", s.tools[scanner].label, s.cfg.Timeout)
			}
			return nil, err
		}
		vulns, err := s.tools[scanner].parse(raw)
		if err != nil {
			return nil, err
		}
		end := s.now()
		r := Result{ImageID: imageID, ImageName: name, Scanner: scanner, ScannedAt: end.UTC(),
			ScanDuration: end.Sub(start).Milliseconds(), Summary: summarize(vulns), Vulnerabilities: vulns}
		data, _ := json.Marshal(r)
		rec := store.ScanRecord{EnvironmentID: env.ID, ImageID: imageID, ImageName: name, Scanner: scanner,
			ScannedAt: r.ScannedAt, Result: string(data)}
		if err := s.store.AddScanResult(ctx, &rec); err != nil {
			return nil, fmt.Errorf("store scan result: %w", err)
		}
		s.notifyFindings(env.ID, r)
		return r, nil
	})
	if err != nil {
		return Result{}, err
	}
	return v.(Result), nil
}

func summaryMessage(results []Result) string {
	parts := make([]string, 0, len(results))
	for _, r := range results {
		sm := r.Summary
		parts = append(parts, fmt.Sprintf("%s: %d vulnerabilities (%d critical, %d high)", r.Scanner, sm.Total(), sm.Critical, sm.High))
	}
	return "Scan complete — " + strings.Join(parts, "; ")
}

// Latest returns the newest stored result of image (name or id) on env,
// optionally of one scanner.
func (s *Service) Latest(ctx context.Context, envID int64, image, scanner string) (Result, bool, error) {
	if strings.TrimSpace(image) == "" {
		return Result{}, false, errImageRequired
	}
	rec, err := s.store.LatestScanResult(ctx, envID, image, scanner)
	if errors.Is(err, store.ErrNotFound) {
		return Result{}, false, nil
	}
	if err != nil {
		return Result{}, false, fault.Wrap(fault.Internal, errResults.Message, err)
	}
	var r Result
	if err := json.Unmarshal([]byte(rec.Result), &r); err != nil {
		return Result{}, false, fault.Wrap(fault.Internal, errResults.Message, err)
	}
	return r, true, nil
}

// Enabled reports whether an environment scans images (its setting is not
// none).
func (s *Service) Enabled(ctx context.Context, envID int64) bool {
	setting, err := s.Setting(ctx, envID)
	return err == nil && setting != SettingNone
}

// ScanImage scans image on env with the environment's scanners and stores
// the results; scanned is false when the environment does not scan.
func (s *Service) ScanImage(ctx context.Context, env store.Environment, image string) (results []Result, scanned bool, err error) {
	names, err := s.scannersFor(ctx, env.ID, "")
	if err != nil || len(names) == 0 {
		return nil, false, err
	}
	results, err = s.scanAll(ctx, env, image, names, func(int, string) {})
	if err != nil {
		return nil, true, err
	}
	return results, true, nil
}

// Stored returns the newest stored result of image (an id or a name) on
// env from each of the environment's scanners that has one.
func (s *Service) Stored(ctx context.Context, env store.Environment, image string) ([]Result, error) {
	names, err := s.scannersFor(ctx, env.ID, "")
	if err != nil {
		return nil, err
	}
	var out []Result
	for _, n := range names {
		r, found, err := s.Latest(ctx, env.ID, image, n)
		if err != nil {
			return nil, err
		}
		if found {
			out = append(out, r)
		}
	}
	return out, nil
}

// ScanAllResult is the final payload of a scan of several images.
type ScanAllResult struct {
	Stage   string          `json:"stage"` // complete, or error when no image could be scanned
	Message string          `json:"message"`
	Total   int             `json:"total"`
	Scanned int             `json:"scanned"`
	Failed  []ScanAllFailed `json:"failed"`
	Summary Summary         `json:"summary"` // of the newest results of the images scanned, every scanner's
}

// ScanAllFailed is an image a scan of several could not scan.
type ScanAllFailed struct {
	Image string `json:"image"`
	Error string `json:"error"`
}

// ScanImages scans images on env one after the other with the scanners
// names (see Choose), emitting a progress event per image ({stage, image,
// index, total, progress}) and ending with a ScanAllResult. A failed image is reported and the others
// scanned; the job fails only when every image failed.
func (s *Service) ScanImages(ctx context.Context, env store.Environment, names, images []string, emit jobs.Emit) (string, any, bool) {
	out := ScanAllResult{Stage: "complete", Total: len(images), Failed: []ScanAllFailed{}}
	for i, image := range images {
		if ctx.Err() != nil {
			out.Failed = append(out.Failed, ScanAllFailed{Image: image, Error: ctx.Err().Error()})
			continue
		}
		emit("progress", map[string]any{"stage": "scanning", "image": image, "index": i + 1, "total": len(images),
			"progress": 100 * i / max(len(images), 1), "message": fmt.Sprintf("Scanning %s (%d of %d)", image, i+1, len(images))})
		results, err := s.scanAll(ctx, env, image, names, func(int, string) {})
		if err != nil {
			out.Failed = append(out.Failed, ScanAllFailed{Image: image, Error: err.Error()})
			emit("progress", map[string]any{"stage": "image-error", "image": image, "index": i + 1, "total": len(images),
				"error": err.Error()})
			continue
		}
		out.Scanned++
		var all []Vulnerability
		for _, r := range results {
			all = append(all, r.Vulnerabilities...)
		}
		sm := summarize(all)
		out.Summary = addSummary(out.Summary, sm)
		emit("progress", map[string]any{"stage": "image-complete", "image": image, "index": i + 1, "total": len(images),
			"progress": 100 * (i + 1) / max(len(images), 1), "summary": sm})
	}
	out.Message = fmt.Sprintf("Scanned %d of %d images", out.Scanned, out.Total)
	failed := out.Scanned == 0 && out.Total > 0
	if failed {
		out.Stage = "error"
	}
	return "result", out, failed
}

func addSummary(a, b Summary) Summary {
	return Summary{Critical: a.Critical + b.Critical, High: a.High + b.High, Medium: a.Medium + b.Medium,
		Low: a.Low + b.Low, Negligible: a.Negligible + b.Negligible, Unknown: a.Unknown + b.Unknown}
}
