// Package config provides Berth's configuration, read once at start-up from
// environment variables and command-line flags (flags win).
package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Config is the server configuration.
type Config struct {
	Host              string     // HOST: listen address; empty means all interfaces
	Port              int        // PORT: default 3000
	DataDir           string     // DATA_DIR: default ./data
	DatabaseURL       string     // DATABASE_URL: SQLite file in DataDir by default; postgres://… selects PostgreSQL
	EncryptionKey     string     // ENCRYPTION_KEY: 64 hex digits or base64 of 32 bytes; generated into DataDir when empty
	LogLevel          slog.Level // LOG_LEVEL: debug, info, warn, error
	DisableLocalLogin bool       // DISABLE_LOCAL_LOGIN=true
	LocalSocket       string     // DOCKER_SOCKET: socket of the local engine, default /var/run/docker.sock
	GrypePath         string     // GRYPE_PATH: Grype binary (scanner_a); default: "grype" on PATH, else its image on the engine
	TrivyPath         string     // TRIVY_PATH: Trivy binary (scanner_b); default: "trivy" on PATH, else its image
	GrypeDBDir        string     // GRYPE_DB_DIR: Grype's database directory
	TrivyCacheDir     string     // TRIVY_CACHE_DIR: Trivy's cache (database) directory
	ScannerOffline    bool       // SCANNER_OFFLINE=true: never update the scanners' databases
	WebDir            string     // WEB_DIR: serve the console from this directory (a `vite build` output) instead of the embedded one
	// DOCKER_HUB_INDEX_URL: where the registry browser's Docker Hub searches
	// and tag lists go; default https://hub.docker.com (Docker Hub's API).
	// Another URL is a registry (API v2) standing in for Docker Hub, e.g. a
	// mirror.
	DockerHubIndexURL string
	// BERTH_RESTIC: the restic binary backups run (copied into the backup
	// helper image with its libraries); default "restic" on PATH. Without
	// it the backup routes that need restic answer 503.
	ResticPath string

	// AUTO_UPDATE_GRACE: how long a container recreated by an auto-update must
	// stay up (running, not unhealthy) before the old one is removed; default 30s.
	AutoUpdateGrace time.Duration

	// Edge agents dial this gRPC listener (server/internal/agents).
	AgentHost      string        // AGENT_HOST: listen address of the agent port; default HOST
	AgentPort      int           // AGENT_PORT: default 3001; 0 turns the listener (and edge agents) off
	AgentPortSet   bool          // AGENT_PORT or -agent-port was given: failing to listen on it is fatal
	AgentTLSCert   string        // AGENT_TLS_CERT: PEM certificate file; with AGENT_TLS_KEY the agent port speaks TLS
	AgentTLSKey    string        // AGENT_TLS_KEY: PEM key file
	AgentPublicURL string        // AGENT_PUBLIC_URL: the URL agents dial, for install commands; default from the request and AGENT_PORT
	AgentImage     string        // AGENT_IMAGE: the agent image in docker run install lines; default berth/agent:<version>
	AgentHeartbeat time.Duration // AGENT_HEARTBEAT: how often edge agents send heartbeats, default 10s (dead after three silent ones)

	// REPLICA_HOST: the host name or address the other Berth replicas of a
	// multi-replica install reach this one at (its PORT for HTTP, its
	// AGENT_PORT for the internal relay). Set on every replica of an install
	// whose replicas share one PostgreSQL database (docs/scale.md); empty: a
	// single Berth, nothing shared between processes.
	ReplicaHost string

	// Trust boundaries (docs/security.md).
	//
	// TRUSTED_PROXIES: comma-separated CIDRs (or single addresses) of reverse
	// proxies whose X-Forwarded-For / Forwarded headers name the client; from
	// any other peer those headers are ignored. Empty: no proxy is trusted.
	TrustedProxies []netip.Prefix
	// EXTERNAL_STACK_ROOTS: comma-separated absolute directories under which
	// stack files may live outside DATA_DIR/stacks (the default of the admin
	// setting "external stack roots"). Empty: none.
	ExternalStackRoots []string
	// OUTBOUND_ALLOW: which private destinations requests Berth makes on a
	// user's behalf (git, registries, webhooks, template URLs, OIDC discovery)
	// may reach by default (the admin setting overrides it): a comma-separated
	// subset of "private" (RFC 1918 / ULA ranges) and "loopback", or "none".
	// Link-local and cloud metadata addresses are always refused. Default
	// "private".
	OutboundAllow []string
}

// AgentAddr is the listen address of the agent port.
func (c Config) AgentAddr() string { return fmt.Sprintf("%s:%d", c.AgentHost, c.AgentPort) }

// Replicated reports whether this Berth is one replica of several.
func (c Config) Replicated() bool { return c.ReplicaHost != "" }

// ReplicaHTTPURL is where the other replicas reach this one's API.
func (c Config) ReplicaHTTPURL() string {
	return "http://" + net.JoinHostPort(c.ReplicaHost, strconv.Itoa(c.Port))
}

