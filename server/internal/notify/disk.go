package notify

import (
	"context"
	"fmt"
	"syscall"
	"time"

	"github.com/berth-dev/berth/server/internal/store"
)

// diskInterval is how often the disk space of environments with a disk
// warning is checked.
const diskInterval = 10 * time.Minute

// DiskUsage returns the used share (percent) of the filesystem holding path,
// counted as df does: used against used plus what is available to
// unprivileged users.
func DiskUsage(path string) (float64, error) {
	var fs syscall.Statfs_t
	if err := syscall.Statfs(path, &fs); err != nil {
		return 0, err
	}
	used := float64(fs.Blocks-fs.Bfree) * float64(fs.Bsize)
	avail := float64(fs.Bavail) * float64(fs.Bsize)
	if used+avail == 0 {
		return 0, fmt.Errorf("filesystem of %s reports no size", path)
	}
	return used * 100 / (used + avail), nil
}

// diskCrossing remembers, per environment, whether its disk is above its
// threshold, so that a warning is sent once on crossing above it and again
// only after it dropped below.
type diskCrossing struct{ above map[int64]bool }

// check measures the filesystem holding path for environment envID and
// reports its usage and whether it just crossed above threshold (percent).
func (d *diskCrossing) check(envID int64, path string, threshold int) (pct float64, crossed bool, err error) {
	if pct, err = DiskUsage(path); err != nil {
		return 0, false, err
	}
	if d.above == nil {
		d.above = map[int64]bool{}
	}
	now := pct >= float64(threshold)
	was := d.above[envID]
	d.above[envID] = now
	return pct, now && !was, nil
}

// diskLoop checks the disk space of the environments with a disk warning
// every diskInterval, until Close.
func (s *Service) diskLoop() {
	var d diskCrossing
	tick := time.NewTicker(diskInterval)
	defer tick.Stop()
	for {
		s.checkDisks(s.ctx, &d)
		select {
		case <-s.ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// checkDisks checks every local-socket environment whose disk warning is
// on, and emits disk_space_warning for those that just crossed their
// threshold. The engine API gives no free space, so the data root
// (docker info's DockerRootDir) is measured with statfs, which only works
// where the engine's filesystem is this host's: a socket environment.
func (s *Service) checkDisks(ctx context.Context, d *diskCrossing) {
	envs, err := s.o.Store.ListEnvironments(ctx)
	if err != nil {
		return
	}
	for _, env := range envs {
		if env.ConnectionType != "socket" {
			continue
		}
		dw, err := s.o.Store.GetDiskWarning(ctx, env.ID)
		if err != nil || !dw.Enabled {
			delete(d.above, env.ID)
			continue
		}
		root, err := s.dataRoot(ctx, env)
		if err != nil {
			continue
		}
		s.checkDisk(env, root, dw, d)
	}
}

// checkDisk measures the filesystem of path for env and emits the warning
// on crossing above the threshold of dw.
func (s *Service) checkDisk(env store.Environment, path string, dw store.DiskWarning, d *diskCrossing) {
	pct, crossed, err := d.check(env.ID, path, dw.ThresholdPercent)
	if err != nil {
		s.o.Log.Warn("notification: cannot measure disk space", "environment", env.Name, "path", path, "err", err)
		return
	}
	if crossed {
		s.Emit(env.ID, "disk_space_warning", "Disk space low on "+env.Name,
			fmt.Sprintf("The filesystem of %s is %.0f%% full (warning threshold %d%%).", path, pct, dw.ThresholdPercent))
	}
}

// dataRoot returns the engine's data root (docker info's DockerRootDir).
func (s *Service) dataRoot(ctx context.Context, env store.Environment) (string, error) {
	c, err := s.o.Engines.Client(ctx, env.Endpoint())
	if err != nil {
		return "", err
	}
	info, err := c.HostInfo(ctx)
	if err != nil {
		return "", err
	}
	if info.DockerRootDir == "" {
		return "", fmt.Errorf("the engine reports no data root")
	}
	return info.DockerRootDir, nil
}
