package api

import (
	"net/http"
	"strings"

	"github.com/berth-dev/berth/internal/fault"
	"github.com/berth-dev/berth/internal/jobs"
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
	var owner int64
	if id := identityOf(r); id != nil {
		owner = id.User.ID
	}
	j := s.jobs.Start(owner, fn)
	if !wantsJSON(r) {
		return writeJSON(w, http.StatusOK, map[string]string{"jobId": j.ID})
	}
	snap, err := j.Wait(r.Context())
	if err != nil {
		return err // the client left; the job goes on
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
