package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/berth-dev/berth/server/internal/apitest"
	"github.com/berth-dev/berth/server/internal/containers"
)

// benchRunning starts the bench containers and measures, over them running:
//   - the container list warm (repeated) and cold (the first list after
//     Berth's cached per-container facts expired: each cold sample waits
//     containers.RestartTTL first), both against the raw engine's list;
//   - a stats pass (GET /api/containers/stats) against the raw engine's
//     own pass with full fan-out (every container's stream=false sample
//     asked at once), rounds times each, the first Berth pass (no earlier
//     sample to measure CPU from) reported apart.
//
// The containers stay running; the run's cleanup removes them.
func benchRunning(ctx context.Context, srv *apitest.Berth, token string, eng rawEngine, cfg config, g *goals, out io.Writer) error {
	ids, err := eng.benchIDs(ctx, false)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nstarting the %d bench containers …\n", len(ids))
	if err := eng.startAll(ctx, ids); err != nil {
		return err
	}
	running, err := eng.benchIDs(ctx, true)
	if err != nil {
		return err
	}
	n := len(running)

	berth := endpoint{name: "berth", url: srv.URL + "/api/containers?all=true&env=1", client: srv.Client(), min: n, bearer: token}
	raw := endpoint{name: "raw", url: "http://engine/containers/json?all=1", client: eng.client, min: n}
	res, err := measure(ctx, []*endpoint{&berth, &raw}, cfg.warmup, cfg.iterations)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\ncontainer list with %d running containers, warm (%d iterations after %d warm-up; goal <= 1.0x):\n", n, cfg.iterations, cfg.warmup)
	g.warm = printRatio(out, res)

	if cfg.cold > 0 {
		cold := []result{{name: "berth"}, {name: "raw"}}
		for sample := range cfg.cold {
			prof, err := coldProfile(cfg.coldProfile, sample)
			if err != nil {
				return err
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(containers.RestartTTL + time.Second):
			}
			// Raw first, then Berth, then the other way round: the
			// second of two calls may find the engine warmer (or still
			// busy with the first).
			order := []int{1, 0}
			if sample%2 == 1 {
				order = []int{0, 1}
			}
			for _, i := range order {
				ep := []*endpoint{&berth, &raw}[i]
				if i == 0 && prof != nil {
					// 1 kHz: a list lasts tens of milliseconds (the
					// profile's header still says 100 Hz: compare
					// shares, not times).
					runtime.SetCPUProfileRate(1000)
					_ = pprof.StartCPUProfile(prof)
				}
				d, listed, err := ep.get(ctx)
				if i == 0 && prof != nil {
					pprof.StopCPUProfile()
					if err := prof.Close(); err != nil {
						return err
					}
				}
				if err != nil {
					return err
				}
				cold[i].samples, cold[i].listed = append(cold[i].samples, d), listed
			}
		}
		fmt.Fprintf(out, "\ncontainer list with %d running containers, cold (first list after %v without one; %d samples; goal <= 1.3x):\n",
			n, containers.RestartTTL, cfg.cold)
		g.cold = printRatio(out, cold)
	}

	if cfg.stats > 0 {
		var rawPass, berthFirst, berthPass []time.Duration
		var rawN, berthN int
		for round := range cfg.stats {
			d, got, err := eng.statsPass(ctx, running)
			if err != nil {
				return err
			}
			rawPass, rawN = append(rawPass, d), got
			d, got, err = berthStatsPass(ctx, srv, token)
			if err != nil {
				return err
			}
			berthN = got
			if round == 0 {
				berthFirst = append(berthFirst, d)
			} else {
				berthPass = append(berthPass, d)
			}
		}
		g.statsN = n
		if len(berthPass) > 0 {
			g.stats = float64(median(berthPass)) / float64(median(rawPass))
		} else {
			g.stats = float64(berthFirst[0]) / float64(median(rawPass))
		}
		fmt.Fprintf(out, "\nstats pass over %d running containers (%d rounds; goal <= 1.0x): raw engine, all %d samples asked at once (stream=false): median %s ms (%d samples)\n",
			n, cfg.stats, n, ms(median(rawPass)), rawN)
		fmt.Fprintf(out, "  berth GET /api/containers/stats, first pass (no earlier sample): %s ms (%d samples), ratio %.2fx\n",
			ms(berthFirst[0]), berthN, float64(berthFirst[0])/float64(median(rawPass)))
		if len(berthPass) > 0 {
			fmt.Fprintf(out, "  berth GET /api/containers/stats, later passes: median %s ms, ratio %.2fx\n",
				ms(median(berthPass)), float64(median(berthPass))/float64(median(rawPass)))
		}
	}
	return nil
}

