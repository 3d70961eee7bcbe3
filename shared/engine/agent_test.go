package engine

import (
	"context"
	"errors"
	"io"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/berth-dev/berth/shared/agentpb"
)

// endedStream is an operation the agent ended before Berth's first input
// went out: gRPC's Send reports io.EOF, the call's status comes with Recv.
// (A real agent does this only when its answer outruns the first Send.)
type endedStream struct {
	status error
	closed bool
}

func (s *endedStream) Send(*agentpb.OperationInput) error      { return io.EOF }
func (s *endedStream) Recv() (*agentpb.OperationOutput, error) { return nil, s.status }
func (s *endedStream) Close()                                  { s.closed = true }

type endedAgents struct{ st *endedStream }

func (a endedAgents) Operate(context.Context, Endpoint) (AgentStream, error) { return a.st, nil }

func TestOperateTellsWhyTheAgentEndedTheCallBeforeTheFirstInput(t *testing.T) {
	first := &agentpb.OperationInput{Input: &agentpb.OperationInput_Info{Info: &agentpb.InfoRequest{}}}
	refused := &endedStream{status: status.Error(codes.Unauthenticated, "invalid agent token")}
	_, err := (&agentLink{agents: endedAgents{refused}, env: Endpoint{ID: 7}}).operate(t.Context(), first)
	if !errors.Is(err, ErrUnauthorized) || Details(err) != "The agent refused Berth's token: invalid agent token" {
		t.Errorf("refused token = %v (%q), want the agent's refusal", err, Details(err))
	}
	if !refused.closed {
		t.Error("the ended stream was not closed")
	}
	// The same for the engine pipe (every Engine API call through an agent).
	refused = &endedStream{status: status.Error(codes.Unauthenticated, "invalid agent token")}
	if _, err := (&agentLink{agents: endedAgents{refused}, env: Endpoint{ID: 7}}).dialEngine(t.Context()); !errors.Is(err, ErrUnauthorized) {
		t.Errorf("engine pipe with a refused token = %v, want the agent's refusal", err)
	}
	// A stream that ended without a status is a lost connection.
	_, err = (&agentLink{agents: endedAgents{&endedStream{status: io.EOF}}, env: Endpoint{ID: 7}}).operate(t.Context(), first)
	if !errors.Is(err, ErrAgentLost) {
		t.Errorf("ended without a status = %v, want a lost connection", err)
	}
}
