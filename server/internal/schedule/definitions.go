package schedule

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// Type is a kind of schedule.
type Type string

// The schedule types.
const (
	ContainerUpdate Type = "container_update"
	GitStackSync    Type = "git_stack_sync"
	EnvUpdateCheck  Type = "env_update_check"
	ImagePrune      Type = "image_prune"
	SystemCleanup   Type = "system_cleanup"
	Backup          Type = "backup"
	BackupCheck     Type = "backup_check"
	BackupPrune     Type = "backup_prune"
)

// Types lists every schedule type.
var Types = []Type{ContainerUpdate, GitStackSync, EnvUpdateCheck, ImagePrune, SystemCleanup, Backup, BackupCheck, BackupPrune}

// ParseType returns the Type named s.
func ParseType(s string) (Type, error) {
	for _, t := range Types {
		if string(t) == s {
			return t, nil
		}
	}
	return "", fault.New(fault.Invalid, "Invalid schedule type")
}

// Definition is a schedule as its owner configures it: a container's
// auto-update, a git stack's auto-sync, an environment's update check or
// image prune, or a system job.
type Definition struct {
	Type            Type
	ID              int64 // the owner's id: auto-update, git stack, environment, or system job
	Name            string
	EntityName      string // container, stack or environment name
	Description     string
	EnvironmentID   *int64
	EnvironmentName *string
	Enabled         bool
	ScheduleType    string // daily | weekly | custom
	Cron            string
	Timezone        string // IANA name; "" is the server's own zone
	IsSystem        bool

	// Container updates and update checks.
	EnvHasScanning        bool
	VulnerabilityCriteria string
	// Update checks: update the containers found.
	AutoUpdate bool
	// Image prunes: dangling | all.
	PruneMode string
}

// Key names the definition's schedule.
func (d Definition) Key() store.ScheduleKey { return store.ScheduleKey{Type: string(d.Type), ID: d.ID} }

// Location is the time zone of the schedule (local: the server's).
func (d Definition) Location(local *time.Location) *time.Location {
	if d.Timezone == "" {
		return local
	}
	loc, err := time.LoadLocation(d.Timezone)
	if err != nil {
		return local
	}
	return loc
}

var errScheduleNotFound = fault.New(fault.NotFound, "Schedule not found")

// envNames maps environment ids to their names and zones.
type envInfo struct {
	name string
	tz   string
}

func (s *Service) environments(ctx context.Context) (map[int64]envInfo, error) {
	envs, err := s.store.ListEnvironments(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]envInfo, len(envs))
	for _, e := range envs {
		tz := ""
		if e.Timezone != nil {
			tz = *e.Timezone
		}
		out[e.ID] = envInfo{name: e.Name, tz: tz}
	}
	return out, nil
}

// withEnvironment fills the environment fields of d from envs.
func withEnvironment(d *Definition, envID *int64, envs map[int64]envInfo) {
	if envID == nil {
		return
	}
	id := *envID
	d.EnvironmentID = &id
	if e, ok := envs[id]; ok {
		name := e.name
		d.EnvironmentName, d.Timezone = &name, e.tz
	}
}

// Definitions returns every schedule, system jobs last.
func (s *Service) Definitions(ctx context.Context) ([]Definition, error) {
	envs, err := s.environments(ctx)
	if err != nil {
		return nil, err
	}
	var out []Definition
	autos, err := s.store.ListAutoUpdates(ctx)
	if err != nil {
		return nil, err
	}
	for _, a := range autos {
		out = append(out, s.containerUpdate(ctx, a, envs))
	}
	gits, err := s.store.ListGitStacks(ctx, 0)
	if err != nil {
		return nil, err
	}
	for _, g := range gits {
		if g.AutoUpdate || g.AutoUpdateCron != "" {
			out = append(out, gitStackSync(g, envs))
		}
	}
	ess, err := s.store.ListEnvSchedules(ctx)
	if err != nil {
		return nil, err
	}
	for _, es := range ess {
		out = append(out, s.envSchedule(ctx, es, envs))
	}
	backups, err := s.store.ListBackupConfigs(ctx, store.BackupConfigFilter{})
	if err != nil {
		return nil, err
	}
	for _, b := range backups {
		if b.Schedule != "" {
			out = append(out, backupConfig(b, envs))
		}
	}
	maint, err := s.maintenanceDefinitions(ctx, envs)
	if err != nil {
		return nil, err
	}
	out = append(out, maint...)
	sys, err := s.systemDefinitions(ctx)
	if err != nil {
		return nil, err
	}
	return append(out, sys...), nil
}

