// Package images provides image operations on an environment's engine —
// list, pull, push, tag, remove, history, prune — with registry credentials
// taken from the configured registries, and the registries themselves.
package images

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/berth-dev/berth/server/internal/jobs"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// Scanner scans an image after a pull (the scan package provides it).
type Scanner interface {
	// ScanAfterPull scans image on env when the environment's scanner setting
	// asks for it, emitting the pull job's scan events; it reports whether a
	// scan ran.
	ScanAfterPull(ctx context.Context, env store.Environment, image string, emit jobs.Emit) bool
}

// Service runs image operations.
type Service struct {
	engines *engine.Manager
	store   *store.Store
	log     *slog.Logger
	scanner Scanner
	notify  Notifier // nil: prune outcomes are not reported
}

// New returns a Service; scanner may be nil (no scan after pull).
func New(engines *engine.Manager, st *store.Store, log *slog.Logger, scanner Scanner) *Service {
	return &Service{engines: engines, store: st, log: log, scanner: scanner}
}

// SetScanner installs the scanner used after pulls.
func (s *Service) SetScanner(sc Scanner) { s.scanner = sc }

// imageFault turns an engine error of operation op into the fault clients see.
func imageFault(op string, err error) error {
	details := engine.Details(err)
	switch {
	case errors.Is(err, engine.ErrNotFound):
		return fault.Wrap(fault.NotFound, "Image not found", err)
	case errors.Is(err, engine.ErrConflict):
		return fault.Wrap(fault.Conflict, "Failed to "+op, err).WithDetails(details)
	case errors.Is(err, engine.ErrInvalid):
		return fault.Wrap(fault.Invalid, "Failed to "+op, err).WithDetails(details)
	}
	return fault.Wrap(fault.Internal, "Failed to "+op, err).WithDetails(details)
}

// List returns env's images; an offline environment has none.
func (s *Service) List(ctx context.Context, env store.Environment) ([]engine.Image, error) {
	c, err := s.engines.Client(ctx, env.Endpoint())
	if err != nil {
		if engine.IsOffline(err) || errors.Is(err, engine.ErrUnsupported) {
			return []engine.Image{}, nil
		}
		return nil, imageFault("list images", err)
	}
	list, err := c.ListImages(ctx)
	if err != nil {
		if engine.IsOffline(err) {
			return []engine.Image{}, nil
		}
		return nil, imageFault("list images", err)
	}
	return list, nil
}

// progressEvent is a layer line of a pull or push, as the spec shows it.
func progressEvent(p engine.Progress) map[string]any {
	ev := map[string]any{"id": p.ID, "status": p.Status,
		"progressDetail": map[string]int64{"current": p.Current, "total": p.Total}, "progress": ""}
	if p.Total > 0 {
		ev["progress"] = fmt.Sprintf("%s/%s", humanBytes(p.Current), humanBytes(p.Total))
	}
	return ev
}

