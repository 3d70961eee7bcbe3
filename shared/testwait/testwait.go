// Package testwait polls a condition in tests until it holds, failing the
// test when it never does.
package testwait

import (
	"testing"
	"time"
)

// Timeout is how long Until waits.
const Timeout = time.Minute

// Until polls cond every 50 ms until it holds, failing the test with what
// after Timeout.
func Until(t testing.TB, what string, cond func() bool) {
	t.Helper()
	Within(t, Timeout, what, cond)
}

// Within polls cond every 50 ms until it holds, failing the test with what
// after d.
func Within(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
