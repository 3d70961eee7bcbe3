package activity_test

import (
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/activity"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/enginetest"
)

// An environment away (an edge agent not connected here) is neither
// followed nor sampled; Poke (an agent connected) has it followed without
// waiting for the next rescan (here an hour).
func TestCollectorLeavesAnAwayEnvironmentUntilPoked(t *testing.T) {
	enginetest.Require(t)
	t.Parallel()
	label := unique(t)
	t.Cleanup(func() { enginetest.RemoveLabelled(t, label) })
	s, env, witness := withWitness(t, "away", true)
	var away atomic.Bool
	away.Store(true)
	svc := runCollector(t, activity.Options{Store: s, Log: slog.New(slog.DiscardHandler), Rescan: time.Hour,
		SampleEvery: time.Hour, Away: func(e store.Environment) bool { return e.ID == env.ID && away.Load() }})

	collectedWithin(t, s, label, "away") // the witness's events are stored: the other's would have been too
	if got, _, err := s.ListActivity(t.Context(), store.ActivityFilter{EnvironmentIDs: []int64{env.ID}}); err != nil || len(got) != 0 {
		t.Fatalf("collected an environment that is away: %+v %v", got, err)
	}
	if err := s.DeleteEnvironment(t.Context(), witness.ID); err != nil {
		t.Fatal(err)
	}
	away.Store(false)
	svc.Poke()
	collectedWithin(t, s, label, "back")
}