func humanBytes(n int64) string {
	const unit = 1000
	if n < unit {
		return fmt.Sprintf("%dB", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f%cB", float64(n)/float64(div), "kMGTPE"[exp])
}

// errorResult is the terminal payload of a failed pull or push.
func errorResult(msg string) map[string]any { return map[string]any{"status": "error", "error": msg} }

// Pull pulls image (the spec's reference rules) on env as a job: "progress"
// events per layer, a scan when the environment asks for one and scanAfter
// is true, then "result" {status: complete} or {status: error, error}.
func (s *Service) Pull(ctx context.Context, env store.Environment, image string, scanAfter bool, emit jobs.Emit) (string, any, bool) {
	ref := PullReference(image)
	c, err := s.engines.Client(ctx, env.Endpoint())
	if err != nil {
		return "result", errorResult(clientError(env, err)), true
	}
	creds, err := s.credentialsFor(ctx, ref)
	if err != nil {
		return "result", errorResult("Failed to read registry credentials"), true
	}
	err = c.PullImage(ctx, ref, creds, func(p engine.Progress) { emit("progress", progressEvent(p)) })
	if err != nil {
		return "result", errorResult(transferMessage(err, "Failed to pull image")), true
	}
	if scanAfter && s.scanner != nil {
		s.scanner.ScanAfterPull(ctx, env, ref, emit)
	}
	return "result", map[string]any{"status": "complete"}, false
}

// clientError is the message of an environment whose engine cannot be used.
func clientError(env store.Environment, err error) string {
	if env.ConnectionType == engine.AgentEdge || env.ConnectionType == engine.HawserEdge {
		return "Edge agent not connected"
	}
	if engine.IsOffline(err) {
		return "Environment is offline"
	}
	return err.Error()
}

// transferMessage turns a pull or push failure into the spec's texts.
func transferMessage(err error, fallback string) string {
	var te *engine.TransferError
	var ee *engine.Error
	msg, code := "", 0
	switch {
	case errors.As(err, &te):
		msg, code = te.Message, te.Code
	case errors.As(err, &ee):
		msg = strings.TrimPrefix(ee.Msg, "Error response from daemon: ")
		if errors.Is(err, engine.ErrUnauthorized) {
			code = 401
		}
	case err != nil:
		msg = err.Error()
	}
	low := strings.ToLower(msg)
	switch {
	case code == 401 || strings.Contains(low, "unauthorized") || strings.Contains(low, "authentication required") ||
		strings.Contains(low, "incorrect username or password") || strings.Contains(low, "no basic auth credentials"):
		return "Authentication failed. Check registry credentials."
	case strings.Contains(low, "x509") || strings.Contains(low, "certificate") || strings.Contains(low, "tls:") ||
		strings.Contains(low, "http response to https client"):
		return "TLS error talking to the registry: " + msg + ". If the registry uses plain HTTP or a self-signed certificate, " +
			"add it to the engine's insecure-registries list (daemon.json) and restart the engine."
	case msg != "":
		return msg
	}
	return fallback
}

// PushRequest is a validated push: the image, its target and credentials.
type PushRequest struct {
	ImageID   string
	Source    string // the tag pushed from
	Target    string // registry host + name:tag
	Registry  store.Registry
	ImageName string // for the audit log
}

// PreparePush applies the push rules before a job starts, so that bad input
// is a 4xx: imageId and registryId are required, the registry must exist and
// the image must have a tag unless newTag is given.
func (s *Service) PreparePush(ctx context.Context, env store.Environment, imageID string, registryID int64, newTag, imageName string) (PushRequest, error) {
	imageID = strings.TrimSpace(imageID)
	if imageID == "" || registryID <= 0 {
		return PushRequest{}, fault.New(fault.Invalid, "Image ID and registry ID are required")
	}
	reg, err := s.Registry(ctx, registryID)
	if err != nil {
		return PushRequest{}, err
	}
	source := strings.TrimSpace(newTag)
	if source == "" {
		c, err := s.engines.Client(ctx, env.Endpoint())
		if err != nil {
			return PushRequest{}, imageFault("push image", err)
		}
		info, err := c.InspectImage(ctx, imageID)
		if err != nil {
			return PushRequest{}, imageFault("push image", err)
		}
		source = pickTag(info.RepoTags, imageID, imageName)
		if source == "" {
			return PushRequest{}, fault.New(fault.Invalid, "Image has no tag. Please provide a tag name.")
		}
	}
	if imageName == "" {
		imageName = source
	}
	return PushRequest{ImageID: imageID, Source: source, Target: PushTarget(source, reg.URL), Registry: reg, ImageName: imageName}, nil
}

// pickTag chooses the tag to push from: the requested name itself when it
// is one of the image's tags (an image often has several), else the first.
func pickTag(tags []string, names ...string) string {
	for _, n := range names {
		for _, t := range tags {
			if n != "" && (t == n || t == withTag(n)) {
				return t
			}
		}
	}
	for _, t := range tags {
		if t != "<none>:<none>" {
			return t
		}
	}
	return ""
}

// Push runs a prepared push as a job: {status: tagging}, {status: pushing},
// layer lines with status Pushing, then {status: complete, message,
// targetTag} or {status: error, error}. Events are unnamed ("message").
func (s *Service) Push(ctx context.Context, env store.Environment, req PushRequest, emit jobs.Emit) (string, any, bool) {
	c, err := s.engines.Client(ctx, env.Endpoint())
	if err != nil {
		return "", errorResult(clientError(env, err)), true
	}
	emit("", map[string]any{"status": "tagging", "message": "Tagging " + req.ImageID + " as " + req.Target})
	if err := c.TagImage(ctx, req.ImageID, req.Target); err != nil {
		return "", errorResult(transferMessage(err, "Failed to push image")), true
	}
	emit("", map[string]any{"status": "pushing", "message": "Pushing " + req.Target})
	err = c.PushImage(ctx, req.Target, registryCredentials(req.Registry), func(p engine.Progress) {
		emit("", progressEvent(p))
	})
	if err != nil {
		msg := transferMessage(err, "Failed to push image")
		var te *engine.TransferError
		if errors.As(err, &te) && (te.Code == 404 || strings.Contains(strings.ToLower(te.Message), "does not exist")) {
			msg = "Image not found"
		}
		return "", errorResult(msg), true
	}
	return "", map[string]any{"status": "complete", "message": "Pushed " + req.Target, "targetTag": req.Target}, false
}

// Remove deletes an image; force also removes one with several tags or used
// by stopped containers.
func (s *Service) Remove(ctx context.Context, env store.Environment, id string, force bool) ([]engine.RemovedImage, error) {
	c, err := s.engines.Client(ctx, env.Endpoint())
	if err != nil {
		return nil, imageFault("remove image", err)
	}
	out, err := c.RemoveImage(ctx, id, force)
	if err != nil {
		return nil, imageFault("remove image", err)
	}
	return out, nil
}

// Tag names image id repo:tag (tag defaults to latest).
func (s *Service) Tag(ctx context.Context, env store.Environment, id, repo, tag string) (string, error) {
	repo, tag = strings.TrimSpace(repo), strings.TrimSpace(tag)
	if repo == "" {
		return "", fault.New(fault.Invalid, "repo is required")
	}
	if tag == "" {
		tag = "latest"
	}
	if strings.ContainsAny(tag, ":/@ ") || strings.ContainsAny(repo, "@ ") || strings.ToLower(repo) != repo {
		return "", fault.New(fault.Invalid, "Invalid repository or tag")
	}
	c, err := s.engines.Client(ctx, env.Endpoint())
	if err != nil {
		return "", imageFault("tag image", err)
	}
	target := repo + ":" + tag
	if err := c.TagImage(ctx, id, target); err != nil {
		return "", imageFault("tag image", err)
	}
	return target, nil
}

// History returns an image's layers.
func (s *Service) History(ctx context.Context, env store.Environment, id string) ([]engine.HistoryItem, error) {
	c, err := s.engines.Client(ctx, env.Endpoint())
	if err != nil {
		return nil, imageFault("read image history", err)
	}
	h, err := c.ImageHistory(ctx, id)
	if err != nil {
		return nil, imageFault("read image history", err)
	}
	return h, nil
}

// Inspect returns the engine's inspection of an image as the engine sent it.
func (s *Service) Inspect(ctx context.Context, env store.Environment, id string) (json.RawMessage, error) {
	c, err := s.engines.Client(ctx, env.Endpoint())
	if err != nil {
		return nil, imageFault("inspect image", err)
	}
	raw, err := c.InspectImageRaw(ctx, id)
	if err != nil {
		return nil, imageFault("inspect image", err)
	}
	return raw, nil
}

// Prune removes dangling images, or every unused one when all is true.
func (s *Service) Prune(ctx context.Context, env store.Environment, all bool) (engine.PruneReport, error) {
	c, err := s.engines.Client(ctx, env.Endpoint())
	if err != nil {
		return engine.PruneReport{}, imageFault("prune images", err)
	}
	rep, err := c.PruneImages(ctx, all)
	if err != nil {
		return engine.PruneReport{}, imageFault("prune images", err)
	}
	return rep, nil
}

// MaxLoadSize bounds an image tarball loaded through the API.
const MaxLoadSize = 16 << 30

// Load loads the images of tarball (a "docker save" archive, possibly
// gzipped) into env's engine (through an agent too) and returns the
// engine's report ("Loaded image: alpine:3.20").
func (s *Service) Load(ctx context.Context, env store.Environment, tarball io.Reader) (string, error) {
	c, err := s.engines.Client(ctx, env.Endpoint())
	if err != nil {
		return "", err
	}
	report, err := c.LoadImageReport(ctx, tarball)
	if err != nil {
		return "", imageFault("load the image", err)
	}
	return report, nil
}
