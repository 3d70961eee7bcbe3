package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"golang.org/x/sync/errgroup"
)

// benchLabel marks the containers this command creates.
const benchLabel = "berth.bench"

// engineTimeout bounds each setup or cleanup call to the engine.
const engineTimeout = 30 * time.Second

// parallel bounds concurrent creations and removals.
const parallel = 8

// rawEngine talks to the Engine API over its unix socket, unversioned, for
// setup, cleanup and the baseline.
type rawEngine struct {
	client *http.Client
}

// engineVersion is the part of GET /version that the report shows.
type engineVersion struct {
	Version    string
	APIVersion string `json:"ApiVersion"`
}

func (e rawEngine) version(ctx context.Context) (engineVersion, error) {
	var v engineVersion
	err := e.do(ctx, http.MethodGet, "/version", nil, http.StatusOK, &v)
	return v, err
}

// stackSize is how many bench containers share one compose project.
const stackSize = 10

// createContainers creates n stopped containers named berth-bench-<i>,
// labelled as members of compose projects of stackSize containers.
func (e rawEngine) createContainers(ctx context.Context, image string, n int) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(parallel)
	for i := range n {
		g.Go(func() error {
			body := map[string]any{
				"Image": image,
				"Cmd":   []string{"sleep", "3600"},
				// Ten containers per compose project, so that the stack list
				// has projects to group.
				"Labels": map[string]string{benchLabel: "1", "com.docker.compose.project": fmt.Sprintf("berth-bench-%d", i/stackSize),
					"com.docker.compose.service": fmt.Sprintf("svc%d", i%stackSize)},
			}
			path := "/containers/create?name=" + url.QueryEscape(fmt.Sprintf("berth-bench-%d", i))
			if err := e.do(gctx, http.MethodPost, path, body, http.StatusCreated, nil); err != nil {
				return fmt.Errorf("create container %d: %w", i, err)
			}
			return nil
		})
	}
	return g.Wait()
}

// removeBenchContainers force-removes every container labelled berth.bench=1.
func (e rawEngine) removeBenchContainers(ctx context.Context) error {
	filters, _ := json.Marshal(map[string][]string{"label": {benchLabel + "=1"}})
	var list []struct {
		ID string `json:"Id"`
	}
	if err := e.do(ctx, http.MethodGet, "/containers/json?all=1&filters="+url.QueryEscape(string(filters)), nil, http.StatusOK, &list); err != nil {
		return fmt.Errorf("list containers: %w", err)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(parallel)
	for _, c := range list {
		g.Go(func() error {
			err := e.do(gctx, http.MethodDelete, "/containers/"+c.ID+"?force=1&v=1", nil, http.StatusNoContent, nil)
			if err != nil {
				return fmt.Errorf("remove container %.12s: %w", c.ID, err)
			}
			return nil
		})
	}
	return g.Wait()
}

// do sends one request to the engine and decodes the answer into out (unless
// nil), failing unless the status is want.
func (e rawEngine) do(ctx context.Context, method, path string, in any, want int, out any) error {
	ctx, cancel := context.WithTimeout(ctx, engineTimeout)
	defer cancel()
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://engine"+path, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s: status %d: %s", method, path, resp.StatusCode, bytes.TrimSpace(b))
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(b, out)
}
