// Package jobs provides the registry of long operations (pull, push, scan,
// deploys): each runs detached from the request that started it, its events
// are kept for replay, and a finished job stays readable for Retention.
package jobs

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/google/uuid"
)

// Retention is how long a finished job stays readable.
const Retention = 10 * time.Minute

// Status of a job.
type Status string

// The job statuses.
const (
	Running Status = "running"
	Done    Status = "done"
	Error   Status = "error"
)

// Event is one line of a job: an event name and its JSON data.
type Event struct {
	Name string          `json:"event"`
	Data json.RawMessage `json:"data"`
}

// Emit sends an intermediate event of a running job.
type Emit func(event string, data any)

// Func is a long operation. It emits progress with emit and returns its
// final event; failed marks the job as an error (the final data says why).
type Func func(ctx context.Context, emit Emit) (event string, result any, failed bool)

// Job is one operation.
type Job struct {
	ID    string
	Owner int64 // user who started it (0: anonymous, authentication off)

	mu       sync.Mutex
	events   []Event
	status   Status
	finished time.Time
	changed  chan struct{} // closed and replaced on every change
	cancel   context.CancelFunc
}

// Snapshot is a job's state as clients read it.
type Snapshot struct {
	ID     string          `json:"id"`
	Status Status          `json:"status"`
	Lines  []Event         `json:"lines"`
	Result json.RawMessage `json:"result"`
}

// Registry runs and keeps jobs.
type Registry struct {
	ctx     context.Context // ends when Berth stops; jobs derive from it, not from requests
	now     func() time.Time
	timeout time.Duration

	mu   sync.Mutex
	jobs map[string]*Job
	wg   sync.WaitGroup
}

// NewRegistry returns a Registry whose jobs end when ctx ends or after
// timeout each.
func NewRegistry(ctx context.Context, timeout time.Duration, now func() time.Time) *Registry {
	if now == nil {
		now = time.Now
	}
	return &Registry{ctx: ctx, now: now, timeout: timeout, jobs: map[string]*Job{}}
}

// Start runs fn in the background and returns its job at once.
func (r *Registry) Start(owner int64, fn Func) *Job {
	ctx, cancel := context.WithTimeout(r.ctx, r.timeout)
	j := &Job{ID: uuid.NewString(), Owner: owner, status: Running, changed: make(chan struct{}), cancel: cancel}
	r.mu.Lock()
	r.sweepLocked()
	r.jobs[j.ID] = j
	r.mu.Unlock()

	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer cancel()
		event, result, failed := fn(ctx, j.emit)
		j.finish(event, result, failed, r.now())
	}()
	return j
}

// Lifetime is the longest a job stays readable after it started: its
// timeout, then Retention.
func (r *Registry) Lifetime() time.Duration { return r.timeout + Retention }

// Wait blocks until every job has finished (after the registry's context
// ended, this is shutdown).
func (r *Registry) Wait() { r.wg.Wait() }

// Get returns a job that is running or finished less than Retention ago.
func (r *Registry) Get(id string) (*Job, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sweepLocked()
	j, ok := r.jobs[id]
	return j, ok
}

// Cancel ends job id: a running job's context is cancelled (the operation
// stops at its next check and finishes as it reports), and the job is
// forgotten at once. cancelled says whether it was still running; ok is
// false when there is no such job.
func (r *Registry) Cancel(id string) (cancelled, ok bool) {
	r.mu.Lock()
	j, ok := r.jobs[id]
	delete(r.jobs, id)
	r.mu.Unlock()
	if !ok {
		return false, false
	}
	j.mu.Lock()
	running := j.status == Running
	j.mu.Unlock()
	j.cancel()
	return running, true
}

// sweepLocked forgets jobs finished more than Retention ago. r.mu is held.
func (r *Registry) sweepLocked() {
	now := r.now()
	for id, j := range r.jobs {
		j.mu.Lock()
		expired := j.status != Running && now.Sub(j.finished) > Retention
		j.mu.Unlock()
		if expired {
			delete(r.jobs, id)
		}
	}
}

func marshal(data any) json.RawMessage {
	b, err := json.Marshal(data)
	if err != nil {
		b, _ = json.Marshal(map[string]string{"status": "error", "error": "unencodable event"})
	}
	return b
}

func (j *Job) emit(event string, data any) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.status != Running {
		return // a late emit from a goroutine of a finished operation
	}
	j.events = append(j.events, Event{Name: event, Data: marshal(data)})
	close(j.changed)
	j.changed = make(chan struct{})
}

func (j *Job) finish(event string, result any, failed bool, at time.Time) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.events = append(j.events, Event{Name: event, Data: marshal(result)})
	j.status, j.finished = Done, at
	if failed {
		j.status = Error
	}
	close(j.changed)
}

// Snapshot returns the job's state now.
func (j *Job) Snapshot() Snapshot {
	j.mu.Lock()
	defer j.mu.Unlock()
	s := Snapshot{ID: j.ID, Status: j.status, Lines: append([]Event(nil), j.events...), Result: json.RawMessage("null")}
	if j.status != Running && len(j.events) > 0 {
		s.Result = j.events[len(j.events)-1].Data
	}
	return s
}

// Follow calls fn for every event from the first (replay), then for each new
// one, until the job finishes (nil) or ctx ends (its error). Leaving never
// cancels the job.
func (j *Job) Follow(ctx context.Context, fn func(Event) error) error {
	next := 0
	for {
		j.mu.Lock()
		pending := append([]Event(nil), j.events[next:]...)
		next = len(j.events)
		finished := j.status != Running
		changed := j.changed
		j.mu.Unlock()
		for _, e := range pending {
			if err := fn(e); err != nil {
				return err
			}
		}
		if finished {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		}
	}
}

// Wait blocks until the job finishes or ctx ends, and returns the snapshot.
func (j *Job) Wait(ctx context.Context) (Snapshot, error) {
	err := j.Follow(ctx, func(Event) error { return nil })
	return j.Snapshot(), err
}
