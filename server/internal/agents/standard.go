package agents

import (
	"bytes"
	"context"
	"crypto/sha256"
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

// standardConns caches one gRPC connection per saved standard agent,
// rebuilt when the environment's connection settings change. Unsaved settings
// (environment id 0, a connection test before saving) are never cached: each
// gets a connection of its own, closed with its operation.
type standardConns struct {
	mu    sync.Mutex
	conns map[int64]*standardConn
}

type standardConn struct {
	key [sha256.Size]byte // of the settings the connection was built from
	cc  *grpc.ClientConn
}

// settingsKey digests the connection settings of a standard agent, so a
// change of any of them (not only of the environment's update time) rebuilds
// the cached connection.
func settingsKey(env engine.Endpoint) [sha256.Size]byte {
	h := sha256.New()
	for _, f := range []string{env.Host, strconv.Itoa(env.Port), env.AgentToken, env.TLSCA, env.TLSCert, env.TLSKey,
		strconv.FormatBool(env.TLSSkipVerify)} {
		h.Write([]byte(f))
		h.Write([]byte{0})
	}
	var k [sha256.Size]byte
	copy(k[:], h.Sum(nil))
	return k
}

// get returns the connection to env's agent and whether the caller owns it
// (must close it after its operation: unsaved settings).
func (c *standardConns) get(env engine.Endpoint) (*grpc.ClientConn, bool, error) {
	if env.ID == 0 {
		cc, err := dialStandard(env)
		return cc, true, err
	}
	key := settingsKey(env)
	c.mu.Lock()
	defer c.mu.Unlock()
	if sc, ok := c.conns[env.ID]; ok && sc.key == key {
		return sc.cc, false, nil
	}
	cc, err := dialStandard(env)
	if err != nil {
		return nil, false, err
	}
	if old, ok := c.conns[env.ID]; ok {
		go old.cc.Close()
	}
	c.conns[env.ID] = &standardConn{key: key, cc: cc}
	return cc, false, nil
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
	cc, owned, err := s.standard.get(env)
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithCancel(ctx)
	if owned {
		stop := cancel
		cancel = func() { stop(); cc.Close() }
	}
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
