package activity_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/activity"
	"github.com/berth-dev/berth/server/internal/apitest"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/enginetest"
)

// collector runs a Service over s, rescanning the environments every
// 50 ms, until the test ends; it logs (at debug level) to log, if any.
func collector(t *testing.T, s *store.Store, log io.Writer) *activity.Service {
	t.Helper()
	return collectorWith(t, s, log, nil)
}

// collectorWith is collector with Options.Elsewhere.
func collectorWith(t *testing.T, s *store.Store, log io.Writer, elsewhere func(int64) bool) *activity.Service {
	t.Helper()
	if log == nil {
		log = io.Discard
	}
	logger := slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	return runCollector(t, activity.Options{Store: s, Log: logger, Rescan: 50 * time.Millisecond, SampleEvery: time.Hour,
		Elsewhere: elsewhere})
}

// runCollector runs a collector with o (and an engine manager of its own)
// until the test ends.
func runCollector(t *testing.T, o activity.Options) *activity.Service {
	t.Helper()
	engines := engine.NewManager(o.Log)
	o.Engines = engines
	svc := activity.New(o)
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

// withWitness opens a SQLite store with an environment name on the local
// engine (collecting activity or not) and a witness on the same engine that
// collects from the start: once an event of the witness is stored, the
// other's would have been too.
func withWitness(t *testing.T, name string, collect bool) (*store.Store, store.Environment, store.Environment) {
	t.Helper()
	s, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "berth.db"), storetest.Box(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	env := store.Environment{Name: name, ConnectionType: "socket", SocketPath: enginetest.Socket, CollectActivity: collect}
	witness := store.Environment{Name: "witness", ConnectionType: "socket", SocketPath: enginetest.Socket, CollectActivity: true}
	for _, e := range []*store.Environment{&env, &witness} {
		if err := s.CreateEnvironment(t.Context(), e); err != nil {
			t.Fatal(err)
		}
	}
	return s, env, witness
}

func TestCollectorFollowsEnvironmentsAsTheyAreSwitchedOnAndOff(t *testing.T) {
	enginetest.Require(t)
	t.Parallel()
	label := unique(t)
	t.Cleanup(func() { enginetest.RemoveLabelled(t, label) })
	s, env, witness := withWitness(t, "local", false)
	collector(t, s, nil)

	// Off: nothing of this environment is stored.
	collectedWithin(t, s, label, "off")
	if got, _, err := s.ListActivity(t.Context(), store.ActivityFilter{EnvironmentIDs: []int64{env.ID}}); err != nil || len(got) != 0 {
		t.Fatalf("collected while collectActivity is off: %+v %v", got, err)
	}
	if err := s.DeleteEnvironment(t.Context(), witness.ID); err != nil {
		t.Fatal(err)
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

// An environment whose agent another replica holds is collected there, not
// here; once its agent is held here (or nowhere else), it is collected.
func TestCollectorLeavesAnEnvironmentHeldByAnotherReplica(t *testing.T) {
	enginetest.Require(t)
	t.Parallel()
	label := unique(t)
	t.Cleanup(func() { enginetest.RemoveLabelled(t, label) })
	s, env, witness := withWitness(t, "held-elsewhere", true)
	var elsewhere atomic.Bool
	elsewhere.Store(true)
	collectorWith(t, s, nil, func(id int64) bool { return id == env.ID && elsewhere.Load() })

	collectedWithin(t, s, label, "elsewhere") // the witness's events are stored: the other's would have been too
	if got, _, err := s.ListActivity(t.Context(), store.ActivityFilter{EnvironmentIDs: []int64{env.ID}}); err != nil || len(got) != 0 {
		t.Fatalf("collected an environment another replica holds: %+v %v", got, err)
	}
	if err := s.DeleteEnvironment(t.Context(), witness.ID); err != nil {
		t.Fatal(err)
	}
	elsewhere.Store(false) // the agent came here: the next rescan follows it
	collectedWithin(t, s, label, "here")
}

// Two servers' collectors on one PostgreSQL database follow the same
// engine: each event of a container is stored once, by one of them, and
// the other finds it stored.
func TestTwoCollectorsOnOneDatabaseStoreEachEventOnce(t *testing.T) {
	enginetest.Require(t)
	t.Parallel()
	label := unique(t)
	t.Cleanup(func() { enginetest.RemoveLabelled(t, label) })
	url := storetest.PostgresDatabase(t)
	box := storetest.Box(t)
	open := func() *store.Store {
		s, err := store.Open(t.Context(), url, box)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	a, b := open(), open()
	env := store.Environment{Name: "local", ConnectionType: "socket", SocketPath: enginetest.Socket, CollectActivity: true}
	if err := a.CreateEnvironment(t.Context(), &env); err != nil {
		t.Fatal(err)
	}
	logA, logB := &apitest.LockedBuffer{}, &apitest.LockedBuffer{}
	collector(t, a, logA)
	collector(t, b, logB)
	handled := func(log *apitest.LockedBuffer, name, action string) bool {
		for _, line := range strings.Split(log.String(), "\n") {
			if strings.Contains(line, " name="+name) && strings.Contains(line, " action="+action+" ") {
				return true
			}
		}
		return false
	}

	// Both follow the engine once each has handled a probe's event.
	deadline := time.Now().Add(60 * time.Second)
	for i := 0; ; i++ {
		probe := fmt.Sprintf("probe-%s-%d", label, i)
		bump(t, label, probe)
		ok := false
		for range 20 {
			if ok = handled(logA, probe, "destroy") && handled(logB, probe, "destroy"); ok {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the two collectors did not both follow the engine:\nA:\n%s\nB:\n%s", logA, logB)
		}
	}

	name := "twice-" + label
	bump(t, label, name)
	deadline = time.Now().Add(60 * time.Second)
	for !handled(logA, name, "destroy") || !handled(logB, name, "destroy") {
		if time.Now().After(deadline) {
			t.Fatalf("the destroy of %s was not handled by both collectors:\nA:\n%s\nB:\n%s", name, logA, logB)
		}
		time.Sleep(50 * time.Millisecond)
	}
	got := map[string]int{}
	for _, e := range eventsOf(t, a, name) {
		got[e.Action]++
	}
	if want := map[string]int{"create": 1, "start": 1, "die": 1, "destroy": 1}; !maps.Equal(got, want) {
		t.Errorf("stored events of %s by action = %v, want %v", name, got, want)
	}
	// Each collector handled every event: one stored it, the other found
	// it stored.
	for _, action := range []string{"create", "start", "die", "destroy"} {
		if !handled(logA, name, action) || !handled(logB, name, action) {
			t.Errorf("the %s of %s was not handled by both collectors", action, name)
		}
	}
	stored := strings.Count(logA.String(), "msg=\"activity: event stored\"") + strings.Count(logB.String(), "msg=\"activity: event stored\"")
	found := strings.Count(logA.String(), "already stored") + strings.Count(logB.String(), "already stored")
	if stored == 0 || found == 0 {
		t.Errorf("stored %d and found stored %d events: want each collector to meet events the other stored", stored, found)
	}
}

func unique(t *testing.T) string {
	t.Helper()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
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
