package activity_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/activity"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/enginetest"
)

// collector runs a Service over a fresh store, rescanning the environments
// every 50 ms, until the test ends.
func collector(t *testing.T, s *store.Store) *activity.Service {
	t.Helper()
	engines := engine.NewManager(slog.New(slog.NewTextHandler(io.Discard, nil)))
	svc := activity.New(activity.Options{Store: s, Engines: engines, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Rescan: 50 * time.Millisecond, SampleEvery: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = svc.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done // Run stops its followers before it returns
		engines.Close()
	})
	return svc
}

// bump creates, starts and removes a labelled container named name on the
// local engine: create, start, die and destroy events.
func bump(t *testing.T, label, name string) {
	t.Helper()
	var out struct{ ID string }
	enginetest.Must(t, 201, "POST", "/containers/create?name="+name, nil, map[string]any{
		"Image": enginetest.Image(), "Cmd": []string{"true"}, "Labels": map[string]string{enginetest.Label: label}}, &out)
	enginetest.Must(t, 204, "POST", "/containers/"+out.ID+"/start", nil, nil, nil)
	enginetest.Must(t, 200, "POST", "/containers/"+out.ID+"/wait", nil, nil, nil)
	enginetest.Must(t, 204, "DELETE", "/containers/"+out.ID, nil, nil, nil)
}

// eventsOf returns the stored events of container name.
func eventsOf(t *testing.T, s *store.Store, name string) []store.ActivityEvent {
	t.Helper()
	list, _, err := s.ListActivity(t.Context(), store.ActivityFilter{Container: name})
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// collectedWithin bumps a container (again and again: the follower may
// still be connecting) until its start event is stored, or fails.
func collectedWithin(t *testing.T, s *store.Store, label, prefix string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for i := 0; ; i++ {
		name := prefix + "-" + label + "-" + string(rune('a'+i%26))
		bump(t, label, name)
		for range 20 {
			for _, e := range eventsOf(t, s, name) {
				if e.Action == "start" {
					return
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no start event of %s collected", prefix)
		}
	}
}

func TestCollectorFollowsEnvironmentsAsTheyAreSwitchedOnAndOff(t *testing.T) {
	enginetest.Require(t)
	t.Parallel()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	label := hex.EncodeToString(b)
	t.Cleanup(func() { enginetest.RemoveLabelled(t, label) })
	s, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "berth.db"), storetest.Box(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	env := store.Environment{Name: "local", ConnectionType: "socket", SocketPath: enginetest.Socket, CollectActivity: false}
	if err := s.CreateEnvironment(t.Context(), &env); err != nil {
		t.Fatal(err)
	}
	collector(t, s)

	// Off: nothing of this environment is stored.
	bump(t, label, "off-"+label)
	time.Sleep(500 * time.Millisecond) // ten rescans: a follower would have been started by now
	if got := eventsOf(t, s, "off-"+label); len(got) != 0 {
		t.Fatalf("collected while collectActivity is off: %+v", got)
	}

	// Switched on (a change picked up by the rescan): collected.
	env.CollectActivity = true
	if err := s.UpdateEnvironment(t.Context(), &env); err != nil {
		t.Fatal(err)
	}
	collectedWithin(t, s, label, "on")

	// Removed: its events go with it and the follower stops (a new
	// environment on the same engine is collected under its own id only).
	if err := s.DeleteEnvironment(t.Context(), env.ID); err != nil {
		t.Fatal(err)
	}
	other := store.Environment{Name: "again", ConnectionType: "socket", SocketPath: enginetest.Socket, CollectActivity: true}
	if err := s.CreateEnvironment(t.Context(), &other); err != nil {
		t.Fatal(err)
	}
	collectedWithin(t, s, label, "again")
	list, _, err := s.ListActivity(t.Context(), store.ActivityFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range list {
		if e.EnvironmentID != other.ID {
			t.Fatalf("event of environment %d after it was removed: %+v", e.EnvironmentID, e)
		}
	}
}

func TestKeptLeavesOutExecChatter(t *testing.T) {
	for _, tt := range []struct {
		typ, action string
		want        bool
	}{
		{"container", "start", true},
		{"container", "health_status", true},
		{"image", "pull", true},
		{"network", "connect", true},
		{"container", "exec_start", false},
		{"container", "exec_die", false},
		{"container", "attach", false},
		{"container", "archive-path", false},
		{"daemon", "reload", false},
		{"plugin", "enable", false},
	} {
		if got := activity.Kept(tt.typ, tt.action); got != tt.want {
			t.Errorf("Kept(%s, %s) = %v, want %v", tt.typ, tt.action, got, tt.want)
		}
	}
}
