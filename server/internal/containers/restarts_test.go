package containers

import (
	"context"
	"crypto/rand"
	"log/slog"
	"slices"
	"strings"
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
