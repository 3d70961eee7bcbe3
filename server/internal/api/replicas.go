package api

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/replica"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// Follow-up requests across replicas (docs/scale.md): what a request
// started lives in the memory of the replica that served it (a job, a
// pending OIDC sign-in). A later request about it that the load balancer
// gives to another replica is forwarded, whole, to that replica
// (replica.Forward), which answers it as if it had received it. A request
// another replica forwarded (replica.Relayed) is never forwarded again.

// errJobReplicaGone answers a follow-up of a job whose replica stopped: the
// job went with it.
var errJobReplicaGone = fault.New(fault.NotFound, "Job not found: the Berth replica that ran it has stopped")

// errOIDCReplicaGone fails an OIDC callback whose sign-in was begun by a
// replica that stopped: the pending sign-in went with it.
var errOIDCReplicaGone = fault.New(fault.Unauthorized, "The sign-in was begun by a Berth replica that has stopped: sign in again")

// relayed reports whether r was forwarded by another replica of this
// install (it carries the replicas' relay token).
func (s *Server) relayed(r *http.Request) bool {
	return replica.Relayed(s.replicas, r)
}

// recordJobOwner notes, for the other replicas, that this one runs job id
// (only when replicated). A failure is logged: the job runs and is followed
// through this replica as on a single Berth.
func (s *Server) recordJobOwner(ctx context.Context, id string) {
	if s.replicas == nil {
		return
	}
	at := s.now()
	if err := s.store.AddJobOwner(context.WithoutCancel(ctx), id, s.replicas.Self(), at, at.Add(-s.jobs.Lifetime())); err != nil {
		s.log.Warn("job owner not recorded: the job is followed through this replica only", "job", id, "err", err)
	}
}

// forgetJobOwner deletes the job_owners row of a job forgotten here.
func (s *Server) forgetJobOwner(ctx context.Context, id string) {
	if s.replicas == nil {
		return
	}
	if err := s.store.DeleteJobOwner(context.WithoutCancel(ctx), id); err != nil {
		s.log.Warn("job owner not deleted", "job", id, "err", err)
	}
}

// forwardJob sends a request about job id, which this replica does not
// hold, to the replica that runs it. handled is false when there is no
// such replica (single Berth, a relayed request, an unknown job, or one
// recorded as this replica's): the caller answers as for an unknown job.
// A job whose replica is no longer live is errJobReplicaGone.
func (s *Server) forwardJob(c *gin.Context, id string) (handled bool, err error) {
	if s.replicas == nil || s.relayed(c.Request) {
		return false, nil
	}
	ctx := c.Request.Context()
	owner, err := s.store.JobOwner(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return false, nil
	case err != nil:
		return true, err
	case owner == s.replicas.Self():
		return false, nil
	}
	return true, s.forwardTo(c, owner, errJobReplicaGone)
}

// forwardTo forwards the request to replica id, or answers gone when that
// replica is not live.
func (s *Server) forwardTo(c *gin.Context, id string, gone error) error {
	target, live, err := s.replicas.HTTPURLOf(c.Request.Context(), id)
	if err != nil {
		return err
	}
	if !live || target == "" {
		return gone
	}
	quietAudit(c) // the replica that does the work writes the audit line
	r := c.Request.Clone(c.Request.Context())
	// The client as this replica's trusted-proxy rules see it: the replica
	// receiving the request believes these, as it knows a replica wrote them.
	r.Header.Set("X-Forwarded-For", s.clientIP(c.Request))
	proto := "http"
	if s.isHTTPS(c.Request) {
		proto = "https"
	}
	r.Header.Set("X-Forwarded-Proto", proto)
	s.log.Debug("request forwarded to another replica", "method", r.Method, "path", r.URL.Path, "replica", id)
	replica.Forward(c.Writer, r, target, s.replicas.Token())
	return nil
}

// relayedClient is the client address and scheme a forwarding replica
// named (X-Forwarded-For, X-Forwarded-Proto, one value each), for a request
// carrying the relay token; ok is false for any other request.
func (s *Server) relayedClient(r *http.Request) (ip, proto string, ok bool) {
	if !s.relayed(r) {
		return "", "", false
	}
	hops := forwardedHops(r.Header)
	if len(hops) > 0 {
		if a, ok := parseHop(hops[len(hops)-1]); ok {
			ip = a.String()
		}
	}
	first, _, _ := strings.Cut(r.Header.Get("X-Forwarded-Proto"), ",")
	return ip, strings.ToLower(strings.TrimSpace(first)), true
}
