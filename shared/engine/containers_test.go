package engine_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/enginetest"
)

var localEnv = engine.Endpoint{ID: 1, ConnectionType: engine.Socket, SocketPath: enginetest.Socket}

// newLabel returns a unique value for the test label and removes every
// container carrying it when the test ends.
func newLabel(t *testing.T) string {
	t.Helper()
	v := strings.ToLower(rand.Text()[:12])
	t.Cleanup(func() { enginetest.RemoveLabelled(t, v) })
	return v
}

// localClient connects to the local engine through a fresh Manager.
func localClient(t *testing.T) *engine.Client {
	t.Helper()
	enginetest.Require(t)
	c, err := newManager(t).Client(t.Context(), localEnv)
	if err != nil {
		t.Fatalf("Client(local): %v", err)
	}
	return c
}

// createContainer creates a labelled container of the test image and returns
// its id. spec.Name, Image and Labels are filled in.
func createContainer(t *testing.T, c *engine.Client, label string, spec engine.CreateSpec) string {
	t.Helper()
	if spec.Name == "" {
		spec.Name = "berth-test-" + label + "-" + strings.ToLower(rand.Text()[:6])
	}
	spec.Image = enginetest.Image()
	spec.Labels = map[string]string{enginetest.Label: label}
	id, err := c.CreateContainer(t.Context(), spec)
	if err != nil {
		t.Fatalf("CreateContainer(%s): %v", spec.Name, err)
	}
	return id
}

// runContainer creates and starts a container.
func runContainer(t *testing.T, c *engine.Client, label string, spec engine.CreateSpec) string {
	t.Helper()
	id := createContainer(t, c, label, spec)
	if err := c.StartContainer(t.Context(), id); err != nil {
		t.Fatalf("StartContainer: %v", err)
	}
	return id
}

// waitExit waits (through the raw API) until a container has exited.
func waitExit(t *testing.T, id string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://engine/containers/"+id+"/wait", nil)
	resp, err := enginetest.HTTPClient().Do(req)
	if err != nil {
		t.Fatalf("wait for %s: %v", id, err)
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("wait for %s: status %d, %v", id, resp.StatusCode, err)
	}
}

// collectLogs waits until a container exited and returns all its log lines.
func collectLogs(t *testing.T, c *engine.Client, id string, tty bool) []engine.LogLine {
	t.Helper()
	waitExit(t, id)
	var lines []engine.LogLine
	err := c.Logs(t.Context(), id, tty, engine.LogOptions{Tail: "all"}, func(l engine.LogLine) error {
		lines = append(lines, l)
		return nil
	})
	if err != nil {
		t.Fatalf("Logs: %v", err)
	}
	return lines
}

func TestInspectRunningContainerReportsState(t *testing.T) {
	c := localClient(t)
	label := newLabel(t)
	name := "berth-test-" + label + "-inspect"
	id := runContainer(t, c, label, engine.CreateSpec{Name: name, Cmd: []string{"sleep", "300"}})

	raw, st, err := c.InspectContainer(t.Context(), name)
	if err != nil {
		t.Fatalf("InspectContainer: %v", err)
	}
	if st.StartedAt.IsZero() || time.Since(st.StartedAt) > 10*time.Minute || !st.FinishedAt.IsZero() {
		t.Errorf("InspectContainer: started at %v, finished at %v; want started now, never finished", st.StartedAt, st.FinishedAt)
	}
	st.StartedAt = time.Time{}
	want := engine.ContainerState{ID: id, Name: name, Status: "running", Running: true}
	if diff := cmp.Diff(want, st); diff != "" {
		t.Errorf("InspectContainer state (-want +got):\n%s", diff)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("InspectContainer raw document: %v", err)
	}
	if doc["Id"] != id {
		t.Errorf("raw document Id = %v, want %s", doc["Id"], id)
	}

	list, err := c.ListContainers(t.Context(), false)
	if err != nil {
		t.Fatalf("ListContainers: %v", err)
	}
	i := slices.IndexFunc(list, func(ct engine.Container) bool { return ct.ID == id })
	if i < 0 {
		t.Fatalf("ListContainers does not list running container %s", id)
	}
	got := list[i]
	if got.Name != name || got.State != "running" || got.Labels[enginetest.Label] != label ||
		got.Image != enginetest.Image() || got.ExitCode != nil || got.Command != "sleep 300" {
		t.Errorf("ListContainers entry = %+v, want running %s of %s labelled %s without exit code",
			got, name, enginetest.Image(), label)
	}
}

func TestListReportsExitCodeOfExitedContainer(t *testing.T) {
	c := localClient(t)
	label := newLabel(t)
	id := runContainer(t, c, label, engine.CreateSpec{Cmd: []string{"sh", "-c", "exit 3"}})
	waitExit(t, id)

	list, err := c.ListContainers(t.Context(), true)
	if err != nil {
		t.Fatalf("ListContainers: %v", err)
	}
	i := slices.IndexFunc(list, func(ct engine.Container) bool { return ct.ID == id })
	if i < 0 {
		t.Fatalf("ListContainers(all) does not list exited container %s", id)
	}
	if got := list[i]; got.State != "exited" || got.ExitCode == nil || *got.ExitCode != 3 {
		t.Errorf("ListContainers entry: state %q, status %q, exit code %v; want exited with 3", got.State, got.Status, got.ExitCode)
	}
	_, st, err := c.InspectContainer(t.Context(), id)
	if err != nil {
		t.Fatalf("InspectContainer: %v", err)
	}
	if st.Status != "exited" || st.Running || st.ExitCode != 3 {
		t.Errorf("InspectContainer state = %+v, want exited with 3", st)
	}
}

