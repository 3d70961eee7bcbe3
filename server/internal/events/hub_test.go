package events_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/containers"
	"github.com/berth-dev/berth/server/internal/events"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/enginetest"
)

// The tests run against the real engine (scripts/test-env.sh), which other
// tests use at the same time: they look for the events of their own
// containers among whatever else happens.

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// setup returns a hub over a fresh engine manager and the label of this
// test's containers (removed at cleanup).
func setup(t *testing.T, o events.HubOptions) (*events.Hub, *engine.Manager, string) {
	t.Helper()
	enginetest.Require(t)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	label := "hub-" + hex.EncodeToString(b)
	engines := engine.NewManager(quiet)
	hub := events.NewHub(engines, quiet, o)
	t.Cleanup(func() {
		hub.Close()
		engines.Close()
		enginetest.RemoveLabelled(t, label)
	})
	return hub, engines, label
}

func localEnv(socket string) store.Environment {
	return store.Environment{ID: 1, Name: "local", ConnectionType: engine.Socket, SocketPath: socket}
}

// createOutside creates a container straight on the engine, as someone
// running docker on the host would: Berth only learns of it by its events.
func createOutside(t *testing.T, label string) string {
	t.Helper()
	var out struct{ Id string }
	enginetest.Must(t, 201, "POST", "/containers/create", nil, map[string]any{
		"Image": enginetest.Image(), "Cmd": []string{"true"}, "Labels": map[string]string{enginetest.Label: label},
	}, &out)
	return out.Id
}

func removeOutside(t *testing.T, id string) {
	t.Helper()
	enginetest.Must(t, 204, "DELETE", "/containers/"+id+"?force=1", nil, nil, nil)
}

// waitReady waits until sub's engine stream opened (or failed).
func waitReady(t *testing.T, sub *events.Subscription) {
	t.Helper()
	select {
	case <-sub.Ready():
	case <-time.After(30 * time.Second):
		t.Fatal("the engine stream did not open within 30 s")
	}
}

// waitFor reads sub until a notice for which match is true; it fails when
// the subscription ends or nothing matches within 60 s.
func waitFor(t *testing.T, sub *events.Subscription, what string, match func(events.Notice) bool) {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		select {
		case n, ok := <-sub.C:
			if !ok {
				t.Fatalf("subscription ended (%v) before %s", sub.Err(), what)
			}
			if match(n) {
				return
			}
		case <-deadline:
			t.Fatalf("no %s within a minute", what)
		}
	}
}

func event(name, id string) func(events.Notice) bool {
	return func(n events.Notice) bool { return n.Offline == nil && n.Event.Name == name && n.Event.ID == id }
}

