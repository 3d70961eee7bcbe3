package api

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/shared/engine"
)

// envStatusTimeout bounds how long GET …/status waits for the engine: past it
// the engine is busy (it holds the connection but does not answer), which is
// not offline.
const envStatusTimeout = 4 * time.Second

// envStatusAnswer is what the console shows about an environment's engine on
// every screen of it: whether it can be used now, why not, and when it last
// answered.
type envStatusAnswer struct {
	// State is online, offline (the engine or its agent cannot be reached),
	// or busy (reachable, but it did not answer within the deadline).
	State  string `json:"state"`
	Reason string `json:"reason,omitempty"`
	// LastReachable is when the engine last answered (absent: never since Berth started).
	LastReachable *time.Time `json:"lastReachable,omitempty"`
	// RetryAt (offline): Berth does not try the engine again before it.
	RetryAt   *time.Time `json:"retryAt,omitempty"`
	CheckedAt time.Time  `json:"checkedAt"`
}

// environmentStatus serves GET /api/environments/{id}/status: the engine is
// asked (a ping, within envStatusTimeout) unless its breaker is open.
func (s *Server) environmentStatus(c *gin.Context) error {
	env := envOf(c)
	ctx, cancel := context.WithTimeout(c.Request.Context(), envStatusTimeout)
	defer cancel()
	out := envStatusAnswer{State: "online"}
	cl, err := s.engines.Client(ctx, env.Endpoint())
	if err == nil {
		err = cl.Ping(ctx)
	}
	switch {
	case err == nil:
	case errors.Is(err, context.DeadlineExceeded) && c.Request.Context().Err() == nil:
		out.State = "busy"
		out.Reason = "The engine did not answer within 4 s: it is busy, not offline"
	case errors.Is(err, engine.ErrBusy):
		out.State = "busy"
		out.Reason = "The engine accepts connections but did not answer in time: it is busy, not offline"
	case engine.IsOffline(err) || errors.Is(err, engine.ErrAgentAbsent):
		out.State = "offline"
		out.Reason = offlineReason(env.ConnectionType, err)
	default:
		if c.Request.Context().Err() != nil {
			return c.Request.Context().Err()
		}
		// The engine answered with an error of its own: it is there.
	}
	h := s.engines.Health(env.ID)
	if !h.LastOK.IsZero() {
		t := h.LastOK.UTC()
		out.LastReachable = &t
	}
	if out.State == "offline" && h.RetryAt.After(time.Now()) {
		t := h.RetryAt.UTC()
		out.RetryAt = &t
	}
	out.CheckedAt = time.Now().UTC()
	return writeJSON(c, http.StatusOK, out)
}

// offlineReason says in words why an environment cannot be reached.
func offlineReason(connType string, err error) string {
	var off *engine.OfflineError
	cause := err
	if errors.As(err, &off) && off.Cause != nil {
		cause = off.Cause
	}
	if errors.Is(err, engine.ErrAgentAbsent) || connType == engine.AgentEdge || connType == engine.HawserEdge {
		return "The agent is not connected"
	}
	if cause == nil {
		return "The engine cannot be reached"
	}
	return "The engine cannot be reached: " + cause.Error()
}
