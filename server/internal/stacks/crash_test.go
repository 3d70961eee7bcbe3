package stacks

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/secret"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
)

// crashCompose is a valid compose file of about 4 MiB (a long comment), so
// that writing it takes long enough for a kill to land in the middle.
func crashCompose(version string) string {
	var b strings.Builder
	b.WriteString("services:\n  app:\n    image: busybox:" + version + "\n")
	line := "# " + strings.Repeat(version, 77) + "\n"
	for b.Len() < 4<<20 {
		b.WriteString(line)
	}
	return b.String()
}

// openCrashService opens the stacks service of a Berth data directory.
func openCrashService(ctx context.Context, dir string) (*Service, *store.Store, error) {
	box, err := secret.New(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		return nil, nil, err
	}
	st, err := store.Open(ctx, filepath.Join(dir, "berth.db"), box)
	if err != nil {
		return nil, nil, err
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	return New(st, engine.NewManager(log), nil, dir, log), st, nil
}

// TestMain runs the process the crash test kills when BERTH_CRASH_DIR names
// a data directory, and the tests otherwise.
func TestMain(m *testing.M) {
	if dir := os.Getenv("BERTH_CRASH_DIR"); dir != "" {
		if err := rewriteStackFiles(dir); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	os.Exit(m.Run())
}

// rewriteStackFiles saves the compose file of stack "crash" again and
// again, alternating two versions, until it is killed.
func rewriteStackFiles(dir string) error {
	ctx := context.Background()
	s, _, err := openCrashService(ctx, dir)
	if err != nil {
		return err
	}
	env := store.Environment{ID: 1}
	rec, err := s.store.GetStack(ctx, env.ID, "crash")
	if err != nil {
		return err
	}
	versions := []string{crashCompose("0"), crashCompose("1")}
	fmt.Println("ready")
	for i := 0; ; i++ {
		// Every tenth save goes through the whole update (validation
		// included); the others through writeFile alone, which every
		// deploy, update and variable change writes with, so that most
		// kills land in the middle of a write.
		if i%10 == 0 {
			if err := s.UpdateCompose(ctx, env, "crash", UpdateSpec{Content: versions[i%2]}); err != nil {
				return err
			}
			continue
		}
		if err := writeFile(s.composePath(rec), []byte(versions[i%2])); err != nil {
			return err
		}
	}
}

// A Berth killed while it writes a stack's files leaves them old or new,
// never truncated or mixed.
func TestKilledDuringDeployLeavesOldOrNewFiles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, st, err := openCrashService(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	env, err := st.GetEnvironment(ctx, 1)
	if err != nil { // a fresh database has no environment yet
		env = store.Environment{Name: "local", ConnectionType: "socket"}
		if err := st.CreateEnvironment(ctx, &env); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Create(ctx, env, CreateSpec{Name: "crash", Compose: crashCompose("0"),
		EnvVars: []Variable{{Key: "A", Value: "1"}}}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	path := filepath.Join(dir, "stacks", fmt.Sprint(env.ID), "crash", ComposeFileName)
	valid := map[string]bool{crashCompose("0"): true, crashCompose("1"): true}
	for round := range 12 {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), "BERTH_CRASH_DIR="+dir)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 6)
		if _, err := io.ReadFull(out, buf); err != nil || string(buf) != "ready\n" {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("helper did not start: %q %v", buf, err)
		}
		time.Sleep(time.Duration(100+round*37) * time.Millisecond)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if !valid[string(data)] {
			t.Fatalf("round %d: compose file of %d bytes is neither the old nor the new one", round, len(data))
		}
		entries, _ := os.ReadDir(filepath.Dir(path))
		for _, e := range entries {
			if e.Name() != ComposeFileName && e.Name() != EnvFile && !strings.HasPrefix(e.Name(), ".") {
				t.Errorf("round %d: stray file %s", round, e.Name())
			}
		}
	}
}
