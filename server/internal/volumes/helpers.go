package volumes

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/berth-dev/berth/server/internal/helperimage"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// The labels of Berth's helper containers.
const (
	HelperLabel       = engine.HelperLabel    // volume-browse, volume-export or volume-clone
	HelperVolumeLabel = "berth.helper.volume" // the volume the helper is for
	HelperOwnerLabel  = "berth.helper.owner"  // the Berth server that made it
	CloneLabel        = "berth.clone-of"      // on a clone: the volume it was copied from
)

// mountPath is where a helper mounts the volume it reads.
const mountPath = "/volume"

// DefaultIdle is how long an unused browse helper is kept.
const DefaultIdle = 2 * time.Minute

// Helpers keeps Berth's short-lived helper containers on volumes: one browse
// helper per (environment, volume), kept running while it is used and
// removed after an idle time, and the one-off helpers of exports and clones.
// Helpers of this server left over from an earlier run are removed the
// first time an environment is used.
type Helpers struct {
	engines *engine.Manager
	images  *helperimage.Set
	log     *slog.Logger
	owner   string
	idle    time.Duration

	mu     sync.Mutex
	browse map[helperKey]*helper
	live   map[string]bool // ids of the helpers in use (not swept)
	swept  map[int64]bool
}

type helperKey struct {
	env    int64
	volume string
}

// helper is a browse helper; ready is closed once id or err is set.
type helper struct {
	ready chan struct{}
	id    string
	err   error
	timer *time.Timer
	c     *engine.Client
	busy  int // requests using it (guarded by Helpers.mu)
}

// NewHelpers returns the helper keeper of the server called owner (its node
// name), whose helpers run the helper image of images. idle 0 means
// DefaultIdle.
func NewHelpers(engines *engine.Manager, images *helperimage.Set, log *slog.Logger, owner string, idle time.Duration) *Helpers {
	if idle <= 0 {
		idle = DefaultIdle
	}
	if owner == "" {
		owner = "berth"
	}
	return &Helpers{engines: engines, images: images, log: log, owner: owner, idle: idle,
		browse: map[helperKey]*helper{}, live: map[string]bool{}, swept: map[int64]bool{}}
}

// helperFault turns an engine error of operation op into the fault clients
// see.
func helperFault(op string, err error) error {
	if _, ok := fault.As(err); ok {
		return err
	}
	return opFault(op, err)
}

// labels returns the labels of a helper of kind for volume.
func (h *Helpers) labels(kind, volume string) map[string]string {
	return map[string]string{HelperLabel: kind, HelperVolumeLabel: volume, HelperOwnerLabel: h.owner}
}

// sweep removes, once per environment, this server's helpers left over
// from an earlier run.
func (h *Helpers) sweep(ctx context.Context, env int64, c *engine.Client) {
	h.mu.Lock()
	done := h.swept[env]
	h.swept[env] = true
	h.mu.Unlock()
	if done {
		return
	}
	ids, err := c.ContainersLabelled(ctx, map[string]string{HelperOwnerLabel: h.owner})
	if err != nil {
		h.log.Warn("listing leftover volume helpers", "env", env, "err", err)
		return
	}
	for _, id := range ids {
		h.mu.Lock()
		inUse := h.live[id]
		h.mu.Unlock()
		if !inUse {
			h.remove(c, id)
		}
	}
}

// remove removes a helper container, whatever became of the request that
// made it.
func (h *Helpers) remove(c *engine.Client, id string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.RemoveContainer(ctx, id, true); err != nil && !errors.Is(err, engine.ErrNotFound) {
		h.log.Warn("removing a volume helper", "container", id, "err", err)
	}
	h.mu.Lock()
	delete(h.live, id)
	h.mu.Unlock()
}

// client returns env's engine and checks that volume exists there.
func (h *Helpers) client(ctx context.Context, env store.Environment, volume string) (*engine.Client, engine.Volume, error) {
	c, err := h.engines.Client(ctx, env.Endpoint())
	if err != nil {
		return nil, engine.Volume{}, opFault("read volume", err)
	}
	v, err := c.InspectVolume(ctx, volume)
	if err != nil {
		return nil, engine.Volume{}, opFault("read volume", err)
	}
	h.sweep(ctx, env.ID, c)
	return c, v, nil
}