// ReplicaRelayAddr is where the other replicas reach this one's relay (the agent port).
func (c Config) ReplicaRelayAddr() string {
	return net.JoinHostPort(c.ReplicaHost, strconv.Itoa(c.AgentPort))
}

// Addr is the listen address.
func (c Config) Addr() string { return fmt.Sprintf("%s:%d", c.Host, c.Port) }

// SQLitePath returns the SQLite file when the database is SQLite, else "".
func (c Config) SQLitePath() string {
	if IsPostgres(c.DatabaseURL) {
		return ""
	}
	return strings.TrimPrefix(strings.TrimPrefix(c.DatabaseURL, "sqlite://"), "file:")
}

// IsPostgres reports whether url selects PostgreSQL.
func IsPostgres(url string) bool {
	return strings.HasPrefix(url, "postgres://") || strings.HasPrefix(url, "postgresql://")
}

// Load reads the configuration from getenv, then from args (flags without the
// program name). Output of -h goes to out.
func Load(args []string, getenv func(string) string, out io.Writer) (Config, error) {
	c := Config{
		Host:           getenv("HOST"),
		Port:           3000,
		DataDir:        "./data",
		DatabaseURL:    getenv("DATABASE_URL"),
		LocalSocket:    "/var/run/docker.sock",
		AgentPort:      3001,
		AgentHeartbeat: 10 * time.Second,
	}
	if v := getenv("PORT"); v != "" {
		p, err := strconv.Atoi(v)
		if err != nil {
			return Config{}, fmt.Errorf("PORT: %q is not a number", v)
		}
		c.Port = p
	}
	if v := getenv("DATA_DIR"); v != "" {
		c.DataDir = v
	}
	if v := getenv("DOCKER_SOCKET"); v != "" {
		c.LocalSocket = v
	}
	c.EncryptionKey = getenv("ENCRYPTION_KEY")
	c.DisableLocalLogin = getenv("DISABLE_LOCAL_LOGIN") == "true"
	c.GrypePath, c.TrivyPath = getenv("GRYPE_PATH"), getenv("TRIVY_PATH")
	c.GrypeDBDir, c.TrivyCacheDir = getenv("GRYPE_DB_DIR"), getenv("TRIVY_CACHE_DIR")
	c.ScannerOffline = getenv("SCANNER_OFFLINE") == "true"
	c.WebDir = getenv("WEB_DIR")
	c.ResticPath = getenv("BERTH_RESTIC")
	if v := strings.TrimSpace(getenv("DOCKER_HUB_INDEX_URL")); v != "" {
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return Config{}, fmt.Errorf("DOCKER_HUB_INDEX_URL: %q is not an http(s) URL", v)
		}
		c.DockerHubIndexURL = v
	}
	level := getenv("LOG_LEVEL")
	c.AgentHost = getenv("AGENT_HOST")
	if v := getenv("AGENT_PORT"); v != "" {
		p, err := strconv.Atoi(v)
		if err != nil {
			return Config{}, fmt.Errorf("AGENT_PORT: %q is not a number", v)
		}
		c.AgentPort, c.AgentPortSet = p, true
	}
	c.AgentTLSCert, c.AgentTLSKey = getenv("AGENT_TLS_CERT"), getenv("AGENT_TLS_KEY")
	c.AgentPublicURL, c.AgentImage = getenv("AGENT_PUBLIC_URL"), getenv("AGENT_IMAGE")
	if v := getenv("AUTO_UPDATE_GRACE"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return Config{}, fmt.Errorf("AUTO_UPDATE_GRACE: %q is not a positive duration", v)
		}
		c.AutoUpdateGrace = d
	}
	proxies, err := parsePrefixes(getenv("TRUSTED_PROXIES"))
	if err != nil {
		return Config{}, fmt.Errorf("TRUSTED_PROXIES: %w", err)
	}
	c.TrustedProxies = proxies
	roots, err := parseRoots(getenv("EXTERNAL_STACK_ROOTS"))
	if err != nil {
		return Config{}, fmt.Errorf("EXTERNAL_STACK_ROOTS: %w", err)
	}
	c.ExternalStackRoots = roots
	allow, err := parseOutboundAllow(orDefault(getenv("OUTBOUND_ALLOW"), "private"))
	if err != nil {
		return Config{}, fmt.Errorf("OUTBOUND_ALLOW: %w", err)
	}
	c.OutboundAllow = allow
	c.ReplicaHost = strings.TrimSpace(getenv("REPLICA_HOST"))
	if v := getenv("AGENT_HEARTBEAT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return Config{}, fmt.Errorf("AGENT_HEARTBEAT: %w", err)
		}
		c.AgentHeartbeat = d
	}

	fs := flag.NewFlagSet("berth serve", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&c.Host, "host", c.Host, "listen host (HOST)")
	fs.IntVar(&c.Port, "port", c.Port, "listen port (PORT)")
	fs.StringVar(&c.DataDir, "data-dir", c.DataDir, "data directory (DATA_DIR)")
	fs.StringVar(&c.DatabaseURL, "database-url", c.DatabaseURL, "database URL (DATABASE_URL); default: SQLite in the data directory")
	fs.StringVar(&c.LocalSocket, "docker-socket", c.LocalSocket, "local engine socket (DOCKER_SOCKET)")
	fs.StringVar(&c.WebDir, "web-dir", c.WebDir, "serve the web console from this directory instead of the embedded build (WEB_DIR)")
	fs.StringVar(&level, "log-level", level, "log level: debug, info, warn, error (LOG_LEVEL)")
	fs.StringVar(&c.AgentHost, "agent-host", c.AgentHost, "listen host of the edge agents' port (AGENT_HOST); default: -host")
	fs.IntVar(&c.AgentPort, "agent-port", c.AgentPort, "port edge agents dial, gRPC (AGENT_PORT); 0 turns it off")
	fs.StringVar(&c.AgentTLSCert, "agent-tls-cert", c.AgentTLSCert, "TLS certificate file of the agent port (AGENT_TLS_CERT)")
	fs.StringVar(&c.AgentTLSKey, "agent-tls-key", c.AgentTLSKey, "TLS key file of the agent port (AGENT_TLS_KEY)")
	fs.StringVar(&c.AgentPublicURL, "agent-public-url", c.AgentPublicURL, "URL edge agents dial, in install commands (AGENT_PUBLIC_URL)")
	if err := fs.Parse(args); err != nil {
		return Config{}, err
	}
	if fs.NArg() > 0 {
		return Config{}, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "agent-port" {
			c.AgentPortSet = true
		}
	})
	if c.Port <= 0 || c.Port > 65535 {
		return Config{}, fmt.Errorf("PORT: %d is out of range", c.Port)
	}
	if c.DataDir == "" {
		return Config{}, errors.New("DATA_DIR must not be empty")
	}
	if c.AgentPort < 0 || c.AgentPort > 65535 {
		return Config{}, fmt.Errorf("AGENT_PORT: %d is out of range", c.AgentPort)
	}
	if c.AgentPort != 0 && c.AgentPort == c.Port && c.AgentHost == c.Host {
		return Config{}, fmt.Errorf("AGENT_PORT: %d is also the API's PORT", c.AgentPort)
	}
	if (c.AgentTLSCert == "") != (c.AgentTLSKey == "") {
		return Config{}, errors.New("AGENT_TLS_CERT and AGENT_TLS_KEY go together")
	}
	if c.AgentHeartbeat < 100*time.Millisecond {
		return Config{}, fmt.Errorf("AGENT_HEARTBEAT: %v is too short", c.AgentHeartbeat)
	}
	if c.AgentHost == "" {
		c.AgentHost = c.Host
	}
	if err := c.LogLevel.UnmarshalText([]byte(orDefault(level, "info"))); err != nil {
		return Config{}, fmt.Errorf("LOG_LEVEL: %w", err)
	}
	if c.DatabaseURL == "" {
		c.DatabaseURL = filepath.Join(c.DataDir, "berth.db")
	}
	if c.ReplicaHost != "" {
		switch {
		case !IsPostgres(c.DatabaseURL):
			return Config{}, errors.New("REPLICA_HOST: replicas share one PostgreSQL database; DATABASE_URL must be postgres://…")
		case c.AgentPort == 0:
			return Config{}, errors.New("REPLICA_HOST: replicas relay to each other on the agent port; AGENT_PORT must not be 0")
		case strings.ContainsAny(c.ReplicaHost, "/ ") || strings.Contains(c.ReplicaHost, "://"):
			return Config{}, fmt.Errorf("REPLICA_HOST: %q is not a host name or address", c.ReplicaHost)
		}
	}
	return c, nil
}

