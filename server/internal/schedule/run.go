package schedule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// Run is the progress of one execution: its log lines, its details (a JSON
// object) and, when the runner decides so, the reason it was skipped.
type Run struct {
	now     func() time.Time
	trigger string                                                // the execution's: cron, manual or webhook
	save    func(ctx context.Context, logs, details string) error // Checkpoint's; nil: nothing saved

	mu      sync.Mutex
	logs    strings.Builder
	details map[string]any
	skipped string
}

// maxLogs bounds an execution's logs; later lines are dropped.
const maxLogs = 256 << 10

// Trigger is what started the execution: TriggerCron, TriggerManual or
// TriggerWebhook.
func (r *Run) Trigger() string { return r.trigger }

// Logf adds a line to the execution's logs.
func (r *Run) Logf(format string, args ...any) {
	line := r.now().UTC().Format("2006-01-02T15:04:05Z") + " " + fmt.Sprintf(format, args...) + "\n"
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.logs.Len()+len(line) <= maxLogs {
		r.logs.WriteString(line)
	}
}

// Detail sets a field of the execution's details.
func (r *Run) Detail(key string, v any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.details == nil {
		r.details = map[string]any{}
	}
	r.details[key] = v
}

// Clear removes a field of the execution's details.
func (r *Run) Clear(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.details, key)
}

// Checkpoint saves the logs and details so far, now: what must be found
// again if this server stops before the run ends (an Options.Recoverers
// reads it from the execution).
func (r *Run) Checkpoint(ctx context.Context) error {
	if r.save == nil {
		return nil
	}
	return r.save(context.WithoutCancel(ctx), r.Logs(), r.detailsJSON())
}

// Skip marks the execution skipped with reason (recorded as its error
// message and as details.reason).
func (r *Run) Skip(reason string) {
	r.Logf("Skipped: %s", reason)
	r.Detail("reason", reason)
	r.mu.Lock()
	r.skipped = reason
	r.mu.Unlock()
}

// Logs returns the lines so far.
func (r *Run) Logs() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.logs.String()
}

func (r *Run) detailsJSON() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.details) == 0 {
		return ""
	}
	b, err := json.Marshal(r.details)
	if err != nil {
		return ""
	}
	return string(b)
}

// start runs the claimed execution e of d in the background; the returned
// channel closes when it has finished and is recorded.
func (s *Service) start(e store.Execution, d Definition) <-chan struct{} {
	done := make(chan struct{})
	s.runs.Add(1)
	go func() {
		defer s.runs.Done()
		defer close(done)
		s.execute(e, d)
	}()
	return done
}

// execute runs e with the runner of its type, holding its lease, and
// records the outcome.
func (s *Service) execute(e store.Execution, d Definition) {
	s.executeWith(s.baseCtx(), e, d, s.runner(d))
}

// executeWith runs e with runner under parent, holding its lease, and
// records the outcome.
func (s *Service) executeWith(parent context.Context, e store.Execution, d Definition, runner Runner) {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	run := &Run{now: s.now, trigger: e.TriggeredBy, save: func(ctx context.Context, logs, details string) error {
		return s.store.CheckpointExecution(ctx, e.ID, s.node, logs, details)
	}}
	run.Logf("Started (%s) on %s", e.TriggeredBy, s.node)
	s.announce()
	defer s.announce() // after the outcome is recorded
	lost := make(chan struct{})
	stopLease := s.holdLease(ctx, e.ID, run, cancel, lost)

	err := runner.Run(ctx, d, run)
	stopLease()

	end := s.now().UTC()
	ms := end.Sub(*e.StartedAt).Milliseconds()
	e.CompletedAt, e.DurationMS, e.Status = &end, &ms, store.ExecutionSuccess
	switch {
	case isClosed(lost):
		return // another server marked it failed; nothing of ours to record
	case err != nil && parent.Err() != nil:
		msg := msgInterrupted
		e.Status, e.ErrorMessage = store.ExecutionFailed, &msg
		run.Logf("Failed: %s", msg)
	case err != nil:
		msg := errorMessage(err)
		e.Status, e.ErrorMessage = store.ExecutionFailed, &msg
		run.Logf("Failed: %s", msg)
		s.log.Warn("schedule run failed", "schedule", describe(d), "execution", e.ID, "err", err)
	case run.skipped != "":
		msg := run.skipped
		e.Status, e.ErrorMessage = store.ExecutionSkipped, &msg
	default:
		run.Logf("Completed in %d ms", ms)
	}
	e.Logs, e.Details, e.LeaseUntil = run.Logs(), run.detailsJSON(), nil
	fctx, fcancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer fcancel()
	if err := s.store.FinishExecution(fctx, &e); err != nil {
		s.log.Error("schedule run not recorded", "schedule", describe(d), "execution", e.ID, "err", err)
	}
}

// errorMessage is what an execution records of a failure: a fault's
// message (and details), else the error.
func errorMessage(err error) string {
	if f, ok := fault.As(err); ok {
		if f.Details != "" {
			return f.Message + ": " + f.Details
		}
		return f.Message
	}
	return err.Error()
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// holdLease renews execution id's lease (and saves its logs so far) every
// third of the lease until stop is called. When the renewal finds the
// execution no longer held by this server, it closes lost and cancels the
// run.
func (s *Service) holdLease(ctx context.Context, id int64, run *Run, cancel context.CancelFunc, lost chan struct{}) (stop func()) {
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(s.lease / 3)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				err := s.store.RenewExecution(ctx, id, s.node, s.now().UTC().Add(s.lease), run.Logs())
				if errors.Is(err, store.ErrNotFound) {
					close(lost)
					cancel()
					return
				}
				if err != nil && ctx.Err() == nil {
					s.log.Warn("schedule run lease not renewed", "execution", id, "err", err)
				}
			}
		}
	})
	return func() {
		close(quit)
		wg.Wait()
	}
}

// runner returns the runner of d's type.
func (s *Service) runner(d Definition) Runner {
	if d.Type == SystemCleanup {
		return RunnerFunc(s.runSystem)
	}
	if r, ok := s.runners[d.Type]; ok {
		return r
	}
	return RunnerFunc(func(context.Context, Definition, *Run) error {
		return fmt.Errorf("no runner for %s schedules in this server", d.Type)
	})
}
