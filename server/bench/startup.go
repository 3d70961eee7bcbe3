package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/berth-dev/berth/shared/enginetest"
)

// startupSample is one start of the real server binary.
type startupSample struct {
	ready   time.Duration // from exec to the first 200 of /api/health
	idleRSS int64         // resident set size in bytes after idleWait of no requests
	anonRSS int64         // of which anonymous (heap, stacks): the rest is the binary mapped from its file
}

// idleWait is how long the server sits without requests before its RSS is read.
const idleWait = 2 * time.Second

// benchStartup starts the server binary rounds times with a fresh data
// directory (SQLite, a new encryption key, the local environment
// bootstrapped against the test engine) and once more on the directory that
// start left (the database exists: migrations are already applied), and
// reports start-to-ready and idle RSS of both.
func benchStartup(ctx context.Context, binary string, rounds int, out io.Writer) error {
	if _, err := os.Stat(binary); err != nil {
		return fmt.Errorf("server binary %s: %w (run make build)", binary, err)
	}
	var fresh, existing []startupSample
	for range rounds {
		dir, err := os.MkdirTemp("", "berth-bench-start-")
		if err != nil {
			return err
		}
		first, err := startOnce(ctx, binary, dir)
		if err == nil {
			var again startupSample
			again, err = startOnce(ctx, binary, dir)
			fresh, existing = append(fresh, first), append(existing, again)
		}
		os.RemoveAll(dir)
		if err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "\nserver binary %s, %d starts each:\n", binary, rounds)
	reportStarts(out, "empty data directory", fresh)
	reportStarts(out, "existing data directory", existing)
	return nil
}

// reportStarts prints the medians and extremes of samples.
func reportStarts(out io.Writer, what string, samples []startupSample) {
	ready := make([]time.Duration, len(samples))
	rss := make([]int64, len(samples))
	anon := make([]int64, len(samples))
	for i, s := range samples {
		ready[i], rss[i], anon[i] = s.ready, s.idleRSS, s.anonRSS
	}
	slices.Sort(ready)
	slices.Sort(rss)
	slices.Sort(anon)
	fmt.Fprintf(out, "  %s: start-to-ready (exec → first 200 of /api/health) median %v (min %v, max %v); idle RSS after %v median %.1f MB (max %.1f MB), anonymous %.1f MB\n",
		what, ready[len(ready)/2].Round(time.Millisecond), ready[0].Round(time.Millisecond), ready[len(ready)-1].Round(time.Millisecond),
		idleWait, float64(rss[len(rss)/2])/1e6, float64(rss[len(rss)-1])/1e6, float64(anon[len(anon)/2])/1e6)
}

// startOnce runs one server process on the data directory under dir until
// it is ready and idle, measures it and stops it.
func startOnce(ctx context.Context, binary, dir string) (startupSample, error) {
	port, err := freePort()
	if err != nil {
		return startupSample{}, err
	}
	cmd := exec.CommandContext(ctx, binary, "serve")
	cmd.Env = append(os.Environ(), "HOST=127.0.0.1", "PORT="+strconv.Itoa(port),
		"DATA_DIR="+filepath.Join(dir, "data"), "DATABASE_URL=", "DOCKER_SOCKET="+enginetest.Socket)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return startupSample{}, err
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}()
	url := fmt.Sprintf("http://127.0.0.1:%d/api/health", port)
	hc := &http.Client{Timeout: time.Second}
	deadline := start.Add(30 * time.Second)
	var s startupSample
	for {
		if resp, err := hc.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				s.ready = time.Since(start)
				break
			}
		}
		if time.Now().After(deadline) {
			return s, errors.New("the server did not answer /api/health within 30 s")
		}
		select {
		case <-ctx.Done():
			return s, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
	hc.CloseIdleConnections()
	select {
	case <-ctx.Done():
		return s, ctx.Err()
	case <-time.After(idleWait):
	}
	if s.idleRSS, err = statusBytes(cmd.Process.Pid, "VmRSS:"); err != nil {
		return s, err
	}
	s.anonRSS, err = statusBytes(cmd.Process.Pid, "RssAnon:")
	return s, err
}

// statusBytes reads a size field (VmRSS:, RssAnon:) of a process's /proc status.
func statusBytes(pid int, field string) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("%s %q: %w", field, rest, err)
			}
			return kb * 1024, nil
		}
	}
	return 0, fmt.Errorf("no %s in /proc status", field)
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