// splitList splits a comma-separated list, dropping blanks.
func splitList(v string) []string {
	var out []string
	for _, f := range strings.Split(v, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// parsePrefixes parses a comma-separated list of CIDRs or single addresses.
func parsePrefixes(v string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range splitList(v) {
		if !strings.Contains(f, "/") {
			a, err := netip.ParseAddr(f)
			if err != nil {
				return nil, fmt.Errorf("%q is neither a CIDR nor an address", f)
			}
			out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			return nil, fmt.Errorf("%q is neither a CIDR nor an address", f)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// parseRoots parses a comma-separated list of absolute directories.
func parseRoots(v string) ([]string, error) {
	var out []string
	for _, f := range splitList(v) {
		if !filepath.IsAbs(f) {
			return nil, fmt.Errorf("%q is not an absolute path", f)
		}
		out = append(out, filepath.Clean(f))
	}
	return out, nil
}

// parseOutboundAllow parses OUTBOUND_ALLOW: "none" or a subset of
// "private" and "loopback".
func parseOutboundAllow(v string) ([]string, error) {
	list := splitList(v)
	if len(list) == 1 && list[0] == "none" {
		return []string{}, nil
	}
	for _, f := range list {
		if f != "private" && f != "loopback" {
			return nil, fmt.Errorf("%q is not one of none, private, loopback", f)
		}
	}
	return list, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
