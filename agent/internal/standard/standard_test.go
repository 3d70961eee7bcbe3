package standard

import (
	"context"
	"crypto/tls"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/berth-dev/berth/agent/internal/ops"
	"github.com/berth-dev/berth/agent/internal/tlscert"
	"github.com/berth-dev/berth/shared/agentpb"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/enginetest"
)

// serve starts a standard agent for the local engine and returns a client
// of it (TLS not verified: the certificate is the test's own).
func serve(t *testing.T, token string) agentpb.AgentServiceClient {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	runner := ops.New(ops.Config{Socket: enginetest.Socket, StacksDir: t.TempDir(), Log: log,
		Agent: engine.AgentInfo{ID: "test-agent", Name: "test", Version: "dev", Capabilities: ops.Capabilities}})
	t.Cleanup(runner.Close)
	cert, _, err := tlscert.LoadOrCreate(filepath.Join(t.TempDir(), "tls"), []string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := New(runner, token, cert, log)
	go srv.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Stop(ctx)
	})
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{InsecureSkipVerify: true}))) //nolint:gosec // the test's own certificate
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return agentpb.NewAgentServiceClient(conn)
}

// info runs the info operation with token.
func info(ctx context.Context, c agentpb.AgentServiceClient, token string) (*agentpb.InfoResponse, error) {
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
	st, err := c.Operate(ctx)
	if err != nil {
		return nil, err
	}
	if err := st.Send(&agentpb.OperateRequest{Input: &agentpb.OperationInput{Input: &agentpb.OperationInput_Info{Info: &agentpb.InfoRequest{}}}}); err != nil {
		if err != io.EOF {
			return nil, err
		}
		// The agent ended the stream before our request went out (a refused
		// token): Send says only io.EOF, the status comes with Recv.
		if _, err := st.Recv(); err != nil {
			return nil, err
		}
		return nil, io.ErrUnexpectedEOF
	}
	var got *agentpb.InfoResponse
	for {
		m, err := st.Recv()
		if err == io.EOF {
			return got, nil
		}
		if err != nil {
			return nil, err
		}
		if i := m.GetOutput().GetInfo(); i != nil {
			got = i
		}
		if e := m.GetOutput().GetError(); e != nil {
			return nil, status.Error(codes.Internal, e.GetMessage())
		}
	}
}

func TestWrongOrMissingTokenIsRefused(t *testing.T) {
	c := serve(t, "the-right-token")
	for _, tok := range []string{"the-wrong-token", "", "the-right-token-and-more"} {
		_, err := info(t.Context(), c, tok)
		if status.Code(err) != codes.Unauthenticated {
			t.Errorf("token %q: err = %v, want Unauthenticated", tok, err)
		}
	}
}

func TestInfoTellsTheAgentAndItsEngine(t *testing.T) {
	enginetest.Require(t)
	c := serve(t, "the-right-token")
	got, err := info(t.Context(), c, "the-right-token")
	if err != nil {
		t.Fatal(err)
	}
	if got.GetAgentId() != "test-agent" || got.GetAgentVersion() != "dev" || len(got.GetCapabilities()) == 0 {
		t.Errorf("agent facts = %v", got)
	}
	if got.GetServerVersion() == "" || got.GetApiVersion() == "" {
		t.Errorf("engine facts missing: %v", got)
	}
}