// oneOff creates a helper of kind that mounts the volumes given and is
// removed by the returned function, whatever happened to ctx.
func (h *Helpers) oneOff(ctx context.Context, c *engine.Client, kind, volume string, start bool, cmd []string,
	mounts ...engine.VolumeMount) (string, func(), error) {
	img, err := h.images.Ensure(ctx, c)
	if err != nil {
		return "", nil, err
	}
	id, err := c.CreateHelper(ctx, engine.HelperSpec{Image: img, Cmd: cmd, Mounts: mounts,
		Labels: h.labels(kind, volume), Start: start})
	if err != nil {
		return "", nil, err
	}
	h.mu.Lock()
	h.live[id] = true
	h.mu.Unlock()
	return id, func() { h.remove(c, id) }, nil
}

// browseHelper returns the running browse helper of volume on env, making
// it if needed. The caller calls done when it no longer uses the helper;
// the idle time counts from the last done.
func (h *Helpers) browseHelper(ctx context.Context, env store.Environment, volume string) (*engine.Client, string, func(), error) {
	c, _, err := h.client(ctx, env, volume)
	if err != nil {
		return nil, "", nil, err
	}
	key := helperKey{env.ID, volume}
	h.mu.Lock()
	hp, ok := h.browse[key]
	if !ok {
		hp = &helper{ready: make(chan struct{}), c: c}
		hp.timer = time.AfterFunc(h.idle, func() { h.expire(key, hp) })
		h.browse[key] = hp
	}
	hp.busy++
	h.mu.Unlock()
	done := func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		hp.busy--
		hp.timer.Reset(h.idle)
	}
	if ok {
		select {
		case <-hp.ready:
		case <-ctx.Done():
			done()
			return nil, "", nil, ctx.Err()
		}
		if hp.err != nil {
			done()
			return nil, "", nil, hp.err
		}
		return c, hp.id, done, nil
	}

	// The helper outlives this request: it is made without the request's
	// cancellation.
	id, _, err := h.oneOff(context.WithoutCancel(ctx), c, "volume-browse", volume, true,
		[]string{helperimage.Program, "idle"}, engine.VolumeMount{Volume: volume, Target: mountPath, ReadOnly: true})
	if err != nil {
		hp.err = helperFault("browse volume", err)
	}
	hp.id = id
	close(hp.ready)
	if err != nil {
		h.mu.Lock()
		if h.browse[key] == hp {
			delete(h.browse, key)
		}
		hp.timer.Stop()
		h.mu.Unlock()
		return nil, "", nil, hp.err
	}
	return c, id, done, nil
}

// expire removes an idle browse helper; one in use is left for another
// idle time.
func (h *Helpers) expire(key helperKey, hp *helper) {
	h.mu.Lock()
	if h.browse[key] != hp {
		h.mu.Unlock()
		return
	}
	if hp.busy > 0 {
		hp.timer.Reset(h.idle)
		h.mu.Unlock()
		return
	}
	delete(h.browse, key)
	h.mu.Unlock()
	<-hp.ready
	if hp.id != "" {
		h.remove(hp.c, hp.id)
	}
}

// forget drops a browse helper that no longer works (removed behind Berth's
// back), so that the next use makes a new one.
func (h *Helpers) forget(env store.Environment, volume, id string) {
	key := helperKey{env.ID, volume}
	h.mu.Lock()
	defer h.mu.Unlock()
	if hp, ok := h.browse[key]; ok && hp.id == id {
		hp.timer.Stop()
		delete(h.browse, key)
	}
}

// Release removes the browse helper of volume on env at once, if there is
// one. It reports whether there was.
func (h *Helpers) Release(ctx context.Context, env store.Environment, volume string) (bool, error) {
	key := helperKey{env.ID, volume}
	h.mu.Lock()
	hp, ok := h.browse[key]
	if ok {
		delete(h.browse, key)
		hp.timer.Stop()
	}
	h.mu.Unlock()
	if !ok {
		return false, nil
	}
	select {
	case <-hp.ready:
	case <-ctx.Done():
		return false, ctx.Err()
	}
	if hp.id == "" {
		return false, nil
	}
	h.remove(hp.c, hp.id)
	return true, nil
}

// BrowseHelperID returns the id of the browse helper kept for volume on env
// ("" when there is none).
func (h *Helpers) BrowseHelperID(env store.Environment, volume string) string {
	h.mu.Lock()
	hp, ok := h.browse[helperKey{env.ID, volume}]
	h.mu.Unlock()
	if !ok {
		return ""
	}
	<-hp.ready
	return hp.id
}

// Close removes every browse helper (when Berth stops).
func (h *Helpers) Close(ctx context.Context) {
	h.mu.Lock()
	all := h.browse
	h.browse = map[helperKey]*helper{}
	h.mu.Unlock()
	for _, hp := range all {
		hp.timer.Stop()
		select {
		case <-hp.ready:
		case <-ctx.Done():
			return
		}
		if hp.id != "" {
			h.remove(hp.c, hp.id)
		}
	}
}
