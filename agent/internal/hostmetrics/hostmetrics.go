// Package hostmetrics provides the agent host's usage read from /proc and
// statfs: CPU (two samples of /proc/stat a moment apart), memory
// (/proc/meminfo), load (/proc/loadavg) and the disk holding a path.
package hostmetrics

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Metrics is the host's usage at one moment.
type Metrics struct {
	CPUPercent  float64 // all CPUs together: 0–100
	CPUs        int64
	MemoryTotal uint64 // bytes
	MemoryUsed  uint64 // bytes: total − available
	DiskTotal   uint64 // bytes, of the filesystem holding the path
	DiskUsed    uint64
	Load1       float64
	Load5       float64
	Load15      float64
}

// cpuWindow is the time between the two CPU samples.
const cpuWindow = 250 * time.Millisecond

// Read measures the host; disk is a path on the filesystem to report.
func Read(ctx context.Context, disk string) (Metrics, error) {
	m := Metrics{CPUs: int64(runtime.NumCPU())}
	idle0, total0, err := cpuTimes()
	if err != nil {
		return Metrics{}, err
	}
	select {
	case <-time.After(cpuWindow):
	case <-ctx.Done():
		return Metrics{}, ctx.Err()
	}
	idle1, total1, err := cpuTimes()
	if err != nil {
		return Metrics{}, err
	}
	if dt := total1 - total0; dt > 0 {
		m.CPUPercent = float64(dt-(idle1-idle0)) / float64(dt) * 100
	}
	if m.MemoryTotal, m.MemoryUsed, err = memory(); err != nil {
		return Metrics{}, err
	}
	if m.Load1, m.Load5, m.Load15, err = load(); err != nil {
		return Metrics{}, err
	}
	var fs syscall.Statfs_t
	if err := syscall.Statfs(disk, &fs); err != nil {
		return Metrics{}, fmt.Errorf("hostmetrics: statfs %s: %w", disk, err)
	}
	m.DiskTotal = fs.Blocks * uint64(fs.Bsize)
	m.DiskUsed = (fs.Blocks - fs.Bfree) * uint64(fs.Bsize)
	return m, nil
}

// cpuTimes returns the idle (idle + iowait) and total jiffies of all CPUs.
func cpuTimes() (idle, total uint64, err error) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return 0, 0, fmt.Errorf("hostmetrics: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 || fields[0] != "cpu" {
			continue
		}
		for i, v := range fields[1:] {
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return 0, 0, fmt.Errorf("hostmetrics: /proc/stat: %w", err)
			}
			total += n
			if i == 3 || i == 4 { // idle, iowait
				idle += n
			}
		}
		return idle, total, nil
	}
	return 0, 0, errors.New("hostmetrics: no cpu line in /proc/stat")
}

// memory returns MemTotal and MemTotal − MemAvailable in bytes.
func memory() (total, used uint64, err error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, 0, fmt.Errorf("hostmetrics: %w", err)
	}
	defer f.Close()
	var avail uint64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		n, err := strconv.ParseUint(fields[1], 10, 64)
		if err != nil {
			continue
		}
		switch fields[0] {
		case "MemTotal:":
			total = n * 1024
		case "MemAvailable:":
			avail = n * 1024
		}
	}
	if total == 0 {
		return 0, 0, errors.New("hostmetrics: no MemTotal in /proc/meminfo")
	}
	return total, total - min(avail, total), nil
}

// load returns the 1, 5 and 15 minute load averages.
func load() (l1, l5, l15 float64, err error) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0, 0, 0, fmt.Errorf("hostmetrics: %w", err)
	}
	fields := strings.Fields(string(b))
	if len(fields) < 3 {
		return 0, 0, 0, errors.New("hostmetrics: short /proc/loadavg")
	}
	vals := make([]float64, 3)
	for i := range vals {
		if vals[i], err = strconv.ParseFloat(fields[i], 64); err != nil {
			return 0, 0, 0, fmt.Errorf("hostmetrics: /proc/loadavg: %w", err)
		}
	}
	return vals[0], vals[1], vals[2], nil
}
