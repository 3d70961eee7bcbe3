// Package autoupdate provides container auto-update: the configuration of a
// container's schedule, the update itself — a newer image found by its
// registry digest, pulled by digest without moving the container's tag,
// scanned when the environment scans, blocked by the vulnerability criteria
// or applied by recreating the container from its full configuration, kept
// only if the new container stays up (otherwise the old one is restored) —
// and the environment update check that records pending updates.
package autoupdate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"time"

	"github.com/berth-dev/berth/server/internal/images"
	"github.com/berth-dev/berth/server/internal/scan"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// Progress receives what an update does: log lines and details (a
// schedule.Run provides it). Checkpoint saves them at once, so that a
// server that stops in the middle finds them again (see Recover).
type Progress interface {
	Logf(format string, args ...any)
	Detail(key string, v any)
	Clear(key string)
	Checkpoint(ctx context.Context) error
}

// Options configure a Service.
type Options struct {
	Engines *engine.Manager
	Store   *store.Store
	Images  *images.Service
	Scan    *scan.Service
	Log     *slog.Logger
	// Grace is how long a new container must stay up (and not turn
	// unhealthy) before the old one is removed (default 30 s).
	Grace time.Duration
	// HealthTimeout is how much longer a container with a health check may
	// stay "starting" after Grace (default 2 minutes).
	HealthTimeout time.Duration
	// Poll is how often the new container is inspected meanwhile (default 1 s).
	Poll time.Duration
}

// Service updates containers.
type Service struct {
	engines       *engine.Manager
	store         *store.Store
	images        *images.Service
	scan          *scan.Service
	log           *slog.Logger
	grace         time.Duration
	healthTimeout time.Duration
	poll          time.Duration
	now           func() time.Time
	notifier      Notifier // nil: no notifications
	// schedulesChanged is called after an orphaned auto-update is removed.
	schedulesChanged func(context.Context)
}

// Defaults of Options.
const (
	DefaultGrace         = 30 * time.Second
	DefaultHealthTimeout = 2 * time.Minute
	DefaultPoll          = time.Second
)