// printRatio prints res[0] (berth) and res[1] (raw) and their ratio, and
// returns the ratio of the medians.
func printRatio(out io.Writer, res []result) float64 {
	fmt.Fprintf(out, "%-6s %8s %10s %10s %10s\n", "", "listed", "median ms", "p90 ms", "min ms")
	sums := make([]summary, len(res))
	for i, r := range res {
		sums[i] = summarize(r.samples)
		fmt.Fprintf(out, "%-6s %8d %10s %10s %10s\n", r.name, r.listed, ms(sums[i].median), ms(sums[i].p90), ms(sums[i].min))
	}
	r := float64(sums[0].median) / float64(sums[1].median)
	fmt.Fprintf(out, "ratio: %.2fx (p90 %.2fx)\n", r, float64(sums[0].p90)/float64(sums[1].p90))
	return r
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// benchIDs lists the ids of the bench containers (running ones only, or all).
func (e rawEngine) benchIDs(ctx context.Context, running bool) ([]string, error) {
	filters, _ := json.Marshal(map[string][]string{"label": {benchLabel + "=1"}})
	path := "/containers/json?filters=" + url.QueryEscape(string(filters))
	if !running {
		path += "&all=1"
	}
	var list []struct {
		ID string `json:"Id"`
	}
	if err := e.do(ctx, http.MethodGet, path, nil, http.StatusOK, &list); err != nil {
		return nil, fmt.Errorf("list bench containers: %w", err)
	}
	ids := make([]string, len(list))
	for i, c := range list {
		ids[i] = c.ID
	}
	return ids, nil
}

// startBench starts the bench containers.
func (e rawEngine) startBench(ctx context.Context, out io.Writer) error {
	ids, err := e.benchIDs(ctx, false)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "starting the %d bench containers …\n", len(ids))
	return e.startAll(ctx, ids)
}

// startAll starts the containers ids (a running one is left as it is).
func (e rawEngine) startAll(ctx context.Context, ids []string) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(parallel)
	for _, id := range ids {
		g.Go(func() error {
			err := e.do(gctx, http.MethodPost, "/containers/"+id+"/start", nil, http.StatusNoContent, nil)
			if err != nil && !strings.Contains(err.Error(), "status 304") { // 304: already running
				return fmt.Errorf("start container %.12s: %w", id, err)
			}
			return nil
		})
	}
	return g.Wait()
}

// statsPass asks the engine for one stream=false sample of every container
// of ids at once (the raw engine's full fan-out) and returns how long all
// took and how many answered.
func (e rawEngine) statsPass(ctx context.Context, ids []string) (time.Duration, int, error) {
	start := time.Now()
	var (
		mu sync.Mutex
		n  int
	)
	g, gctx := errgroup.WithContext(ctx)
	for _, id := range ids {
		g.Go(func() error {
			var s struct {
				Read string `json:"read"`
			}
			if err := e.do(gctx, http.MethodGet, "/containers/"+id+"/stats?stream=false", nil, http.StatusOK, &s); err != nil {
				return fmt.Errorf("raw stats of %.12s: %w", id, err)
			}
			mu.Lock()
			n++
			mu.Unlock()
			return nil
		})
	}
	err := g.Wait()
	return time.Since(start), n, err
}

// berthStatsPass times one GET /api/containers/stats and returns how many
// containers it sampled.
func berthStatsPass(ctx context.Context, srv *apitest.Berth, token string) (time.Duration, int, error) {
	start := time.Now()
	var all []json.RawMessage
	if err := apiDo(ctx, srv, token, http.MethodGet, "/api/containers/stats?env=1", nil, &all); err != nil {
		return 0, 0, fmt.Errorf("berth stats pass: %w", err)
	}
	return time.Since(start), len(all), nil
}

// coldProfile returns the file the CPU profile of cold sample n is written
// to, path.n (nil without -cold-cpuprofile); go tool pprof merges the
// files given together.
func coldProfile(path string, n int) (*os.File, error) {
	if path == "" {
		return nil, nil
	}
	return os.Create(fmt.Sprintf("%s.%d", path, n))
}
