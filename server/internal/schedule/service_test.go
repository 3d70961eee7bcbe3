package schedule

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/berth-dev/berth/server/internal/secret"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/server/internal/store/storetest"
	"github.com/berth-dev/berth/shared/fault"
)

// clock is an injected clock that tests move by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func newService(s *store.Store, node string, c *clock, runners map[Type]Runner) *Service {
	return New(Options{Store: s, Node: node, Now: c.now, Runners: runners, Local: time.UTC,
		Scanning: func(context.Context, int64) bool { return false }})
}

func createEnv(t *testing.T, s *store.Store, name string, tz *string) store.Environment {
	t.Helper()
	e := store.Environment{Name: name, ConnectionType: "socket", Labels: []string{}, AgentCapabilities: []string{}, Timezone: tz}
	if err := s.CreateEnvironment(t.Context(), &e); err != nil {
		t.Fatal(err)
	}
	return e
}

func createAutoUpdate(t *testing.T, s *store.Store, envID int64, name, cron string) store.AutoUpdate {
	t.Helper()
	a := store.AutoUpdate{ContainerName: name, EnvironmentID: &envID, Enabled: true, ScheduleType: DetectScheduleType(cron),
		CronExpression: cron, VulnerabilityCriteria: "never"}
	if err := s.UpsertAutoUpdate(t.Context(), &a); err != nil {
		t.Fatal(err)
	}
	return a
}

// finished waits for a run and returns its recorded execution.
func finished(t *testing.T, s *store.Store, e store.Execution, done <-chan struct{}) store.Execution {
	t.Helper()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("execution %d did not finish", e.ID)
	}
	got, err := s.GetExecution(t.Context(), e.ID)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestTriggerRecordsTheOutcome(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		env := createEnv(t, s, "local", nil)
		c := &clock{t: time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)}
		outcome := map[string]func(*Run) error{
			"ok": func(r *Run) error {
				r.Logf("pulled %s", "web:2")
				r.Detail("newImage", "sha256:b")
				return nil
			},
			"bad":  func(*Run) error { return fault.New(fault.Internal, "Pull failed").WithDetails("registry said no") },
			"skip": func(r *Run) error { r.Skip("blocked by vulnerability criteria critical"); return nil },
		}
		svc := newService(s, "n1", c, map[Type]Runner{ContainerUpdate: RunnerFunc(func(_ context.Context, d Definition, r *Run) error {
			return outcome[d.EntityName](r)
		})})
		cases := []struct {
			name, status, message string
		}{
			{"ok", store.ExecutionSuccess, ""},
			{"bad", store.ExecutionFailed, "Pull failed: registry said no"},
			{"skip", store.ExecutionSkipped, "blocked by vulnerability criteria critical"},
		}
		for _, tc := range cases {
			a := createAutoUpdate(t, s, env.ID, tc.name, "0 3 * * *")
			e, done, err := svc.Trigger(t.Context(), ContainerUpdate, a.ID, TriggerManual)
			if err != nil {
				t.Fatal(err)
			}
			got := finished(t, s, e, done)
			if got.Status != tc.status || got.TriggeredBy != "manual" || got.EntityName != tc.name ||
				got.EnvironmentID == nil || *got.EnvironmentID != env.ID || got.CompletedAt == nil || got.DurationMS == nil || got.LeaseUntil != nil {
				t.Errorf("%s: execution = %+v", tc.name, got)
			}
			msg := ""
			if got.ErrorMessage != nil {
				msg = *got.ErrorMessage
			}
			if msg != tc.message {
				t.Errorf("%s: error message %q, want %q", tc.name, msg, tc.message)
			}
		}
		list, _, _ := s.ListExecutions(t.Context(), store.ExecutionFilter{Limit: 10})
		ok := list[len(list)-1]
		var details map[string]string
		if err := json.Unmarshal([]byte(ok.Details), &details); err != nil || details["newImage"] != "sha256:b" {
			t.Errorf("details = %q (%v)", ok.Details, err)
		}
		if want := "2026-11-23T10:00:00Z pulled web:2\n"; !strings.Contains(ok.Logs, want) {
			t.Errorf("logs = %q, want a line %q", ok.Logs, want)
		}
		if _, _, err := svc.Trigger(t.Context(), ContainerUpdate, 9999, TriggerManual); err != errScheduleNotFound {
			t.Errorf("unknown schedule: %v", err)
		}
	})
}

