package containers

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/enginetest"
)

func TestRestartEntryHoldsWhileTheListShowsTheSameStart(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	started := now.Add(-5*time.Minute - 10*time.Second)
	finished := now.Add(-2*time.Hour - 20*time.Minute)
	running := restartEntry{state: "running", count: 2, started: started, at: now.Add(-time.Minute)}
	exited := restartEntry{state: "exited", count: 1, started: started.Add(-3 * time.Hour), finished: finished}
	cases := []struct {
		name  string
		entry restartEntry
		ct    engine.Container
		want  bool
	}{
		{"running, same start", running, engine.Container{State: "running", Status: "Up 5 minutes"}, true},
		{"running with a health check, same start", running, engine.Container{State: "running", Status: "Up 5 minutes (healthy)"}, true},
		{"paused, same start", restartEntry{state: "paused", started: started}, engine.Container{State: "paused", Status: "Up 5 minutes (Paused)"}, true},
		{"restarted since: a later start", running, engine.Container{State: "running", Status: "Up 3 seconds"}, false},
		{"restarted an hour later", running, engine.Container{State: "running", Status: "Up About an hour"}, false},
		{"state changed", running, engine.Container{State: "exited", Status: "Exited (0) 5 minutes ago"}, false},
		{"restarting", restartEntry{state: "restarting", started: started}, engine.Container{State: "restarting", Status: "Restarting (1) 2 seconds ago"}, false},
		{"exited, same stop", exited, engine.Container{State: "exited", Status: "Exited (1) 2 hours ago"}, true},
		{"exited again since", exited, engine.Container{State: "exited", Status: "Exited (1) 4 seconds ago"}, false},
		{"never started: no time to compare", restartEntry{state: "running"}, engine.Container{State: "running", Status: "Up 5 minutes"}, false},
		{"an unknown text", running, engine.Container{State: "running", Status: "Up for a while"}, false},
		{"dead", restartEntry{state: "dead"}, engine.Container{State: "dead", Status: "Dead"}, true},
	}
	for _, c := range cases {
		if got := c.entry.holds(c.ct, now); got != c.want {
			t.Errorf("%s: holds = %v, want %v", c.name, got, c.want)
		}
	}
	// Berth's clock and the engine's may differ by a little.
	justOver := restartEntry{state: "running", started: now.Add(-60 * time.Second)}
	if !justOver.holds(engine.Container{State: "running", Status: "Up 59 seconds"}, now) {
		t.Error("a second of skew between the clocks breaks the entry")
	}
}

