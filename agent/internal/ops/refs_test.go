package ops

import (
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/berth-dev/berth/shared/agentpb"
)

// oneInput is an operation stream that delivers one input, then ends.
type oneInput struct {
	in   *agentpb.OperationInput
	sent bool
	outs []*agentpb.OperationOutput
}

func (s *oneInput) Recv() (*agentpb.OperationInput, error) {
	if s.sent {
		return nil, io.EOF
	}
	s.sent = true
	return s.in, nil
}

func (s *oneInput) Send(o *agentpb.OperationOutput) error {
	s.outs = append(s.outs, o)
	return nil
}

// countingSocket listens on a unix socket and counts the connections made
// to it (closing each): the engine this agent would call.
func countingSocket(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "engine.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return path, &n
}

func TestTypedOperationsRefuseReferencesThatClimbBeforeCallingTheEngine(t *testing.T) {
	sock, calls := countingSocket(t)
	r := New(Config{Socket: sock, StacksDir: t.TempDir(), Log: slog.New(slog.DiscardHandler)})
	t.Cleanup(r.Close)
	cases := []struct {
		name string
		in   *agentpb.OperationInput
		want string
	}{
		{"pull", &agentpb.OperationInput{Input: &agentpb.OperationInput_Pull{Pull: &agentpb.PullRequest{Reference: "../../containers/web"}}},
			`Invalid image reference "../../containers/web"`},
		{"push", &agentpb.OperationInput{Input: &agentpb.OperationInput_Push{Push: &agentpb.PushRequest{Reference: "a/../../info"}}},
			`Invalid image reference "a/../../info"`},
		{"exec", &agentpb.OperationInput{Input: &agentpb.OperationInput_ExecStart{ExecStart: &agentpb.ExecStart{ExecId: "../containers/web/resize"}}},
			`Invalid exec id "../containers/web/resize"`},
		{"compose", &agentpb.OperationInput{Input: &agentpb.OperationInput_Compose{Compose: &agentpb.ComposeRequest{
			ProjectName: "../etc", Action: agentpb.ComposeAction_COMPOSE_ACTION_DOWN}}},
			`Invalid project name "../etc"`},
	}
	for _, tt := range cases {
		st := &oneInput{in: tt.in}
		if err := r.Serve(t.Context(), st); err != nil {
			t.Fatalf("%s: serve: %v", tt.name, err)
		}
		if len(st.outs) != 1 || st.outs[0].GetError() == nil {
			t.Fatalf("%s: outputs %v, want one error", tt.name, st.outs)
		}
		e := st.outs[0].GetError()
		if e.GetKind() != agentpb.ErrorKind_ERROR_KIND_INVALID || !strings.HasPrefix(e.GetMessage(), tt.want) {
			t.Errorf("%s: error %v %q, want INVALID %q", tt.name, e.GetKind(), e.GetMessage(), tt.want)
		}
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("the engine was called %d times; refused references must not reach it", n)
	}
}