func TestStatsOfRunningContainer(t *testing.T) {
	c := localClient(t)
	label := newLabel(t)
	id := runContainer(t, c, label, engine.CreateSpec{Cmd: []string{"sleep", "300"}})

	s, err := c.ContainerStats(t.Context(), id)
	if err != nil {
		t.Fatalf("ContainerStats: %v", err)
	}
	if s.CPUTotal == 0 || s.MemoryUsage == 0 || s.MemoryLimit == 0 {
		t.Errorf("ContainerStats = %+v, want CPUTotal, MemoryUsage and MemoryLimit > 0", s)
	}
	if s.SystemCPU == 0 || s.OnlineCPUs == 0 {
		t.Errorf("ContainerStats = %+v, want SystemCPU and OnlineCPUs > 0", s)
	}
	if s.PreSystemCPU == 0 || s.PreSystemCPU > s.SystemCPU {
		t.Errorf("ContainerStats: PreSystemCPU = %d, SystemCPU = %d; want a previous sample", s.PreSystemCPU, s.SystemCPU)
	}
}

func TestLogsSeparateStdoutAndStderr(t *testing.T) {
	c := localClient(t)
	label := newLabel(t)
	id := runContainer(t, c, label, engine.CreateSpec{Cmd: []string{"sh", "-c", "echo out; echo err 1>&2; printf 'no newline'"}})

	got := collectLogs(t, c, id, false)
	// The engine copies stdout and stderr separately: only the order within
	// each stream is guaranteed.
	byStream := func(a, b engine.LogLine) int { return strings.Compare(a.Stream, b.Stream) }
	slices.SortStableFunc(got, byStream)
	want := []engine.LogLine{{Stream: "stderr", Text: "err"}, {Stream: "stdout", Text: "out"}, {Stream: "stdout", Text: "no newline"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Logs (-want +got):\n%s", diff)
	}

	var tail []engine.LogLine
	err := c.Logs(t.Context(), id, false, engine.LogOptions{Tail: "1"}, func(l engine.LogLine) error {
		tail = append(tail, l)
		return nil
	})
	if err != nil {
		t.Fatalf("Logs(tail 1): %v", err)
	}
	if len(tail) != 1 {
		t.Errorf("Logs(tail 1) = %+v, want one line", tail)
	}
}

func TestLogsOfTTYContainerAreStdoutLines(t *testing.T) {
	c := localClient(t)
	label := newLabel(t)
	id := runContainer(t, c, label, engine.CreateSpec{Tty: true, Cmd: []string{"sh", "-c", "echo hello; echo world 1>&2"}})

	_, st, err := c.InspectContainer(t.Context(), id)
	if err != nil {
		t.Fatalf("InspectContainer: %v", err)
	}
	if !st.Tty {
		t.Fatal("InspectContainer: Tty = false for a TTY container")
	}
	got := collectLogs(t, c, id, st.Tty)
	want := []engine.LogLine{{Stream: "stdout", Text: "hello"}, {Stream: "stdout", Text: "world"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Logs (-want +got):\n%s", diff)
	}
}

func TestMissingObjectsAreNotFound(t *testing.T) {
	c := localClient(t)
	missing := "berth-test-missing-" + strings.ToLower(rand.Text()[:12])
	tests := []struct {
		name string
		call func(ctx context.Context) error
	}{
		{"inspect", func(ctx context.Context) error { _, _, err := c.InspectContainer(ctx, missing); return err }},
		{"start", func(ctx context.Context) error { return c.StartContainer(ctx, missing) }},
		{"stop", func(ctx context.Context) error { return c.StopContainer(ctx, missing) }},
		{"remove", func(ctx context.Context) error { return c.RemoveContainer(ctx, missing, true) }},
		{"rename", func(ctx context.Context) error { return c.RenameContainer(ctx, missing, missing+"-x") }},
		{"stats", func(ctx context.Context) error { _, err := c.ContainerStats(ctx, missing); return err }},
		{"top", func(ctx context.Context) error { _, err := c.TopContainer(ctx, missing); return err }},
		{"logs", func(ctx context.Context) error {
			return c.Logs(ctx, missing, false, engine.LogOptions{}, func(engine.LogLine) error { return nil })
		}},
		{"create exec", func(ctx context.Context) error {
			_, err := c.CreateExec(ctx, missing, engine.ExecSpec{Cmd: []string{"true"}})
			return err
		}},
		{"inspect exec", func(ctx context.Context) error { // a well-formed exec id no exec has
			_, err := c.InspectExec(ctx, strings.Repeat("0", 64))
			return err
		}},
		{"create with missing image", func(ctx context.Context) error {
			_, err := c.CreateContainer(ctx, engine.CreateSpec{Name: missing, Image: "berth-test/missing:" + missing[len(missing)-6:]})
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call(t.Context())
			if !errors.Is(err, engine.ErrNotFound) {
				t.Errorf("error = %v, want engine.ErrNotFound", err)
			}
			if engine.IsOffline(err) {
				t.Errorf("error %v counts as offline", err)
			}
		})
	}
}

func TestRemoveRunningContainerWithoutForceIsRefused(t *testing.T) {
	c := localClient(t)
	label := newLabel(t)
	id := runContainer(t, c, label, engine.CreateSpec{Cmd: []string{"sleep", "300"}})

	if err := c.RemoveContainer(t.Context(), id, false); !errors.Is(err, engine.ErrConflict) {
		t.Fatalf("RemoveContainer(running, force=false) = %v, want engine.ErrConflict", err)
	}
	if _, st, err := c.InspectContainer(t.Context(), id); err != nil || !st.Running {
		t.Fatalf("after the refused removal: running = %v, err = %v; want still running", st.Running, err)
	}
	if err := c.RemoveContainer(t.Context(), id, true); err != nil {
		t.Fatalf("RemoveContainer(running, force=true): %v", err)
	}
	if _, _, err := c.InspectContainer(t.Context(), id); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("InspectContainer after forced removal = %v, want engine.ErrNotFound", err)
	}
}

func TestCreateContainerWithTakenNameIsConflict(t *testing.T) {
	c := localClient(t)
	label := newLabel(t)
	name := "berth-test-" + label + "-taken"
	createContainer(t, c, label, engine.CreateSpec{Name: name, Cmd: []string{"true"}})

	_, err := c.CreateContainer(t.Context(), engine.CreateSpec{Name: name, Image: enginetest.Image(),
		Labels: map[string]string{enginetest.Label: label}})
	if !errors.Is(err, engine.ErrConflict) {
		t.Fatalf("CreateContainer(taken name) = %v, want engine.ErrConflict", err)
	}
}

func TestFollowedLogsEndWithTheContext(t *testing.T) {
	c := localClient(t)
	label := newLabel(t)
	id := runContainer(t, c, label, engine.CreateSpec{Cmd: []string{"sh", "-c", "echo ready; sleep 300"}})

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	lines := make(chan engine.LogLine, 16)
	done := make(chan error, 1)
	go func() {
		done <- c.Logs(ctx, id, false, engine.LogOptions{Tail: "all", Follow: true}, func(l engine.LogLine) error {
			lines <- l
			return nil
		})
	}()
	select {
	case l := <-lines:
		if diff := cmp.Diff(engine.LogLine{Stream: "stdout", Text: "ready"}, l); diff != "" {
			t.Errorf("first followed line (-want +got):\n%s", diff)
		}
	case err := <-done:
		t.Fatalf("Logs(follow) ended before the first line: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("no line from Logs(follow)")
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Logs(follow) after cancel = %v, want nil", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Logs(follow) did not end with its context")
	}
}

func TestCreateContainerRejectsBadRestartPolicy(t *testing.T) {
	c := localClient(t)
	_, err := c.CreateContainer(t.Context(), engine.CreateSpec{Image: enginetest.Image(), RestartPolicy: "sometimes",
		Labels: map[string]string{enginetest.Label: newLabel(t)}})
	if !errors.Is(err, engine.ErrInvalid) {
		t.Fatalf("CreateContainer(restart policy \"sometimes\") = %v, want engine.ErrInvalid", err)
	}
}

// Lists asked for at the same time share engine calls, and each caller gets
// its own copy: one that changes its list changes nobody else's, and a
// container created before the lists were asked for is in every one.
func TestConcurrentListsOfOneEngineAreEachCompleteAndTheirOwn(t *testing.T) {
	c := localClient(t)
	label := newLabel(t)
	id := createContainer(t, c, label, engine.CreateSpec{})
	const n = 24
	lists := make([][]engine.Container, n)
	errs := make([]error, n)
	done := make(chan int, n)
	for i := range n {
		go func() {
			lists[i], errs[i] = c.ListContainers(t.Context(), true)
			if errs[i] == nil {
				for j := range lists[i] {
					lists[i][j].Labels["berth.test.mine"] = "x"
					lists[i][j].Ports = append(lists[i][j].Ports, engine.Port{PrivatePort: i})
				}
			}
			done <- i
		}()
	}
	for range n {
		<-done
	}
	for i, list := range lists {
		if errs[i] != nil {
			t.Fatalf("list %d: %v", i, errs[i])
		}
		found := false
		for _, ct := range list {
			if ct.ID == id {
				found = true
				if len(ct.Ports) != 1 || ct.Ports[0].PrivatePort != i {
					t.Errorf("list %d: ports %v: changed by another caller", i, ct.Ports)
				}
			}
		}
		if !found {
			t.Errorf("list %d lacks container %s created before it", i, id)
		}
	}
}
