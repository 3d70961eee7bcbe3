// Package clocktest provides a fake clock for tests of time-dependent code
// (breakers, login limits, session expiry): it moves only when told to.
package clocktest

import (
	"sync"
	"time"
)

// Clock is a fake clock, safe for concurrent use.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// New returns a Clock standing at start.
func New(start time.Time) *Clock { return &Clock{t: start} }

// Now returns the clock's time; pass the method value as a `now` function.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}
