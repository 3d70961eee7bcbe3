package main

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/berth-dev/berth/server/internal/servertest"
)

// Memory bounds of the real server process, in bytes.
const (
	// maxIdleAnon bounds the idle process's own memory (RssAnon: heap,
	// stacks, runtime). The mapped binary (RssFile, about 50 MB, shared page
	// cache) is logged but not bounded: its size is the binary's business.
	maxIdleAnon = 40 << 20
	// maxBurstPeak bounds the peak resident set (VmHWM) through a burst of
	// parallel sign-ins, each of which hashes with 64 MiB of argon2 memory.
	maxBurstPeak = 300 << 20
)

// TestMemoryStaysBoundedIdleAndThroughParallelLogins runs the real server
// binary: idle, before any sign-in, its own memory stays small (it computed
// a 64 MiB argon2 decoy hash at start, kept resident); and 50 parallel
// sign-ins (right and wrong passwords, unknown users), each an argon2
// computation of 64 MiB, keep its peak RSS under 300 MB (they all ran at
// once: 3 GB). The server runs with GOMAXPROCS=2, so that the bound of
// concurrent hashing (one per CPU) is the same on every machine.
func TestMemoryStaysBoundedIdleAndThroughParallelLogins(t *testing.T) {
	bin := servertest.Build(t)
	dataDir := t.TempDir()
	// The logins come through a trusted proxy (loopback), each from an address
	// of its own, so that the per-address sign-in limit (20 failures) is not
	// what answers them.
	base, pid, _ := startServer(t, bin, "server", "DATA_DIR="+dataDir, "DOCKER_SOCKET=/nonexistent", "LOG_LEVEL=warn", "GOMAXPROCS=2",
		"TRUSTED_PROXIES=127.0.0.1")

	idle := procStatus(t, pid)
	t.Logf("idle after start: VmRSS %d MiB (RssAnon %d MiB, RssFile %d MiB)",
		idle["VmRSS"]>>20, idle["RssAnon"]>>20, idle["RssFile"]>>20)
	if idle["RssAnon"] > maxIdleAnon {
		t.Errorf("idle RssAnon = %d MiB, want at most %d MiB", idle["RssAnon"]>>20, maxIdleAnon>>20)
	}

	cookie := map[string]string{"Cookie": servertest.FirstAdmin(t, base, dataDir, "admin", "admin-password")}
	// Wrong passwords go to five users, fewer than five each, so that the
	// login limit refuses none without hashing.
	for i := range 5 {
		user := fmt.Sprintf(`{"username":"user%d","password":"user-password"}`, i)
		if status := do(t, "POST", base+"/api/users", cookie, user, nil); status != 201 {
			t.Fatalf("create user%d = %d, want 201", i, status)
		}
	}

	const logins = 50
	type attempt struct {
		body string
		want int
	}
	attempts := make([]attempt, logins)
	for i := range attempts {
		switch i % 3 {
		case 0:
			attempts[i] = attempt{`{"username":"admin","password":"admin-password"}`, 200}
		case 1:
			attempts[i] = attempt{fmt.Sprintf(`{"username":"nobody%d","password":"some-password"}`, i), 401}
		case 2:
			attempts[i] = attempt{fmt.Sprintf(`{"username":"user%d","password":"wrong-password"}`, i%5), 401}
		}
	}
	got := make([]int, logins)
	var wg sync.WaitGroup
	for i, a := range attempts {
		wg.Go(func() {
			req, err := http.NewRequest("POST", base+"/api/auth/login", strings.NewReader(a.body))
			if err != nil {
				t.Errorf("login %d: %v", i, err)
				return
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Forwarded-For", fmt.Sprintf("10.9.%d.%d", i/256, i%256))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Errorf("login %d: %v", i, err)
				return
			}
			resp.Body.Close()
			got[i] = resp.StatusCode
		})
	}
	wg.Wait()
	for i, a := range attempts {
		if got[i] != a.want {
			t.Errorf("login %d %s = %d, want %d", i, a.body, got[i], a.want)
		}
	}

	peak := procStatus(t, pid)["VmHWM"]
	t.Logf("peak through %d parallel logins: VmHWM %d MiB", logins, peak>>20)
	if peak >= maxBurstPeak {
		t.Errorf("peak RSS (VmHWM) through %d parallel logins = %d MiB, want less than %d MiB", logins, peak>>20, maxBurstPeak>>20)
	}
}

// procStatus returns the memory fields (kB in the file) of /proc/<pid>/status
// in bytes.
func procStatus(t *testing.T, pid int) map[string]int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fields := map[string]int64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		value, unit, _ := strings.Cut(strings.TrimSpace(rest), " ")
		if !ok || unit != "kB" {
			continue
		}
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil {
			t.Fatalf("/proc/%d/status %q: %v", pid, sc.Text(), err)
		}
		fields[name] = n << 10
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"VmRSS", "VmHWM", "RssAnon", "RssFile"} {
		if _, ok := fields[name]; !ok {
			t.Fatalf("/proc/%d/status has no %s", pid, name)
		}
	}
	return fields
}
