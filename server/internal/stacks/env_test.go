package stacks

import (
	"context"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// Issue 10 item 1: SetSecrets (PUT …/env) stores the secrets only, keeps a
// secret sent back masked, removes the ones left out, never touches the env
// file, and the project a deploy loads gets the stored values.
func TestSetSecretsKeepsTheEnvFileAndMaskedValues(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, st, err := openCrashService(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	env, err := st.GetEnvironment(ctx, 1)
	if err != nil {
		env = store.Environment{Name: "local", ConnectionType: "socket"}
		if err := st.CreateEnvironment(ctx, &env); err != nil {
			t.Fatal(err)
		}
	}
	compose := "services:\n  app:\n    image: busybox\n    environment:\n      TOKEN: ${TOKEN}\n      PLAIN: ${PLAIN}\n      KEPT: ${KEPT}\n"
	raw := "# kept as written\nPLAIN=from file\n"
	if _, err := s.Create(ctx, env, CreateSpec{Name: "vars", Compose: compose, RawEnvContent: &raw,
		EnvVars: []Variable{{Key: "TOKEN", Value: "tok-1", IsSecret: true}, {Key: "KEPT", Value: "kept-1", IsSecret: true}}}); err != nil {
		t.Fatal(err)
	}
	rec, err := st.GetStack(ctx, env.ID, "vars")
	if err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(s.envPath(rec))
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name      string
		vars      []Variable
		wantCount int
		wantEnv   map[string]string // of the loaded project's service
	}{
		{"masked secret keeps its value, a left-out one is removed, non-secrets ignored",
			[]Variable{{Key: "TOKEN", Value: Mask, IsSecret: true}, {Key: "PLAIN", Value: "ignored"}}, 1,
			map[string]string{"TOKEN": "tok-1", "PLAIN": "from file", "KEPT": ""}},
		{"new value and the legacy mask", []Variable{{Key: "TOKEN", Value: legacyMask, IsSecret: true},
			{Key: "KEPT", Value: "kept-2", IsSecret: true}}, 2,
			map[string]string{"TOKEN": "tok-1", "PLAIN": "from file", "KEPT": "kept-2"}},
		{"no secrets", nil, 0, map[string]string{"TOKEN": "", "PLAIN": "from file", "KEPT": ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := s.SetSecrets(ctx, env, "vars", tt.vars)
			if err != nil || n != tt.wantCount {
				t.Fatalf("SetSecrets = %d, %v; want %d", n, err, tt.wantCount)
			}
			p, err := s.project(ctx, rec)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for k, v := range p.Services["app"].Environment {
				if v != nil {
					got[k] = *v
				}
			}
			if diff := cmp.Diff(tt.wantEnv, got); diff != "" {
				t.Errorf("service environment (-want +got):\n%s", diff)
			}
			data, err := os.ReadFile(s.envPath(rec))
			after, _ := os.Stat(s.envPath(rec))
			if err != nil || string(data) != raw || !os.SameFile(before, after) {
				t.Errorf("env file = %q, %v (same file %v); want %q untouched", data, err, os.SameFile(before, after), raw)
			}
		})
	}
	for _, key := range []string{"1A", "A.B", "A-B", ""} {
		if _, err := s.SetSecrets(ctx, env, "vars", []Variable{{Key: key, Value: "x"}}); fault.KindOf(err) != fault.Invalid {
			t.Errorf("SetSecrets with key %q = %v, want invalid", key, err)
		}
	}
}