// A schedule still running is neither triggered again nor run for its next
// tick (that tick is recorded as skipped).
func TestARunningScheduleIsNotStartedTwice(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		env := createEnv(t, s, "local", nil)
		c := &clock{t: time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)}
		release := make(chan struct{})
		var runs atomic.Int32
		svc := newService(s, "n1", c, map[Type]Runner{ContainerUpdate: RunnerFunc(func(ctx context.Context, _ Definition, _ *Run) error {
			runs.Add(1)
			<-release
			return nil
		})})
		a := createAutoUpdate(t, s, env.ID, "web", "* * * * *")
		d, err := svc.Definition(t.Context(), ContainerUpdate, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		e, done, err := svc.RunDue(t.Context(), d, c.now())
		if err != nil || done == nil {
			t.Fatalf("first tick: %v", err)
		}
		if _, _, err := svc.Trigger(t.Context(), ContainerUpdate, a.ID, TriggerManual); !errors.Is(err, errAlreadyRunning) {
			t.Errorf("manual run while running = %v, want %v", err, errAlreadyRunning)
		}
		skip, skipDone, err := svc.RunDue(t.Context(), d, c.now().Add(time.Minute))
		if err != nil || skipDone != nil || skip.Status != store.ExecutionSkipped {
			t.Errorf("next tick while running = %+v, %v", skip, err)
		}
		close(release)
		if got := finished(t, s, e, done); got.Status != store.ExecutionSuccess {
			t.Errorf("first run = %+v", got)
		}
		if runs.Load() != 1 {
			t.Errorf("runner ran %d times, want 1", runs.Load())
		}
		_, total, _ := s.ListExecutions(t.Context(), store.ExecutionFilter{Limit: 10})
		if total != 2 {
			t.Errorf("%d executions, want the run and the skipped tick", total)
		}
	})
}

