package autoupdate

import (
	"context"
	"fmt"
	"strings"

	"github.com/berth-dev/berth/server/internal/store"
)

// Batch results: what an update did to one container.
const (
	BatchUpdated  = "updated"
	BatchUpToDate = "up_to_date"
	BatchSkipped  = "skipped"
	BatchFailed   = "failed"
)

// BatchResult is what a batch update did to one container.
type BatchResult struct {
	Container      string `json:"container"` // as asked (id or name)
	Name           string `json:"name,omitempty"`
	Status         string `json:"status"` // BatchUpdated, BatchUpToDate, BatchSkipped or BatchFailed
	Success        bool   `json:"success"`
	NewContainerID string `json:"newContainerId,omitempty"`
	NewImageID     string `json:"newImageId,omitempty"`
	Message        string `json:"message,omitempty"` // why a container was skipped
	Error          string `json:"error,omitempty"`
}

// BatchSummary counts the results of a batch update.
type BatchSummary struct {
	Total    int `json:"total"`
	Updated  int `json:"updated"`
	UpToDate int `json:"upToDate"`
	Skipped  int `json:"skipped"`
	Failed   int `json:"failed"`
}

// BatchReport is the outcome of a batch update.
type BatchReport struct {
	Results []BatchResult `json:"results"`
	Summary BatchSummary  `json:"summary"`
}

// BatchProgress receives what a batch update does as it goes.
type BatchProgress interface {
	// Start is called before container i (from 0) of total.
	Start(i, total int, container string)
	// Log is a line of the update of container.
	Log(container, line string)
	// Done is called with each container's result.
	Done(i, total int, r BatchResult)
}

// UpdateMany updates the containers refs (ids or names) of env one after
// the other, each as a scheduled update does it — pulled by digest,
// recreated, kept only when it stays up, rolled back otherwise — with the
// vulnerability criteria of its auto-update configuration (never when it
// has none). A container that fails does not stop the others. Every
// recreated container notifies container_updated, and a batch that updated
// some and failed none notifies batch_update_success.
//
// A batch update is not a schedule execution: a server that stops in the
// middle of a recreate leaves it for a person to put right.
//
// criteria, when not "", replaces each container's own vulnerability
// criteria for this batch (the reference's batch-update-stream
// vulnerabilityCriteria); it must be a value CheckCriteria accepts.
func (s *Service) UpdateMany(ctx context.Context, env store.Environment, refs []string, criteria string, p BatchProgress) BatchReport {
	rep := BatchReport{Results: make([]BatchResult, 0, len(refs)), Summary: BatchSummary{Total: len(refs)}}
	for i, ref := range refs {
		if ctx.Err() != nil {
			r := BatchResult{Container: ref, Status: BatchFailed, Error: "The batch update was interrupted"}
			rep.add(r)
			p.Done(i, len(refs), r)
			continue
		}
		p.Start(i, len(refs), ref)
		r := s.updateOne(ctx, env, ref, criteria, p)
		rep.add(r)
		p.Done(i, len(refs), r)
	}
	s.notifyBatch(env.ID, env.Name, rep)
	return rep
}

func (rep *BatchReport) add(r BatchResult) {
	rep.Results = append(rep.Results, r)
	switch r.Status {
	case BatchUpdated:
		rep.Summary.Updated++
	case BatchUpToDate:
		rep.Summary.UpToDate++
	case BatchSkipped:
		rep.Summary.Skipped++
	default:
		rep.Summary.Failed++
	}
}

// updateOne updates one container of a batch.
func (s *Service) updateOne(ctx context.Context, env store.Environment, ref, override string, bp BatchProgress) BatchResult {
	r := BatchResult{Container: ref}
	name := strings.TrimPrefix(strings.TrimSpace(ref), "/")
	if name == "" {
		r.Status, r.Error = BatchFailed, "Container id or name is required"
		return r
	}
	// The configuration is the container's by name; the batch may name it
	// by id.
	criteria := Never
	if c, err := s.engines.Client(ctx, env.Endpoint()); err == nil {
		if cfg, err := c.InspectConfig(ctx, name); err == nil {
			r.Name = cfg.Name
			if a, found, err := s.Config(ctx, env, cfg.Name); err == nil && found {
				criteria = a.VulnerabilityCriteria
			}
		}
	}
	if override != "" {
		criteria = override
	}
	out, err := s.Update(ctx, env, name, criteria, &lineProgress{container: ref, p: bp})
	switch {
	case err != nil:
		r.Status, r.Error = BatchFailed, errorText(err)
	case out.Updated:
		r.Status, r.Success, r.NewContainerID, r.NewImageID = BatchUpdated, true, out.NewContainerID, out.NewImageID
		s.notifyUpdated(env.ID, r.displayName(), out)
	case out.UpToDate:
		r.Status, r.Success, r.Message = BatchUpToDate, true, "Already up to date"
	case out.Skipped != "":
		r.Status, r.Message = BatchSkipped, out.Skipped
	default:
		r.Status, r.Error = BatchFailed, "The update did nothing"
	}
	return r
}

func (r BatchResult) displayName() string {
	if r.Name != "" {
		return r.Name
	}
	return r.Container
}

// lineProgress is the Progress of one container of a batch: its log lines
// go to the batch's progress.
type lineProgress struct {
	container string
	p         BatchProgress
}

func (l *lineProgress) Logf(format string, args ...any) {
	l.p.Log(l.container, fmt.Sprintf(format, args...))
}

func (l *lineProgress) Detail(string, any) {}

func (l *lineProgress) Clear(string) {}

func (l *lineProgress) Checkpoint(context.Context) error { return nil }
