package api_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type stackVariable struct {
	Key      string `json:"key"`
	Value    string `json:"value"`
	IsSecret bool   `json:"isSecret"`
}

type stackVariables struct {
	Variables []stackVariable `json:"variables"`
}

// putStackEnv sends PUT …/env and returns the status and the decoded answer.
func (h *harness) putStackEnv(name string, vars []stackVariable) (int, map[string]any) {
	h.t.Helper()
	code, body := h.do("PUT", "/api/stacks/"+name+"/env?env=1", stackVariables{Variables: vars})
	var out map[string]any
	if err := json.Unmarshal(body, &out); err != nil {
		h.t.Fatalf("PUT env answer %q: %v", body, err)
	}
	return code, out
}

// Issue 10 item 1: PUT …/env stores the secrets only and never rewrites the
// env file that PUT …/env/raw wrote (it used to render the file from the
// list, so a list of secrets only emptied it).
func TestStackEnvPutStoresSecretsAndKeepsTheRawEnvFile(t *testing.T) {
	h := newHarness(t)
	name := "sv-" + h.label
	h.removeStackAtCleanup(name)
	status, _, res := h.streamStack("POST", "/api/stacks?env=1", map[string]any{
		"name": name, "compose": stackCompose(h.label), "start": false,
	})
	if status != 200 || !res.Success {
		t.Fatalf("create: %d %+v", status, res)
	}
	const raw = "# greeting shown by web\nGREETING=hi there\n\nexport OTHER='a b' # trailing note\n"
	h.must(200, "PUT", "/api/stacks/"+name+"/env/raw?env=1", map[string]string{"content": raw}, nil)
	envPath := filepath.Join(h.dataDir, "stacks", "1", name, ".env")
	before, err := os.Stat(envPath)
	if err != nil {
		t.Fatal(err)
	}
	// checkRaw asserts that the env file is the one PUT …/env/raw wrote:
	// the same content through the API, the same bytes and the same file on
	// disk (not rewritten, even with equal content).
	checkRaw := func(step string) {
		t.Helper()
		var got struct {
			Content string `json:"content"`
		}
		h.must(200, "GET", "/api/stacks/"+name+"/env/raw?env=1", nil, &got)
		if got.Content != raw {
			t.Errorf("%s: raw env = %q, want %q", step, got.Content, raw)
		}
		data, err := os.ReadFile(envPath)
		if err != nil || string(data) != raw {
			t.Errorf("%s: .env on disk = %q, %v; want %q", step, data, err, raw)
		}
		if after, err := os.Stat(envPath); err != nil || !os.SameFile(before, after) || !after.ModTime().Equal(before.ModTime()) {
			t.Errorf("%s: .env was rewritten (%v)", step, err)
		}
	}
	checkVars := func(step string, want []stackVariable) {
		t.Helper()
		var got stackVariables
		h.must(200, "GET", "/api/stacks/"+name+"/env?env=1", nil, &got)
		if diff := cmp.Diff(want, got.Variables); diff != "" {
			t.Errorf("%s: GET env (-want +got):\n%s", step, diff)
		}
	}
	fileVars := []stackVariable{{Key: "GREETING", Value: "hi there"}, {Key: "OTHER", Value: "a b"}}

	// Only a secret: stored, counted, the file untouched.
	code, answer := h.putStackEnv(name, []stackVariable{{Key: "API_TOKEN", Value: "tok-first", IsSecret: true}})
	if diff := cmp.Diff(map[string]any{"success": true, "count": float64(1)}, answer); code != 200 || diff != "" {
		t.Errorf("PUT env with one secret = %d, answer (-want +got):\n%s", code, diff)
	}
	checkRaw("after PUT of a secret")
	checkVars("after PUT of a secret", append(fileVars, stackVariable{Key: "API_TOKEN", Value: "***", IsSecret: true}))

	// What GET answered, sent back with a non-secret changed and a second
	// secret: the secret sent as *** keeps its value, the non-secret entries
	// are ignored (the file's content belongs to env/raw).
	sent := []stackVariable{{Key: "GREETING", Value: "ignored"}, {Key: "OTHER", Value: "a b"},
		{Key: "API_TOKEN", Value: "***", IsSecret: true}, {Key: "DB_PASSWORD", Value: "pw-second", IsSecret: true}}
	code, answer = h.putStackEnv(name, sent)
	if diff := cmp.Diff(map[string]any{"success": true, "count": float64(2)}, answer); code != 200 || diff != "" {
		t.Errorf("PUT env round trip = %d, answer (-want +got):\n%s", code, diff)
	}
	checkRaw("after the round trip")
	checkVars("after the round trip", append(fileVars[:2:2], stackVariable{Key: "API_TOKEN", Value: "***", IsSecret: true},
		stackVariable{Key: "DB_PASSWORD", Value: "***", IsSecret: true}))

	// Invalid keys are refused naming the key, and change nothing.
	for _, key := range []string{"1BAD", "BAD.KEY", "BAD-KEY", "BAD KEY", ""} {
		for _, secret := range []bool{true, false} {
			code, answer := h.putStackEnv(name, []stackVariable{{Key: key, Value: "x", IsSecret: secret}})
			if msg, _ := answer["error"].(string); code != 400 || !strings.Contains(msg, `"`+key+`"`) {
				t.Errorf("PUT env with key %q (secret %v) = %d %v, want 400 naming the key", key, secret, code, answer)
			}
		}
	}
	checkRaw("after the refused PUTs")

	// The secret sent back as *** reached the deploy with its first value.
	h.must(200, "POST", "/api/stacks/"+name+"/start?env=1", nil, nil)
	env := containerEnv(t, name, "web")
	if env["API_TOKEN"] != "tok-first" || env["GREETING"] != "hi there" {
		t.Errorf("web env API_TOKEN=%q GREETING=%q, want the kept secret and the file's value", env["API_TOKEN"], env["GREETING"])
	}

	// The PUT is the full set of secrets: an empty list removes them.
	code, answer = h.putStackEnv(name, fileVars)
	if diff := cmp.Diff(map[string]any{"success": true, "count": float64(0)}, answer); code != 200 || diff != "" {
		t.Errorf("PUT env without secrets = %d, answer (-want +got):\n%s", code, diff)
	}
	checkVars("after removing the secrets", fileVars)
	checkRaw("after removing the secrets")
}
