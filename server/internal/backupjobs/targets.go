package backupjobs

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// Target is what a configuration backs up on its environment now.
type Target struct {
	Containers []engine.Container // the container, or the stack's containers
	Volumes    []string           // named volumes
	Paths      []string           // host paths: binds, the stack's directory
	// StackDir is the stack's directory ("" when not backed up) and
	// StackDirNote why it is not, when it is not. StackDirCopied: the
	// directory is on Berth's host, not on the engine's, and is copied
	// into the helper (it is not in Paths then).
	StackDir       string
	StackDirNote   string
	StackDirCopied bool
}

// running returns the ids of t's running containers.
func (t Target) running() []string {
	var ids []string
	for _, c := range t.Containers {
		if c.State == "running" {
			ids = append(ids, c.ID)
		}
	}
	return ids
}

// containerNamed finds the container called name (or with that id) in list.
func containerNamed(list []engine.Container, name string) (engine.Container, bool) {
	for _, c := range list {
		if c.Name == name || c.ID == name {
			return c, true
		}
	}
	return engine.Container{}, false
}

// projectContainers returns the containers of compose project name.
func projectContainers(list []engine.Container, name string) []engine.Container {
	var out []engine.Container
	for _, c := range list {
		if c.Labels[engine.ComposeProjectLabel] == name {
			out = append(out, c)
		}
	}
	return out
}

// Resolve finds what cfg backs up on its environment's engine c.
func (s *Service) Resolve(ctx context.Context, c *engine.Client, env store.Environment, cfg store.BackupConfig) (Target, error) {
	list, err := c.ListContainers(ctx, true)
	if err != nil {
		return Target{}, err
	}
	var t Target
	chosen := func(name string) bool { return cfg.AllVolumes || slices.Contains(cfg.Volumes, name) }
	vols, paths := map[string]bool{}, map[string]bool{}
	// own are the host paths the target itself mounts (its bind mounts'
	// sources, a stack's directory): the only ones cfg.Paths may name.
	own := map[string]bool{}
	binds := func(ct engine.Container) {
		for _, m := range ct.Mounts {
			if m.Type == "bind" && m.Source != "" {
				own[m.Source] = true
			}
		}
	}
	switch cfg.Type {
	case store.BackupContainer:
		ct, ok := containerNamed(list, cfg.TargetName)
		if !ok {
			return Target{}, fault.New(fault.NotFound, fmt.Sprintf("Container '%s' not found", cfg.TargetName))
		}
		t.Containers = []engine.Container{ct}
		binds(ct)
		for _, m := range ct.Mounts {
			switch {
			case m.Type == "volume" && m.Name != "" && chosen(m.Name):
				vols[m.Name] = true
			case m.Type == "bind" && m.Source != "" && chosen(m.Source):
				paths[m.Source] = true
			}
		}
	case store.BackupStack:
		t.Containers = projectContainers(list, cfg.TargetName)
		for _, ct := range t.Containers {
			binds(ct)
			for _, m := range ct.Mounts {
				if m.Type == "volume" && m.Name != "" && chosen(m.Name) {
					vols[m.Name] = true
				}
			}
		}
		// Volumes of the project no container mounts now (a removed service).
		all, err := c.ListVolumes(ctx)
		if err != nil {
			return Target{}, err
		}
		for _, v := range all {
			if v.Labels[engine.ComposeProjectLabel] == cfg.TargetName && chosen(v.Name) {
				vols[v.Name] = true
			}
		}
		if dir, note := s.stackDir(ctx, env, cfg.TargetName); dir != "" {
			// On another host than Berth's, a path named dir is the
			// engine's host's, not the stack's directory.
			copied := !Local(env)
			if !copied {
				own[dir] = true
			}
			if cfg.IncludeStackDir {
				t.StackDir, t.StackDirCopied = dir, copied
				if !copied {
					paths[dir] = true
				}
			}
		} else if cfg.IncludeStackDir {
			t.StackDirNote = note
		}
		if len(t.Containers) == 0 && len(vols) == 0 && t.StackDir == "" {
			return Target{}, fault.New(fault.NotFound, fmt.Sprintf("Stack '%s' not found", cfg.TargetName))
		}
	default:
		return Target{}, fault.Invalidf("Invalid backup type %q", cfg.Type)
	}
	// A path the target does not mount itself is refused: the helper reads
	// host paths as root, so naming any path would read any file of the
	// host.
	for _, p := range cfg.Paths {
		if !own[p] {
			return Target{}, fault.New(fault.Forbidden, fmt.Sprintf(
				"Path '%s' is not a bind mount of %s '%s' nor its stack's directory: a backup reads only its target's own data",
				p, cfg.Type, cfg.TargetName))
		}
		paths[p] = true
	}
	for v := range vols {
		t.Volumes = append(t.Volumes, v)
	}
	for p := range paths {
		t.Paths = append(t.Paths, p)
	}
	sort.Strings(t.Volumes)
	sort.Strings(t.Paths)
	return t, nil
}

// Local reports whether env's engine runs on Berth's own host, where the
// stack files are.
func Local(env store.Environment) bool { return env.ConnectionType == "socket" }

// stackDir returns the directory of env's stack name on Berth's host, else
// "" and why not. A helper on env's engine mounts it when env is Local;
// elsewhere it is copied into the helper.
func (s *Service) stackDir(ctx context.Context, env store.Environment, name string) (dir, note string) {
	if s.o.StackDir == nil {
		return "", "stack files are not known to this server"
	}
	d, err := s.o.StackDir(ctx, env, name)
	if err != nil {
		return "", "Berth keeps no files of this stack"
	}
	return d, ""
}
