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

// diskAbove measures the filesystem holding path for environment envID,
// records whether it is above threshold (percent) in the state the servers
// on the database share, and reports the usage and whether this server saw
// it cross above: a warning is sent once on crossing above, by one server,
// and again only after it was seen below.
func (s *Service) diskAbove(ctx context.Context, envID int64, path string, threshold int) (pct float64, crossed bool, err error) {
	if pct, err = DiskUsage(path); err != nil {
		return 0, false, err
	}
	state := "below"
	if pct >= float64(threshold) {
		state = "above"
	}
	changed, err := s.o.Store.SwitchNotificationState(ctx, diskState(envID), state, "below")
	if err != nil {
		return pct, false, err
	}
	return pct, changed && state == "above", nil
}

func diskState(envID int64) string { return fmt.Sprintf("environment:%d:disk", envID) }

// diskLoop checks the disk space of the environments with a disk warning
// every diskInterval, until Close.
func (s *Service) diskLoop() {
	tick := time.NewTicker(diskInterval)
	defer tick.Stop()
	for {
		s.checkDisks(s.ctx)
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
func (s *Service) checkDisks(ctx context.Context) {
	envs, err := s.o.Store.ListEnvironments(ctx)
	if err != nil {
		return
	}
	for _, env := range envs {
		if env.ConnectionType != "socket" {
			continue
		}
		dw, err := s.o.Store.GetDiskWarning(ctx, env.ID)
		if err != nil {
			continue
		}
		if !dw.Enabled {
			// Switched on again while above, it warns again.
			if _, err := s.o.Store.SwitchNotificationState(ctx, diskState(env.ID), "below", "below"); err != nil && ctx.Err() == nil {
				s.o.Log.Warn("notification: cannot record the disk state", "environment", env.Name, "err", err)
			}
			continue
		}
		root, err := s.dataRoot(ctx, env)
		if err != nil {
			continue
		}
		s.checkDisk(ctx, env, root, dw)
	}
}

// checkDisk measures the filesystem of path for env and emits the warning
// on crossing above the threshold of dw.
func (s *Service) checkDisk(ctx context.Context, env store.Environment, path string, dw store.DiskWarning) {
	pct, crossed, err := s.diskAbove(ctx, env.ID, path, dw.ThresholdPercent)
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