// sharedDatabases runs fn with two stores (two servers' connection pools)
// on one database, for each dialect.
func sharedDatabases(t *testing.T, fn func(t *testing.T, a, b *store.Store)) {
	open := func(t *testing.T, url string, box *secret.Box) *store.Store {
		t.Helper()
		s, err := store.Open(t.Context(), url, box)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	t.Run("sqlite", func(t *testing.T) {
		box, path := storetest.Box(t), filepath.Join(t.TempDir(), "berth.db")
		fn(t, open(t, path, box), open(t, path, box))
	})
	t.Run("postgres", func(t *testing.T) {
		box, url := storetest.Box(t), storetest.PostgresDatabase(t)
		fn(t, open(t, url, box), open(t, url, box))
	})
}

// Two Berth servers on one database: when a schedule is due, both fire it
// for the same tick, and it runs once.
func TestTwoServersRunADueScheduleOnce(t *testing.T) {
	sharedDatabases(t, func(t *testing.T, a, b *store.Store) {
		env := createEnv(t, a, "local", nil)
		au := createAutoUpdate(t, a, env.ID, "web", "0 4 * * *")
		tick := time.Date(2026, 11, 24, 4, 0, 0, 0, time.UTC)
		c := &clock{t: tick.Add(150 * time.Millisecond)}
		var runs atomic.Int32
		var ranOn sync.Map
		runner := func(node string) map[Type]Runner {
			return map[Type]Runner{ContainerUpdate: RunnerFunc(func(context.Context, Definition, *Run) error {
				runs.Add(1)
				ranOn.Store(node, true)
				return nil
			})}
		}
		servers := []*Service{newService(a, "server-a", c, runner("server-a")), newService(b, "server-b", c, runner("server-b"))}
		for round := range 3 { // three days, each tick fired by both at once
			at := tick.AddDate(0, 0, round)
			var wg sync.WaitGroup
			dones := make([]<-chan struct{}, len(servers))
			for i, svc := range servers {
				wg.Go(func() {
					d, err := svc.Definition(t.Context(), ContainerUpdate, au.ID)
					if err != nil {
						t.Error(err)
						return
					}
					_, done, err := svc.RunDue(t.Context(), d, at)
					if err != nil {
						t.Errorf("%s: %v", svc.Node(), err)
					}
					dones[i] = done
				})
			}
			wg.Wait()
			claimed := 0
			for _, d := range dones {
				if d != nil {
					claimed++
					<-d
				}
			}
			if claimed != 1 {
				t.Fatalf("day %d: %d servers claimed the tick, want 1", round, claimed)
			}
		}
		list, total, err := a.ListExecutions(t.Context(), store.ExecutionFilter{Limit: 10})
		if err != nil || total != 3 || runs.Load() != 3 {
			t.Fatalf("%d executions, %d runs (%v); want 3 and 3", total, runs.Load(), err)
		}
		for _, e := range list {
			if e.Status != store.ExecutionSuccess || e.ScheduledFor == nil || e.TriggeredBy != TriggerCron {
				t.Errorf("execution = %+v", e)
			}
		}
	})
}

// A server that crashed in the middle of a run finds it marked failed when
// it starts again.
func TestRecoverMarksTheRunOfACrashFailed(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		env := createEnv(t, s, "local", nil)
		a := createAutoUpdate(t, s, env.ID, "web", "0 3 * * *")
		c := &clock{t: time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)}
		// The "crashed" server: its run was claimed and never finished.
		crashed := newService(s, "host:3000", c, nil)
		d, _ := crashed.Definition(t.Context(), ContainerUpdate, a.ID)
		e := crashed.newExecution(d, TriggerManual, nil)
		e.Details, e.Logs = `{"recovery":{"step":2}}`, "line 1\n" // what it had checkpointed
		if err := s.AddExecution(t.Context(), &e); err != nil {
			t.Fatal(err)
		}
		// Another server does not touch it while its lease holds.
		other := newService(s, "other:3000", c, nil)
		if n, err := other.Recover(t.Context()); err != nil || n != 0 {
			t.Fatalf("other server recovered %d (%v)", n, err)
		}
		// The restarted server marks it failed and hands it to the recoverer
		// of its type, which finds the checkpointed details; what it did is
		// added to the execution.
		recovered := make(chan store.Execution, 1)
		restarted := New(Options{Store: s, Node: "host:3000", Now: c.now, Local: time.UTC,
			Scanning: func(context.Context, int64) bool { return false },
			Recoverers: map[Type]Recoverer{ContainerUpdate: func(_ context.Context, e store.Execution) (string, error) {
				recovered <- e
				return "Put right", nil
			}}})
		if n, err := restarted.Recover(t.Context()); err != nil || n != 1 {
			t.Fatalf("recovered %d (%v), want 1", n, err)
		}
		select {
		case r := <-recovered:
			if r.ID != e.ID || r.Details != e.Details || r.Status != store.ExecutionFailed {
				t.Errorf("recoverer got %+v", r)
			}
		case <-time.After(time.Minute):
			t.Fatal("the recoverer was not called")
		}
		restarted.runs.Wait()
		got, _ := s.GetExecution(t.Context(), e.ID)
		if want := msgInterrupted + ". Put right"; got.Status != store.ExecutionFailed || got.ErrorMessage == nil ||
			*got.ErrorMessage != want || got.Logs != "line 1\n2026-11-23T10:00:00Z Put right\n" {
			t.Errorf("after restart = %+v, want failed with %q and the note in the logs", got, want)
		}
		// And the schedule runs again.
		if _, done, err := restarted.Trigger(t.Context(), ContainerUpdate, a.ID, TriggerManual); err != nil {
			t.Errorf("run after recovery: %v", err)
		} else {
			<-done
		}
	})
}

// A run started after the server restarted but before its Recover swept
// (the API serves while the scheduler starts) is its own, not one of its
// previous life: the sweep leaves it running and it records its outcome.
func TestRecoverSparesRunsStartedSinceTheRestart(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		env := createEnv(t, s, "local", nil)
		old := createAutoUpdate(t, s, env.ID, "old", "0 3 * * *")
		fresh := createAutoUpdate(t, s, env.ID, "fresh", "0 3 * * *")
		c := &clock{t: time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)}
		crashed := newService(s, "host:3000", c, nil)
		d, _ := crashed.Definition(t.Context(), ContainerUpdate, old.ID)
		stale := crashed.newExecution(d, TriggerManual, nil)
		if err := s.AddExecution(t.Context(), &stale); err != nil {
			t.Fatal(err)
		}
		release := make(chan struct{})
		restarted := newService(s, "host:3000", c, map[Type]Runner{ContainerUpdate: RunnerFunc(
			func(ctx context.Context, _ Definition, run *Run) error {
				<-release
				run.Logf("updated")
				return nil
			})})
		e, done, err := restarted.Trigger(t.Context(), ContainerUpdate, fresh.ID, TriggerManual)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := restarted.Recover(t.Context()); err != nil || n != 1 {
			t.Fatalf("recovered %d (%v), want 1 (the previous life's run)", n, err)
		}
		if got, _ := s.GetExecution(t.Context(), stale.ID); got.Status != store.ExecutionFailed {
			t.Errorf("previous life's run = %s, want failed", got.Status)
		}
		if got, _ := s.GetExecution(t.Context(), e.ID); got.Status != store.ExecutionRunning {
			t.Errorf("run started since the restart = %s after the sweep, want running", got.Status)
		}
		close(release)
		if got := finished(t, s, e, done); got.Status != store.ExecutionSuccess || got.ErrorMessage != nil {
			t.Errorf("run started since the restart = %+v, want success", got)
		}
	})
}

