// Package apitest provides a Berth served in-process over real HTTP, wired as
// "berth serve" wires it, for integration tests and benchmarks.
package apitest

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"

	"github.com/berth-dev/berth/internal/api"
	"github.com/berth-dev/berth/internal/engine"
	"github.com/berth-dev/berth/internal/enginetest"
	"github.com/berth-dev/berth/internal/secret"
	"github.com/berth-dev/berth/internal/store"
)

// Berth is a running in-process server.
type Berth struct {
	URL     string
	Store   *store.Store
	Engines *engine.Manager
	srv     *httptest.Server
}

// Start serves a Berth on the SQLite file dbPath with the real local engine
// (enginetest.Socket) bootstrapped as environment 1.
func Start(ctx context.Context, dbPath string, box *secret.Box, log *slog.Logger) (*Berth, error) {
	st, err := store.Open(ctx, dbPath, box)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	engines := engine.NewManager(log)
	if err := engine.Bootstrap(ctx, st, engines, enginetest.Socket, log); err != nil {
		engines.Close()
		st.Close()
		return nil, fmt.Errorf("bootstrap local environment: %w", err)
	}
	srv := httptest.NewServer(api.New(api.Deps{Log: log, Store: st, Engines: engines}).Handler())
	return &Berth{URL: srv.URL, Store: st, Engines: engines, srv: srv}, nil
}

// Client returns a keep-alive client for the server.
func (b *Berth) Client() *http.Client { return b.srv.Client() }

// Close stops the server (ending open streams) and closes the store.
func (b *Berth) Close() {
	b.srv.CloseClientConnections()
	b.srv.Close()
	b.Engines.Close()
	b.Store.Close()
}
