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
		first, err := startOnce(ctx, binary, dir, startOpts{socket: enginetest.Socket})
		if err == nil {
			var again startupSample
			again, err = startOnce(ctx, binary, dir, startOpts{socket: enginetest.Socket})
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

// startOpts are the conditions of one start.
type startOpts struct {
	socket string         // DOCKER_SOCKET: the local environment's engine
	stall  *stalledEngine // stopped from before the start until ready (nil: none); no idle RSS is read
}

// startOnce runs one server process on the data directory under dir until
// it is ready and idle, measures it and stops it.
func startOnce(ctx context.Context, binary, dir string, o startOpts) (startupSample, error) {
	port, err := freePort()
	if err != nil {
		return startupSample{}, err
	}
	cmd := exec.CommandContext(ctx, binary, "serve")
	cmd.Env = append(os.Environ(), "HOST=127.0.0.1", "PORT="+strconv.Itoa(port),
		"DATA_DIR="+filepath.Join(dir, "data"), "DATABASE_URL=", "DOCKER_SOCKET="+o.socket)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if o.stall != nil {
		if err := o.stall.stop(); err != nil {
			return startupSample{}, err
		}
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		if o.stall != nil {
			o.stall.resume()
		}
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
	if o.stall != nil {
		// Resumed once ready (below), and in any case before the server is
		// stopped (deferred calls run last in, first out).
		defer o.stall.resume()
	}
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
	if o.stall != nil {
		o.stall.resume()
		return s, nil
	}
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

// stalledEngine is a test dockerd stopped with SIGSTOP: its socket still
// accepts connections (the kernel's backlog) but nothing answers, as when an
// engine hangs.
type stalledEngine struct {
	pid     int
	stopped bool
}

func (e *stalledEngine) stop() error {
	if err := syscall.Kill(e.pid, syscall.SIGSTOP); err != nil {
		return fmt.Errorf("SIGSTOP dockerd %d: %w", e.pid, err)
	}
	e.stopped = true
	return nil
}

// resume sends SIGCONT if the engine is stopped.
func (e *stalledEngine) resume() {
	if e.stopped {
		_ = syscall.Kill(e.pid, syscall.SIGCONT)
		e.stopped = false
	}
}

// benchStalledStartup times the server's start-to-ready with its local
// engine stalled (the test environment's second dockerd, SIGSTOPped from
// just before the start until the server answered /api/health: a second or
// so per start) against the same start with that engine answering, rounds
// times each, on an existing data directory and on an empty one. It returns
// the medians (stalled and answering, existing data directory).
func benchStalledStartup(ctx context.Context, binary string, rounds int, out io.Writer) (stalled, healthy time.Duration, err error) {
	socket := os.Getenv("BERTH_TEST_ENGINE2_SOCKET")
	if socket == "" {
		fmt.Fprintln(out, "\nstart-up with the engine stalled skipped: BERTH_TEST_ENGINE2_SOCKET unset (run scripts/test-env.sh)")
		return 0, 0, nil
	}
	pid, err := pidFile(filepath.Join(filepath.Dir(socket), "docker.pid"))
	if err != nil {
		return 0, 0, fmt.Errorf("the second engine's pid: %w", err)
	}
	eng := &stalledEngine{pid: pid}
	defer eng.resume()
	var freshOK, freshStalled, existingOK, existingStalled []startupSample
	for range rounds {
		dir, err := os.MkdirTemp("", "berth-bench-stall-")
		if err != nil {
			return 0, 0, err
		}
		dir2, err := os.MkdirTemp("", "berth-bench-stall-")
		if err != nil {
			os.RemoveAll(dir)
			return 0, 0, err
		}
		var s [4]startupSample
		for i, o := range []struct {
			dir   string
			stall *stalledEngine
		}{{dir, nil}, {dir, eng}, {dir, nil}, {dir2, eng}} {
			if s[i], err = startOnce(ctx, binary, o.dir, startOpts{socket: socket, stall: o.stall}); err != nil {
				break
			}
		}
		os.RemoveAll(dir)
		os.RemoveAll(dir2)
		if err != nil {
			return 0, 0, err
		}
		freshOK, existingStalled, existingOK, freshStalled = append(freshOK, s[0]), append(existingStalled, s[1]),
			append(existingOK, s[2]), append(freshStalled, s[3])
	}
	med := func(ss []startupSample) time.Duration {
		ds := make([]time.Duration, len(ss))
		for i, s := range ss {
			ds[i] = s.ready
		}
		return median(ds)
	}
	stalled, healthy = med(existingStalled), med(existingOK)
	fmt.Fprintf(out, "\nstart-to-ready (exec → first 200 of /api/health) with the local engine stalled (SIGSTOP on the second test dockerd) against it answering, %d starts each:\n", rounds)
	fmt.Fprintf(out, "  existing data directory: stalled %v, answering %v (ratio %.2fx)\n",
		stalled.Round(time.Millisecond), healthy.Round(time.Millisecond), ratio(stalled, healthy))
	fmt.Fprintf(out, "  empty data directory: stalled %v, answering %v (ratio %.2fx)\n",
		med(freshStalled).Round(time.Millisecond), med(freshOK).Round(time.Millisecond), ratio(med(freshStalled), med(freshOK)))
	return stalled, healthy, nil
}