func saveEnvSchedule(t *testing.T, s *store.Store, es store.EnvSchedule) {
	t.Helper()
	if err := s.SaveEnvSchedule(t.Context(), &es); err != nil {
		t.Fatal(err)
	}
}

func createGitStack(t *testing.T, s *store.Store, envID int64, name, cron string) store.GitStack {
	t.Helper()
	repo := store.GitRepository{Name: "repo-" + name, URL: "https://git.example/" + name + ".git", Branch: "main"}
	if err := s.SaveGitRepository(t.Context(), &repo); err != nil {
		t.Fatal(err)
	}
	st := store.Stack{EnvironmentID: envID, Name: name, SourceType: store.SourceGit, ComposePath: "compose.yaml"}
	g := store.GitStack{RepositoryID: repo.ID, ComposePath: "compose.yaml", AutoUpdate: true, AutoUpdateCron: cron}
	if err := s.CreateGitStack(t.Context(), &st, &g, nil); err != nil {
		t.Fatal(err)
	}
	return g
}

// The list shows all five types, each next run computed in its
// environment's zone (here across Berlin's change to summer time).
func TestListShowsEveryTypeWithNextRunInItsZone(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		berlin := "Europe/Berlin"
		env := createEnv(t, s, "berlin", &berlin)
		plain := createEnv(t, s, "plain", nil)
		c := &clock{t: time.Date(2026, 3, 28, 12, 0, 0, 0, time.UTC)}
		svc := newService(s, "n1", c, nil)

		au := createAutoUpdate(t, s, env.ID, "web", "0 3 * * *")
		off := createAutoUpdate(t, s, plain.ID, "db", "0 3 * * *")
		if err := s.SetAutoUpdateEnabled(t.Context(), off.ID, false); err != nil {
			t.Fatal(err)
		}
		g := createGitStack(t, s, env.ID, "site", "*/15 * * * *")
		saveEnvSchedule(t, s, store.EnvSchedule{EnvironmentID: env.ID, Kind: store.EnvUpdateCheck, Enabled: true,
			CronExpression: "0 4 * * *", AutoUpdate: true, VulnerabilityCriteria: "critical"})
		saveEnvSchedule(t, s, store.EnvSchedule{EnvironmentID: env.ID, Kind: store.EnvImagePrune, Enabled: true,
			CronExpression: "0 3 * * 0", PruneMode: "all"})
		// Recent executions: at most five.
		for range 7 {
			e, done, err := svc.Trigger(t.Context(), ContainerUpdate, au.ID, TriggerManual)
			if err != nil {
				t.Fatal(err)
			}
			finished(t, s, e, done)
		}

		list, err := svc.List(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		byKey := map[store.ScheduleKey]Info{}
		var order []Type
		for _, in := range list {
			byKey[in.Key()] = in
			order = append(order, in.Type)
		}
		if len(list) != 7 || order[5] != SystemCleanup || order[6] != SystemCleanup {
			t.Fatalf("schedules = %v, want 5 configured then the 2 system ones", order)
		}
		cest := func(y int, m time.Month, d, h, min int) time.Time {
			return time.Date(y, m, d, h-2, min, 0, 0, time.UTC)
		}
		cases := []struct {
			key  store.ScheduleKey
			want *time.Time
		}{
			// Sunday 29 March: 03:00 and 04:00 are CEST (UTC+2).
			{store.ScheduleKey{Type: "container_update", ID: au.ID}, ptr(cest(2026, 3, 29, 3, 0))},
			{store.ScheduleKey{Type: "container_update", ID: off.ID}, nil},
			{store.ScheduleKey{Type: "git_stack_sync", ID: g.ID}, ptr(time.Date(2026, 3, 28, 12, 15, 0, 0, time.UTC))},
			{store.ScheduleKey{Type: "env_update_check", ID: env.ID}, ptr(cest(2026, 3, 29, 4, 0))},
			{store.ScheduleKey{Type: "image_prune", ID: env.ID}, ptr(cest(2026, 3, 29, 3, 0))},
			{store.ScheduleKey{Type: "system_cleanup", ID: SystemExecutionCleanup}, ptr(time.Date(2026, 3, 29, 3, 0, 0, 0, time.UTC))},
		}
		for _, tc := range cases {
			in, ok := byKey[tc.key]
			switch {
			case !ok:
				t.Errorf("%v not listed", tc.key)
			case tc.want == nil && in.NextRun != nil:
				t.Errorf("%v: next run %v, want none (disabled)", tc.key, in.NextRun)
			case tc.want != nil && (in.NextRun == nil || !in.NextRun.Equal(*tc.want)):
				t.Errorf("%v: next run %v, want %v", tc.key, in.NextRun, tc.want)
			}
		}
		web := byKey[store.ScheduleKey{Type: "container_update", ID: au.ID}]
		if _, off := web.NextRun.Zone(); off != 2*3600 {
			t.Errorf("next run %v is not given in the environment's zone", web.NextRun)
		}
		if len(web.RecentExecutions) != 5 || web.LastExecution == nil || web.LastExecution.ID != web.RecentExecutions[0].ID ||
			web.EnvironmentName == nil || *web.EnvironmentName != "berlin" || web.Timezone != berlin {
			t.Errorf("web = %+v", web)
		}
		check := byKey[store.ScheduleKey{Type: "env_update_check", ID: env.ID}]
		if !check.AutoUpdate || check.VulnerabilityCriteria != "critical" || check.IsSystem {
			t.Errorf("update check = %+v", check)
		}
		if sys := byKey[store.ScheduleKey{Type: "system_cleanup", ID: 1}]; !sys.IsSystem || sys.EnvironmentID != nil || !sys.Enabled {
			t.Errorf("system = %+v", sys)
		}
	})
}

