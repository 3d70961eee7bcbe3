package agents

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/keepalive"

	"github.com/berth-dev/berth/shared/agentpb"
)

// Listener serves EdgeService to edge agents (and, on a replica,
// ReplicaService to the other replicas).
type Listener struct {
	s    *Service
	grpc *grpc.Server
}

// Listen returns the gRPC server edge agents dial; with certFile and keyFile
// it speaks TLS, else plaintext (behind a reverse proxy that ends TLS, or on
// a trusted network).
func (s *Service) Listen(certFile, keyFile string) (*Listener, error) {
	opts := []grpc.ServerOption{
		// Agents ping idle connections every 20 s; a dead one is found by
		// the heartbeat watchdog or these keepalives.
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 5 * time.Second, PermitWithoutStream: true}),
		grpc.KeepaliveParams(keepalive.ServerParameters{Time: 30 * time.Second, Timeout: 10 * time.Second}),
	}
	if certFile != "" {
		pair, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("agent TLS: %w", err)
		}
		opts = append(opts, grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12})))
	}
	g := grpc.NewServer(opts...)
	agentpb.RegisterEdgeServiceServer(g, &edgeServer{s: s})
	if s.relay != nil {
		// The other replicas relay operations on the agents connected here.
		agentpb.RegisterReplicaServiceServer(g, &replicaServer{s: s})
	}
	return &Listener{s: s, grpc: g}, nil
}

// Serve accepts edge agents on ln until Stop.
func (l *Listener) Serve(ln net.Listener) error { return l.grpc.Serve(ln) }

// Stop disconnects every edge agent and lets none in again (they reconnect
// to the next Berth, or another replica), and stops the server, giving
// running operations until ctx ends.
func (l *Listener) Stop(ctx context.Context) {
	l.s.edge.shutdown()
	done := make(chan struct{})
	go func() {
		l.grpc.GracefulStop()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		l.grpc.Stop()
	}
}
