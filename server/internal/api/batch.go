package api

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/gin-gonic/gin"
	"golang.org/x/sync/errgroup"

	"github.com/berth-dev/berth/server/internal/containers"
	"github.com/berth-dev/berth/server/internal/jobs"
	"github.com/berth-dev/berth/server/internal/stacks"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// batchOps are the operations of POST /api/batch per entity type, each
// with the permission it needs (the reference's table; a stack restart
// needs stacks:start, as its own route does).
var batchOps = map[string]map[string]string{
	"containers": {"start": "containers:start", "stop": "containers:stop", "restart": "containers:restart",
		"pause": "containers:stop", "unpause": "containers:start", "remove": "containers:remove"},
	"images":   {"remove": "images:remove"},
	"volumes":  {"remove": "volumes:remove"},
	"networks": {"remove": "networks:remove"},
	"stacks": {"start": "stacks:start", "stop": "stacks:stop", "restart": "stacks:start", "down": "stacks:stop",
		"remove": "stacks:remove"},
}

// batchOrder lists batchOps' keys in a stable order for messages.
var batchOrder = map[string][]string{
	"containers": {"start", "stop", "restart", "pause", "unpause", "remove"},
	"images":     {"remove"}, "volumes": {"remove"}, "networks": {"remove"},
	"stacks": {"start", "stop", "restart", "down", "remove"},
}

// maxBatch bounds the items of one batch.
const maxBatch = 200

// batchRequest is the reference's {operation, entityType, items, options};
// Berth's earlier {action, containers|ids, force} (containers only) is an
// alias of it.
type batchRequest struct {
	Operation  string      `json:"operation"`
	EntityType string      `json:"entityType"`
	Items      []batchItem `json:"items"`
	Options    struct {
		Force         *bool `json:"force"`
		RemoveVolumes bool  `json:"removeVolumes"` // stacks down and remove
	} `json:"options"`

	Action     string   `json:"action"`     // alias of operation (containers)
	Containers []string `json:"containers"` // alias of items (ids)
	IDs        []string `json:"ids"`        // alias of items (ids)
	Force      *bool    `json:"force"`      // alias of options.force
}

// batchItem is one entity of a batch: its id (a stack's or volume's is its
// name) and its name for display.
type batchItem struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// batchSummary counts a batch's outcomes.
type batchSummary struct {
	Total   int `json:"total"`
	Success int `json:"success"`
	Failed  int `json:"failed"`
}

// batchItemResult is the outcome of a batch on one item.
type batchItemResult struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Status  string `json:"status"` // success | error
	Error   string `json:"error,omitempty"`
	Details string `json:"details,omitempty"`
}

// batchAnswer is a batch's final payload (the job's result, or the answer
// itself with Accept: application/json): the reference's {type: complete,
// summary} with each item's outcome in the order asked.
type batchAnswer struct {
	Type    string            `json:"type"` // complete
	Summary batchSummary      `json:"summary"`
	Results []batchItemResult `json:"results"`
}

// normalize turns the alias shape into the reference's and checks the
// request; it returns the permission the operation needs.
func (r *batchRequest) normalize() (string, error) {
	if r.Operation == "" && r.EntityType == "" && r.Action != "" {
		r.Operation, r.EntityType = r.Action, "containers"
	}
	for _, id := range append(r.Containers, r.IDs...) {
		r.Items = append(r.Items, batchItem{ID: id, Name: id})
	}
	if r.Options.Force == nil {
		r.Options.Force = r.Force
	}
	ops, ok := batchOps[r.EntityType]
	if !ok {
		return "", fault.Invalidf("Invalid entity type: %s. Supported: containers, images, volumes, networks, stacks", r.EntityType)
	}
	perm, ok := ops[r.Operation]
	if !ok {
		return "", fault.Invalidf("Invalid operation '%s' for %s. Supported: %s", r.Operation, r.EntityType,
			strings.Join(batchOrder[r.EntityType], ", "))
	}
	switch {
	case len(r.Items) == 0:
		return "", fault.New(fault.Invalid, "items array is required and must not be empty")
	case len(r.Items) > maxBatch:
		return "", fault.Invalidf("At most %d items per batch", maxBatch)
	}
	for i := range r.Items {
		it := &r.Items[i]
		it.ID, it.Name = strings.TrimSpace(it.ID), strings.TrimSpace(it.Name)
		if it.ID == "" {
			it.ID = it.Name
		}
		if it.ID == "" {
			return "", fault.New(fault.Invalid, "Every item needs an id")
		}
		if it.Name == "" {
			it.Name = it.ID
		}
	}
	if r.Options.RemoveVolumes && r.EntityType != "stacks" {
		return "", fault.New(fault.Invalid, "options.removeVolumes applies to stacks only")
	}
	return perm, nil
}

