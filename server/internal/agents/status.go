package agents

import (
	"context"
	"errors"
	"time"

	"github.com/berth-dev/berth/shared/engine"
)

// liveStatus is what Berth saw of an environment's agent lately.
type liveStatus struct {
	lastOK      time.Time // standard: the last operation that could be opened
	failing     bool      // standard: the last attempt failed
	lastError   string
	lastErrorAt time.Time
}

func (s *Service) setStatus(envID int64, fn func(*liveStatus)) {
	s.statusMu.Lock()
	defer s.statusMu.Unlock()
	st := s.statuses[envID]
	if st == nil {
		st = &liveStatus{}
		s.statuses[envID] = st
	}
	fn(st)
}

// standardResult records whether an operation to a standard agent could be opened.
func (s *Service) standardResult(envID int64, err error) {
	now := s.now()
	s.setStatus(envID, func(st *liveStatus) {
		if err == nil {
			st.lastOK, st.failing = now, false
			return
		}
		if errors.Is(err, errShutdown) {
			return
		}
		st.failing, st.lastError, st.lastErrorAt = true, err.Error(), now
	})
}

// errShutdown marks failures caused by Berth itself stopping.
var errShutdown = errors.New("berth is shutting down")

// Status is the live state of an environment's agent.
type Status struct {
	// Connected: an edge agent holds its connection to Berth; a standard
	// agent answered the last time Berth opened an operation.
	Connected      bool       `json:"connected"`
	ConnectedSince *time.Time `json:"connectedSince"`
	LastSeen       *time.Time `json:"lastSeen"`
	RemoteAddress  *string    `json:"remoteAddress"`
	// LastError: why the agent was last refused or lost (e.g. a second agent
	// presenting the token of a healthy connection), with its time.
	LastError   *string    `json:"lastError"`
	LastErrorAt *time.Time `json:"lastErrorAt"`
	// Agent facts from the live connection (edge); nil otherwise.
	AgentID           *string  `json:"agentId"`
	AgentName         *string  `json:"agentName"`
	AgentVersion      *string  `json:"agentVersion"`
	AgentCapabilities []string `json:"agentCapabilities"`
	// LastSeenFromLease: another replica holds the edge agent and did not
	// answer in time; LastSeen is its lease's connection time
	// (docs/scale.md).
	LastSeenFromLease bool `json:"-"`
}

// Status returns the live state of env's agent (zero for other
// environments); see Statuses.
func (s *Service) Status(ctx context.Context, envID int64, connType string) Status {
	return s.Statuses(ctx, map[int64]string{envID: connType})[envID]
}

// Statuses returns the live state of the agents of envs (environment id →
// connection type; zero for environments of other types). The edge agents
// other replicas hold are asked of their holders, each holder once, for
// when they last heard from them; a holder that does not answer within
// heldWait leaves the lease's figure: last seen is the agent's connection
// time.
func (s *Service) Statuses(ctx context.Context, envs map[int64]string) map[int64]Status {
	out := make(map[int64]Status, len(envs))
	var away []int64
	for envID, connType := range envs {
		st, elsewhere := s.localStatus(envID, connType)
		out[envID] = st
		if elsewhere {
			away = append(away, envID)
		}
	}
	if len(away) == 0 {
		return out
	}
	held := s.relay.held(ctx, away)
	for _, envID := range away {
		st := out[envID]
		if a, ok := held[envID]; ok {
			seen := time.Unix(0, a.GetLastSeenUnixNano()).UTC()
			st.LastSeen = &seen
		} else {
			st.LastSeenFromLease = true
		}
		out[envID] = st
	}
	return out
}

// localStatus is env's agent state as this replica knows it; elsewhere: an
// edge agent another replica holds, whose last seen is its lease's
// connection time.
func (s *Service) localStatus(envID int64, connType string) (out Status, elsewhere bool) {
	// The connection first, then the recorded error: lose records why
	// before it ends the connection, so an ended one is read with its
	// reason.
	var c *edgeConn
	if connType == engine.AgentEdge {
		if c = s.edge.get(envID); c != nil && c.ctx.Err() != nil {
			c = nil
		}
	}
	s.statusMu.Lock()
	if st := s.statuses[envID]; st != nil {
		if st.lastError != "" {
			msg, at := st.lastError, st.lastErrorAt
			out.LastError, out.LastErrorAt = &msg, &at
		}
		if connType == engine.AgentStandard && !st.lastOK.IsZero() {
			ok := st.lastOK
			out.LastSeen = &ok
			out.Connected = !st.failing
		}
	}
	s.statusMu.Unlock()
	if connType != engine.AgentEdge {
		return out, false
	}
	if c == nil {
		if s.relay == nil {
			return out, false
		}
		// Connected through another replica (as of the last reconcile):
		// the lease's facts.
		l, ok := s.relay.remoteLease(envID)
		if !ok {
			return out, false
		}
		since, seen, remote := l.ConnectedAt.UTC(), l.ConnectedAt.UTC(), l.Remote
		id, name, ver := l.AgentID, l.AgentName, l.AgentVersion
		out.Connected, out.ConnectedSince, out.LastSeen, out.RemoteAddress = true, &since, &seen, &remote
		out.AgentID, out.AgentName, out.AgentVersion = &id, &name, &ver
		out.AgentCapabilities = l.Capabilities
		return out, true
	}
	since, seen, remote := c.connectedAt, time.Unix(0, c.lastSeen.Load()).UTC(), c.remote
	id, name, ver := c.hello.GetAgentId(), c.hello.GetAgentName(), c.hello.GetAgentVersion()
	out.Connected, out.ConnectedSince, out.LastSeen, out.RemoteAddress = true, &since, &seen, &remote
	out.AgentID, out.AgentName, out.AgentVersion = &id, &name, &ver
	out.AgentCapabilities = c.hello.GetCapabilities()
	return out, false
}

// Connected returns how many edge agents are connected.
func (s *Service) Connected() int { return s.edge.count() }
