package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
)

func TestAgentTokenHashFindsItsEnvironmentOnly(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		a, b := createEnvironment(t, s, "edge-a"), createEnvironment(t, s, "edge-b")
		ctx := t.Context()
		if err := s.SetAgentTokenHash(ctx, a.ID, "hash-a"); err != nil {
			t.Fatal(err)
		}
		got, err := s.EnvironmentByAgentTokenHash(ctx, "hash-a")
		if err != nil || got.ID != a.ID || got.AgentTokenHash != "hash-a" {
			t.Fatalf("EnvironmentByAgentTokenHash = %d %q, %v; want environment %d", got.ID, got.AgentTokenHash, err, a.ID)
		}
		if !got.UpdatedAt.Equal(a.UpdatedAt) {
			t.Errorf("setting the token hash changed UpdatedAt: %v → %v", a.UpdatedAt, got.UpdatedAt)
		}
		for _, h := range []string{"hash-b", ""} {
			if _, err := s.EnvironmentByAgentTokenHash(ctx, h); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("EnvironmentByAgentTokenHash(%q) err = %v, want ErrNotFound", h, err)
			}
		}
		// Rotation replaces the digest; a digest cannot belong to two environments.
		if err := s.SetAgentTokenHash(ctx, a.ID, "hash-a2"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.EnvironmentByAgentTokenHash(ctx, "hash-a"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("the rotated-out digest still finds an environment: %v", err)
		}
		if err := s.SetAgentTokenHash(ctx, b.ID, "hash-a2"); !errors.Is(err, store.ErrConflict) {
			t.Errorf("a second environment with the same digest: err = %v, want ErrConflict", err)
		}
		if err := s.SetAgentTokenHash(ctx, 9999, "x"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("unknown environment: err = %v, want ErrNotFound", err)
		}
	})
}

func TestSetAgentSeenKeepsUpdatedAt(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		e := createEnvironment(t, s, "edge")
		ctx := t.Context()
		seen := time.Date(2026, 11, 23, 10, 0, 0, 123456000, time.UTC)
		err := s.SetAgentSeen(ctx, e.ID, store.AgentSeen{ID: "id-1", Name: "host-1", Version: "1.0.0",
			Capabilities: []string{"exec", "compose"}, LastSeen: seen})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.TouchAgent(ctx, e.ID, seen.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetEnvironment(ctx, e.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := store.AgentSeen{ID: "id-1", Name: "host-1", Version: "1.0.0", Capabilities: []string{"exec", "compose"}, LastSeen: seen.Add(time.Minute)}
		have := store.AgentSeen{ID: got.AgentID, Name: got.AgentName, Version: got.AgentVersion, Capabilities: got.AgentCapabilities}
		if got.AgentLastSeen != nil {
			have.LastSeen = *got.AgentLastSeen
		}
		if diff := cmp.Diff(want, have, approxTime); diff != "" {
			t.Errorf("agent fields (-want +got):\n%s", diff)
		}
		if !got.UpdatedAt.Equal(e.UpdatedAt) {
			t.Errorf("UpdatedAt changed: %v → %v", e.UpdatedAt, got.UpdatedAt)
		}
	})
}