// stackVolumes refuses a removeVolumes Berth cannot honour: a stack's named
// volumes go with a forced remove (stacks.Service.Delete), never with a
// remove without force, and a batch down keeps them.
func (r *batchRequest) stackVolumes() error {
	if !r.Options.RemoveVolumes {
		return nil
	}
	switch {
	case r.Operation == "remove" && !r.force(false):
		return fault.New(fault.Invalid, "options.removeVolumes needs options.force for a stack remove (a forced remove takes the named volumes)")
	case r.Operation == "down":
		return fault.New(fault.Invalid, "options.removeVolumes is not supported for a batch down: use remove with force")
	case r.Operation != "remove":
		return fault.Invalidf("options.removeVolumes does not apply to %s", r.Operation)
	}
	return nil
}

// force is options.force, or def when it is not sent (the reference removes
// containers with force unless told otherwise, everything else without).
func (r *batchRequest) force(def bool) bool {
	if r.Options.Force == nil {
		return def
	}
	return *r.Options.Force
}

// batch runs one operation over many containers, images, volumes, networks
// or stacks of the environment, three at a time, as a job: it answers
// {jobId} at once (GET /api/jobs/{jobId} follows it), or, with Accept:
// application/json, the final {type: complete, summary, results}. The
// operation's permission is checked once for the environment (403 before
// anything runs); each item that fails is reported as failed, the others
// go on.
func (s *Server) batch(c *gin.Context) error {
	var req batchRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	perm, err := req.normalize()
	if err != nil {
		return err
	}
	env := envOf(c)
	if ident := identityOf(c); ident != nil {
		if err := denial(ident.Access.Check(perm, &env.ID)); err != nil {
			return err
		}
	}
	if err := req.stackVolumes(); err != nil {
		return err
	}
	names := make([]string, len(req.Items))
	for i, it := range req.Items {
		names[i] = it.Name
	}
	noteAudit(c, "", fmt.Sprintf("%s %s: %s", req.Operation, req.EntityType, strings.Join(names, ", ")))
	run := func(ctx context.Context, emit jobs.Emit) batchAnswer {
		return s.runBatch(ctx, env, req, emit)
	}
	if wantsJSON(c) {
		return writeJSON(c, http.StatusOK, run(c.Request.Context(), func(string, any) {}))
	}
	return s.runJob(c, func(ctx context.Context, emit jobs.Emit) (string, any, bool) {
		out := run(ctx, emit)
		return "complete", out, out.Summary.Failed == out.Summary.Total
	})
}

// runBatch applies req to each item, three at a time, emitting the
// reference's start, progress and complete events.
func (s *Server) runBatch(ctx context.Context, env store.Environment, req batchRequest, emit jobs.Emit) batchAnswer {
	total := len(req.Items)
	out := batchAnswer{Type: "complete", Summary: batchSummary{Total: total}, Results: make([]batchItemResult, total)}
	emit("start", map[string]any{"type": "start", "total": total})
	var mu sync.Mutex
	var g errgroup.Group
	g.SetLimit(3)
	for i, it := range req.Items {
		g.Go(func() error {
			progress := func(status string, r *batchItemResult) {
				ev := map[string]any{"type": "progress", "id": it.ID, "name": it.Name, "status": status,
					"current": i + 1, "total": total}
				if r != nil && r.Error != "" {
					ev["error"] = r.Error
				}
				emit("progress", ev)
			}
			progress("processing", nil)
			r := batchItemResult{ID: it.ID, Name: it.Name, Status: "success"}
			if err := s.batchOne(ctx, env, req, it); err != nil {
				_, body := errorResponse(err)
				r.Status, r.Error, r.Details = "error", body.Error, body.Details
			}
			mu.Lock()
			out.Results[i] = r
			if r.Status == "success" {
				out.Summary.Success++
			} else {
				out.Summary.Failed++
			}
			mu.Unlock()
			progress(r.Status, &r)
			return nil
		})
	}
	_ = g.Wait()
	if req.Operation == "remove" && (req.EntityType == "containers" || req.EntityType == "stacks") && s.schedules != nil {
		s.schedules.Changed(ctx) // auto-updates and git schedules went with them
	}
	return out
}

// batchOne applies the batch's operation to one item.
func (s *Server) batchOne(ctx context.Context, env store.Environment, req batchRequest, it batchItem) error {
	switch req.EntityType {
	case "containers":
		if req.Operation == "remove" {
			return s.containers.Remove(ctx, env, it.ID, req.force(true))
		}
		return s.containers.Do(ctx, env, it.ID, containers.Action(req.Operation))
	case "images":
		_, err := s.images.Remove(ctx, env, it.ID, req.force(false))
		return err
	case "volumes":
		return s.volumeService().Remove(ctx, env, it.ID, req.force(false))
	case "networks":
		return s.networkService().Remove(ctx, env, it.ID)
	case "stacks":
		if req.Operation == "remove" {
			// force removes a running stack with its named volumes
			// (stacks.Service.Delete).
			return s.stacks.Delete(ctx, env, it.ID, req.force(false))
		}
		return s.stacks.Run(ctx, env, it.ID, stacks.Action(req.Operation), nil)
	}
	return fault.Invalidf("Invalid entity type: %s", req.EntityType)
}
