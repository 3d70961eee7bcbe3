package api

import (
	"context"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/jobs"
	"github.com/berth-dev/berth/server/internal/policy"
	"github.com/berth-dev/berth/shared/fault"
)

// wantsJSON reports whether the client asks for a synchronous answer
// (Accept names application/json and not text/event-stream).
func wantsJSON(c *gin.Context) bool {
	accept := c.GetHeader("Accept")
	return strings.Contains(accept, "application/json") && !strings.Contains(accept, "text/event-stream")
}

// runJob starts fn as a job of the request's user. It answers {jobId} at
// once, or, when the client wants JSON, waits and answers the final payload.
// Leaving never cancels the job.
func (s *Server) runJob(c *gin.Context, fn jobs.Func) error {
	j := s.startJob(c, fn)
	if !wantsJSON(c) {
		return writeJSON(c, http.StatusOK, map[string]string{"jobId": j.ID})
	}
	return writeResult(c, j)
}

// writeResult waits for j and answers its final payload as JSON. A client
// that leaves stops waiting; the job goes on.
func writeResult(c *gin.Context, j *jobs.Job) error {
	snap, err := j.Wait(c.Request.Context())
	if err != nil {
		return err
	}
	c.Header("Content-Type", "application/json")
	c.Status(http.StatusOK)
	_, err = c.Writer.Write(append(snap.Result, '\n'))
	return err
}

var errJobNotFound = fault.New(fault.NotFound, "Job not found")

// getJob answers a job as an event stream (replay, then live, ending after
// the final event) or, without Accept: text/event-stream, as a snapshot
// {id, status, lines, result}. Jobs are their starter's (and admins').
func (s *Server) getJob(c *gin.Context) error {
	j, ok := s.jobs.Get(c.Param("jobId"))
	if !ok {
		if handled, err := s.forwardJob(c, c.Param("jobId")); handled {
			return err
		}
		return errJobNotFound
	}
	if ident := identityOf(c); ident != nil && !ident.Access.Admin && j.Owner != ident.User.ID {
		return errJobNotFound
	}
	if !strings.Contains(c.GetHeader("Accept"), "text/event-stream") {
		return writeJSON(c, http.StatusOK, j.Snapshot())
	}
	es := startEvents(c)
	defer es.Close()
	return j.Follow(c.Request.Context(), func(e jobs.Event) error { return es.Send(e.Name, e.Data) })
}

// streamJob starts fn as a job of the request's user and answers with the
// job itself as an event stream (the answer of stack deploys), or, when the
// client wants JSON, with the final payload. The job's id is in the
// X-Job-Id header, so that a client that leaves can follow it again at
// /api/jobs/{jobId}; leaving never cancels the job.
func (s *Server) streamJob(c *gin.Context, fn jobs.Func) error {
	j := s.startJob(c, fn)
	c.Header("X-Job-Id", j.ID)
	if wantsJSON(c) {
		return writeResult(c, j)
	}
	es := startEvents(c)
	defer es.Close()
	return j.Follow(c.Request.Context(), func(e jobs.Event) error { return es.Send(e.Name, e.Data) })
}

// startJob starts fn as a job of the request's user, acting as the
// request's actor (the security settings of package policy apply to it as
// they would to the request). When replicated, the job is recorded as this
// replica's before its id is answered, so that a follow-up reaching
// another replica is forwarded here.
func (s *Server) startJob(c *gin.Context, fn jobs.Func) *jobs.Job {
	actor := policy.ActorFrom(c.Request.Context())
	j := s.jobs.Start(ownerOf(c), func(ctx context.Context, emit jobs.Emit) (string, any, bool) {
		return fn(policy.WithActor(ctx, actor), emit)
	})
	s.recordJobOwner(c.Request.Context(), j.ID)
	return j
}

// ownerOf is the user a job started by the request belongs to (0: anonymous).
func ownerOf(c *gin.Context) int64 {
	if id := identityOf(c); id != nil {
		return id.User.ID
	}
	return 0
}
