package images

import (
	"context"

	"github.com/berth-dev/berth/server/internal/schedule"
)

// RunPrune is the image_prune schedule: prune the images of environment
// d.ID, dangling ones or (prune mode all) every unused one.
func (s *Service) RunPrune(ctx context.Context, d schedule.Definition, run *schedule.Run) error {
	env, err := s.store.GetEnvironment(ctx, d.ID)
	if err != nil {
		return err
	}
	all := d.PruneMode == "all"
	run.Logf("Pruning %s images", map[bool]string{false: "dangling", true: "all unused"}[all])
	rep, err := s.Prune(ctx, env, all)
	removed := 0
	if err == nil {
		for _, d := range rep.Deleted {
			if d.Deleted != "" {
				removed++
			}
		}
	}
	s.notifyPrune(env.ID, env.Name, removed, int64(rep.SpaceReclaimed), err)
	if err != nil {
		return err
	}
	run.Logf("Removed %d images, reclaimed %s", removed, humanBytes(int64(rep.SpaceReclaimed)))
	run.Detail("imagesDeleted", removed)
	run.Detail("spaceReclaimed", rep.SpaceReclaimed)
	return nil
}
