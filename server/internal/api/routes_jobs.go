package api

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// jobsRoutes are the routes of batch operations and of cancelling jobs.
// The batch's handler checks the permission of the operation asked on the
// environment; a job is cancelled by its starter or an admin.
func (s *Server) jobsRoutes() []route {
	return []route{
		{"POST", "/api/batch", Authenticated, EnvQuery, "batch.run", false, s.batch},
		{"DELETE", "/api/jobs/{jobId}", Authenticated, NoEnv, "job.cancel", false, s.cancelJob},
	}
}

// jobsOps document the batch and job routes.
var jobsOps = map[string]apiOp{
	"POST /api/batch": {Summary: "One operation on several containers, images, volumes, networks or stacks: a job ({jobId}; " +
		"with Accept: application/json, its result {type: complete, summary, results})",
		Request: batchRequest{}, Response: anyOf{jobStartAnswer{}, batchAnswer{}}},
	"DELETE /api/jobs/{jobId}": {Summary: "Cancel a running job and forget it (its starter or an admin)", Response: jobCancelAnswer{}},
}

// jobCancelAnswer says whether the job was still running when cancelled.
type jobCancelAnswer struct {
	Cancelled bool `json:"cancelled"`
}

// cancelJob cancels a running job (its operation stops at its next check)
// and forgets it; a finished job is forgotten (cancelled false). Another
// user's job is not found, as for GET.
func (s *Server) cancelJob(c *gin.Context) error {
	id := c.Param("jobId")
	j, ok := s.jobs.Get(id)
	if !ok {
		if handled, err := s.forwardJob(c, id); handled {
			return err
		}
		return errJobNotFound
	}
	if ident := identityOf(c); ident != nil && !ident.Access.Admin && j.Owner != ident.User.ID {
		return errJobNotFound
	}
	noteAudit(c, id, "")
	cancelled, ok := s.jobs.Cancel(id)
	if !ok {
		return errJobNotFound
	}
	s.forgetJobOwner(c.Request.Context(), id)
	return writeJSON(c, http.StatusOK, jobCancelAnswer{Cancelled: cancelled})
}
