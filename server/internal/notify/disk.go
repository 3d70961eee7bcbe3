package notify

import (
	"context"
	"fmt"
	"syscall"
	"time"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
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

// diskAbove records whether environment envID's disk use is above its
// threshold in the state the servers on the database share, and reports
// whether this server saw it cross above: a warning is sent once on crossing
// above, by one server, and again only after it was seen below.
func (s *Service) diskAbove(ctx context.Context, envID int64, above bool) (crossed bool, err error) {
	state := "below"
	if above {
		state = "above"
	}
	changed, err := s.o.Store.SwitchNotificationState(ctx, diskState(envID), state, "below")
	if err != nil {
		return false, err
	}
	return changed && state == "above", nil
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

// checkDisks checks every environment whose disk warning is on, and emits
// disk_space_warning for those that just crossed their threshold.
func (s *Service) checkDisks(ctx context.Context) {
	envs, err := s.o.Store.ListEnvironments(ctx)
	if err != nil {
		return
	}
	for _, env := range envs {
		s.checkEnvironmentDisk(ctx, env)
	}
}

// CheckDiskSoon checks environment envID's disk space in the background
// (after its disk warning changed: a threshold already crossed is told at
// once, not at the next periodic check).
func (s *Service) CheckDiskSoon(envID int64) {
	s.spawn(func() {
		ctx, cancel := context.WithTimeout(s.ctx, time.Minute)
		defer cancel()
		env, err := s.o.Store.GetEnvironment(ctx, envID)
		if err != nil {
			return
		}
		s.checkEnvironmentDisk(ctx, env)
	})
}

// checkEnvironmentDisk measures env's disk when its warning is on and emits
// the warning on crossing above the threshold. In the absolute mode the
// measure is the engine's own disk use (/system/df: images, containers,
// volumes, build cache), which every engine tells. In the percentage mode
// the Engine API tells no free space: a socket environment's data root
// (docker info's DockerRootDir) is measured with statfs here, on the
// engine's own host; an agent environment's agent reports its host's disk
// in its metrics; a direct TCP engine cannot be measured.
func (s *Service) checkEnvironmentDisk(ctx context.Context, env store.Environment) {
	dw, err := s.o.Store.GetDiskWarning(ctx, env.ID)
	if err != nil {
		return
	}
	if !dw.Enabled {
		// Switched on again while above, it warns again.
		if _, err := s.o.Store.SwitchNotificationState(ctx, diskState(env.ID), "below", "below"); err != nil && ctx.Err() == nil {
			s.o.Log.Warn("notification: cannot record the disk state", "environment", env.Name, "err", err)
		}
		return
	}
	var above bool
	var message string
	if dw.Mode == store.DiskAbsolute {
		used, err := s.engineDiskUse(ctx, env)
		if err != nil {
			s.o.Log.Warn("notification: cannot measure the engine's disk use", "environment", env.Name, "err", err)
			return
		}
		const gib = 1 << 30
		above = float64(used) > dw.ThresholdGb*gib
		message = fmt.Sprintf("The engine's images, containers, volumes and build cache take %.1f GB (warning threshold %g GB).",
			float64(used)/gib, dw.ThresholdGb)
	} else {
		var measure func() (float64, string, error)
		switch env.ConnectionType {
		case engine.Socket:
			measure = func() (float64, string, error) {
				root, err := s.dataRoot(ctx, env)
				if err != nil {
					return 0, "", err
				}
				pct, err := DiskUsage(root)
				return pct, root, err
			}
		case engine.AgentStandard, engine.AgentEdge:
			measure = func() (float64, string, error) { return s.agentDisk(ctx, env) }
		default:
			return
		}
		pct, what, err := measure()
		if err != nil {
			s.o.Log.Warn("notification: cannot measure disk space", "environment", env.Name, "err", err)
			return
		}
		above = pct >= float64(dw.ThresholdPercent)
		message = fmt.Sprintf("The filesystem of %s is %.0f%% full (warning threshold %d%%).", what, pct, dw.ThresholdPercent)
	}
	crossed, err := s.diskAbove(ctx, env.ID, above)
	if err != nil {
		s.o.Log.Warn("notification: cannot record the disk state", "environment", env.Name, "err", err)
		return
	}
	if crossed {
		s.Emit(env.ID, "disk_space_warning", "Disk space low on "+env.Name, message)
	}
}

// engineDiskUse is the bytes env's engine's images, containers, volumes and
// build cache take.
func (s *Service) engineDiskUse(ctx context.Context, env store.Environment) (int64, error) {
	c, err := s.o.Engines.Client(ctx, env.Endpoint())
	if err != nil {
		return 0, err
	}
	du, err := c.DiskUsage(ctx)
	if err != nil {
		return 0, err
	}
	return du.Images.Size + du.Containers.Size + du.Volumes.Size + du.BuildCache.Size, nil
}

// agentDisk is the used share of the disk an agent environment's agent
// reports for its host's root filesystem.
func (s *Service) agentDisk(ctx context.Context, env store.Environment) (float64, string, error) {
	c, err := s.o.Engines.Client(ctx, env.Endpoint())
	if err != nil {
		return 0, "", err
	}
	m, err := c.HostMetrics(ctx)
	if err != nil {
		return 0, "", err
	}
	if m.DiskTotal == 0 {
		return 0, "", fmt.Errorf("the agent reports no disk size")
	}
	return float64(m.DiskUsed) * 100 / float64(m.DiskTotal), "/ on the agent's host", nil
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
