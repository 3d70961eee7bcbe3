package containers

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/berth-dev/berth/shared/engine"
)

func TestComputeSnapshot(t *testing.T) {
	cases := []struct {
		name string
		in   engine.Stats
		want Snapshot
	}{
		{
			name: "cgroup v1: one busy core of four, inactive file cache excluded",
			in: engine.Stats{
				CPUTotal: 2_000_000_000, PreCPUTotal: 1_000_000_000, // 1 s of CPU
				SystemCPU: 8_000_000_000, PreSystemCPU: 4_000_000_000, // 4 cores × 1 s
				OnlineCPUs: 4, MemoryUsage: 100 << 20, MemoryLimit: 400 << 20,
				MemoryStats:    map[string]uint64{"total_inactive_file": 20 << 20, "inactive_file": 5 << 20, "cache": 30 << 20},
				NetworkRxBytes: 1000, NetworkTxBytes: 2000, BlockRead: 3000, BlockWrite: 4000,
			},
			want: Snapshot{CPUPercent: 100, MemoryUsage: 80 << 20, MemoryRaw: 100 << 20, MemoryCache: 20 << 20,
				MemoryLimit: 400 << 20, MemoryPercent: 20, NetworkRx: 1000, NetworkTx: 2000, BlockRead: 3000, BlockWrite: 4000},
		},
		{
			name: "cgroup v2: inactive_file, two cores busy of two",
			in: engine.Stats{
				CPUTotal: 4_000_000_000, PreCPUTotal: 2_000_000_000,
				SystemCPU: 3_000_000_000, PreSystemCPU: 1_000_000_000,
				OnlineCPUs: 2, MemoryUsage: 50 << 20, MemoryLimit: 100 << 20,
				MemoryStats: map[string]uint64{"inactive_file": 10 << 20, "file": 30 << 20},
			},
			want: Snapshot{CPUPercent: 200, MemoryUsage: 40 << 20, MemoryRaw: 50 << 20, MemoryCache: 10 << 20,
				MemoryLimit: 100 << 20, MemoryPercent: 40},
		},
		{
			name: "online CPUs missing: per-CPU list length counts",
			in: engine.Stats{CPUTotal: 300, PreCPUTotal: 100, SystemCPU: 1000, PreSystemCPU: 200, PerCPUCount: 8,
				MemoryUsage: 10, MemoryLimit: 0},
			want: Snapshot{CPUPercent: 200, MemoryUsage: 10, MemoryRaw: 10},
		},
		{
			name: "first sample without previous: zero CPU, cache larger than usage ignored",
			in: engine.Stats{CPUTotal: 500, SystemCPU: 1000, OnlineCPUs: 2, MemoryUsage: 10, MemoryLimit: 100,
				MemoryStats: map[string]uint64{"total_inactive_file": 50}},
			want: Snapshot{MemoryUsage: 10, MemoryRaw: 10, MemoryLimit: 100, MemoryPercent: 10},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, Compute(c.in)); diff != "" {
				t.Errorf("Compute (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCreateSpecValidation(t *testing.T) {
	cases := []struct {
		name    string
		spec    CreateSpec
		wantErr bool
	}{
		{"image required", CreateSpec{Name: "x"}, true},
		{"blank image", CreateSpec{Image: "  "}, true},
		{"bad name", CreateSpec{Image: "i", Name: "-x"}, true},
		{"space in name", CreateSpec{Image: "i", Name: "a b"}, true},
		{"leading slash is dropped", CreateSpec{Image: "i", Name: "/ok.name_1-x"}, false},
		{"negative memory", CreateSpec{Image: "i", Memory: -1}, true},
		{"port without container port", CreateSpec{Image: "i", Ports: []PortSpec{{HostPort: "80"}}}, true},
		{"ports merge", CreateSpec{Image: "i", Ports: []PortSpec{{ContainerPort: "80", HostPort: "8080"}}}, false},
	}
	for _, c := range cases {
		err := c.spec.validate()
		if (err != nil) != c.wantErr {
			t.Errorf("%s: err = %v, want error %v", c.name, err, c.wantErr)
		}
	}
	sp := CreateSpec{Image: "i", Ports: []PortSpec{{ContainerPort: "53", HostPort: "5353", Protocol: "UDP"}, {ContainerPort: "80/tcp"}}}
	if err := sp.validate(); err != nil {
		t.Fatal(err)
	}
	want := map[string][]engine.HostPort{"53/udp": {{HostPort: "5353"}}, "80/tcp": {{}}}
	if diff := cmp.Diff(want, sp.PortBindings); diff != "" {
		t.Errorf("merged port bindings (-want +got):\n%s", diff)
	}
}
