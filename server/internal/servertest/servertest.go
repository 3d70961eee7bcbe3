// Package servertest runs the Berth server as a process of a test, as an
// operator runs it ("berth serve"): build the binary, start it on free
// loopback ports, create the first administrator, sign in, kill it.
package servertest

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/apitest"
)

// Build returns the server binary the test runs: $BERTH_SERVER_BIN (make
// test sets it to the bin/berth it built), else server/cmd/berth built into
// a temporary directory. Outside CI a machine that cannot build it skips
// the test; under CI=true that fails.
func Build(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("BERTH_SERVER_BIN"); bin != "" {
		return bin
	}
	skip := t.Skipf
	if os.Getenv("CI") == "true" {
		skip = t.Fatalf
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		skip("the go command is missing: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "berth")
	out, err := exec.Command(gobin, "build", "-o", bin, "github.com/berth-dev/berth/server/cmd/berth").CombinedOutput()
	if err != nil {
		skip("go build: %v\n%s", err, out)
	}
	return bin
}

// Process is a running "berth serve".
type Process struct {
	// URL is the API's base URL, http://127.0.0.1:PORT.
	URL string
	// Port and AgentPort are its PORT and AGENT_PORT.
	Port, AgentPort int
	Pid             int
	// Log is what it wrote (stdout and stderr), written to the test's log
	// when the test failed.
	Log    *apitest.LockedBuffer
	cmd    *exec.Cmd
	exited chan struct{} // closed when the process is gone
}

// Start runs the server binary with env (plus PATH, HOST=127.0.0.1,
// OUTBOUND_ALLOW for the test services on loopback, and a free PORT and
// AGENT_PORT unless env sets them) until the test ends: then it is
// interrupted, and killed after 15 seconds. It returns once the server
// answers /api/health.
func Start(t *testing.T, bin, name string, env ...string) *Process {
	t.Helper()
	p := &Process{Log: &apitest.LockedBuffer{}, exited: make(chan struct{})}
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PORT="); ok {
			p.Port, _ = strconv.Atoi(v)
		}
		if v, ok := strings.CutPrefix(kv, "AGENT_PORT="); ok {
			p.AgentPort, _ = strconv.Atoi(v)
		}
	}
	if p.Port == 0 {
		p.Port = FreePort(t)
	}
	if p.AgentPort == 0 {
		p.AgentPort = FreePort(t)
	}
	p.cmd = exec.Command(bin, "serve")
	p.cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOST=127.0.0.1", "PORT=" + strconv.Itoa(p.Port),
		"AGENT_PORT=" + strconv.Itoa(p.AgentPort),
		// The test services (webhook receivers, git, registry) listen on loopback.
		"OUTBOUND_ALLOW=private,loopback"}, env...)
	p.cmd.Stdout, p.cmd.Stderr = p.Log, p.Log
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p.Pid = p.cmd.Process.Pid
	done := make(chan error, 1)
	go func() {
		done <- p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Signal(os.Interrupt)
		select {
		case <-p.exited:
		case <-time.After(15 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
		if t.Failed() {
			t.Logf("%s log:\n%s", name, p.Log.String())
		}
	})
	p.URL = "http://127.0.0.1:" + strconv.Itoa(p.Port)
	WaitHealthy(t, p.URL, done)
	return p
}

// Kill ends the server at once (SIGKILL, as a crash would) and waits until
// it is gone.
func (p *Process) Kill(t *testing.T) {
	t.Helper()
	if err := syscall.Kill(p.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.exited
}

// WaitHealthy waits until the server at base answers /api/health with
// status ok, failing the test when done says it exited first or after 20
// seconds.
func WaitHealthy(t *testing.T, base string, done <-chan error) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-done:
			t.Fatalf("serve exited early: %v", err)
		default:
		}
		var h struct{ Status string }
		if resp, err := http.Get(base + "/api/health"); err == nil {
			_ = json.NewDecoder(resp.Body).Decode(&h)
			resp.Body.Close()
			if h.Status == "ok" {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("server never became healthy")
}

// FreePort returns a loopback TCP port nothing listens on now.
func FreePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// Login signs in and returns the Cookie header value of the session.
func Login(t *testing.T, base, user, password string) string {
	t.Helper()
	resp, err := http.Post(base+"/api/auth/login", "application/json",
		strings.NewReader(`{"username":"`+user+`","password":"`+password+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, c := range resp.Cookies() {
		if c.Name == "dockhand_session" {
			return c.Name + "=" + c.Value
		}
	}
	t.Fatalf("login %s: %d, no session cookie", user, resp.StatusCode)
	return ""
}

// FirstAdmin creates the first administrator with the setup token the
// server wrote into dataDir, signs in as it and returns the session cookie.
func FirstAdmin(t *testing.T, base, dataDir, user, password string) string {
	t.Helper()
	tok, err := os.ReadFile(filepath.Join(dataDir, "setup-token"))
	if err != nil {
		t.Fatalf("setup token file: %v", err)
	}
	req, err := http.NewRequest("POST", base+"/api/users",
		strings.NewReader(fmt.Sprintf(`{"username":%q,"password":%q}`, user, password)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Setup-Token", strings.TrimSpace(string(tok)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("first admin with the setup token = %d, want 201", resp.StatusCode)
	}
	return Login(t, base, user, password)
}
