// Package standard provides the agent's standard mode: a gRPC server
// (AgentService, over TLS) that Berth calls, one Operate stream per
// operation, every call carrying the agent's token.
package standard

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"log/slog"
	"net"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/berth-dev/berth/agent/internal/ops"
	"github.com/berth-dev/berth/shared/agentpb"
)

// Server is a standard-mode agent.
type Server struct {
	agentpb.UnimplementedAgentServiceServer
	runner *ops.Runner
	token  [sha256.Size]byte // digest of the expected token
	log    *slog.Logger
	grpc   *grpc.Server
}

// New returns a Server that accepts calls carrying token, over TLS with cert.
func New(runner *ops.Runner, token string, cert tls.Certificate, log *slog.Logger) *Server {
	s := &Server{runner: runner, token: sha256.Sum256([]byte(token)), log: log}
	s.grpc = grpc.NewServer(
		grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})),
		grpc.StreamInterceptor(s.authenticate),
		grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			if err := s.check(ctx); err != nil {
				return nil, err
			}
			return h(ctx, req)
		}),
		// Berth pings idle connections; allow it, and find dead ones.
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 5 * time.Second, PermitWithoutStream: true}),
		grpc.KeepaliveParams(keepalive.ServerParameters{Time: 30 * time.Second, Timeout: 10 * time.Second}),
	)
	agentpb.RegisterAgentServiceServer(s.grpc, s)
	return s
}

// Serve accepts connections on ln until Stop.
func (s *Server) Serve(ln net.Listener) error { return s.grpc.Serve(ln) }

// Stop ends the server: new calls are refused, running operations get until
// ctx ends to finish, then are cut.
func (s *Server) Stop(ctx context.Context) {
	done := make(chan struct{})
	go func() {
		s.grpc.GracefulStop()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		s.grpc.Stop()
	}
}

func (s *Server) authenticate(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	if err := s.check(ss.Context()); err != nil {
		return err
	}
	return h(srv, ss)
}

// check compares the call's token with the agent's in constant time (over
// digests, so that the length does not leak either).
func (s *Server) check(ctx context.Context) error {
	md, _ := metadata.FromIncomingContext(ctx)
	var got string
	if v := md.Get("authorization"); len(v) > 0 {
		got = strings.TrimPrefix(v[0], "Bearer ")
	}
	sum := sha256.Sum256([]byte(got))
	if got == "" || subtle.ConstantTimeCompare(sum[:], s.token[:]) != 1 {
		s.log.Warn("refused a call with a wrong or missing token")
		return status.Error(codes.Unauthenticated, "invalid agent token")
	}
	return nil
}

// Operate runs one operation.
func (s *Server) Operate(stream agentpb.AgentService_OperateServer) error {
	return s.runner.Serve(stream.Context(), operateStream{stream})
}

// operateStream adapts an Operate stream to ops.Stream.
type operateStream struct {
	st agentpb.AgentService_OperateServer
}

func (o operateStream) Recv() (*agentpb.OperationInput, error) {
	m, err := o.st.Recv()
	if err != nil {
		return nil, err
	}
	return m.GetInput(), nil
}

func (o operateStream) Send(out *agentpb.OperationOutput) error {
	return o.st.Send(&agentpb.OperateResponse{Output: out})
}
