package stacks

import (
	"context"
	"path/filepath"
	"slices"

	"github.com/compose-spec/compose-go/v2/types"

	"github.com/berth-dev/berth/server/internal/policy"
	"github.com/berth-dev/berth/server/internal/store"
)

// checkPolicy refuses project p on env when the actor of ctx may not ask
// for what one of its services asks of the host (see package policy): the
// 403 names the service and the security setting.
func (s *Service) checkPolicy(ctx context.Context, env store.Environment, p *types.Project) error {
	return policy.New(s.store, s.dataDir).Check(ctx, env, Workloads(p)...)
}

// Workloads are what the services of project p ask of the host, in service
// name order.
func Workloads(p *types.Project) []policy.Workload {
	names := make([]string, 0, len(p.Services))
	for name := range p.Services {
		names = append(names, name)
	}
	slices.Sort(names)
	own := p.WorkingDir
	if len(p.ComposeFiles) > 0 {
		own = filepath.Dir(p.ComposeFiles[0])
	}
	out := make([]policy.Workload, 0, len(names))
	for _, name := range names {
		svc := p.Services[name]
		w := policy.Workload{Service: name, Privileged: svc.Privileged, NetworkMode: svc.NetworkMode, PIDMode: svc.Pid,
			IPCMode: svc.Ipc, CapAdd: svc.CapAdd, SecurityOpt: svc.SecurityOpt, OwnDir: own}
		for _, d := range svc.Devices {
			w.Devices = append(w.Devices, d.Source)
		}
		w.Devices = append(w.Devices, svc.DeviceCgroupRules...)
		for _, v := range svc.Volumes {
			switch v.Type {
			case types.VolumeTypeBind:
				w.Binds = append(w.Binds, v.Source)
			case types.VolumeTypeVolume:
				if vol, ok := p.Volumes[v.Source]; ok {
					if dev, ok := policy.HostDevice(vol.Driver, vol.DriverOpts); ok {
						w.Binds = append(w.Binds, dev)
					}
				}
			}
		}
		for _, ref := range svc.Secrets {
			if sec, ok := p.Secrets[ref.Source]; ok && sec.File != "" {
				w.Binds = append(w.Binds, sec.File)
			}
		}
		for _, ref := range svc.Configs {
			if cfg, ok := p.Configs[ref.Source]; ok && cfg.File != "" {
				w.Binds = append(w.Binds, cfg.File)
			}
		}
		out = append(out, w)
	}
	return out
}
