package enginetest

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// engine2LockWait bounds how long a test waits for the second engine.
const engine2LockWait = 15 * time.Minute

// ShareEngine2 marks the test as using the second engine (the remote host of
// the agent tests) until it ends: any number of tests, of any package, may
// share it, while OwnEngine2 waits for them to end. Tests that pull images
// onto it and then use them take it shared.
func ShareEngine2(t testing.TB) { lockEngine2(t, syscall.LOCK_SH) }

// OwnEngine2 gives the test the second engine alone until it ends: a test
// that prunes every unused image there must not remove one another test just
// pulled and has not started yet.
func OwnEngine2(t testing.TB) { lockEngine2(t, syscall.LOCK_EX) }

// lockEngine2 takes an flock of kind how on a file beside the test services'
// and releases it at the end of the test (the file description closes).
func lockEngine2(t testing.TB, how int) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "berth-test-engine2.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatalf("second engine lock: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- syscall.Flock(int(f.Fd()), how) }()
	select {
	case err := <-done:
		if err != nil {
			f.Close()
			t.Fatalf("second engine lock: %v", err)
		}
	case <-time.After(engine2LockWait):
		f.Close() // the pending flock fails with the closed descriptor
		t.Fatalf("the second engine stayed in use by other tests for %s", engine2LockWait)
	}
	t.Cleanup(func() { f.Close() })
}
