package engine

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/moby/moby/client"
)

// Connection types of an environment.
const (
	Socket        = "socket"
	Direct        = "direct"
	AgentStandard = "agent-standard"
	AgentEdge     = "agent-edge"
)

// DefaultSocket is the default socket path of the local engine.
const DefaultSocket = "/var/run/docker.sock"

// newClient builds (without connecting) the SDK client for env. Berth's own
// transport dials the engine directly: no proxy from the environment, the
// connection timeout of PingTimeout. An agent environment's transport dials
// a raw Engine API pipe through the agent; link is then its agent link.
// raw reads the same engine over the same transport (see rawAPI).
func (m *Manager) newClient(env Endpoint) (cli *client.Client, link *agentLink, hawser *hawserLink, raw *rawAPI, err error) {
	var headers map[string]string
	dialer := &net.Dialer{Timeout: PingTimeout, KeepAlive: 30 * time.Second}
	transport := &http.Transport{
		MaxIdleConnsPerHost: 16,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: PingTimeout,
		// No ResponseHeaderTimeout: streams (logs, events) wait indefinitely;
		// every call carries its own deadline.
	}
	var host, scheme string
	switch env.ConnectionType {
	case "", Socket:
		path := env.SocketPath
		if path == "" {
			path = DefaultSocket
		}
		host, scheme = "unix://"+path, "http"
		transport.DisableCompression = true
		transport.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, "unix", path)
		}
	case Direct:
		if env.Host == "" {
			return nil, nil, nil, nil, fmt.Errorf("%w: host is required for direct connections", ErrInvalid)
		}
		host, scheme = "tcp://"+hostPort(env), "http"
		transport.DialContext = dialer.DialContext
		if env.Protocol == "https" {
			cfg, err := tlsConfig(env)
			if err != nil {
				return nil, nil, nil, nil, err
			}
			transport.TLSClientConfig, scheme = cfg, "https"
		}
	case AgentStandard, AgentEdge:
		if m.agents == nil {
			return nil, nil, nil, nil, unsupported(env.ConnectionType)
		}
		// Every HTTP connection of the client is one pipe operation; the
		// host name is a placeholder the dialer ignores.
		link = &agentLink{agents: m.agents, env: env}
		host, scheme = "tcp://berth-agent:2375", "http"
		transport.DisableCompression = true
		transport.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
			return link.dialEngine(ctx)
		}
	case HawserStandard:
		// The Docker API behind the agent's URL; every request (hijacked
		// exec attaches included) carries the token header.
		if env.Host == "" {
			return nil, nil, nil, nil, fmt.Errorf("%w: host is required for hawser-standard connections", ErrInvalid)
		}
		host, scheme = "tcp://"+hostPort(env), "http"
		transport.DialContext = dialer.DialContext
		if env.Protocol == "https" {
			cfg, err := tlsConfig(env)
			if err != nil {
				return nil, nil, nil, nil, err
			}
			transport.TLSClientConfig, scheme = cfg, "https"
		}
		if env.AgentToken != "" {
			headers = map[string]string{HawserTokenHeader: env.AgentToken}
		}
		hawser = &hawserLink{env: env, http: &http.Client{Transport: transport},
			base: scheme + "://" + hostPort(env)}
	case HawserEdge:
		if m.hawser == nil {
			return nil, nil, nil, nil, unsupported(env.ConnectionType)
		}
		// Every request is tunnelled to the agent as a request frame; the
		// host name is a placeholder.
		rt := m.hawser.Transport(env.ID)
		host, scheme = "tcp://hawser-edge:2375", "http"
		hawser = &hawserLink{env: env, http: &http.Client{Transport: rt}, base: "http://hawser-edge", edges: m.hawser}
		cli, err := client.New(client.WithUserAgent("berth"), client.WithHost(host),
			client.WithHTTPClient(&http.Client{Transport: rt}), client.WithScheme(scheme),
			client.WithHTTPResponseHook(m.writeHook(env.ID)))
		if err != nil {
			return nil, nil, nil, nil, fmt.Errorf("engine: build client: %w", err)
		}
		return cli, nil, hawser, newRawAPI(rt, "http://hawser-edge", nil), nil
	default:
		return nil, nil, nil, nil, fmt.Errorf("%w: unknown connection type %q", ErrInvalid, env.ConnectionType)
	}
	// WithHost configures a default transport; WithHTTPClient then replaces
	// it with ours. The client negotiates the API version on first use, and
	// Manager pings eagerly so that happens at connect time.
	cli, err = client.New(
		client.WithUserAgent("berth"),
		client.WithHost(host),
		client.WithHTTPClient(&http.Client{Transport: transport}),
		client.WithScheme(scheme),
		client.WithHTTPHeaders(headers),
		client.WithHTTPResponseHook(m.writeHook(env.ID)), // see OnWrite
	)
	if err != nil {
		return nil, nil, nil, nil, fmt.Errorf("engine: build client: %w", err)
	}
	// The SDK client works on a copy of transport; the raw reads use
	// transport itself (the same dialer and settings, a pool of their own).
	rawHost := host[strings.Index(host, "://")+3:]
	if strings.HasPrefix(host, "unix://") {
		rawHost = client.DummyHost
	}
	return cli, link, hawser, newRawAPI(transport, scheme+"://"+rawHost, headers), nil
}

// tlsConfig builds the TLS settings of a direct https environment: a custom CA
// (tlsCa) replaces the system roots, a client certificate (tlsCert + tlsKey)
// enables mutual TLS, tlsSkipVerify disables verification.
func tlsConfig(env Endpoint) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: env.TLSSkipVerify} //nolint:gosec // the user's explicit choice
	if env.TLSCA != "" {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM([]byte(env.TLSCA)) {
			return nil, fmt.Errorf("%w: tlsCa holds no PEM certificate", ErrInvalid)
		}
		cfg.RootCAs = pool
	}
	switch {
	case env.TLSCert != "" && env.TLSKey != "":
		pair, err := tls.X509KeyPair([]byte(env.TLSCert), []byte(env.TLSKey))
		if err != nil {
			return nil, fmt.Errorf("%w: tlsCert/tlsKey: %v", ErrInvalid, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	case env.TLSCert != "" || env.TLSKey != "":
		return nil, fmt.Errorf("%w: tlsCert and tlsKey must be given together", ErrInvalid)
	}
	return cfg, nil
}

// hostPort is the host:port of a direct or hawser-standard environment, with
// the connection type's default port when none is set.
func hostPort(env Endpoint) string {
	port := env.Port
	if port == 0 {
		port = 2375
		if env.ConnectionType == HawserStandard {
			port = HawserDefaultPort
		}
	}
	return net.JoinHostPort(env.Host, strconv.Itoa(port))
}
