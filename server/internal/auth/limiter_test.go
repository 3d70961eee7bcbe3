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

// The spec allows 5 failed attempts per IP and username, then 429: each of
// the five is answered as a failure (Fail reports no lock), the fifth locks
// the key, and Locked refuses the sixth attempt.
func TestLoginLimiterAllowsFiveFailuresThenLocks(t *testing.T) {
	clock := newFakeClock()
	l := NewLoginLimiter(clock.Now)

	for i := 1; i <= 5; i++ {
		if got := locked(l, aliceKey); got.Locked {
			t.Fatalf("before attempt %d: Locked = %+v, want not locked", i, got)
		}
		if got := fail(l, aliceKey); got.Locked {
			t.Fatalf("failure %d: Fail = %+v, want the failure answered as such (no lock)", i, got)
		}
	}
	if diff := cmp.Diff(lockState{5 * time.Second, true}, locked(l, aliceKey)); diff != "" {
		t.Errorf("Locked before the sixth attempt (-want +got):\n%s", diff)
	}
}

// A failure of an attempt that passed Locked while another one locked the
// key (they ran at the same time) is refused too, and does not lengthen the
// lock.
func TestLimiterFailWhileLockedReportsTheLockWithoutLengtheningIt(t *testing.T) {
	clock := newFakeClock()
	l := NewLoginLimiter(clock.Now)
	failTimes(l, aliceKey, 5)
	clock.Advance(2 * time.Second)

	if diff := cmp.Diff(lockState{3 * time.Second, true}, fail(l, aliceKey)); diff != "" {
		t.Errorf("Fail while locked (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(lockState{3 * time.Second, true}, locked(l, aliceKey)); diff != "" {
		t.Errorf("Locked after a failure while locked (-want +got):\n%s", diff)
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
	failTimes(l, aliceKey, 5)
	lock := locked(l, aliceKey).Wait // 5 s
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
		// The failure is answered as such and locks again, longer.
		if s := fail(l, aliceKey); s.Locked {
			t.Fatalf("failure after the %v lock: Fail = %+v, want no lock", lock, s)
		}
		s := locked(l, aliceKey)
		got = append(got, s)
		lock = s.Wait
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("locks after each failure after a lock (-want +got):\n%s", diff)
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
	if s := locked(l, aliceKey); s.Locked {
		t.Fatalf("Locked after 4 failures after a success = %+v, want not locked", s)
	}
	// The count and the lock length start over.
	if diff := cmp.Diff(lockState{}, fail(l, aliceKey)); diff != "" {
		t.Errorf("fifth failure after a success (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(lockState{5 * time.Second, true}, locked(l, aliceKey)); diff != "" {
		t.Errorf("Locked after the fifth failure after a success (-want +got):\n%s", diff)
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
	fail(l, aliceKey)
	if diff := cmp.Diff(lockState{5 * time.Second, true}, locked(l, aliceKey)); diff != "" {
		t.Errorf("Locked after a fifth failure 14 minutes later (-want +got):\n%s", diff)
	}
}

// Ten bad tokens are each answered as such; the tenth locks the IP, so the
// eleventh request is refused.
func TestTokenLimiterAllowsTenFailuresThenLocks(t *testing.T) {
	l := NewTokenLimiter(newFakeClock().Now)
	if diff := cmp.Diff(make([]lockState, 10), failTimes(l, "192.0.2.1", 10)); diff != "" {
		t.Errorf("10 failures (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(lockState{5 * time.Second, true}, locked(l, "192.0.2.1")); diff != "" {
		t.Errorf("Locked before the eleventh request (-want +got):\n%s", diff)
	}
}
