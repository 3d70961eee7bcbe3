package agents

import (
	"context"
	"slices"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/berth-dev/berth/server/internal/hawser"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/agentpb"
)

// The status of an edge agent another replica holds (docs/scale.md): its
// lease says who it is and when it connected, not when it was last heard
// from (writing every heartbeat to the database would cost hundreds of
// writes a second at fleet size). A replica showing the status asks the
// holder, over its ReplicaService, once per holder for every agent shown,
// within heldWait; a holder that does not answer by then leaves the lease's
// figures: last seen is the agent's connection time.

// heldWait bounds the question to each holder: a status read (the
// environments list) waits no longer for a holder that is stopped or cut
// off.
const heldWait = time.Second

// maxHeldAsked is how many environments one AgentStatus call may name: its
// answer stays well below gRPC's 4 MB message limit (host names included).
const maxHeldAsked = 5000

// held asks the replicas holding envIDs' edge agents (berth-agents and
// Hawser agents, as of the last reconcile) what they know of them: each
// holder once, all at once, within heldWait. The agents of holders that
// did not answer, and of environments no other replica holds, are left out.
func (r *relay) held(ctx context.Context, envIDs []int64) map[int64]*agentpb.HeldAgentStatus {
	byHolder := map[string][]int64{}
	holders := map[string]store.Replica{}
	for _, id := range envIDs {
		if l, ok := r.remoteLease(id); ok {
			byHolder[l.ReplicaID] = append(byHolder[l.ReplicaID], id)
			holders[l.ReplicaID] = l.Holder
		}
	}
	out := make(map[int64]*agentpb.HeldAgentStatus, len(envIDs))
	if len(byHolder) == 0 {
		return out
	}
	ctx, cancel := context.WithTimeout(ctx, heldWait)
	defer cancel()
	var mu sync.Mutex
	var wg sync.WaitGroup
	for id, ids := range byHolder {
		wg.Go(func() {
			answer, err := r.askHeld(ctx, holders[id], ids)
			switch {
			case status.Code(err) == codes.Unimplemented:
				// A replica of an earlier release (during an upgrade).
				r.s.log.Debug("the replica holding edge agents does not answer their status: their leases' figures are shown",
					"replica", id, "agents", len(ids), "err", err)
				return
			case err != nil:
				r.s.log.Warn("the replica holding edge agents did not answer their status: their leases' figures are shown",
					"replica", id, "agents", len(ids), "err", err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for _, a := range answer {
				out[a.GetEnvironmentId()] = a
			}
		})
	}
	wg.Wait()
	return out
}

// askHeld asks one holder about ids (maxHeldAsked a call).
func (r *relay) askHeld(ctx context.Context, holder store.Replica, ids []int64) ([]*agentpb.HeldAgentStatus, error) {
	cc, err := r.conn(holder)
	if err != nil {
		return nil, err
	}
	var out []*agentpb.HeldAgentStatus
	for chunk := range slices.Chunk(ids, maxHeldAsked) {
		res, err := agentpb.NewReplicaServiceClient(cc).AgentStatus(ctx, &agentpb.AgentStatusRequest{EnvironmentIds: chunk})
		if err != nil {
			return nil, err
		}
		out = append(out, res.GetAgents()...)
	}
	return out, nil
}

// AgentStatus answers what this replica knows of the edge agents connected
// to it among those asked.
func (rs *replicaServer) AgentStatus(ctx context.Context, req *agentpb.AgentStatusRequest) (*agentpb.AgentStatusResponse, error) {
	s := rs.s
	if s.relay == nil || !s.relay.reg.ValidToken(bearer(ctx)) {
		return nil, status.Error(codes.Unauthenticated, "invalid replica token")
	}
	ids := req.GetEnvironmentIds()
	if len(ids) > maxHeldAsked {
		return nil, status.Errorf(codes.InvalidArgument, "at most %d environments may be asked at once", maxHeldAsked)
	}
	out := &agentpb.AgentStatusResponse{}
	for _, id := range ids {
		if c := s.edge.get(id); c != nil && c.ctx.Err() == nil {
			out.Agents = append(out.Agents, &agentpb.HeldAgentStatus{EnvironmentId: id, LastSeenUnixNano: c.lastSeen.Load()})
			continue
		}
		if s.hawser == nil {
			continue
		}
		if h, ok := s.hawser.Held(id); ok {
			out.Agents = append(out.Agents, &agentpb.HeldAgentStatus{EnvironmentId: id,
				LastSeenUnixNano: h.LastHeartbeat.UnixNano(), DockerVersion: h.DockerVersion, Hostname: h.Hostname,
				ContainerEvents: int64(h.ContainerEvents)})
		}
	}
	return out, nil
}

// HawserHeld asks the replicas holding envIDs' Hawser agents what they know
// of them (hawser.Replicas): the agents of holders that did not answer
// within heldWait are left out.
func (s *Service) HawserHeld(ctx context.Context, envIDs []int64) map[int64]hawser.Held {
	out := map[int64]hawser.Held{}
	if s.relay == nil {
		return out
	}
	for id, a := range s.relay.held(ctx, envIDs) {
		out[id] = hawser.Held{LastHeartbeat: time.Unix(0, a.GetLastSeenUnixNano()).UTC(),
			DockerVersion: a.GetDockerVersion(), Hostname: a.GetHostname(), ContainerEvents: int(a.GetContainerEvents())}
	}
	return out
}