// New returns a Service.
func New(o Options) *Service {
	s := &Service{engines: o.Engines, store: o.Store, images: o.Images, scan: o.Scan, log: o.Log, grace: o.Grace,
		healthTimeout: o.HealthTimeout, poll: o.Poll, now: time.Now}
	if s.grace <= 0 {
		s.grace = DefaultGrace
	}
	if s.healthTimeout <= 0 {
		s.healthTimeout = DefaultHealthTimeout
	}
	if s.poll <= 0 {
		s.poll = DefaultPoll
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	return s
}

// Outcome is what an update did. Skipped (with its reason) covers an update
// blocked by the vulnerability criteria and a container of a running stack.
type Outcome struct {
	UpToDate       bool
	Updated        bool
	Skipped        string
	NewContainerID string
	NewImageID     string
}

// ProjectLabel is the label compose puts on a stack's containers.
const ProjectLabel = "com.docker.compose.project"

// imageID is the form of a bare image id.
var imageID = regexp.MustCompile(`^(sha256:)?[0-9a-f]{12,64}$`)

// pinned reports whether a container names its image by digest or by id
// (a prefix of its image's id): there is nothing newer to look for.
func pinned(ref, id string) bool {
	if strings.Contains(ref, "@") {
		return true
	}
	short := strings.TrimPrefix(ref, "sha256:")
	return imageID.MatchString(ref) && strings.HasPrefix(strings.TrimPrefix(id, "sha256:"), short)
}

// ErrContainerGone is in the error of an update whose container does not
// exist on its engine (removed outside Berth).
var ErrContainerGone = errors.New("the container does not exist")

// Update brings container name of env to the newest image of its
// reference. criteria decides, when the environment scans, whether a
// vulnerable new image is refused.
func (s *Service) Update(ctx context.Context, env store.Environment, name, criteria string, p Progress) (Outcome, error) {
	c, err := s.engines.Client(ctx, env.Endpoint())
	if err != nil {
		return Outcome{}, engineFault("reach the environment", env, err)
	}
	cfg, err := c.InspectConfig(ctx, name)
	if err != nil {
		if errors.Is(err, engine.ErrNotFound) {
			return Outcome{}, fault.Wrap(fault.NotFound, "Container not found", errors.Join(ErrContainerGone, err)).WithDetails(name)
		}
		return Outcome{}, engineFault("inspect the container", env, err)
	}
	p.Detail("containerId", cfg.ID)
	p.Detail("image", cfg.Image)
	p.Detail("previousImageId", cfg.ImageID)

	if project := cfg.Labels[ProjectLabel]; project != "" {
		running, err := stackRunning(ctx, c, project)
		if err != nil {
			return Outcome{}, engineFault("list the stack's containers", env, err)
		}
		if running {
			return Outcome{Skipped: fmt.Sprintf("the container belongs to the running stack %q: update the stack instead", project)}, nil
		}
	}
	if pinned(cfg.Image, cfg.ImageID) {
		return Outcome{Skipped: fmt.Sprintf("the container's image %s is pinned to a digest or id", cfg.Image)}, nil
	}

	ref := images.PullReference(cfg.Image)
	creds, err := s.images.CredentialsFor(ctx, ref)
	if err != nil {
		return Outcome{}, err
	}
	p.Logf("Checking %s for a newer image", ref)
	remote, err := c.RegistryDigest(ctx, ref, creds)
	if err != nil {
		return Outcome{}, fault.Wrap(fault.Internal, "Failed to check the registry for a newer image", err).WithDetails(engine.Details(err))
	}
	p.Detail("registryDigest", remote)
	cur, err := c.InspectImage(ctx, cfg.ImageID)
	if err != nil && !errors.Is(err, engine.ErrNotFound) {
		return Outcome{}, engineFault("inspect the running image", env, err)
	}
	if hasDigest(cur.RepoDigests, remote) {
		p.Logf("Up to date: the running image is %s", remote)
		p.Detail("updateAvailable", false)
		return Outcome{UpToDate: true}, nil
	}
	p.Detail("updateAvailable", true)

	// Pulled by digest: the container's tag keeps naming the running image
	// until the update is applied.
	byDigest := repository(ref) + "@" + remote
	p.Logf("Pulling %s", byDigest)
	if err := c.PullImage(ctx, byDigest, creds, func(engine.Progress) {}); err != nil {
		return Outcome{}, fault.Wrap(fault.Internal, "Failed to pull the new image", err).WithDetails(engine.Details(err))
	}
	next, err := c.InspectImage(ctx, byDigest)
	if err != nil {
		return Outcome{}, engineFault("inspect the new image", env, err)
	}
	p.Detail("newImageId", next.ID)
	if next.ID == cfg.ImageID {
		p.Logf("Up to date: the registry's image is the running one")
		p.Detail("updateAvailable", false)
		return Outcome{UpToDate: true}, nil
	}

	if reason, err := s.vet(ctx, env, cfg.ImageID, byDigest, criteria, p); err != nil {
		return Outcome{}, err
	} else if reason != "" {
		// The pulled image is not kept: nothing uses it.
		if _, err := c.RemoveImage(context.WithoutCancel(ctx), next.ID, false); err != nil {
			p.Logf("The refused image %s stays on the engine: %s", next.ID, engine.Details(err))
		}
		return Outcome{Skipped: "blocked: " + reason, NewImageID: next.ID}, nil
	}

	id, err := s.recreate(ctx, env.ID, c, cfg, ref, next.ID, p, recreateOptions{})
	if err != nil {
		return Outcome{}, err
	}
	if _, err := s.store.DeletePendingUpdate(context.WithoutCancel(ctx), env.ID, cfg.Name); err != nil {
		p.Logf("The pending update record stays: %v", err)
	}
	return Outcome{Updated: true, NewContainerID: id, NewImageID: next.ID}, nil
}

// vet scans the new image when the environment scans and applies criteria;
// it returns why the update is blocked, or "". With criteria never a failed
// scan is only logged; with any other, it fails the update (an unscanned
// image is not let through).
func (s *Service) vet(ctx context.Context, env store.Environment, currentID, next, criteria string, p Progress) (string, error) {
	if s.scan == nil || !s.scan.Enabled(ctx, env.ID) {
		p.Logf("Scanning is off in this environment: the vulnerability criteria do not apply")
		return "", nil
	}
	p.Logf("Scanning the new image")
	results, _, err := s.scan.ScanImage(ctx, env, next)
	if err != nil {
		if criteria == Never {
			p.Logf("The scan of the new image failed (%v); criteria never: updating anyway", err)
			return "", nil
		}
		return "", fault.Wrap(fault.Internal, "The scan of the new image failed", err).WithDetails(err.Error())
	}
	worst := Worst(results)
	p.Detail("newImageVulnerabilities", worst)
	p.Logf("New image: %d vulnerabilities (%d critical, %d high)", worst.Total(), worst.Critical, worst.High)
	var current *scan.Summary
	if criteria == MoreThanCurrent {
		stored, err := s.scan.Stored(ctx, env, currentID)
		if err != nil {
			return "", err
		}
		if len(stored) > 0 {
			w := Worst(stored)
			current = &w
			p.Detail("currentImageVulnerabilities", w)
		} else {
			p.Logf("The running image has no scan data: more_than_current lets the update through")
		}
	}
	return Blocked(criteria, worst, current), nil
}

// stackRunning reports whether any container of compose project is running.
func stackRunning(ctx context.Context, c *engine.Client, project string) (bool, error) {
	list, err := c.ListContainers(ctx, false)
	if err != nil {
		return false, err
	}
	for _, ct := range list {
		if ct.Labels[ProjectLabel] == project && ct.State == "running" {
			return true, nil
		}
	}
	return false, nil
}

// hasDigest reports whether one of the repo digests ("name@sha256:…") is digest.
func hasDigest(repoDigests []string, digest string) bool {
	for _, rd := range repoDigests {
		if _, d, ok := strings.Cut(rd, "@"); ok && d == digest {
			return true
		}
	}
	return false
}

// repository is ref without its tag.
func repository(ref string) string {
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		return ref[:i]
	}
	return ref
}

// engineFault is the fault of a failed engine step.
func engineFault(step string, env store.Environment, err error) error {
	if env.ConnectionType == engine.AgentEdge && (engine.IsOffline(err) || errors.Is(err, engine.ErrAgentAbsent)) {
		return fault.Wrap(fault.Internal, "Edge agent not connected", err)
	}
	return fault.Wrap(fault.Internal, "Failed to "+step, err).WithDetails(engine.Details(err))
}