// Many subscribers of one environment cost one engine stream; each gets
// every event, and one that never reads is dropped without holding up the
// others. The stream stops once the last subscriber left.
func TestHubFansOutOneEngineStream(t *testing.T) {
	t.Parallel()
	hub, _, label := setup(t, events.HubOptions{Linger: 10 * time.Millisecond})
	env := localEnv(enginetest.Socket)
	subs := make([]*events.Subscription, 5)
	for i := range subs {
		subs[i] = hub.Subscribe(env, 1024)
	}
	stuck := hub.Subscribe(env, 1) // never reads
	for _, sub := range append(slices.Clone(subs), stuck) {
		waitReady(t, sub)
	}
	if got := hub.Stats().Streams; got != 1 {
		t.Fatalf("engine streams opened for %d subscribers = %d, want 1", len(subs)+1, got)
	}

	var ids []string
	for range 3 {
		id := createOutside(t, label)
		removeOutside(t, id)
		ids = append(ids, id)
	}
	for i, sub := range subs {
		for _, id := range ids {
			waitFor(t, sub, fmt.Sprintf("container-create of %s (subscriber %d)", id, i), event("container-create", id))
			waitFor(t, sub, "container-destroy of "+id, event("container-destroy", id))
		}
	}

	// The stuck subscriber held at most one notice; the hub dropped it.
	timeout := time.After(10 * time.Second)
drain:
	for {
		select {
		case _, ok := <-stuck.C:
			if !ok {
				break drain
			}
		case <-timeout:
			t.Fatal("the subscriber that never read was not dropped")
		}
	}
	if err := stuck.Err(); !errors.Is(err, events.ErrLagged) {
		t.Errorf("stuck subscriber's error = %v, want ErrLagged", err)
	}
	if got := hub.Stats().Streams; got != 1 {
		t.Errorf("engine streams opened = %d after the events, want still 1", got)
	}

	for _, sub := range subs {
		sub.Close()
	}
	deadline := time.Now().Add(10 * time.Second)
	for hub.Following(env.ID) {
		if time.Now().After(deadline) {
			t.Fatal("the engine stream still runs 10 s after the last subscriber left (linger 10 ms)")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// An engine that cannot be reached is reported to the subscriber.
func TestHubReportsOffline(t *testing.T) {
	t.Parallel()
	hub, _, _ := setup(t, events.HubOptions{})
	sub := hub.Subscribe(localEnv(filepath.Join(t.TempDir(), "nothing.sock")), 16)
	defer sub.Close()
	waitReady(t, sub)
	waitFor(t, sub, "an offline notice", func(n events.Notice) bool {
		if n.Offline != nil && !engine.IsOffline(n.Offline) {
			t.Errorf("offline notice = %v, want an OfflineError", n.Offline)
		}
		return n.Offline != nil
	})
}

// proxy forwards a unix socket to the engine's; cut refuses and breaks every
// connection until start again.
type proxy struct {
	path  string
	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]struct{}
}

func newProxy(t *testing.T) *proxy {
	p := &proxy{path: filepath.Join(t.TempDir(), "e.sock"), conns: map[net.Conn]struct{}{}}
	p.start(t)
	t.Cleanup(p.cut)
	return p
}

func (p *proxy) start(t *testing.T) {
	t.Helper()
	ln, err := net.Listen("unix", p.path)
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			e, err := net.Dial("unix", enginetest.Socket)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns[c], p.conns[e] = struct{}{}, struct{}{}
			p.mu.Unlock()
			go func() { _, _ = io.Copy(e, c); e.Close() }()
			go func() { _, _ = io.Copy(c, e); c.Close() }()
		}
	}()
}

func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

// Events that happen while the engine stream is broken reach the
// subscribers once the hub reconnected: it asks the engine for those after
// the last one it relayed.
func TestHubReconnectReplaysMissedEvents(t *testing.T) {
	t.Parallel()
	hub, _, label := setup(t, events.HubOptions{})
	p := newProxy(t)
	sub := hub.Subscribe(localEnv(p.path), 1024)
	defer sub.Close()
	waitReady(t, sub)
	before := createOutside(t, label)
	waitFor(t, sub, "container-create before the break", event("container-create", before))

	p.cut()
	waitFor(t, sub, "an offline notice once the stream broke", func(n events.Notice) bool { return n.Offline != nil })
	during := createOutside(t, label) // Berth cannot see the engine now
	removeOutside(t, during)
	p.start(t)

	waitFor(t, sub, "container-create that happened during the break", event("container-create", during))
	waitFor(t, sub, "container-destroy that happened during the break", event("container-destroy", during))
	if got := hub.Stats().Streams; got < 2 {
		t.Errorf("engine streams opened = %d, want a reconnection", got)
	}
}

