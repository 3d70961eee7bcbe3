package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"
)

// requestTimeout bounds each measured request.
const requestTimeout = 30 * time.Second

// endpoint is one container list being measured.
type endpoint struct {
	name   string
	url    string
	client *http.Client // shared, keep-alive
	min    int          // fewest containers a valid answer lists
	bearer string       // API token, when the endpoint requires sign-in
	gzip   bool         // ask for a gzipped answer (the transport unzips it); otherwise ask for none
}

// result is one endpoint's samples and the size of its last answer.
type result struct {
	name    string
	samples []time.Duration
	listed  int
}

// measure warms up each endpoint, then requests them in turn (berth, raw,
// berth, raw, …) iterations times each, timing every request and body read.
func measure(ctx context.Context, eps []*endpoint, warmup, iterations int) ([]result, error) {
	res := make([]result, len(eps))
	for i, ep := range eps {
		res[i].name = ep.name
		for range warmup {
			if _, _, err := ep.get(ctx); err != nil {
				return nil, err
			}
		}
	}
	for range iterations {
		for i, ep := range eps {
			d, n, err := ep.get(ctx)
			if err != nil {
				return nil, err
			}
			res[i].samples = append(res[i].samples, d)
			res[i].listed = n
		}
	}
	return res, nil
}

// get requests the list once and returns how long the request and body read
// took and how many containers the answer lists. An answer that is not a
// 200 with a JSON array of at least ep.min entries is an error: timing an
// error page would measure nothing.
func (ep *endpoint) get(ctx context.Context) (time.Duration, int, error) {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ep.url, nil)
	if err != nil {
		return 0, 0, err
	}
	start := time.Now()
	if ep.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+ep.bearer)
	}
	if !ep.gzip {
		// Set by hand, the header stops the transport from asking for gzip.
		req.Header.Set("Accept-Encoding", "identity")
	}
	resp, err := ep.client.Do(req)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w", ep.name, err)
	}
	body, err := io.ReadAll(resp.Body)
	d := time.Since(start)
	resp.Body.Close()
	if err != nil {
		return 0, 0, fmt.Errorf("%s: read body: %w", ep.name, err)
	}
	if resp.StatusCode != http.StatusOK {
		return 0, 0, fmt.Errorf("%s: status %d: %s", ep.name, resp.StatusCode, bytes.TrimSpace(body))
	}
	var list []json.RawMessage
	if err := json.Unmarshal(body, &list); err != nil {
		return 0, 0, fmt.Errorf("%s: answer is not a JSON array: %w", ep.name, err)
	}
	if len(list) < ep.min {
		return 0, 0, fmt.Errorf("%s: lists %d entries, want at least %d", ep.name, len(list), ep.min)
	}
	return d, len(list), nil
}

// summary holds the percentiles the report shows.
type summary struct {
	min, p10, median, p90 time.Duration
}

func summarize(samples []time.Duration) summary {
	s := slices.Clone(samples)
	slices.Sort(s)
	return summary{min: s[0], p10: percentile(s, 10), median: percentile(s, 50), p90: percentile(s, 90)}
}

// percentile returns the p-th percentile of sorted, interpolating linearly
// between the two nearest ranks.
func percentile(sorted []time.Duration, p float64) time.Duration {
	pos := p / 100 * float64(len(sorted)-1)
	lo := int(pos)
	if lo+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	frac := pos - float64(lo)
	return sorted[lo] + time.Duration(frac*float64(sorted[lo+1]-sorted[lo]))
}

// report prints the table and the ratios of berth (res[0]) to raw (res[1]).
func report(w io.Writer, ver engineVersion, cfg config, res []result) {
	fmt.Fprintf(w, "engine %s (API %s), %d containers created (not started), %d iterations after %d warm-up\n\n",
		ver.Version, ver.APIVersion, cfg.containers, cfg.iterations, cfg.warmup)
	fmt.Fprintf(w, "%-6s %8s %10s %10s %10s %10s\n", "", "listed", "median ms", "p10 ms", "p90 ms", "min ms")
	sums := make([]summary, len(res))
	for i, r := range res {
		sums[i] = summarize(r.samples)
		fmt.Fprintf(w, "%-6s %8d %10s %10s %10s %10s\n", r.name, r.listed,
			ms(sums[i].median), ms(sums[i].p10), ms(sums[i].p90), ms(sums[i].min))
	}
	berth, raw := sums[0], sums[1]
	fmt.Fprintf(w, "\nratio: %.2fx\n", float64(berth.median)/float64(raw.median))
	fmt.Fprintf(w, "p90 ratio: %.2fx\n", float64(berth.p90)/float64(raw.p90))
	for i, extra := range sums[2:] {
		fmt.Fprintf(w, "ratio of %s: %.2fx (p90 %.2fx)\n", res[i+2].name,
			float64(extra.median)/float64(raw.median), float64(extra.p90)/float64(raw.p90))
	}
}

// wireSizes returns how many bytes the answer of url takes on the wire
// without and with gzip.
func wireSizes(ctx context.Context, url, bearer string) (plain, gzipped int, err error) {
	rt := &http.Transport{DisableCompression: true} // sends no Accept-Encoding and unzips nothing
	defer rt.CloseIdleConnections()
	for _, enc := range []string{"identity", "gzip"} {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return 0, 0, err
		}
		req.Header.Set("Authorization", "Bearer "+bearer)
		req.Header.Set("Accept-Encoding", enc)
		resp, err := rt.RoundTrip(req)
		if err != nil {
			return 0, 0, err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return 0, 0, err
		}
		if enc == "gzip" {
			if resp.Header.Get("Content-Encoding") != "gzip" {
				return 0, 0, fmt.Errorf("%s: not gzipped although the client accepts it", url)
			}
			gzipped = len(body)
		} else {
			plain = len(body)
		}
	}
	return plain, gzipped, nil
}

func ms(d time.Duration) string {
	return fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond))
}
