package auth

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// lockState is what Fail or Locked answered.
type lockState struct {
	Wait   time.Duration
	Locked bool
}

func fail(l *Limiter, key string) lockState {
	w, ok := l.Fail(key)
	return lockState{w, ok}
}

func locked(l *Limiter, key string) lockState {
	w, ok := l.Locked(key)
	return lockState{w, ok}
}

// failTimes records n failures of key and returns what each answered.
func failTimes(l *Limiter, key string, n int) []lockState {
	var got []lockState
	for range n {
		got = append(got, fail(l, key))
	}
	return got
}

const aliceKey = "192.0.2.1\x00alice"

func TestLoginLimiterLocksOnTheFifthFailure(t *testing.T) {
	clock := newFakeClock()
	l := NewLoginLimiter(clock.Now)

	for i := 1; i <= 4; i++ {
		if got := fail(l, aliceKey); got.Locked {
			t.Fatalf("failure %d: Fail = %+v, want no lock", i, got)
		}
		if got := locked(l, aliceKey); got.Locked {
			t.Fatalf("after failure %d: Locked = %+v, want not locked", i, got)
		}
	}
	if diff := cmp.Diff(lockState{5 * time.Second, true}, fail(l, aliceKey)); diff != "" {
		t.Errorf("fifth Fail (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(lockState{5 * time.Second, true}, locked(l, aliceKey)); diff != "" {
		t.Errorf("Locked after the fifth failure (-want +got):\n%s", diff)
	}
}

func TestLoginLimiterLockEndsWhenItsDurationHasPassed(t *testing.T) {
	clock := newFakeClock()
	l := NewLoginLimiter(clock.Now)
	failTimes(l, aliceKey, 5)

	clock.Advance(5*time.Second - time.Nanosecond)
	if diff := cmp.Diff(lockState{time.Nanosecond, true}, locked(l, aliceKey)); diff != "" {
		t.Errorf("Locked at 5s-1ns (-want +got):\n%s", diff)
	}
	clock.Advance(time.Nanosecond)
	if diff := cmp.Diff(lockState{0, false}, locked(l, aliceKey)); diff != "" {
		t.Errorf("Locked at 5s (-want +got):\n%s", diff)
	}
}

func TestLoginLimiterDoublesEachFurtherLockUpToOneMinute(t *testing.T) {
	clock := newFakeClock()
	l := NewLoginLimiter(clock.Now)
	lock := failTimes(l, aliceKey, 5)[4].Wait // 5 s
	want := []lockState{
		{10 * time.Second, true}, {20 * time.Second, true}, {40 * time.Second, true},
		{60 * time.Second, true}, {60 * time.Second, true}, {60 * time.Second, true},
	}
	var got []lockState
	for range want {
		clock.Advance(lock) // the lock has just ended
		if s := locked(l, aliceKey); s.Locked {
			t.Fatalf("Locked after waiting out the lock = %+v, want not locked", s)
		}
		s := fail(l, aliceKey)
		got = append(got, s)
		lock = s.Wait
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("failures after each lock (-want +got):\n%s", diff)
	}
}

func TestLimiterSucceedClearsTheKey(t *testing.T) {
	clock := newFakeClock()
	l := NewLoginLimiter(clock.Now)
	failTimes(l, aliceKey, 5)
	clock.Advance(5 * time.Second)
	failTimes(l, aliceKey, 1) // locked again, for 10 s
	clock.Advance(10 * time.Second)

	l.Succeed(aliceKey)

	if diff := cmp.Diff(make([]lockState, 4), failTimes(l, aliceKey, 4)); diff != "" {
		t.Errorf("4 failures after a success (-want +got):\n%s", diff)
	}
	// The count and the lock length start over.
	if diff := cmp.Diff(lockState{5 * time.Second, true}, fail(l, aliceKey)); diff != "" {
		t.Errorf("fifth failure after a success (-want +got):\n%s", diff)
	}
}

func TestLimiterSucceedLiftsALock(t *testing.T) {
	l := NewLoginLimiter(newFakeClock().Now)
	failTimes(l, aliceKey, 5)
	l.Succeed(aliceKey)
	if diff := cmp.Diff(lockState{0, false}, locked(l, aliceKey)); diff != "" {
		t.Errorf("Locked after Succeed (-want +got):\n%s", diff)
	}
}

func TestLimiterKeysAreIndependent(t *testing.T) {
	l := NewLoginLimiter(newFakeClock().Now)
	failTimes(l, aliceKey, 5)
	if s := locked(l, aliceKey); !s.Locked {
		t.Fatalf("Locked(%q) = %+v, want locked", aliceKey, s)
	}
	for _, key := range []string{
		"192.0.2.1\x00bob",      // another username, same IP
		"198.51.100.7\x00alice", // same username, another IP
	} {
		if s := locked(l, key); s.Locked {
			t.Errorf("Locked(%q) = %+v, want not locked", key, s)
		}
		if s := fail(l, key); s.Locked {
			t.Errorf("first Fail(%q) = %+v, want no lock", key, s)
		}
	}
}

func TestLimiterForgetsFailuresOlderThanForget(t *testing.T) {
	clock := newFakeClock()
	l := NewLoginLimiter(clock.Now)
	if l.Forget != 15*time.Minute {
		t.Fatalf("Forget = %v, want 15m", l.Forget)
	}
	failTimes(l, aliceKey, 4)
	clock.Advance(16 * time.Minute)
	if s := fail(l, aliceKey); s.Locked {
		t.Fatalf("failure after 16 idle minutes = %+v, want no lock", s)
	}
	// Counting restarted at that failure: three more do not lock either.
	if diff := cmp.Diff(make([]lockState, 3), failTimes(l, aliceKey, 3)); diff != "" {
		t.Errorf("failures 2-4 after forgetting (-want +got):\n%s", diff)
	}
}

func TestLimiterRemembersFailuresWithinForget(t *testing.T) {
	clock := newFakeClock()
	l := NewLoginLimiter(clock.Now)
	failTimes(l, aliceKey, 4)
	clock.Advance(14 * time.Minute)
	if diff := cmp.Diff(lockState{5 * time.Second, true}, fail(l, aliceKey)); diff != "" {
		t.Errorf("fifth failure 14 minutes later (-want +got):\n%s", diff)
	}
}

func TestTokenLimiterLocksOnTheTenthFailure(t *testing.T) {
	l := NewTokenLimiter(newFakeClock().Now)
	want := make([]lockState, 10)
	want[9] = lockState{5 * time.Second, true}
	if diff := cmp.Diff(want, failTimes(l, "192.0.2.1", 10)); diff != "" {
		t.Errorf("10 failures (-want +got):\n%s", diff)
	}
}