// Definition returns one schedule, or 404.
func (s *Service) Definition(ctx context.Context, t Type, id int64) (Definition, error) {
	envs, err := s.environments(ctx)
	if err != nil {
		return Definition{}, err
	}
	switch t {
	case ContainerUpdate:
		a, err := s.store.GetAutoUpdateByID(ctx, id)
		if err != nil {
			return Definition{}, notFound(err)
		}
		return s.containerUpdate(ctx, a, envs), nil
	case GitStackSync:
		g, err := s.store.GetGitStack(ctx, id)
		if err != nil {
			return Definition{}, notFound(err)
		}
		return gitStackSync(g, envs), nil
	case EnvUpdateCheck, ImagePrune:
		es, err := s.store.GetEnvSchedule(ctx, id, string(t))
		if err != nil {
			return Definition{}, notFound(err)
		}
		return s.envSchedule(ctx, es, envs), nil
	case SystemCleanup:
		return s.systemDefinition(ctx, id)
	case Backup:
		b, err := s.store.GetBackupConfig(ctx, id)
		if err != nil {
			return Definition{}, notFound(err)
		}
		return backupConfig(b, envs), nil
	case BackupCheck, BackupPrune:
		return s.maintenanceDefinition(ctx, t, id, envs)
	}
	return Definition{}, fault.New(fault.Invalid, "Invalid schedule type")
}

func notFound(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return errScheduleNotFound
	}
	return err
}

func (s *Service) hasScanning(ctx context.Context, envID *int64) bool {
	if envID == nil || s.scanning == nil {
		return false
	}
	return s.scanning(ctx, *envID)
}

func (s *Service) containerUpdate(ctx context.Context, a store.AutoUpdate, envs map[int64]envInfo) Definition {
	d := Definition{Type: ContainerUpdate, ID: a.ID, Name: "Update container: " + a.ContainerName, EntityName: a.ContainerName,
		Enabled: a.Enabled, ScheduleType: a.ScheduleType, Cron: a.CronExpression,
		VulnerabilityCriteria: a.VulnerabilityCriteria}
	withEnvironment(&d, a.EnvironmentID, envs)
	d.EnvHasScanning = s.hasScanning(ctx, a.EnvironmentID)
	if d.EnvHasScanning && d.VulnerabilityCriteria != "" && d.VulnerabilityCriteria != "never" {
		d.Description = "Check, scan and update the container; block on vulnerabilities (" + d.VulnerabilityCriteria + ")"
	} else {
		d.Description = "Check for a newer image and update the container"
	}
	return d
}

func gitStackSync(g store.GitStack, envs map[int64]envInfo) Definition {
	cron := g.AutoUpdateCron
	if cron == "" {
		cron = "*/5 * * * *"
	}
	d := Definition{Type: GitStackSync, ID: g.ID, Name: "Git sync: " + g.StackName, EntityName: g.StackName,
		Description: "Pull the repository and redeploy the stack when the commit changed",
		Enabled:     g.AutoUpdate, ScheduleType: DetectScheduleType(cron), Cron: cron}
	envID := g.EnvironmentID
	withEnvironment(&d, &envID, envs)
	return d
}

// backupConfig is the schedule of a backup configuration (its id); one
// without a cron is a manual-only configuration, listed by nothing but
// still run as an execution of this type.
func backupConfig(b store.BackupConfig, envs map[int64]envInfo) Definition {
	name := b.Name
	if name == "" {
		name = b.TargetName
	}
	d := Definition{Type: Backup, ID: b.ID, Name: "Backup: " + name, EntityName: b.TargetName,
		Description: fmt.Sprintf("Back up the %s's volumes to a restic repository", b.Type),
		Enabled:     b.Enabled && b.Schedule != "", ScheduleType: DetectScheduleType(b.Schedule), Cron: b.Schedule}
	if b.Type == store.BackupBerth {
		d.Description = "Back up Berth itself (database, encryption key, stack files) to a restic repository"
	}
	envID := b.EnvironmentID
	withEnvironment(&d, &envID, envs)
	return d
}

func (s *Service) envSchedule(ctx context.Context, es store.EnvSchedule, envs map[int64]envInfo) Definition {
	envID := es.EnvironmentID
	name := envs[envID].name
	d := Definition{Type: Type(es.Kind), ID: envID, EntityName: name, Enabled: es.Enabled,
		ScheduleType: DetectScheduleType(es.CronExpression), Cron: es.CronExpression}
	withEnvironment(&d, &envID, envs)
	switch es.Kind {
	case store.EnvUpdateCheck:
		d.Name = "Update environment: " + name
		d.AutoUpdate, d.VulnerabilityCriteria = es.AutoUpdate, es.VulnerabilityCriteria
		d.EnvHasScanning = s.hasScanning(ctx, &envID)
		switch {
		case !es.AutoUpdate:
			d.Description = "Check containers for newer images (record pending updates)"
		case d.EnvHasScanning:
			d.Description = "Check, scan and update containers"
		default:
			d.Description = "Check and update containers"
		}
	case store.EnvImagePrune:
		d.Name = "Prune images: " + name
		d.PruneMode = es.PruneMode
		d.Description = "Prune dangling images"
		if es.PruneMode == "all" {
			d.Description = "Prune all unused images"
		}
	}
	return d
}

// describe names a schedule in logs.
func describe(d Definition) string { return fmt.Sprintf("%s %d (%s)", d.Type, d.ID, d.EntityName) }
