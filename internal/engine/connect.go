package engine

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/moby/moby/client"

	"github.com/berth-dev/berth/internal/store"
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

// newClient builds (without connecting) the SDK client for env.
func newClient(env store.Environment) (*client.Client, error) {
	transport := &http.Transport{
		DialContext:           (&net.Dialer{Timeout: PingTimeout, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   PingTimeout,
		ResponseHeaderTimeout: 0, // streams (logs, events) wait indefinitely; calls carry deadlines
	}
	opts := []client.Opt{client.WithUserAgent("berth")} // the client negotiates the API version on first use; Manager pings eagerly
	switch env.ConnectionType {
	case "", Socket:
		path := env.SocketPath
		if path == "" {
			path = DefaultSocket
		}
		opts = append(opts, client.WithHTTPClient(&http.Client{Transport: transport}), client.WithHost("unix://"+path))
	case Direct:
		if env.Host == "" {
			return nil, fmt.Errorf("%w: host is required for direct connections", ErrInvalid)
		}
		port := env.Port
		if port == 0 {
			port = 2375
		}
		scheme := "http"
		if env.Protocol == "https" {
			scheme = "https"
			cfg, err := tlsConfig(env)
			if err != nil {
				return nil, err
			}
			transport.TLSClientConfig = cfg
		}
		opts = append(opts,
			client.WithHTTPClient(&http.Client{Transport: transport}),
			client.WithHost("tcp://"+net.JoinHostPort(env.Host, strconv.Itoa(port))),
			client.WithScheme(scheme))
	case AgentStandard, AgentEdge:
		return nil, unsupported(env.ConnectionType)
	default:
		return nil, fmt.Errorf("%w: unknown connection type %q", ErrInvalid, env.ConnectionType)
	}
	cli, err := client.New(opts...)
	if err != nil {
		return nil, fmt.Errorf("engine: build client: %w", err)
	}
	return cli, nil
}

// tlsConfig builds the TLS settings of a direct https environment: a custom CA
// (tlsCa) replaces the system roots, a client certificate (tlsCert + tlsKey)
// enables mutual TLS, tlsSkipVerify disables verification.
func tlsConfig(env store.Environment) (*tls.Config, error) {
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