func ptr[T any](v T) *T { return &v }

func entries(s *Service) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.cron.Entries())
}

func TestToggleAndDeleteFollowTheSpec(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		env := createEnv(t, s, "local", nil)
		c := &clock{t: time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)}
		svc := newService(s, "n1", c, nil)
		au := createAutoUpdate(t, s, env.ID, "web", "0 3 * * *")
		g := createGitStack(t, s, env.ID, "site", "0 5 * * *")
		saveEnvSchedule(t, s, store.EnvSchedule{EnvironmentID: env.ID, Kind: store.EnvUpdateCheck, Enabled: true, CronExpression: "0 4 * * *"})
		saveEnvSchedule(t, s, store.EnvSchedule{EnvironmentID: env.ID, Kind: store.EnvImagePrune, Enabled: true, CronExpression: "0 3 * * 0"})
		if err := svc.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		if n := entries(svc); n != 6 {
			t.Fatalf("%d cron entries, want 6 (4 configured + 2 system)", n)
		}
		keys := []store.ScheduleKey{{Type: "container_update", ID: au.ID}, {Type: "git_stack_sync", ID: g.ID},
			{Type: "env_update_check", ID: env.ID}, {Type: "image_prune", ID: env.ID}}
		for _, k := range keys {
			on, err := svc.Toggle(ctx, Type(k.Type), k.ID)
			if err != nil || on {
				t.Fatalf("toggle %v = %v, %v; want off", k, on, err)
			}
			d, _ := svc.Definition(ctx, Type(k.Type), k.ID)
			if d.Enabled || svc.NextRun(d, c.now()) != nil {
				t.Errorf("%v still enabled after toggle", k)
			}
		}
		if n := entries(svc); n != 2 {
			t.Errorf("%d cron entries after switching off, want the 2 system ones", n)
		}
		if on, err := svc.Toggle(ctx, ContainerUpdate, au.ID); err != nil || !on {
			t.Errorf("toggle back = %v, %v", on, err)
		}
		if on, err := svc.ToggleSystem(ctx, SystemEventCleanup); err != nil || on {
			t.Errorf("system toggle = %v, %v", on, err)
		}
		if n := entries(svc); n != 2 {
			t.Errorf("%d cron entries, want web and one system schedule", n)
		}
		if _, err := svc.ToggleSystem(ctx, 99); err == nil {
			t.Error("toggled an unknown system schedule")
		}
		if err := svc.Delete(ctx, SystemCleanup, SystemExecutionCleanup); err != errSystemDelete {
			t.Errorf("delete of a system schedule = %v", err)
		}
		for _, k := range keys {
			if err := svc.Delete(ctx, Type(k.Type), k.ID); err != nil {
				t.Fatalf("delete %v: %v", k, err)
			}
			if _, err := svc.Definition(ctx, Type(k.Type), k.ID); k.Type != "env_update_check" && k.Type != "image_prune" && !errors.Is(err, errScheduleNotFound) && k.Type != "git_stack_sync" {
				t.Errorf("%v after delete: %v", k, err)
			}
		}
		list, _ := svc.List(ctx)
		for _, in := range list {
			if !in.IsSystem {
				t.Errorf("%s %d still listed after delete", in.Type, in.ID)
			}
		}
		if _, err := s.GetGitStack(ctx, g.ID); err != nil {
			t.Errorf("the git stack itself went with its schedule: %v", err)
		}
		if err := svc.Delete(ctx, ContainerUpdate, au.ID); !errors.Is(err, errScheduleNotFound) {
			t.Errorf("second delete = %v", err)
		}
	})
}

