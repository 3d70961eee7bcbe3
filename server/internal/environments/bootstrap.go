// Package environments sets up the environments Berth manages at start-up:
// the local engine's environment on the first start.
package environments

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
)

// LocalName is the name of the environment created for the local engine.
const LocalName = "local"

// Bootstrap creates the local environment (id 1) on the first start, when
// the local engine answers at socket and no environment exists yet. It does
// nothing on later starts, even if every environment was deleted since, and
// then asks no engine anything.
func Bootstrap(ctx context.Context, st *store.Store, m *engine.Manager, socket string, log *slog.Logger) error {
	switch settled, err := st.FirstEnvironmentSettled(ctx); {
	case err != nil:
		return err
	case settled:
		return nil
	}
	env := store.Environment{
		Name: LocalName, ConnectionType: engine.Socket, SocketPath: socket, Port: 2375, Protocol: "http",
		Icon: "globe", Labels: []string{}, CollectActivity: true, CollectMetrics: true, HighlightChanges: true,
	}
	if _, err := m.Test(ctx, env.Endpoint()); err != nil {
		log.Info("no local engine answers; not creating the local environment", "socket", socket, "err", err)
		return nil
	}
	created, err := st.CreateFirstEnvironment(ctx, &env)
	if err != nil {
		return fmt.Errorf("create local environment: %w", err)
	}
	if created {
		log.Info("created the local environment", "id", env.ID, "socket", socket)
	}
	return nil
}