func TestHumanDurationIsTheEnginesText(t *testing.T) {
	for d, want := range map[time.Duration]string{
		500 * time.Millisecond:   "Less than a second",
		time.Second:              "1 second",
		42 * time.Second:         "42 seconds",
		90 * time.Second:         "About a minute",
		17 * time.Minute:         "17 minutes",
		70 * time.Minute:         "About an hour",
		5 * time.Hour:            "5 hours",
		72 * time.Hour:           "3 days",
		21 * 24 * time.Hour:      "3 weeks",
		90 * 24 * time.Hour:      "3 months",
		3 * 365 * 24 * time.Hour: "3 years",
	} {
		if got := humanDuration(d); got != want {
			t.Errorf("humanDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

// TestListedRestartCountsFollowRestarts lists a container that its restart
// policy restarts every second or so: the listed count keeps up with the
// engine's own (polled until a list falls between two inspections that
// agree, after at least three restarts).
func TestListedRestartCountsFollowRestarts(t *testing.T) {
	enginetest.Require(t)
	label := strings.ToLower(rand.Text()[:12])
	t.Cleanup(func() { enginetest.RemoveLabelled(t, label) })
	m := engine.NewManager(slog.New(slog.DiscardHandler))
	t.Cleanup(m.Close)
	s := New(m, nil, slog.New(slog.DiscardHandler))
	env := store.Environment{ID: 1, ConnectionType: engine.Socket, SocketPath: enginetest.Socket}
	c, err := m.Client(t.Context(), env.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	id, err := c.CreateContainer(t.Context(), engine.CreateSpec{Name: "berth-test-restarts-" + label, Image: enginetest.Image(),
		Cmd: []string{"sh", "-c", "sleep 1; exit 1"}, RestartPolicy: "always", Labels: map[string]string{enginetest.Label: label}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.StartContainer(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	listed := func() int {
		list, err := s.List(t.Context(), env, true)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(list, func(ct engine.Container) bool { return ct.ID == id })
		if i < 0 {
			t.Fatalf("container %s not listed", id)
		}
		return list[i].RestartCount
	}
	inspected := func() int {
		_, st, err := c.InspectContainer(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		return st.RestartCount
	}
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	for {
		before := inspected()
		got := listed()
		after := inspected()
		if got == before && got == after && got >= 3 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the listed restart count is %d, the engine's %d→%d", got, before, after)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func TestJustStartedContainersAreTheOnesWhoseCountMayHaveChanged(t *testing.T) {
	for status, want := range map[string]bool{
		"Up Less than a second":    true,
		"Up 1 second":              true,
		"Up 42 seconds (healthy)":  true,
		"Up About a minute":        false,
		"Up 3 days":                false,
		"Exited (1) 2 seconds ago": false,
		"Up 12 seconds (Paused)":   true,
	} {
		state := "running"
		if strings.HasPrefix(status, "Exited") {
			state = "exited"
		}
		if got := justStarted(engine.Container{State: state, Status: status}); got != want {
			t.Errorf("justStarted(%q) = %v, want %v", status, got, want)
		}
	}
	if !justStarted(engine.Container{State: "restarting", Status: "Restarting (1) 3 minutes ago"}) {
		t.Error("a restarting container is not just started")
	}
}

// TestListsShareASlowInspectionAndDoNotWaitForIt puts a proxy in front of
// the engine that holds every inspection of one just-started container
// (as the engine does while that container is being stopped): concurrent
// lists join one inspection, and they answer while it is still held.
func TestListsShareASlowInspectionAndDoNotWaitForIt(t *testing.T) {
	enginetest.Require(t)
	label := strings.ToLower(rand.Text()[:12])
	t.Cleanup(func() { enginetest.RemoveLabelled(t, label) })
	raw, err := engine.NewManager(slog.New(slog.DiscardHandler)).Client(t.Context(),
		store.Environment{ID: 1, ConnectionType: engine.Socket, SocketPath: enginetest.Socket}.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	id, err := raw.CreateContainer(t.Context(), engine.CreateSpec{Name: "berth-test-slowinspect-" + label, Image: enginetest.Image(),
		Cmd: []string{"sleep", "600"}, Labels: map[string]string{enginetest.Label: label}})
	if err != nil {
		t.Fatal(err)
	}
	if err := raw.StartContainer(t.Context(), id); err != nil {
		t.Fatal(err)
	}

	// The proxy: every request goes to the engine, but an inspection of id
	// waits for release.
	var inspections atomic.Int32
	release := make(chan struct{})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unblock)
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) { r.Out.URL.Scheme, r.Out.URL.Host = "http", "docker" },
		Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", enginetest.Socket)
		}},
	}
	sock := filepath.Join(t.TempDir(), "engine.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/containers/"+id+"/json") {
			inspections.Add(1)
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		proxy.ServeHTTP(w, r)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	m := engine.NewManager(slog.New(slog.DiscardHandler))
	t.Cleanup(m.Close)
	s := New(m, nil, slog.New(slog.DiscardHandler))
	env := store.Environment{ID: 2, ConnectionType: engine.Socket, SocketPath: sock}
	const lists = 12
	errs := make(chan error, lists)
	for range lists {
		go func() {
			list, err := s.List(t.Context(), env, true)
			if err == nil && !slices.ContainsFunc(list, func(ct engine.Container) bool { return ct.ID == id }) {
				err = fmt.Errorf("container %s not listed", id)
			}
			errs <- err
		}()
	}
	// Every list answers while the inspection is still held (were a list
	// waiting for it, this would block until the test's deadline).
	for range lists {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := inspections.Load(); n != 1 {
		t.Fatalf("%d lists made %d inspections of the container; want one shared", lists, n)
	}
	unblock()
	// Once the inspection ends, its count is cached: later lists need none.
	deadline := time.Now().Add(30 * time.Second)
	for {
		s.restarts.mu.Lock()
		_, cached := s.restarts.entries[restartKey{env.ID, id}]
		s.restarts.mu.Unlock()
		if cached {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the shared inspection never filled the cache")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := s.List(t.Context(), env, true); err != nil {
		t.Fatal(err)
	}
	if n := inspections.Load(); n != 1 {
		t.Fatalf("a list after the inspection ended inspected again (%d inspections)", n)
	}
}