// The containers list cache serves lists while it knows them current: a
// change made outside Berth shows once its event arrived (the cache may not
// expire by age here), a change Berth made shows at once.
func TestContainersListCacheFollowsTheEngine(t *testing.T) {
	t.Parallel()
	hub, engines, label := setup(t, events.HubOptions{ListMaxAge: time.Hour})
	svc := containers.New(engines, nil, quiet).UseListCache(hub)
	env := localEnv(enginetest.Socket)
	ctx := context.Background()
	list := func() []engine.Container {
		t.Helper()
		l, err := svc.List(ctx, env, true)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	has := func(l []engine.Container, id string) bool {
		return slices.ContainsFunc(l, func(c engine.Container) bool { return c.ID == id })
	}
	// warm lists until one comes from the cache (other tests' events on
	// the engine drop it now and then).
	warm := func() {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for hits := hub.Stats().ListHits; hub.Stats().ListHits == hits; {
			if time.Now().After(deadline) {
				t.Fatal("no list served from the cache within a minute")
			}
			list()
			time.Sleep(10 * time.Millisecond)
		}
	}
	// eventually lists until cond holds for the list.
	eventually := func(what string, cond func([]engine.Container) bool) {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for !cond(list()) {
			if time.Now().After(deadline) {
				t.Fatalf("the list did not show %s within a minute", what)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}

	warm()
	outside := createOutside(t, label)
	eventually("a container created outside Berth", func(l []engine.Container) bool { return has(l, outside) })
	warm()
	removeOutside(t, outside)
	eventually("the removal of a container outside Berth", func(l []engine.Container) bool { return !has(l, outside) })

	c, err := engines.Client(ctx, env.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	warm()
	id, err := c.CreateContainer(ctx, engine.CreateSpec{Image: enginetest.Image(), Cmd: []string{"true"},
		Labels: map[string]string{enginetest.Label: label}})
	if err != nil {
		t.Fatal(err)
	}
	if !has(list(), id) {
		t.Fatal("the list right after Berth created a container does not show it")
	}
	warm()
	if err := c.RemoveContainer(ctx, id, true); err != nil {
		t.Fatal(err)
	}
	if has(list(), id) {
		t.Fatal("the list right after Berth removed a container still shows it")
	}
}

// When an environment's connection settings change, its stream follows the
// new ones (at once, even while it waits to retry the old ones), and its
// subscribers keep receiving events.
func TestHubFollowsTheEnvironmentsNewSettings(t *testing.T) {
	t.Parallel()
	hub, _, label := setup(t, events.HubOptions{})
	p := newProxy(t)
	old := localEnv(p.path)
	old.UpdatedAt = time.Unix(1_000_000, 0)
	sub := hub.Subscribe(old, 1024)
	defer sub.Close()
	waitReady(t, sub)
	p.cut() // the old settings no longer reach the engine
	waitFor(t, sub, "an offline notice once the old settings failed", func(n events.Notice) bool { return n.Offline != nil })

	updated := localEnv(enginetest.Socket)
	updated.UpdatedAt = old.UpdatedAt.Add(time.Minute)
	other := hub.Subscribe(updated, 1024)
	defer other.Close()
	id := createOutside(t, label)
	waitFor(t, sub, "the event through the new settings (first subscriber)", event("container-create", id))
	waitFor(t, other, "the event through the new settings (second subscriber)", event("container-create", id))
}

// A follower (Follow) gets every event of the environment, in order, and
// Follow returns nil once its context ends.
func TestHubFollowDeliversEveryEventInOrder(t *testing.T) {
	t.Parallel()
	hub, _, label := setup(t, events.HubOptions{})
	env := localEnv(enginetest.Socket)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var mu sync.Mutex
	var got []string
	followed := make(chan error, 1)
	go func() {
		followed <- hub.Follow(ctx, env, func(ev events.Event) error {
			mu.Lock()
			got = append(got, ev.Name+" "+ev.ID)
			mu.Unlock()
			return nil
		}, func(error) error { return nil })
	}()
	// The follower's subscription opens the stream: a probe subscribing
	// after it sees the stream ready (Follow subscribes at once; the probe
	// waits until the hub follows the environment).
	deadline := time.Now().Add(30 * time.Second)
	for !hub.Following(env.ID) {
		if time.Now().After(deadline) {
			t.Fatal("Follow did not open the engine stream within 30 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	probe := hub.Subscribe(env, 16)
	defer probe.Close()
	waitReady(t, probe)

	var want []string
	for range 5 {
		id := createOutside(t, label)
		removeOutside(t, id)
		want = append(want, "container-create "+id, "container-destroy "+id)
	}
	deadline = time.Now().Add(time.Minute)
	for {
		mu.Lock()
		var mine []string
		for _, g := range got {
			if slices.Contains(want, g) {
				mine = append(mine, g)
			}
		}
		mu.Unlock()
		if slices.Equal(mine, want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the follower got %q of this test's events, want %q", mine, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-followed:
		if err != nil {
			t.Fatalf("Follow returned %v after its context ended, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Follow did not return within 10 s of its context ending")
	}
}
