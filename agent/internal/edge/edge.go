// Package edge provides the agent's edge mode: it dials Berth, holds one
// Connect stream (hello, heartbeats, Berth's requests to open operations),
// opens a Serve stream per operation, and reconnects with jittered
// exponential back-off. Nothing listens on the agent host.
package edge

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"

	"github.com/berth-dev/berth/agent/internal/ops"
	"github.com/berth-dev/berth/shared/agentpb"
)

// Config configures an edge agent.
type Config struct {
	Server             string // Berth's agent address: http://host:port (plaintext) or https://host:port
	Token              string
	CACert             []byte // PEM roots for https; nil uses the system roots
	InsecureSkipVerify bool
	Hello              *agentpb.Hello
	MinBackoff         time.Duration // first reconnect delay bound (default 1 s)
	MaxBackoff         time.Duration // largest reconnect delay bound (default 60 s)
	ShutdownGrace      time.Duration // running operations' time to finish on shutdown (default 10 s)
	Log                *slog.Logger
}

// Agent is an edge agent.
type Agent struct {
	cfg    Config
	runner *ops.Runner
	client agentpb.EdgeServiceClient
	conn   *grpc.ClientConn
	ops    sync.WaitGroup
}

// New returns an edge agent for cfg (it dials nothing yet).
func New(cfg Config, runner *ops.Runner) (*Agent, error) {
	if cfg.MinBackoff <= 0 {
		cfg.MinBackoff = time.Second
	}
	if cfg.MaxBackoff < cfg.MinBackoff {
		cfg.MaxBackoff = 60 * time.Second
	}
	if cfg.ShutdownGrace <= 0 {
		cfg.ShutdownGrace = 10 * time.Second
	}
	target, creds, err := dialTarget(cfg)
	if err != nil {
		return nil, err
	}
	conn, err := grpc.NewClient(target,
		grpc.WithTransportCredentials(creds),
		grpc.WithPerRPCCredentials(token(cfg.Token)),
		// A cut connection is noticed even while no operation runs.
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: 20 * time.Second, Timeout: 10 * time.Second, PermitWithoutStream: true}),
		grpc.WithConnectParams(ConnectParams(cfg.MinBackoff, cfg.MaxBackoff)),
	)
	if err != nil {
		return nil, fmt.Errorf("edge: %w", err)
	}
	return &Agent{cfg: cfg, runner: runner, client: agentpb.NewEdgeServiceClient(conn), conn: conn}, nil
}

// ConnectParams bounds the gRPC channel's own reconnection back-off by the
// agent's: after a failed dial the channel waits up to maxBackoff, not
// gRPC's default 120 s, before it dials again, so that an agent whose
// server (or a replica behind the load balancer) was down comes back within
// its own back-off.
func ConnectParams(minBackoff, maxBackoff time.Duration) grpc.ConnectParams {
	return grpc.ConnectParams{
		Backoff:           backoff.Config{BaseDelay: minBackoff, Multiplier: 1.6, Jitter: 0.2, MaxDelay: maxBackoff},
		MinConnectTimeout: 20 * time.Second,
	}
}

// dialTarget turns the server URL into a gRPC target and its transport credentials.
func dialTarget(cfg Config) (string, credentials.TransportCredentials, error) {
	u, err := url.Parse(cfg.Server)
	if err != nil || u.Host == "" {
		return "", nil, fmt.Errorf("edge: --server must be a URL such as https://berth.example.com:3001, not %q", cfg.Server)
	}
	host, port := u.Hostname(), u.Port()
	switch u.Scheme {
	case "http":
		if port == "" {
			port = "80"
		}
		return net.JoinHostPort(host, port), insecure.NewCredentials(), nil
	case "https":
		if port == "" {
			port = "443"
		}
		tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: host, InsecureSkipVerify: cfg.InsecureSkipVerify} //nolint:gosec // the operator's explicit choice
		if len(cfg.CACert) > 0 {
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(cfg.CACert) {
				return "", nil, errors.New("edge: the CA file holds no PEM certificate")
			}
			tc.RootCAs = pool
		}
		return net.JoinHostPort(host, port), credentials.NewTLS(tc), nil
	}
	return "", nil, fmt.Errorf("edge: --server must start with http:// or https://, not %q", cfg.Server)
}

// token sends the edge token with every call.
type token string

func (t token) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(t)}, nil
}

// RequireTransportSecurity is false: behind a reverse proxy that ends TLS,
// Berth's agent port may speak plaintext gRPC.
func (t token) RequireTransportSecurity() bool { return false }

