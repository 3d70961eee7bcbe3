package stacks

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/berth-dev/berth/server/internal/hostpath"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
)

// SourceStack is one stack of a source.
type SourceStack struct {
	Name    string `json:"name"`
	Status  string `json:"status"`
	Adopted bool   `json:"adopted"`
}

// SourceGroup is the stacks of one source type.
type SourceGroup struct {
	Count  int           `json:"count"`
	Stacks []SourceStack `json:"stacks"`
}

// Sources are an environment's stacks grouped by where they come from.
type Sources struct {
	EnvironmentID int64       `json:"environmentId"`
	Total         int         `json:"total"`
	Internal      SourceGroup `json:"internal"`
	Git           SourceGroup `json:"git"`
	// External holds adopted stacks and compose projects found on the
	// engine that Berth has not adopted (Adopted false).
	External SourceGroup `json:"external"`
	Adopted  int         `json:"adopted"` // how many external stacks are adopted
}

// SourcesOf groups env's stacks (as List lists them) by source type.
func (s *Service) SourcesOf(ctx context.Context, env store.Environment) (Sources, error) {
	list, err := s.List(ctx, env)
	if err != nil {
		return Sources{}, err
	}
	out := Sources{EnvironmentID: env.ID, Internal: SourceGroup{Stacks: []SourceStack{}}, Git: SourceGroup{Stacks: []SourceStack{}},
		External: SourceGroup{Stacks: []SourceStack{}}}
	for _, e := range list {
		g := &out.External
		switch e.SourceType {
		case store.SourceInternal:
			g = &out.Internal
		case store.SourceGit:
			g = &out.Git
		}
		g.Stacks = append(g.Stacks, SourceStack{Name: e.Name, Status: e.Status, Adopted: e.Adopted})
		g.Count++
		out.Total++
		if e.Adopted {
			out.Adopted++
		}
	}
	return out, nil
}

// PreviewContainer is a container a delete removes.
type PreviewContainer struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Service string `json:"service"`
	State   string `json:"state"`
}

// DeletePreview is what deleting a stack would remove, by Delete's rules.
type DeletePreview struct {
	Name       string `json:"name"`
	SourceType string `json:"sourceType"`
	Running    bool   `json:"running"`
	// RequiresForce is true when a delete without force is refused (the
	// stack is running).
	RequiresForce bool `json:"requiresForce"`
	// RemoveVolumes is the force option the preview was asked for: named
	// volumes go only with it.
	RemoveVolumes bool               `json:"removeVolumes"`
	Containers    []PreviewContainer `json:"containers"`
	Networks      []string           `json:"networks"`
	Volumes       []string           `json:"volumes"`     // removed
	KeptVolumes   []string           `json:"keptVolumes"` // the stack's volumes a delete without force keeps
	Files         []string           `json:"files"`
	Directories   []string           `json:"directories"`
	Clone         string             `json:"clone,omitempty"` // a git stack's repository clone
	// Records is true when Berth's records of the stack (and its secrets,
	// git settings and sync schedule) go.
	Records bool   `json:"records"`
	Message string `json:"message"`
}

// maxPreviewFiles bounds the files listed under a directory a delete
// removes whole.
const maxPreviewFiles = 100

