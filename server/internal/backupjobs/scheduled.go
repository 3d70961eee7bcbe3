package backupjobs

import (
	"context"
	"fmt"
	"time"

	"github.com/berth-dev/berth/server/internal/backup"
	"github.com/berth-dev/berth/server/internal/schedule"
	"github.com/berth-dev/berth/server/internal/store"
)

// RunSchedule is the scheduler's runner of backup configurations (the
// schedule's id is the configuration's): the run's steps go to the
// execution's log; a stopped run is recorded as skipped.
func (s *Service) RunSchedule(ctx context.Context, d schedule.Definition, run *schedule.Run) error {
	trigger := run.Trigger()
	if trigger == "" {
		trigger = TriggerCron
	}
	return s.RunRecorded(ctx, d.ID, trigger, Actor{}, run, nil)
}

// RunRecorded is Run as a schedule execution: the steps are logged to run
// (every 10% of the backup's progress), then given to progress when not nil.
func (s *Service) RunRecorded(ctx context.Context, id int64, trigger string, actor Actor, run *schedule.Run, progress func(Event)) error {
	lastTenth := -1
	lastLog := time.Time{}
	res, err := s.Run(ctx, id, trigger, actor, func(e Event) {
		if e.Progress == nil {
			run.Logf("%s: %s", e.Phase, e.Message)
		} else if tenth := int(e.Progress.Percent * 10); tenth > lastTenth && time.Since(lastLog) > time.Second {
			lastTenth, lastLog = tenth, time.Now()
			run.Logf("%s: %.0f%% (%d/%d files)", e.Phase, e.Progress.Percent*100, e.Progress.FilesDone, e.Progress.TotalFiles)
		}
		if progress != nil {
			progress(e)
		}
	})
	run.Detail("runId", res.RunID)
	run.Detail("status", res.Status)
	if res.SnapshotID != "" {
		run.Detail("snapshotId", res.SnapshotID)
	}
	if err != nil {
		return err
	}
	if res.Status == store.BackupStopped {
		run.Skip("Backup stopped")
		return nil
	}
	run.Logf("%s", res.Message)
	if res.Forgotten > 0 {
		run.Logf("Retention: %s", fmt.Sprint(res.Forgotten, " snapshot(s) forgotten"))
	}
	return nil
}

// RunMaintenance is the scheduler's runner of a destination's maintenance
// schedules (check, prune; the schedule's id is the destination's): restic
// runs on the destination's environment, its output goes to the log.
func (s *Service) RunMaintenance(ctx context.Context, d schedule.Definition, run *schedule.Run) error {
	if s.o.Runner == nil || s.o.Repo == nil {
		return errUnavailable
	}
	task := backup.Task(schedule.MaintenanceTask(d.Type))
	if task == "" {
		return fmt.Errorf("backup maintenance: unknown schedule type %s", d.Type)
	}
	repo, envID, err := s.o.Repo(ctx, d.ID)
	if err != nil {
		return err
	}
	w, _, err := s.where(ctx, envID)
	if err != nil {
		return err
	}
	run.Logf("restic %s of %s", task, d.EntityName)
	_, err = s.o.Runner.Task(ctx, w, repo, task, "", func(p backup.Progress) {
		if p.Message != "" {
			run.Logf("%s", p.Message)
		}
	})
	return err
}
