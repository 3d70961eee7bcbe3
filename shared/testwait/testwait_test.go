package testwait_test

import (
	"testing"
	"time"

	"github.com/berth-dev/berth/shared/testwait"
)

// recorder is a testing.TB that records a failure instead of stopping.
type recorder struct {
	testing.TB
	failed bool
	msg    string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = true
	r.msg = format
	panic(r) // stop the poll, as FailNow would
}

func within(r *recorder, d time.Duration, cond func() bool) {
	defer func() {
		if v := recover(); v != nil && v != any(r) {
			panic(v)
		}
	}()
	testwait.Within(r, d, "the condition", cond)
}

func TestWithinReturnsOnceTheConditionHolds(t *testing.T) {
	r := &recorder{TB: t}
	n := 0
	within(r, time.Minute, func() bool { n++; return n == 3 })
	if r.failed || n != 3 {
		t.Fatalf("failed=%v after %d polls, want success after 3", r.failed, n)
	}
}

func TestWithinFailsWhenTheConditionNeverHolds(t *testing.T) {
	r := &recorder{TB: t}
	polls := 0
	within(r, 200*time.Millisecond, func() bool { polls++; return false })
	if !r.failed || polls < 2 {
		t.Fatalf("failed=%v after %d polls: a condition that never holds must be polled until the deadline and fail", r.failed, polls)
	}
}
