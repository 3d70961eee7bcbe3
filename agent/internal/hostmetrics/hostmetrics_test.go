package hostmetrics

import "testing"

func TestReadMeasuresThisHost(t *testing.T) {
	m, err := Read(t.Context(), "/")
	if err != nil {
		t.Fatal(err)
	}
	if m.CPUs < 1 || m.MemoryTotal == 0 || m.MemoryUsed > m.MemoryTotal || m.DiskTotal == 0 || m.DiskUsed > m.DiskTotal {
		t.Errorf("implausible metrics: %+v", m)
	}
	if m.CPUPercent < 0 || m.CPUPercent > 100 || m.Load1 < 0 {
		t.Errorf("implausible CPU or load: %+v", m)
	}
}
