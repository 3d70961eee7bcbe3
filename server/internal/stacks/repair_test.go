package stacks

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/enginetest"
)

// A deploy of a stack whose container an interrupted deploy left under
// compose's temporary name (killed between removing the old container and
// renaming the new one) leaves it under its normal name: compose alone
// would keep the up-to-date container under the temporary name for good.
// RepairInterrupted does the same at start, and starts what it finished.
func TestDeployFinishesARecreateAnInterruptedDeployLeft(t *testing.T) {
	enginetest.Require(t)
	ctx := context.Background()
	s, st, err := openCrashService(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	label := fmt.Sprintf("stkrepair-%d", time.Now().UnixNano())
	t.Cleanup(func() {
		enginetest.RemoveLabelled(t, label)
		enginetest.RemoveLabelledNetworks(t, label)
	})
	env := store.Environment{Name: "local", ConnectionType: "socket", SocketPath: enginetest.Socket}
	if err := st.CreateEnvironment(ctx, &env); err != nil {
		t.Fatal(err)
	}
	name := "r" + strings.TrimPrefix(label, "stkrepair-")
	compose := fmt.Sprintf("services:\n  app:\n    image: %s\n    command: [\"sleep\", \"3600\"]\n    stop_signal: SIGKILL\n    labels:\n      %s: %s\n"+
		"networks:\n  default:\n    labels:\n      %s: %s\n", enginetest.Image(), enginetest.Label, label, enginetest.Label, label)
	if _, err := s.Create(ctx, env, CreateSpec{Name: name, Compose: compose}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Run(context.Background(), env, name, Down, nil) })
	if err := s.Up(ctx, env, name, false, nil); err != nil {
		t.Fatal(err)
	}
	final := name + "-app-1"
	c, err := s.engines.Client(ctx, env.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	// interrupt leaves the stack's container as a killed recreate leaves
	// it: under the temporary name, the old one removed; stopped says
	// whether it has not been started yet either.
	interrupt := func(stopped bool) string {
		t.Helper()
		cfg, err := c.InspectConfig(ctx, final)
		if err != nil {
			t.Fatal(err)
		}
		if stopped {
			if err := c.StopContainer(ctx, cfg.ID); err != nil {
				t.Fatal(err)
			}
		}
		if err := c.RenameContainer(ctx, cfg.ID, cfg.ID[:12]+"_"+final); err != nil {
			t.Fatal(err)
		}
		return cfg.ID
	}
	check := func(when, id string) {
		t.Helper()
		list, err := c.ListContainers(ctx, true)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, ct := range list {
			if ct.Labels[engine.ComposeProjectLabel] == name {
				got = append(got, ct.Name+" "+ct.State)
				if ct.Name == final && ct.ID != id {
					t.Errorf("%s: %s is another container than the one the deploy left", when, final)
				}
			}
		}
		if want := final + " running"; len(got) != 1 || got[0] != want {
			t.Errorf("%s: containers %q, want [%s]", when, got, want)
		}
	}

	id := interrupt(false)
	var lines []string
	if err := s.Up(ctx, env, name, false, func(l string) { lines = append(lines, l) }); err != nil {
		t.Fatal(err)
	}
	check("after a deploy", id)
	if !strings.Contains(strings.Join(lines, "\n"), "Finished the interrupted recreate of "+final) {
		t.Errorf("the deploy's output does not tell about the repair:\n%s", strings.Join(lines, "\n"))
	}

	id = interrupt(true)
	if err := s.Run(ctx, env, name, Restart, nil); err != nil {
		t.Fatal(err)
	}
	check("after a restart", id)

	id = interrupt(true)
	s.RepairInterrupted(ctx, time.Now().Add(time.Second))
	check("after the repair at start", id)
}
