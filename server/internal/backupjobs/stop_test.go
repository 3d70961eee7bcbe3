package backupjobs

import (
	"testing"
)

// TestStopRestoreStopsOnlyWhatTheCallerMay: a stop names a snapshot (or a
// prefix, or none) and an environment (or none); only the restores of the
// environments the caller may manage stop, and one of another environment
// is as if there were none.
func TestStopRestoreStopsOnlyWhatTheCallerMay(t *testing.T) {
	s := New(Options{})
	stopped := map[string]bool{}
	add := func(id string, env int64) {
		s.restores[id] = restoring{envID: env, cancel: func() { stopped[id] = true }}
	}
	add("aaaa1111bbbb", 1)
	add("cccc2222dddd", 2)
	add("eeee3333ffff", 2)
	onlyEnv1 := func(env int64) bool { return env == 1 }

	if s.StopRestore("cccc2222", 0, onlyEnv1) || stopped["cccc2222dddd"] {
		t.Fatal("a caller of environment 1 stopped environment 2's restore")
	}
	if s.StopRestore("", 2, onlyEnv1) || len(stopped) != 0 {
		t.Fatalf("a caller of environment 1 stopped environment 2's restores: %v", stopped)
	}
	if !s.StopRestore("aaaa", 0, onlyEnv1) || !stopped["aaaa1111bbbb"] || len(stopped) != 1 {
		t.Fatalf("the caller's own restore by prefix: %v", stopped)
	}
	if !s.StopRestore("", 2, nil) || !stopped["cccc2222dddd"] || !stopped["eeee3333ffff"] {
		t.Fatalf("every restore of environment 2: %v", stopped)
	}
	if s.StopRestore("", 3, nil) {
		t.Fatal("a stop of an environment without restores said it stopped one")
	}
}
