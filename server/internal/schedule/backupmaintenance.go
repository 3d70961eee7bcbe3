package schedule

import (
	"context"
	"encoding/json"

	"github.com/berth-dev/berth/server/internal/store"
)

// The maintenance tasks of a destination's policies (the reference's JSON:
// {"checkEnabled": true, "checkSchedule": "0 5 * * 0", "pruneEnabled": …}),
// each a schedule of its own type whose id is the destination's.
var maintenanceTasks = map[Type]string{BackupCheck: "check", BackupPrune: "prune"}

// MaintenanceTask is the restic task of a maintenance schedule type ("" for
// other types).
func MaintenanceTask(t Type) string { return maintenanceTasks[t] }

// policies decodes a destination's policies (none: an empty object).
func policies(d store.BackupDestination) map[string]any {
	p := map[string]any{}
	if d.Policies != "" {
		_ = json.Unmarshal([]byte(d.Policies), &p)
	}
	return p
}

// maintenance is the schedule of task t of destination d, if its policies
// give it a cron.
func maintenance(d store.BackupDestination, t Type, envs map[int64]envInfo) (Definition, bool) {
	task := maintenanceTasks[t]
	p := policies(d)
	cron, _ := p[task+"Schedule"].(string)
	if cron == "" {
		return Definition{}, false
	}
	enabled, set := p[task+"Enabled"].(bool)
	def := Definition{Type: t, ID: d.ID, Name: "Backup " + task + ": " + d.Name, EntityName: d.Name,
		Description: "restic " + task + " of the destination's repository",
		Enabled:     enabled || !set, ScheduleType: DetectScheduleType(cron), Cron: cron}
	withEnvironment(&def, d.EnvironmentID, envs)
	return def, true
}

// maintenanceDefinitions returns the maintenance schedules of every
// destination.
func (s *Service) maintenanceDefinitions(ctx context.Context, envs map[int64]envInfo) ([]Definition, error) {
	dests, err := s.store.ListBackupDestinations(ctx)
	if err != nil {
		return nil, err
	}
	var out []Definition
	for _, d := range dests {
		for _, t := range []Type{BackupCheck, BackupPrune} {
			if def, ok := maintenance(d, t, envs); ok {
				out = append(out, def)
			}
		}
	}
	return out, nil
}

// maintenanceDefinition returns task t's schedule of destination id.
func (s *Service) maintenanceDefinition(ctx context.Context, t Type, id int64, envs map[int64]envInfo) (Definition, error) {
	d, err := s.store.GetBackupDestination(ctx, id)
	if err != nil {
		return Definition{}, notFound(err)
	}
	def, ok := maintenance(d, t, envs)
	if !ok {
		return Definition{}, errScheduleNotFound
	}
	return def, nil
}

// setPolicy sets key of destination id's policies to v (nil: removes it).
func (s *Service) setPolicy(ctx context.Context, id int64, key string, v any) error {
	d, err := s.store.GetBackupDestination(ctx, id)
	if err != nil {
		return err
	}
	p := policies(d)
	if v == nil {
		delete(p, key)
	} else {
		p[key] = v
	}
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	d.Policies = string(b)
	return s.store.UpdateBackupDestination(ctx, &d)
}
