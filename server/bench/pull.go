package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/berth-dev/berth/server/internal/apitest"
)

// pullBench measures pulling the ~50 MB bench image from the local registry
// through Berth (POST /api/images/pull, synchronous) against the raw Engine
// API (POST /images/create with the same credentials), removing the image
// before every pull so that each one transfers its layers.
type pullBench struct {
	image, registry, user, password string
}

func pullBenchFromEnv() (pullBench, bool) {
	b := pullBench{image: os.Getenv("BERTH_TEST_BENCH_IMAGE"), registry: os.Getenv("BERTH_TEST_REGISTRY"),
		user: os.Getenv("BERTH_TEST_REGISTRY_USER"), password: os.Getenv("BERTH_TEST_REGISTRY_PASSWORD")}
	return b, b.image != "" && b.registry != ""
}

func (pb pullBench) run(ctx context.Context, eng rawEngine, srv *apitest.Berth, token string, rounds int, out io.Writer) error {
	// Berth takes the credentials from a configured registry, never from the request.
	reg := map[string]any{"name": "bench", "url": pb.registry, "username": pb.user, "password": pb.password}
	if err := berthJSON(ctx, srv, token, "POST", "/api/registries", reg, nil); err != nil {
		return fmt.Errorf("configure registry: %w", err)
	}
	auth, _ := json.Marshal(map[string]string{"username": pb.user, "password": pb.password, "serveraddress": pb.registry})
	xauth := base64.URLEncoding.EncodeToString(auth)

	var berthTimes, rawTimes []time.Duration
	for i := 0; i < rounds; i++ {
		for _, via := range []string{"berth", "raw"} {
			if err := eng.removeImage(ctx, pb.image); err != nil {
				return err
			}
			start := time.Now()
			var err error
			if via == "berth" {
				var res map[string]any
				err = berthJSON(ctx, srv, token, "POST", "/api/images/pull?env=1", map[string]any{"image": pb.image, "scanAfterPull": false}, &res)
				if err == nil && res["status"] != "complete" {
					err = fmt.Errorf("pull through Berth: %v", res)
				}
			} else {
				err = eng.pull(ctx, pb.image, xauth)
			}
			if err != nil {
				return err
			}
			d := time.Since(start)
			if via == "berth" {
				berthTimes = append(berthTimes, d)
			} else {
				rawTimes = append(rawTimes, d)
			}
		}
	}
	b, r := summarize(berthTimes), summarize(rawTimes)
	fmt.Fprintf(out, "\npull of %s (~50 MB, local registry), %d rounds, image removed before each pull\n\n", pb.image, rounds)
	fmt.Fprintf(out, "%-6s %10s %10s %10s\n", "", "median ms", "min ms", "p90 ms")
	fmt.Fprintf(out, "%-6s %10s %10s %10s\n", "berth", ms(b.median), ms(b.min), ms(b.p90))
	fmt.Fprintf(out, "%-6s %10s %10s %10s\n", "raw", ms(r.median), ms(r.min), ms(r.p90))
	fmt.Fprintf(out, "\npull ratio: %.2fx\n", float64(b.median)/float64(r.median))
	return eng.removeImage(ctx, pb.image)
}

// berthJSON sends a request to Berth with the API token and decodes the answer.
func berthJSON(ctx context.Context, srv *apitest.Berth, token, method, path string, in, out any) error {
	body, _ := json.Marshal(in)
	req, err := http.NewRequestWithContext(ctx, method, srv.URL+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := srv.Client().Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, data)
	}
	if out != nil {
		return json.Unmarshal(data, out)
	}
	return nil
}

// pull pulls ref through the raw Engine API and reads the stream to its end.
func (e rawEngine) pull(ctx context.Context, ref, xauth string) error {
	name, tag := ref, "latest"
	if i := strings.LastIndex(ref, ":"); i > 0 && !strings.Contains(ref[i:], "/") {
		name, tag = ref[:i], ref[i+1:]
	}
	req, err := http.NewRequestWithContext(ctx, "POST", "http://engine/images/create?fromImage="+url.QueryEscape(name)+"&tag="+url.QueryEscape(tag), nil)
	if err != nil {
		return err
	}
	req.Header.Set("X-Registry-Auth", xauth)
	resp, err := e.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != 200 || bytes.Contains(data, []byte(`"error"`)) {
		return fmt.Errorf("raw pull: %d %s", resp.StatusCode, lastLine(data))
	}
	return nil
}

// removeImage removes ref (and its layers not used elsewhere) if present.
func (e rawEngine) removeImage(ctx context.Context, ref string) error {
	req, err := http.NewRequestWithContext(ctx, "DELETE", "http://engine/images/"+url.PathEscape(ref)+"?force=1", nil)
	if err != nil {
		return err
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != 200 && resp.StatusCode != 404 {
		return fmt.Errorf("remove %s: status %d", ref, resp.StatusCode)
	}
	return nil
}

func lastLine(b []byte) string {
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	return string(lines[len(lines)-1])
}
