package auth

import (
	"sync"
	"time"
)

// Limiter counts failures per key (IP + username and IP alone for logins,
// IP for API tokens). Threshold failures are allowed: the one that reaches it is still
// answered as a failure, and it locks the key, so the attempt after it is
// refused while the lock lasts. The first lock lasts MinLock, each further
// one twice as long as the previous, up to MaxLock. A success clears the key;
// a key idle for Forget is forgotten.
type Limiter struct {
	Threshold int
	MinLock   time.Duration
	MaxLock   time.Duration
	Forget    time.Duration

	now func() time.Time

	mu      sync.Mutex
	entries map[string]*limit
}

type limit struct {
	failures    int
	locks       int // how many times the key was locked in a row
	lockedUntil time.Time
	last        time.Time
}

// NewLoginLimiter returns the spec's login limit: 5 failed attempts per IP
// and username, then 429 with locks from 5 s doubling to 60 s.
func NewLoginLimiter(now func() time.Time) *Limiter {
	return &Limiter{Threshold: 5, MinLock: 5 * time.Second, MaxLock: 60 * time.Second, Forget: 15 * time.Minute,
		now: now, entries: map[string]*limit{}}
}

// NewLoginIPLimiter limits failed sign-ins per IP across user names (so that
// spraying many names from one address is slowed too): 20 failures within
// 15 minutes of each other, then 429 with locks from 5 s doubling to 60 s. A
// success does not clear it, so that signing in to one's own account does
// not reset an address that is trying others'.
func NewLoginIPLimiter(now func() time.Time) *Limiter {
	l := NewLoginLimiter(now)
	l.Threshold = 20
	return l
}

// NewTokenLimiter limits bad API tokens per IP: 10 failures, then 429 with
// locks from 5 s doubling to 60 s.
func NewTokenLimiter(now func() time.Time) *Limiter {
	l := NewLoginLimiter(now)
	l.Threshold = 10
	return l
}

// Locked reports whether key is locked now and for how much longer.
func (l *Limiter) Locked(key string) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	e, ok := l.entries[key]
	if !ok {
		return 0, false
	}
	if now.Before(e.lockedUntil) {
		return e.lockedUntil.Sub(now), true
	}
	return 0, false
}

// Fail records a failed attempt of key. The attempt is answered as a
// failure: the lock a failure may start refuses only later attempts, which
// callers ask Locked about before trying. Fail reports the key locked (and
// for how much longer) only when it already was when the failure arrived,
// that is when an attempt running at the same time locked it; the caller
// refuses this attempt too then, and the failure does not lengthen the lock.
func (l *Limiter) Fail(key string) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	l.sweepLocked(now)
	e, ok := l.entries[key]
	if ok && now.Before(e.lockedUntil) {
		return e.lockedUntil.Sub(now), true
	}
	if !ok || now.Sub(e.last) > l.Forget {
		e = &limit{} // first failure, or the old ones are forgotten
		l.entries[key] = e
	}
	e.last = now
	e.failures++
	// Once locked, every failure after the lock ends locks again, longer.
	if e.failures >= l.Threshold || e.locks > 0 {
		lock := l.MinLock << min(e.locks, 16)
		lock = min(lock, l.MaxLock)
		e.locks++
		e.lockedUntil = now.Add(lock)
	}
	return 0, false
}

// Succeed clears key.
func (l *Limiter) Succeed(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.entries, key)
}

// sweepLocked forgets idle keys whose lock has ended. l.mu is held.
func (l *Limiter) sweepLocked(now time.Time) {
	if len(l.entries) < 1024 {
		return
	}
	for k, e := range l.entries {
		if now.Sub(e.last) > l.Forget && now.After(e.lockedUntil) {
			delete(l.entries, k)
		}
	}
}
