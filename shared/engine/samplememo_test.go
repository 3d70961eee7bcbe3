package engine

import (
	"testing"
	"time"
)

func TestSampleMemoMeasuresCPUFromAUsablePreviousSample(t *testing.T) {
	var m sampleMemo
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	sample := func(cpu, system uint64) *Stats { return &Stats{CPUTotal: cpu, SystemCPU: system} }

	if m.since("a", sample(100, 1000), t0) {
		t.Fatal("a first sample has nothing to measure from")
	}
	st := sample(150, 3000)
	if !m.since("a", st, t0.Add(sampleGap)) || st.PreCPUTotal != 100 || st.PreSystemCPU != 1000 {
		t.Fatalf("a second sample a gap later = %+v, want measured from the first", st)
	}
	// Too soon after the last one: not measured, and the last one stays the
	// start of the next interval.
	if m.since("a", sample(151, 3010), t0.Add(sampleGap+prevMinAge/2)) {
		t.Fatal("a sample right after another was measured")
	}
	st = sample(200, 5000)
	if !m.since("a", st, t0.Add(2*sampleGap)) || st.PreCPUTotal != 150 || st.PreSystemCPU != 3000 {
		t.Fatalf("next sample = %+v, want measured from the sample a gap before", st)
	}
	// A restarted container's counter starts again: no interval across it.
	if m.since("a", sample(5, 7000), t0.Add(3*sampleGap)) {
		t.Fatal("a sample after a restart was measured across it")
	}
	// Too old a previous sample is not used.
	if m.since("a", sample(10, 9000), t0.Add(3*sampleGap+prevMaxAge+time.Second)) {
		t.Fatal("a sample was measured from one older than prevMaxAge")
	}
	// Without the host's figure there is nothing to measure with.
	if m.since("b", sample(10, 0), t0) || m.since("b", sample(20, 0), t0.Add(sampleGap)) {
		t.Fatal("a sample without the host's CPU figure was measured")
	}
	m.keepOnly([]Container{{ID: "b"}})
	if _, ok := m.last["a"]; ok {
		t.Error("keepOnly kept a container that is not running")
	}
}
