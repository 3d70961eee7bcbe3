package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/apitest"
	"github.com/berth-dev/berth/server/internal/servertest"
	"github.com/berth-dev/berth/shared/enginetest"
)

// TestServeStartsStopsAndKeepsEnvironmentsAcrossRestarts runs `berth serve`
// twice on one data directory: the local environment is created once (id 1),
// an environment created through the API survives the restart, and a
// cancelled context shuts the server down cleanly.
func TestServeStartsStopsAndKeepsEnvironmentsAcrossRestarts(t *testing.T) {
	enginetest.Require(t)
	dataDir := t.TempDir()

	serveOnce(t, dataDir, func(base string) {
		// Secure by default: nothing but the setup answers without a session.
		if status := do(t, "GET", base+"/api/environments", nil, "", nil); status != 401 {
			t.Fatalf("environments before setup = %d, want 401", status)
		}
		tok, err := os.ReadFile(filepath.Join(dataDir, "setup-token"))
		if err != nil {
			t.Fatalf("setup token file: %v", err)
		}
		admin := `{"username":"admin","password":"correct horse"}`
		if status := do(t, "POST", base+"/api/users", map[string]string{"X-Setup-Token": "wrong"}, admin, nil); status != 401 {
			t.Fatalf("first admin with a wrong setup token = %d, want 401", status)
		}
		if status := do(t, "POST", base+"/api/users", map[string]string{"X-Setup-Token": strings.TrimSpace(string(tok))}, admin, nil); status != 201 {
			t.Fatalf("first admin with the setup token = %d, want 201", status)
		}
		if _, err := os.Stat(filepath.Join(dataDir, "setup-token")); !os.IsNotExist(err) {
			t.Errorf("the spent setup token file is still there: %v", err)
		}
		cookie := servertest.Login(t, base, "admin", "correct horse")
		// The local environment is set up while Berth already serves.
		waitLocal(t, base, cookie)
		if status := do(t, "POST", base+"/api/environments", map[string]string{"Cookie": cookie},
			`{"name":"second","connectionType":"direct","host":"192.0.2.1"}`, nil); status != 201 {
			t.Fatalf("create environment = %d", status)
		}
	})
	serveOnce(t, dataDir, func(base string) {
		cookie := servertest.Login(t, base, "admin", "correct horse")
		var envs []struct {
			ID   int64
			Name string
		}
		do(t, "GET", base+"/api/environments", map[string]string{"Cookie": cookie}, "", &envs)
		if len(envs) != 2 || envs[0].ID != 1 || envs[0].Name != "local" || envs[1].Name != "second" {
			t.Fatalf("environments after restart = %+v", envs)
		}
	})
	if fi, err := os.Stat(filepath.Join(dataDir, ".encryption_key")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("encryption key file: %v %v, want mode 0600", fi, err)
	}
}

// waitLocal waits until the environments list the local environment.
func waitLocal(t *testing.T, base, cookie string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var envs []struct{ Name string }
		do(t, "GET", base+"/api/environments", map[string]string{"Cookie": cookie}, "", &envs)
		if len(envs) > 0 && envs[0].Name == "local" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no local environment: %+v", envs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// do sends a request and decodes a JSON answer into out (when not nil).
func do(t *testing.T, method, url string, headers map[string]string, body string, out any) int {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatal(err)
		}
	}
	return resp.StatusCode
}

// serveOnce runs the server until check returns, then stops it. extra are
// more variables, as name, value pairs.
func serveOnce(t *testing.T, dataDir string, check func(base string), extra ...string) {
	t.Helper()
	port := servertest.FreePort(t)
	env := map[string]string{"DATA_DIR": dataDir, "PORT": strconv.Itoa(port), "HOST": "127.0.0.1", "LOG_LEVEL": "warn"}
	for i := 0; i+1 < len(extra); i += 2 {
		env[extra[i]] = extra[i+1]
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve"}, func(k string) string { return env[k] }, strings.NewReader(""), io.Discard)
	}()
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	servertest.WaitHealthy(t, base, done)
	check(base)
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve returned %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not stop after its context ended")
	}
}

// startServer runs the server binary with env until the test ends
// (servertest.Start) and returns its base URL, its process id and its log.
func startServer(t *testing.T, bin, name string, env ...string) (string, int, *apitest.LockedBuffer) {
	t.Helper()
	p := servertest.Start(t, bin, name, env...)
	return p.URL, p.Pid, p.Log
}

func TestUnknownCommandFails(t *testing.T) {
	if err := run(context.Background(), []string{"frobnicate"}, func(string) string { return "" }, strings.NewReader(""), io.Discard); err == nil {
		t.Fatal("unknown command succeeded")
	}
	if err := run(context.Background(), []string{"serve", "-port", "x"}, func(string) string { return "" }, strings.NewReader(""), io.Discard); err == nil {
		t.Fatal("bad flag succeeded")
	}
}

// TestAdminRecoveryCommands recovers a locked-out installation: create an
// admin, reset a forgotten password (from stdin), disable authentication.
func TestAdminRecoveryCommands(t *testing.T) {
	enginetest.Require(t)
	dataDir := t.TempDir()
	env := map[string]string{"DATA_DIR": dataDir}
	getenv := func(k string) string { return env[k] }
	adminCmd := func(stdin string, args ...string) error {
		return run(context.Background(), append([]string{"admin"}, args...), getenv, strings.NewReader(stdin), io.Discard)
	}
	if err := adminCmd("", "create-user", "-username", "ops", "-password", "ops-password-1", "-admin"); err != nil {
		t.Fatal(err)
	}
	if err := adminCmd("", "create-user", "-username", "ops", "-password", "ops-password-1"); err == nil {
		t.Error("a duplicate user was created")
	}
	if err := adminCmd("", "create-user", "-username", "short", "-password", "1234"); err == nil {
		t.Error("a short password was accepted")
	}
	if err := adminCmd("new-password-2\n", "reset-password", "-username", "ops", "-password-stdin"); err != nil {
		t.Fatal(err)
	}
	if err := adminCmd("", "reset-password", "-username", "nobody", "-password", "whatever-1"); err == nil {
		t.Error("reset of an unknown user succeeded")
	}
	serveOnce(t, dataDir, func(base string) {
		servertest.Login(t, base, "ops", "new-password-2")
		if _, err := os.Stat(filepath.Join(dataDir, "setup-token")); !os.IsNotExist(err) {
			t.Error("a setup token was prepared although a user exists")
		}
	})
	if err := adminCmd("", "disable-auth"); err != nil {
		t.Fatal(err)
	}
	serveOnce(t, dataDir, func(base string) {
		if status := do(t, "GET", base+"/api/environments", nil, "", nil); status != 200 {
			t.Errorf("environments with authentication disabled = %d, want 200", status)
		}
	})
	if err := adminCmd("", "frobnicate"); err == nil {
		t.Error("unknown admin command succeeded")
	}
}
