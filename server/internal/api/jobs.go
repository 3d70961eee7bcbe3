package api

import (
	"net/http"
	"strings"

	"github.com/berth-dev/berth/server/internal/jobs"
	"github.com/berth-dev/berth/shared/fault"
)

// wantsJSON reports whether the client asks for a synchronous answer
// (Accept names application/json and not text/event-stream).
func wantsJSON(r *http.Request) bool {
	accept := r.Header.Get("Accept")
	return strings.Contains(accept, "application/json") && !strings.Contains(accept, "text/event-stream")
}

// runJob starts fn as a job of the request's user. It answers {jobId} at
// once, or, when the client wants JSON, waits and answers the final payload.
// Leaving never cancels the job.
func (s *Server) runJob(w http.ResponseWriter, r *http.Request, fn jobs.Func) error {
	j := s.jobs.Start(ownerOf(r), fn)
	if !wantsJSON(r) {
		return writeJSON(w, http.StatusOK, map[string]string{"jobId": j.ID})
	}
	return writeResult(w, r, j)
}

// writeResult waits for j and answers its final payload as JSON. A client
// that leaves stops waiting; the job goes on.
func writeResult(w http.ResponseWriter, r *http.Request, j *jobs.Job) error {
	snap, err := j.Wait(r.Context())
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, err = w.Write(append(snap.Result, '\n'))
	return err
}

var errJobNotFound = fault.New(fault.NotFound, "Job not found")

// getJob answers a job as an event stream (replay, then live, ending after
// the final event) or, without Accept: text/event-stream, as a snapshot
// {id, status, lines, result}. Jobs are their starter's (and admins').
func (s *Server) getJob(w http.ResponseWriter, r *http.Request) error {
	j, ok := s.jobs.Get(r.PathValue("jobId"))
	if !ok {
		return errJobNotFound
	}
	if ident := identityOf(r); ident != nil && !ident.Access.Admin && j.Owner != ident.User.ID {
		return errJobNotFound
	}
	if !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		return writeJSON(w, http.StatusOK, j.Snapshot())
	}
	es := startEvents(w, r)
	defer es.Close()
	return j.Follow(r.Context(), func(e jobs.Event) error { return es.Send(e.Name, e.Data) })
}

// streamJob starts fn as a job of the request's user and answers with the
// job itself as an event stream (the answer of stack deploys), or, when the
// client wants JSON, with the final payload. The job's id is in the
// X-Job-Id header, so that a client that leaves can follow it again at
// /api/jobs/{jobId}; leaving never cancels the job.
func (s *Server) streamJob(w http.ResponseWriter, r *http.Request, fn jobs.Func) error {
	j := s.jobs.Start(ownerOf(r), fn)
	w.Header().Set("X-Job-Id", j.ID)
	if wantsJSON(r) {
		return writeResult(w, r, j)
	}
	es := startEvents(w, r)
	defer es.Close()
	return j.Follow(r.Context(), func(e jobs.Event) error { return es.Send(e.Name, e.Data) })
}

// ownerOf is the user a job started by r belongs to (0: anonymous).
func ownerOf(r *http.Request) int64 {
	if id := identityOf(r); id != nil {
		return id.User.ID
	}
	return 0
}