// DeletePreview answers what Delete(name, force) would remove, changing
// nothing.
func (s *Service) DeletePreview(ctx context.Context, env store.Environment, name string, force bool) (DeletePreview, error) {
	out := DeletePreview{Name: name, RemoveVolumes: force, Containers: []PreviewContainer{}, Networks: []string{}, Volumes: []string{},
		KeptVolumes: []string{}, Files: []string{}, Directories: []string{}}
	st, err := s.store.GetStack(ctx, env.ID, name)
	switch {
	case err == nil && st.SourceType == store.SourceExternal:
		out.SourceType, out.Records = st.SourceType, true
		out.Message = fmt.Sprintf("Stack '%s' is adopted: only Berth's records of it are removed; its containers, networks, volumes and files stay", name)
		return out, nil
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return DeletePreview{}, err
	}
	op := fmt.Sprintf("preview the delete of stack '%s'", name)
	c, t, err := s.resolve(ctx, env, name, op)
	if err != nil {
		return DeletePreview{}, err
	}
	out.SourceType = t.record.SourceType
	if t.record.ID == 0 {
		out.SourceType = store.SourceExternal
	}
	out.Running, out.RequiresForce = t.running, t.running
	if t.exists || force {
		if err := s.previewEngine(ctx, c, name, force, &out); err != nil {
			return DeletePreview{}, opFault(op, err)
		}
	}
	if t.record.ID != 0 {
		out.Records = true
		s.previewFiles(ctx, t.record, &out)
	}
	switch {
	case out.RequiresForce && !force:
		out.Message = fmt.Sprintf("Stack '%s' is running. Stop it first or use force=true to delete it.", name)
	case len(out.KeptVolumes) > 0:
		out.Message = fmt.Sprintf("The stack's %d volume(s) are kept: delete with force to remove them", len(out.KeptVolumes))
	default:
		out.Message = fmt.Sprintf("Deleting stack '%s' removes what is listed", name)
	}
	return out, nil
}

// previewEngine fills in the containers, networks and volumes of compose
// project name (its labels say which are the project's).
func (s *Service) previewEngine(ctx context.Context, c *engine.Client, name string, force bool, out *DeletePreview) error {
	list, err := c.ListContainers(ctx, true)
	if err != nil {
		return err
	}
	for _, ct := range list {
		if ct.Labels[engine.ComposeProjectLabel] == name {
			out.Containers = append(out.Containers, PreviewContainer{ID: ct.ID, Name: ct.Name,
				Service: ct.Labels[engine.ComposeServiceLabel], State: ct.State})
		}
	}
	sort.Slice(out.Containers, func(i, j int) bool { return out.Containers[i].Name < out.Containers[j].Name })
	nets, err := c.ListNetworks(ctx)
	if err != nil {
		return err
	}
	for _, n := range nets {
		if n.Labels[engine.ComposeProjectLabel] == name {
			out.Networks = append(out.Networks, n.Name)
		}
	}
	sort.Strings(out.Networks)
	vols, err := c.ListVolumes(ctx)
	if err != nil {
		return err
	}
	for _, v := range vols {
		if v.Labels[engine.ComposeProjectLabel] != name {
			continue
		}
		if force {
			out.Volumes = append(out.Volumes, v.Name)
		} else {
			out.KeptVolumes = append(out.KeptVolumes, v.Name)
		}
	}
	sort.Strings(out.Volumes)
	sort.Strings(out.KeptVolumes)
	return nil
}

// previewFiles fills in the files and directories removeFiles and the git
// clone removal take.
func (s *Service) previewFiles(ctx context.Context, st store.Stack, out *DeletePreview) {
	def := s.stackDir(st.EnvironmentID, st.Name)
	seen := map[string]bool{}
	addFile := func(p string) {
		if fi, err := os.Lstat(p); err == nil && !fi.IsDir() && !seen[p] && len(out.Files) < maxPreviewFiles {
			seen[p] = true
			out.Files = append(out.Files, absPath(p))
		}
	}
	// Only what Berth created, still under the allowed stack roots (see
	// removeFiles).
	if pol, err := s.policy(ctx, st.EnvironmentID); err == nil {
		for _, p := range st.CreatedFiles {
			if _, err := pol.Confine("path", filepath.Dir(p), hostpath.Dir); err == nil {
				addFile(p)
			}
		}
	}
	if fi, err := os.Stat(def); err == nil && fi.IsDir() {
		out.Directories = append(out.Directories, absPath(def))
		_ = filepath.WalkDir(def, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				addFile(p)
			}
			return nil
		})
	}
	if st.SourceType == store.SourceGit {
		if fi, err := os.Stat(s.CloneDir(st.ID)); err == nil && fi.IsDir() {
			out.Clone = absPath(s.CloneDir(st.ID))
		}
	}
	sort.Strings(out.Files)
}
