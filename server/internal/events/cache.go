package events

import (
	"context"
	"strings"
	"time"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
)

// The containers-list cache. For each environment the hub keeps the last
// ListContainers answer (running, and all) and serves it again while it is
// known to be current:
//   - the environment's engine stream is open, and was before the list was
//     read (settled: see settle), so that every later change reaches the hub;
//   - no event that may change a list arrived since the read started, no
//     reconnection happened and Berth changed nothing on the engine since
//     (engine.Manager.OnWrite): each of these drops the cache, and a read
//     that was under way meanwhile is not kept;
//   - it is younger than ListMaxAge: the status texts age without events.
//
// So an answer is never older than a change Berth made (the write is known
// before the call that made it returns) or than an event the hub has seen.
// Under it, the engine package coalesces identical reads: the reads that
// miss the cache at once cost the engine one call.

// listEntry is a cached containers list.
type listEntry struct {
	gen  uint64    // the stream's generation it was read in
	at   time.Time // when its read started
	list []engine.Container
}

// Containers returns env's containers list (all: stopped ones included) from
// the cache when it is current, else from read, keeping that answer when it
// may be. Each caller gets its own copy. A read also keeps the environment's
// engine stream open for ListHold, so that the next read can be served.
func (h *Hub) Containers(ctx context.Context, env store.Environment, all bool,
	read func(context.Context) ([]engine.Container, error)) ([]engine.Container, error) {
	i := 0
	if all {
		i = 1
	}
	now := time.Now()
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return read(ctx)
	}
	st := h.streamLocked(env)
	st.holdUntil = now.Add(h.o.ListHold)
	if len(st.subs) == 0 {
		h.scheduleStopLocked(st)
	}
	usable := st.state == open && (st.sawEvent || now.Sub(st.openedAt) >= settle) && st.env.UpdatedAt.Equal(env.UpdatedAt)
	if e := st.lists[i]; usable && e != nil && e.gen == st.gen && now.Sub(e.at) < h.o.ListMaxAge {
		h.mu.Unlock()
		h.hits.Add(1)
		return engine.CloneContainers(e.list), nil
	}
	gen := st.gen
	h.mu.Unlock()

	list, err := read(ctx)
	if err != nil || !usable {
		return list, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	// Nothing happened since the read started: the stream stayed open and
	// reported no change (each bumps gen), Berth changed nothing.
	if h.envs[env.ID] == st && st.gen == gen {
		if e := st.lists[i]; e == nil || e.gen != gen || e.at.Before(now) {
			st.lists[i] = &listEntry{gen: gen, at: now, list: engine.CloneContainers(list)}
			h.fills.Add(1)
		}
	}
	return list, nil
}

// Invalidate drops what the cache holds for environment envID (Berth changed
// something on its engine); reads under way are not kept.
func (h *Hub) Invalidate(envID int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if st := h.envs[envID]; st != nil {
		h.resetLocked(st)
	}
}

// changesList reports whether an engine event may change what a containers
// list shows. Every event does but those of a container's processes, files
// and terminal; an image event may too (a tag that moved makes lists show
// the image's id), a network event as well (connect, disconnect).
func changesList(ev engine.Event) bool {
	if ev.Type != "container" {
		return true
	}
	if strings.HasPrefix(ev.Action, "exec_") {
		return false
	}
	switch ev.Action {
	case "attach", "detach", "resize", "top", "archive-path", "extract-to-dir", "export", "copy", "commit":
		return false
	}
	return true
}