// Run holds the connection to Berth until ctx ends, reconnecting with
// jittered exponential back-off; then it stops asking for operations, gives
// running ones ShutdownGrace to finish, and closes the connection.
func (a *Agent) Run(ctx context.Context) error {
	opsCtx, cancelOps := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelOps()
	attempt := 0
	for {
		welcomed, err := a.session(ctx, opsCtx)
		if ctx.Err() != nil {
			break
		}
		if welcomed {
			attempt = 0
		}
		delay := Backoff(attempt, a.cfg.MinBackoff, a.cfg.MaxBackoff, rand.Float64)
		attempt++
		a.logEnd(err, delay)
		select {
		case <-time.After(delay):
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
	}
	a.cfg.Log.Info("shutting down: waiting for running operations", "grace", a.cfg.ShutdownGrace)
	done := make(chan struct{})
	go func() { a.ops.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(a.cfg.ShutdownGrace):
		a.cfg.Log.Warn("operations still running after the grace period: cutting them")
		cancelOps()
		<-done
	}
	return a.conn.Close()
}

// logEnd says why a session ended and when the next attempt is.
func (a *Agent) logEnd(err error, delay time.Duration) {
	log := a.cfg.Log.With("retry_in", delay.Round(time.Millisecond))
	switch status.Code(err) {
	case codes.Unauthenticated:
		log.Error("Berth refused the edge token (wrong, or rotated since): get the current install command from Berth", "err", status.Convert(err).Message())
	case codes.AlreadyExists:
		log.Error("another agent is connected to Berth with this token; this one was refused", "err", status.Convert(err).Message())
	case codes.ResourceExhausted:
		log.Warn("Berth asked agents to come back later (too many connecting at once)")
	default:
		log.Warn("not connected to Berth", "err", err)
	}
}

// Backoff is the delay before reconnect attempt n (0-based): uniformly
// random in [0, min(max, lo·2ⁿ)) — "full jitter", so that agents cut off
// together do not come back together — but never below lo/10.
func Backoff(n int, lo, hi time.Duration, random func() float64) time.Duration {
	bound := hi
	if n < 30 {
		bound = min(hi, lo<<n)
	}
	return max(time.Duration(random()*float64(bound)), lo/10)
}

// session holds one Connect stream until it ends; welcomed tells whether
// Berth accepted the agent.
func (a *Agent) session(ctx, opsCtx context.Context) (welcomed bool, err error) {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := a.client.Connect(sctx)
	if err != nil {
		return false, err
	}
	if err := stream.Send(&agentpb.ConnectRequest{Message: &agentpb.ConnectRequest_Hello{Hello: a.cfg.Hello}}); err != nil {
		return false, recvErr(stream, err)
	}
	first, err := stream.Recv()
	if err != nil {
		return false, err
	}
	w := first.GetWelcome()
	if w == nil {
		return false, errors.New("berth did not welcome the agent")
	}
	interval := time.Duration(w.GetHeartbeatIntervalMs()) * time.Millisecond
	if interval <= 0 {
		interval = 10 * time.Second
	}
	a.cfg.Log.Info("connected to Berth", "server", a.cfg.Server, "environment", w.GetEnvironmentId(), "heartbeat", interval)

	var lastAck atomic.Int64
	lastAck.Store(time.Now().UnixNano())
	silent := make(chan struct{})
	go func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-sctx.Done():
				return
			case now := <-t.C:
				if now.Sub(time.Unix(0, lastAck.Load())) > 3*interval {
					close(silent)
					cancel()
					return
				}
				if err := stream.Send(&agentpb.ConnectRequest{Message: &agentpb.ConnectRequest_Heartbeat{
					Heartbeat: &agentpb.Heartbeat{SentUnixMs: now.UnixMilli()}}}); err != nil {
					return
				}
			}
		}
	}()
	for {
		msg, err := stream.Recv()
		if err != nil {
			select {
			case <-silent:
				return true, errors.New("berth stopped answering heartbeats")
			default:
			}
			if ctx.Err() != nil {
				return true, nil
			}
			return true, err
		}
		switch m := msg.GetMessage().(type) {
		case *agentpb.ConnectResponse_HeartbeatAck:
			lastAck.Store(time.Now().UnixNano())
		case *agentpb.ConnectResponse_Open:
			lastAck.Store(time.Now().UnixNano())
			a.ops.Add(1)
			go func() {
				defer a.ops.Done()
				a.serve(opsCtx, m.Open.GetOperationId())
			}()
		}
	}
}

// recvErr returns the stream's status when a Send failed because the stream ended.
func recvErr(stream agentpb.EdgeService_ConnectClient, sendErr error) error {
	if _, err := stream.Recv(); err != nil {
		return err
	}
	return sendErr
}

// serve opens the Serve stream of one operation and runs it.
func (a *Agent) serve(ctx context.Context, id string) {
	octx, cancel := context.WithCancel(ctx)
	defer cancel()
	st, err := a.client.Serve(octx)
	if err != nil {
		a.cfg.Log.Warn("cannot open an operation stream", "op", id, "err", err)
		return
	}
	if err := st.Send(&agentpb.ServeRequest{OperationId: id}); err != nil {
		a.cfg.Log.Warn("cannot open an operation stream", "op", id, "err", err)
		return
	}
	s := &serveStream{st: st}
	if err := a.runner.Serve(octx, s); err != nil && octx.Err() == nil {
		a.cfg.Log.Debug("operation ended", "op", id, "err", err)
	}
	// Let Berth end the stream (it does once it has the last output), so
	// that nothing sent is cut off; then cancel.
	_ = st.CloseSend()
	drained := make(chan struct{})
	go func() {
		for {
			if _, err := s.Recv(); err != nil {
				close(drained)
				return
			}
		}
	}()
	select {
	case <-drained:
	case <-time.After(10 * time.Second):
	}
}

// serveStream adapts a Serve stream to ops.Stream. Receives are serialized,
// so that the drain after an operation may follow the operation's own reader.
type serveStream struct {
	st     agentpb.EdgeService_ServeClient
	recvMu sync.Mutex
}

func (s *serveStream) Recv() (*agentpb.OperationInput, error) {
	s.recvMu.Lock()
	defer s.recvMu.Unlock()
	m, err := s.st.Recv()
	if err != nil {
		return nil, err
	}
	return m.GetInput(), nil
}

func (s *serveStream) Send(out *agentpb.OperationOutput) error {
	return s.st.Send(&agentpb.ServeRequest{Output: out})
}
