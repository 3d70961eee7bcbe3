package main

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestAgentLinksNoServerCode(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "github.com/berth-dev/berth/server") {
			t.Errorf("berth-agent links %s: the agent must never import server code", pkg)
		}
	}
	if !strings.Contains(string(out), "github.com/berth-dev/berth/shared/agentpb") {
		t.Error("berth-agent does not link shared/agentpb: the dependency list is not what it seems")
	}
}

func TestVersionFlagPrintsTheVersion(t *testing.T) {
	var out bytes.Buffer
	if err := run(t.Context(), []string{"--version"}, func(string) string { return "" }, &out, &out); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(out.String()); got != "berth-agent dev" {
		t.Errorf("--version printed %q, want %q", got, "berth-agent dev")
	}
}

func TestConfigComesFromFlagsElseEnvironment(t *testing.T) {
	env := map[string]string{"BERTH_SERVER": "https://berth.example:3001", "BERTH_TOKEN": "from-env", "BERTH_AGENT_NAME": "edge-1"}
	getenv := func(k string) string { return env[k] }
	c, err := parse([]string{"--token", "from-flag", "--reconnect-max", "5s"}, getenv, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if c.server != "https://berth.example:3001" || c.token != "from-flag" || c.name != "edge-1" || c.maxBackoff != 5*time.Second {
		t.Errorf("config = server %q token %q name %q max %v", c.server, c.token, c.name, c.maxBackoff)
	}
}

func TestConfigRefusesBothOrNeitherMode(t *testing.T) {
	none := func(string) string { return "" }
	for _, args := range [][]string{
		{"--token", "t"},
		{"--token", "t", "--listen", ":2376", "--server", "http://x:1"},
		{"--listen", ":2376"},
		{"--listen", ":2376", "--token", "t", "--tls-cert", "c.pem"},
	} {
		if _, err := parse(args, none, &bytes.Buffer{}); err == nil {
			t.Errorf("parse(%q) accepted an invalid configuration", args)
		}
	}
}
