package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/berth-dev/berth/server/internal/config"
)

// healthTimeout bounds one health check; the image's HEALTHCHECK allows 5 s.
const healthTimeout = 3 * time.Second

// healthcheck asks the server configured by the same environment (HOST, PORT)
// whether it is up: nil when GET /api/health answers 200. It is the image's
// HEALTHCHECK, which has no curl or wget to do this.
func healthcheck(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	if len(args) > 0 {
		return fmt.Errorf("healthcheck: unexpected arguments %v (it reads HOST and PORT like serve)", args)
	}
	cfg, err := config.Load(nil, getenv, stderr)
	if err != nil {
		return err
	}
	url := "http://" + net.JoinHostPort(dialHost(cfg.Host), strconv.Itoa(cfg.Port)) + "/api/health"
	ctx, cancel := context.WithTimeout(ctx, healthTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: GET %s: %s", url, resp.Status)
	}
	return nil
}

// dialHost is the address to reach a server listening on host: loopback
// when it listens on every interface.
func dialHost(host string) string {
	switch host {
	case "", "0.0.0.0":
		return "127.0.0.1"
	case "::", "[::]":
		return "::1"
	}
	return host
}
