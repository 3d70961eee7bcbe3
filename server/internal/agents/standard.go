package agents

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/keepalive"

	"github.com/berth-dev/berth/shared/agentpb"
	"github.com/berth-dev/berth/shared/engine"
)

// standardConns caches one gRPC connection per standard agent, rebuilt when
// the environment's settings change.
type standardConns struct {
	mu    sync.Mutex
	conns map[int64]*standardConn
}

type standardConn struct {
	stamp time.Time
	cc    *grpc.ClientConn
}

func (c *standardConns) get(env engine.Endpoint) (*grpc.ClientConn, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if sc, ok := c.conns[env.ID]; ok && sc.stamp.Equal(env.UpdatedAt) {
		return sc.cc, nil
	}
	cc, err := dialStandard(env)
	if err != nil {
		return nil, err
	}
	if old, ok := c.conns[env.ID]; ok {
		go old.cc.Close()
	}
	c.conns[env.ID] = &standardConn{stamp: env.UpdatedAt, cc: cc}
	return cc, nil
}

func (c *standardConns) forget(envID int64) {
	c.mu.Lock()
	sc, ok := c.conns[envID]
	delete(c.conns, envID)
	c.mu.Unlock()
	if ok {
		sc.cc.Close()
	}
}

func (c *standardConns) closeAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, sc := range c.conns {
		sc.cc.Close()
		delete(c.conns, id)
	}
}

// dialStandard builds (without connecting) the connection to a standard
// agent at the environment's host and port. A standard agent always speaks
// TLS: tlsCa verifies it (a pasted self-signed agent certificate is pinned
// as is), tlsSkipVerify turns verification off, tlsCert/tlsKey add a client
// certificate; the token travels in every call's metadata.
func dialStandard(env engine.Endpoint) (*grpc.ClientConn, error) {
	if env.Host == "" {
		return nil, fmt.Errorf("%w: host is required for agent-standard connections", engine.ErrInvalid)
	}
	cfg, err := standardTLS(env)
	if err != nil {
		return nil, err
	}
	port := env.Port
	if port == 0 {
		port = 2375
	}
	cc, err := grpc.NewClient(net.JoinHostPort(env.Host, strconv.Itoa(port)),
		grpc.WithTransportCredentials(credentials.NewTLS(cfg)),
		grpc.WithPerRPCCredentials(agentToken(env.AgentToken)),
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: 30 * time.Second, Timeout: 10 * time.Second}),
	)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", engine.ErrInvalid, err)
	}
	return cc, nil
}

// standardTLS is the TLS configuration Berth dials a standard agent with.
func standardTLS(env engine.Endpoint) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: env.Host, InsecureSkipVerify: env.TLSSkipVerify} //nolint:gosec // the user's explicit choice
	if env.TLSCert != "" || env.TLSKey != "" {
		pair, err := tls.X509KeyPair([]byte(env.TLSCert), []byte(env.TLSKey))
		if err != nil {
			return nil, fmt.Errorf("%w: tlsCert/tlsKey: %v", engine.ErrInvalid, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	if env.TLSCA == "" || env.TLSSkipVerify {
		return cfg, nil
	}
	pool := x509.NewCertPool()
	var pinned [][]byte
	rest := []byte(env.TLSCA)
	for {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if c, err := x509.ParseCertificate(b.Bytes); err == nil {
			pool.AddCert(c)
			pinned = append(pinned, c.Raw)
		}
	}
	if len(pinned) == 0 {
		return nil, fmt.Errorf("%w: tlsCa holds no PEM certificate", engine.ErrInvalid)
	}
	// The agent's certificate itself pasted as tlsCa is trusted whatever
	// name Berth dials it by; anything else must chain to tlsCa and match
	// the host.
	cfg.InsecureSkipVerify = true //nolint:gosec // verified below
	cfg.VerifyPeerCertificate = func(raw [][]byte, _ [][]*x509.Certificate) error {
		if len(raw) == 0 {
			return errors.New("the agent sent no certificate")
		}
		for _, p := range pinned {
			if bytes.Equal(raw[0], p) {
				return nil
			}
		}
		leaf, err := x509.ParseCertificate(raw[0])
		if err != nil {
			return err
		}
		inter := x509.NewCertPool()
		for _, r := range raw[1:] {
			if c, err := x509.ParseCertificate(r); err == nil {
				inter.AddCert(c)
			}
		}
		_, err = leaf.Verify(x509.VerifyOptions{Roots: pool, Intermediates: inter, DNSName: env.Host})
		return err
	}
	return cfg, nil
}

// agentToken sends a standard agent's token with every call.
type agentToken string

func (t agentToken) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(t)}, nil
}

func (agentToken) RequireTransportSecurity() bool { return true }

// operateStandard opens an Operate call to env's standard agent.
func (s *Service) operateStandard(ctx context.Context, env engine.Endpoint) (engine.AgentStream, error) {
	cc, err := s.standard.get(env)
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithCancel(ctx)
	st, err := agentpb.NewAgentServiceClient(cc).Operate(sctx)
	if err != nil {
		cancel()
		return nil, err
	}
	return &operateStream{st: st, cancel: cancel}, nil
}

// operateStream is Berth's side of a standard operation (engine.AgentStream).
type operateStream struct {
	st     agentpb.AgentService_OperateClient
	cancel context.CancelFunc
}

func (o *operateStream) Send(in *agentpb.OperationInput) error {
	return o.st.Send(&agentpb.OperateRequest{Input: in})
}

func (o *operateStream) Recv() (*agentpb.OperationOutput, error) {
	for {
		m, err := o.st.Recv()
		if err != nil {
			return nil, err
		}
		if out := m.GetOutput(); out != nil {
			return out, nil
		}
	}
}

func (o *operateStream) Close() { o.cancel() }