func TestSystemCleanupDeletesOldExecutions(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		c := &clock{t: time.Date(2026, 11, 23, 3, 0, 0, 0, time.UTC)}
		svc := newService(s, "n1", c, nil)
		old := store.Execution{ScheduleType: "image_prune", ScheduleID: 1, TriggeredBy: "cron", TriggeredAt: c.now().AddDate(0, 0, -31),
			Status: store.ExecutionSuccess}
		recent := old
		recent.TriggeredAt = c.now().AddDate(0, 0, -29)
		for _, e := range []*store.Execution{&old, &recent} {
			if err := s.AddExecution(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
		e, done, err := svc.Trigger(ctx, SystemCleanup, SystemExecutionCleanup, TriggerManual)
		if err != nil {
			t.Fatal(err)
		}
		if got := finished(t, s, e, done); got.Status != store.ExecutionSuccess || got.Details != `{"deleted":1}` {
			t.Errorf("cleanup = %+v", got)
		}
		if _, err := s.GetExecution(ctx, old.ID); !errors.Is(err, store.ErrNotFound) {
			t.Error("the 31-day-old execution survived")
		}
		if _, err := s.GetExecution(ctx, recent.ID); err != nil {
			t.Error("the 29-day-old execution was deleted")
		}
		if err := svc.SetRetention(ctx, Retention{ExecutionDays: -1}); err == nil {
			t.Error("negative retention accepted")
		}
	})
}

// A run's checkpoint saves its details and logs while it runs, where a
// server that takes over after a crash finds them.
func TestCheckpointSavesProgressWhileRunning(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, s *store.Store) {
		env := createEnv(t, s, "local", nil)
		a := createAutoUpdate(t, s, env.ID, "web", "0 3 * * *")
		c := &clock{t: time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)}
		saved, release := make(chan error, 1), make(chan struct{})
		svc := newService(s, "host:3000", c, map[Type]Runner{ContainerUpdate: RunnerFunc(func(ctx context.Context, _ Definition, run *Run) error {
			run.Detail("recovery", map[string]int{"step": 1})
			run.Detail("other", true)
			run.Clear("other")
			run.Logf("step 1")
			saved <- run.Checkpoint(ctx)
			<-release
			run.Clear("recovery")
			return nil
		})})
		e, done, err := svc.Trigger(t.Context(), ContainerUpdate, a.ID, TriggerManual)
		if err != nil {
			t.Fatal(err)
		}
		if err := <-saved; err != nil {
			t.Fatalf("checkpoint: %v", err)
		}
		mid, _ := s.GetExecution(t.Context(), e.ID)
		if mid.Status != store.ExecutionRunning || mid.Details != `{"recovery":{"step":1}}` || !strings.Contains(mid.Logs, "step 1") {
			t.Errorf("while running: status %s, details %q, logs %q", mid.Status, mid.Details, mid.Logs)
		}
		close(release)
		<-done
		end, _ := s.GetExecution(t.Context(), e.ID)
		if end.Status != store.ExecutionSuccess || end.Details != "" {
			t.Errorf("finished: status %s, details %q", end.Status, end.Details)
		}
	})
}
