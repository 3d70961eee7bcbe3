package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/servertest"
	"github.com/berth-dev/berth/shared/enginetest"
)

// crashContainer is a container of the crash test's stack as the engine
// lists it.
type crashContainer struct {
	ID    string `json:"Id"`
	Names []string
	State string
}

func (c crashContainer) name() string { return strings.TrimPrefix(c.Names[0], "/") }

// stackContainers lists the containers of compose project name, straight
// from the engine.
func stackContainers(t *testing.T, name string) []crashContainer {
	t.Helper()
	f, _ := json.Marshal(map[string][]string{"label": {"com.docker.compose.project=" + name}})
	var list []crashContainer
	enginetest.Must(t, 200, "GET", "/containers/json?all=1&filters="+url.QueryEscape(string(f)), nil, nil, &list)
	slices.SortFunc(list, func(a, b crashContainer) int { return strings.Compare(a.name(), b.name()) })
	return list
}

func describe(list []crashContainer) string {
	var parts []string
	for _, c := range list {
		parts = append(parts, fmt.Sprintf("%s (%s, %s)", c.name(), c.ID[:12], c.State))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// Berth killed (SIGKILL) while it updates a stack, at several moments of
// the update: right after the deploy request, once compose has created the
// new containers under their temporary names, once an old one has
// stopped, once one is removed. After each restart the stack runs under its
// normal container names, with no stray temporary container, and a deploy
// after the last one does too.
func TestKilledDuringAStackUpdateTheStackIsRepairedAtRestart(t *testing.T) {
	enginetest.Require(t)
	bin := servertest.Build(t)
	dir := t.TempDir()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	label := "berth-crash-" + hex.EncodeToString(b)
	name := "crash" + hex.EncodeToString(b)
	t.Cleanup(func() {
		enginetest.RemoveLabelled(t, label)
		enginetest.RemoveLabelledNetworks(t, label)
	})
	base, pid, _ := startServer(t, bin, "berth", "DATA_DIR="+dir)
	cookie := servertest.FirstAdmin(t, base, dir, "admin", "correct horse")
	// sleep, as process 1, ignores SIGTERM: every stop of the update waits
	// its 2 s grace period, the window the kills aim at.
	service := fmt.Sprintf("    image: %s\n    command: [\"sleep\", \"3600\"]\n    stop_grace_period: 2s\n    labels:\n      %s: %s\n",
		enginetest.Image(), enginetest.Label, label)
	compose := "services:\n  app:\n" + service + "  worker:\n" + service +
		fmt.Sprintf("networks:\n  default:\n    labels:\n      %s: %s\n", enginetest.Label, label)
	body, _ := json.Marshal(map[string]any{"name": name, "compose": compose, "start": true})
	var created struct {
		Success bool
		Error   string
	}
	headers := map[string]string{"Cookie": cookie, "Accept": "application/json"}
	if status := do(t, "POST", base+"/api/stacks?env=1", headers, string(body), &created); status != 200 || !created.Success {
		t.Fatalf("create stack = %d %+v", status, created)
	}
	normal := []string{name + "-app-1", name + "-worker-1"}
	// healthy waits until the stack runs under its normal names and nothing
	// else, and returns its containers.
	healthy := func(when string) []crashContainer {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			list := stackContainers(t, name)
			var names []string
			running := true
			for _, c := range list {
				names = append(names, c.name())
				running = running && c.State == "running"
			}
			if running && slices.Equal(names, normal) {
				return list
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the stack's containers are %s, want %q running", when, describe(list), normal)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	before := healthy("after the deploy")

	// A kill's moment: nil is as soon as the deploy request is answered;
	// otherwise as soon as the stack's containers (old: those before the
	// update) are so.
	moments := []struct {
		name string
		now  func(old, cur []crashContainer) bool
	}{
		{"right after the deploy request", nil},
		{"new containers created under temporary names", func(_, cur []crashContainer) bool {
			return slices.ContainsFunc(cur, func(c crashContainer) bool { return !slices.Contains(normal, c.name()) })
		}},
		// (or already removed: compose removes a stopped one at once)
		{"an old container stopped", func(old, cur []crashContainer) bool {
			return slices.ContainsFunc(old, func(o crashContainer) bool {
				i := slices.IndexFunc(cur, func(c crashContainer) bool { return c.ID == o.ID })
				return i < 0 || cur[i].State != "running"
			})
		}},
		{"an old container removed", func(old, cur []crashContainer) bool {
			return slices.ContainsFunc(old, func(o crashContainer) bool {
				return !slices.ContainsFunc(cur, func(c crashContainer) bool { return c.ID == o.ID })
			})
		}},
	}
	sawTemporary := false
	for _, m := range moments {
		answered := make(chan struct{})
		go func() {
			req, _ := http.NewRequest("POST", base+"/api/stacks/"+name+"/deploy?env=1", strings.NewReader(`{"forceRecreate":true}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Cookie", cookie)
			resp, err := http.DefaultClient.Do(req)
			close(answered)
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body) // until the server dies
				resp.Body.Close()
			}
		}()
		deadline := time.Now().Add(20 * time.Second)
		var cur []crashContainer
		if m.now == nil {
			select {
			case <-answered:
			case <-time.After(20 * time.Second):
				t.Fatalf("%s: the deploy request was not answered", m.name)
			}
		} else {
			for cur = stackContainers(t, name); !m.now(before, cur); cur = stackContainers(t, name) {
				if time.Now().After(deadline) {
					t.Fatalf("%s: never happened; the stack's containers are %s", m.name, describe(cur))
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		for syscall.Kill(pid, 0) == nil && time.Now().Before(deadline) { // reaped by startServer
			time.Sleep(5 * time.Millisecond)
		}
		left := stackContainers(t, name)
		t.Logf("%s: killed; the stack's containers are %s", m.name, describe(left))
		sawTemporary = sawTemporary || slices.ContainsFunc(left, func(c crashContainer) bool { return !slices.Contains(normal, c.name()) })

		base, pid, _ = startServer(t, bin, "berth after a kill "+m.name, "DATA_DIR="+dir)
		before = healthy("after a kill " + m.name)
	}
	if !sawTemporary {
		t.Error("no kill left a container under a temporary name: the test did not test the repair")
	}

	var deployed struct {
		Success bool
		Error   string
	}
	if status := do(t, "POST", base+"/api/stacks/"+name+"/deploy?env=1", headers, `{"forceRecreate":true}`, &deployed); status != 200 || !deployed.Success {
		t.Fatalf("deploy after the kills = %d %+v", status, deployed)
	}
	after := healthy("after a deploy")
	for _, c := range after {
		if slices.ContainsFunc(before, func(o crashContainer) bool { return o.ID == c.ID }) {
			t.Errorf("the deploy after the kills did not recreate %s", c.name())
		}
	}
	if status := do(t, "DELETE", base+"/api/stacks/"+name+"?env=1&force=true", map[string]string{"Cookie": cookie}, "", nil); status != 200 {
		t.Errorf("delete stack = %d", status)
	}
}
