package engine_test

import (
	"sync"
	"testing"

	"github.com/berth-dev/berth/shared/engine"
)

// The engine computes one disk usage at a time (Docker before API 1.42
// answers a second request with "a disk usage operation is already
// running"): reads through one Manager share a call, and reads through
// separate Managers (another Berth, the CLI) wait for each other. Every read
// succeeds and counts at least the test image.
func TestDiskUsageConcurrentReads(t *testing.T) {
	shared := localClient(t)
	clients := []*engine.Client{shared, shared, shared, localClient(t), localClient(t), localClient(t)}
	var wg sync.WaitGroup
	errs := make([]error, len(clients))
	usage := make([]engine.DiskUsage, len(clients))
	for i, c := range clients {
		wg.Go(func() { usage[i], errs[i] = c.DiskUsage(t.Context()) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("read %d: DiskUsage: %v", i, err)
			continue
		}
		if usage[i].Images.Total < 1 {
			t.Errorf("read %d: images counted %d, want at least the test image", i, usage[i].Images.Total)
		}
	}
}
