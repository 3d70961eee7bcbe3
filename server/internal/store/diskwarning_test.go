package store_test

import (
	"context"
	"testing"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
)

// A disk warning defaults to off at 90%, round-trips, and goes with its
// environment (a later environment given the same id starts from the
// default).
func TestDiskWarningRoundTripAndGoesWithItsEnvironment(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		env := store.Environment{Name: "dw", ConnectionType: "socket", SocketPath: "/var/run/docker.sock"}
		if err := s.CreateEnvironment(ctx, &env); err != nil {
			t.Fatal(err)
		}
		if got, err := s.GetDiskWarning(ctx, env.ID); err != nil || got != store.DefaultDiskWarning {
			t.Fatalf("default = %+v, %v", got, err)
		}
		want := store.DiskWarning{Enabled: true, ThresholdPercent: 42}
		if err := s.SetDiskWarning(ctx, env.ID, want); err != nil {
			t.Fatal(err)
		}
		if got, err := s.GetDiskWarning(ctx, env.ID); err != nil || got != want {
			t.Fatalf("saved = %+v, %v", got, err)
		}
		if err := s.DeleteEnvironment(ctx, env.ID); err != nil {
			t.Fatal(err)
		}
		if got, err := s.GetDiskWarning(ctx, env.ID); err != nil || got != store.DefaultDiskWarning {
			t.Errorf("after the environment was deleted = %+v, %v", got, err)
		}
	})
}
