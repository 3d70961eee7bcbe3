package agents

import (
	"context"
	"errors"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/berth-dev/berth/shared/agentpb"
)

// Once Berth shuts down, its agents are told to go and none is let in
// again: an agent coming straight back over its open connection would hold
// the graceful stop up until its deadline (and the agents' back-off would
// grow meanwhile: 1,000 agents took 62 s to return after a restart).
func TestShutdownEndsEveryAgentAndLetsNoneIn(t *testing.T) {
	s := &Service{now: time.Now, edge: edgeRegistry{conns: map[int64]*edgeConn{}, pending: map[string]*pendingOp{}}}
	ctx, cancel := context.WithCancelCause(t.Context())
	defer cancel(nil)
	held := &edgeConn{envID: 1, hello: &agentpb.Hello{AgentId: "a"}, ctx: ctx, cancel: cancel}
	s.edge.conns[1] = held

	s.edge.shutdown()
	if cause := context.Cause(held.ctx); cause == nil || cause.Error() != "Berth is shutting down" {
		t.Fatalf("the connected agent's connection ended with %v", cause)
	}
	nctx, ncancel := context.WithCancelCause(t.Context())
	defer ncancel(nil)
	back := &edgeConn{envID: 1, hello: &agentpb.Hello{AgentId: "a"}, ctx: nctx, cancel: ncancel}
	err := s.register(back)
	if status.Code(err) != codes.Unavailable || !errors.Is(err, errClosing) {
		t.Fatalf("an agent coming back during the shutdown: %v; want Unavailable %v", err, errClosing)
	}
	if s.edge.conns[1] != held {
		t.Fatal("the agent coming back was registered")
	}
	// Another reason to end every connection (a replica that lost its
	// database) lets agents in again.
	r := edgeRegistry{conns: map[int64]*edgeConn{}}
	r.disconnectAll("lost the database")
	if r.closing {
		t.Fatal("disconnectAll closed the registry")
	}
}
