package stacks

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/enginetest"
)

type recorder struct{ got []string }

func (r *recorder) Emit(_ int64, eventType, title, _ string) {
	r.got = append(r.got, eventType+": "+title)
}

// Deploys, starts, stops and downs of a real stack through the service
// report stack_deployed, stack_started and stack_stopped; a deploy whose
// image cannot be had reports stack_deploy_failed; restart says nothing.
func TestStackOutcomesNotify(t *testing.T) {
	enginetest.Require(t)
	ctx := context.Background()
	s, st, err := openCrashService(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	label := fmt.Sprintf("stknotify-%d", time.Now().UnixNano())
	t.Cleanup(func() {
		enginetest.RemoveLabelled(t, label)
		enginetest.RemoveLabelledNetworks(t, label)
	})
	env := store.Environment{Name: "local", ConnectionType: "socket", SocketPath: enginetest.Socket}
	if err := st.CreateEnvironment(ctx, &env); err != nil {
		t.Fatal(err)
	}
	compose := func(image string) string {
		return fmt.Sprintf("services:\n  app:\n    image: %s\n    command: [\"sleep\", \"3600\"]\n    stop_signal: SIGKILL\n    labels:\n      %s: %s\n"+
			"networks:\n  default:\n    labels:\n      %s: %s\n", image, enginetest.Label, label, enginetest.Label, label)
	}
	name := "n" + strings.TrimPrefix(label, "stknotify-")
	bad := name + "x"
	for n, image := range map[string]string{name: enginetest.Image(), bad: "127.0.0.1:1/absent-" + label + ":1"} {
		if _, err := s.Create(ctx, env, CreateSpec{Name: n, Compose: compose(image)}); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, n := range []string{name, bad} {
			if err := s.Run(context.Background(), env, n, Down, nil); err != nil {
				t.Log(err)
			}
		}
	})

	if err := s.Up(ctx, env, name, false, nil); err != nil { // no notifier: nothing, no panic
		t.Fatal(err)
	}
	r := &recorder{}
	s.UseNotifier(r)
	if err := s.Up(ctx, env, name, true, nil); err != nil {
		t.Fatal(err)
	}
	for _, a := range []Action{Stop, Start, Restart, Down} {
		if err := s.Run(ctx, env, name, a, nil); err != nil {
			t.Fatal(a, err)
		}
	}
	if err := s.Up(ctx, env, bad, false, nil); err == nil {
		t.Fatal("deploy of an absent image succeeded")
	}
	want := []string{"stack_deployed: Stack " + name + " deployed", "stack_stopped: Stack " + name + " stopped",
		"stack_started: Stack " + name + " started", "stack_stopped: Stack " + name + " stopped",
		"stack_deploy_failed: Deploy of stack " + bad + " failed"}
	if diff := cmp.Diff(want, r.got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
