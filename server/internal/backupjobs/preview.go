package backupjobs

import (
	"context"
	"os"
	"strconv"

	"github.com/berth-dev/berth/server/internal/backup"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
)

// Item is one volume or path of a snapshot and where a restore puts it.
type Item struct {
	Kind   string `json:"kind"` // volume | path
	Source string `json:"source"`
	Target string `json:"target,omitempty"`
	// Exists tells whether the target exists now (nil: not known).
	Exists *bool `json:"exists,omitempty"`
	// Entries are the names at the item's top level; Files and Size count
	// the files among them.
	Entries []string `json:"entries"`
	Files   int64    `json:"files"`
	Size    int64    `json:"size"`
}

// Preview is what a snapshot holds and, with targets, where a restore
// would write it.
type Preview struct {
	Snapshot   backup.Snapshot `json:"snapshot"`
	ConfigID   int64           `json:"configId,omitempty"`
	TargetType string          `json:"targetType,omitempty"`
	TargetName string          `json:"targetName,omitempty"`
	Items      []Item          `json:"items"`
	// Files and Size are the snapshot's (0 when Berth did not make it).
	Files int64 `json:"files"`
	Size  int64 `json:"size"`
	Own   bool  `json:"own"`
}

// Preview describes snapshot id of destination destID; with targets, where
// an in-place restore on environment envID (0: the snapshot's own) would
// write each volume and path, and whether that exists now.
func (s *Service) Preview(ctx context.Context, destID int64, id string, targets bool, envID int64) (Preview, error) {
	r, w, _, err := s.repoAt(ctx, destID, 0)
	if err != nil {
		return Preview{}, err
	}
	sn, err := s.snapshotOf(ctx, w, r, id)
	if err != nil {
		return Preview{}, err
	}
	p := Preview{Snapshot: sn, TargetType: tagValue(sn.Tags, TagType), TargetName: tagValue(sn.Tags, TagTarget), Items: []Item{}}
	p.ConfigID, _ = strconv.ParseInt(tagValue(sn.Tags, TagConfig), 10, 64)
	if s.o.Instance != nil {
		if inst, err := s.o.Instance(ctx); err == nil {
			p.Own = tagValue(sn.Tags, TagInstance) == inst
		}
	}
	volumes, paths := contents(sn)
	for _, v := range volumes {
		p.Items = append(p.Items, Item{Kind: "volume", Source: v, Entries: []string{}})
	}
	for _, hp := range paths {
		p.Items = append(p.Items, Item{Kind: "path", Source: hp, Entries: []string{}})
	}
	// The snapshot's size and file count, as its backup run recorded them;
	// each item's entries at its top level (restic ls of its root).
	if run, err := s.o.Store.BackupRunOfSnapshot(ctx, sn.ID); err == nil {
		p.Files, p.Size = run.Files, run.Bytes
	}
	for i := range p.Items {
		it := &p.Items[i]
		root := backup.VolumesDir + "/" + it.Source
		if it.Kind == "path" {
			root = backup.PathsDir + it.Source
		}
		nodes, err := s.o.Runner.Ls(ctx, w, r, sn.ID, root)
		if err != nil {
			return Preview{}, err
		}
		for _, n := range nodes {
			it.Entries = append(it.Entries, n.Name)
			if n.Type == "file" {
				it.Files++
				it.Size += n.Size
			}
		}
	}
	if !targets {
		return p, nil
	}
	if envID == 0 {
		envID = snapshotEnv(sn)
	}
	if envID == 0 {
		envID = w.EnvID
	}
	tw, tenv, err := s.where(ctx, envID)
	if err != nil {
		return Preview{}, err
	}
	for i := range p.Items {
		it := &p.Items[i]
		it.Target = it.Source
		it.Exists = s.exists(ctx, tw.Client, tenv, it.Kind, it.Target, it.Kind == "path" && onBerthHost(tenv, sn, it.Source))
	}
	return p, nil
}

// exists tells whether a volume or host path exists on env, or a path on
// Berth's host when onBerth (nil: a host path of a remote environment,
// not known).
func (s *Service) exists(ctx context.Context, c *engine.Client, env store.Environment, kind, name string, onBerth bool) *bool {
	var ok bool
	if kind == "volume" {
		_, err := c.InspectVolume(ctx, name)
		ok = err == nil
		return &ok
	}
	if !Local(env) && !onBerth {
		return nil
	}
	_, err := os.Stat(name)
	ok = err == nil
	return &ok
}
