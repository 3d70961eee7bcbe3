package agents

import (
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
}

// Status returns the live state of env's agent (zero for other environments).
func (s *Service) Status(envID int64, connType string) Status {
	var out Status
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
		return out
	}
	c := s.edge.get(envID)
	if c == nil || c.ctx.Err() != nil {
		if s.relay != nil {
			// Connected through another replica (as of the last reconcile):
			// the lease's facts; last seen is when that replica last renewed
			// its row (it drops a silent agent's connection and lease).
			if l, ok := s.relay.remoteLease(envID); ok {
				since, seen, remote := l.ConnectedAt, l.Holder.RenewedAt, l.Remote
				id, name, ver := l.AgentID, l.AgentName, l.AgentVersion
				out.Connected, out.ConnectedSince, out.LastSeen, out.RemoteAddress = true, &since, &seen, &remote
				out.AgentID, out.AgentName, out.AgentVersion = &id, &name, &ver
				out.AgentCapabilities = l.Capabilities
			}
		}
		return out
	}
	since, seen, remote := c.connectedAt, time.Unix(0, c.lastSeen.Load()).UTC(), c.remote
	id, name, ver := c.hello.GetAgentId(), c.hello.GetAgentName(), c.hello.GetAgentVersion()
	out.Connected, out.ConnectedSince, out.LastSeen, out.RemoteAddress = true, &since, &seen, &remote
	out.AgentID, out.AgentName, out.AgentVersion = &id, &name, &ver
	out.AgentCapabilities = c.hello.GetCapabilities()
	return out
}

// Connected returns how many edge agents are connected.
func (s *Service) Connected() int { return s.edge.count() }
