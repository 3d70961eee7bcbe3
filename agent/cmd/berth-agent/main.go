// Command berth-agent is Berth's remote agent: it manages the Docker engine
// of the host it runs on for a Berth server, in one of two modes:
//
//	standard: berth-agent --listen :2376 --token T [--tls-cert F --tls-key F]
//	          (Berth connects to the agent; TLS always, self-signed when no
//	          certificate is given)
//	edge:     berth-agent --server https://berth.example.com:3001 --token T
//	          (the agent dials Berth and holds the connection; nothing listens)
//
// Every flag has an environment variable (see -h).
package main

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/berth-dev/berth/agent/internal/edge"
	"github.com/berth-dev/berth/agent/internal/ops"
	"github.com/berth-dev/berth/agent/internal/standard"
	"github.com/berth-dev/berth/agent/internal/tlscert"
	"github.com/berth-dev/berth/shared/agentpb"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/version"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "berth-agent:", err)
		os.Exit(1)
	}
}

// config is the agent's configuration: flags, else environment variables.
type config struct {
	listen, server           string
	token, tokenFile         string
	tlsCert, tlsKey, tlsSANs string
	serverCA                 string
	insecureSkipVerify       bool
	socket, dataDir, name    string
	id                       string
	logLevel                 string
	minBackoff, maxBackoff   time.Duration
	showVersion              bool
}

func parse(args []string, getenv func(string) string, out io.Writer) (config, error) {
	env := func(k, def string) string {
		if v := getenv(k); v != "" {
			return v
		}
		return def
	}
	var c config
	fs := flag.NewFlagSet("berth-agent", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&c.listen, "listen", env("BERTH_AGENT_LISTEN", ""), "standard mode: listen address, e.g. :2376 (BERTH_AGENT_LISTEN)")
	fs.StringVar(&c.server, "server", env("BERTH_SERVER", ""), "edge mode: Berth's agent URL, e.g. https://berth.example.com:3001 (BERTH_SERVER)")
	fs.StringVar(&c.token, "token", env("BERTH_TOKEN", ""), "the agent token (BERTH_TOKEN)")
	fs.StringVar(&c.tokenFile, "token-file", env("BERTH_TOKEN_FILE", ""), "read the token from this file instead (BERTH_TOKEN_FILE)")
	fs.StringVar(&c.tlsCert, "tls-cert", env("BERTH_AGENT_TLS_CERT", ""), "standard mode: TLS certificate file (BERTH_AGENT_TLS_CERT); default: a self-signed one in the data directory")
	fs.StringVar(&c.tlsKey, "tls-key", env("BERTH_AGENT_TLS_KEY", ""), "standard mode: TLS key file (BERTH_AGENT_TLS_KEY)")
	fs.StringVar(&c.tlsSANs, "tls-san", env("BERTH_AGENT_TLS_SAN", ""), "standard mode: extra comma-separated names or addresses of the self-signed certificate (BERTH_AGENT_TLS_SAN)")
	fs.StringVar(&c.serverCA, "server-ca", env("BERTH_SERVER_CA", ""), "edge mode: PEM file of the CA that signed Berth's certificate (BERTH_SERVER_CA); default: the system roots")
	fs.BoolVar(&c.insecureSkipVerify, "insecure-skip-verify", env("BERTH_INSECURE_SKIP_VERIFY", "") == "true", "edge mode: do not verify Berth's certificate (BERTH_INSECURE_SKIP_VERIFY=true)")
	fs.StringVar(&c.socket, "docker-socket", env("DOCKER_SOCKET", engine.DefaultSocket), "the Docker engine's socket (DOCKER_SOCKET)")
	fs.StringVar(&c.dataDir, "data-dir", env("BERTH_AGENT_DATA_DIR", "/var/lib/berth-agent"), "the agent's id and self-signed certificate (BERTH_AGENT_DATA_DIR)")
	fs.StringVar(&c.name, "name", env("BERTH_AGENT_NAME", ""), "the agent's name shown in Berth (BERTH_AGENT_NAME); default: the host name")
	fs.StringVar(&c.id, "id", env("BERTH_AGENT_ID", ""), "the agent's id (BERTH_AGENT_ID); default: generated once into the data directory")
	fs.StringVar(&c.logLevel, "log-level", env("LOG_LEVEL", "info"), "debug, info, warn or error (LOG_LEVEL)")
	fs.DurationVar(&c.minBackoff, "reconnect-min", time.Second, "edge mode: bound of the first reconnect delay")
	fs.DurationVar(&c.maxBackoff, "reconnect-max", time.Minute, "edge mode: largest reconnect delay bound")
	fs.BoolVar(&c.showVersion, "version", false, "print the version and exit")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if c.showVersion {
		return c, nil
	}
	if (c.listen == "") == (c.server == "") {
		return config{}, errors.New("give exactly one of --listen (standard mode) and --server (edge mode)")
	}
	if c.tokenFile != "" {
		b, err := os.ReadFile(c.tokenFile)
		if err != nil {
			return config{}, fmt.Errorf("token file: %w", err)
		}
		c.token = strings.TrimSpace(string(b))
	}
	if c.token == "" {
		return config{}, errors.New("a token is required: --token, --token-file, BERTH_TOKEN or BERTH_TOKEN_FILE")
	}
	if (c.tlsCert == "") != (c.tlsKey == "") {
		return config{}, errors.New("--tls-cert and --tls-key go together")
	}
	if c.name == "" {
		c.name, _ = os.Hostname()
	}
	return c, nil
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	c, err := parse(args, getenv, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if c.showVersion {
		fmt.Fprintln(stdout, "berth-agent", version.Version)
		return nil
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.logLevel)); err != nil {
		return fmt.Errorf("log level: %w", err)
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	id, err := agentID(c.id, c.dataDir, log)
	if err != nil {
		return err
	}
	info := engine.AgentInfo{ID: id, Name: c.name, Version: version.Version, Capabilities: ops.Capabilities}
	runner := ops.New(ops.Config{Socket: c.socket, StacksDir: filepath.Join(c.dataDir, "stacks"), Agent: info, Log: log})
	defer runner.Close()
	if _, _, err := runner.Info(ctx); err != nil {
		log.Warn("the Docker engine does not answer yet; operations fail until it does", "socket", c.socket, "err", err)
	}
	if c.listen != "" {
		return runStandard(ctx, c, runner, stdout, log)
	}
	return runEdge(ctx, c, runner, info, log)
}

func runStandard(ctx context.Context, c config, runner *ops.Runner, stdout io.Writer, log *slog.Logger) error {
	var (
		cert tls.Certificate
		err  error
	)
	if c.tlsCert != "" {
		cert, err = tlscert.Load(c.tlsCert, c.tlsKey)
	} else {
		hosts := []string{c.name, "localhost", "127.0.0.1", "::1"}
		for _, h := range strings.Split(c.tlsSANs, ",") {
			hosts = append(hosts, strings.TrimSpace(h))
		}
		var created bool
		cert, created, err = tlscert.LoadOrCreate(filepath.Join(c.dataDir, "tls"), hosts)
		if err == nil {
			what := "using the self-signed TLS certificate"
			if created {
				what = "generated a self-signed TLS certificate"
			}
			fmt.Fprintf(stdout, "berth-agent: %s %s\nberth-agent: TLS certificate SHA-256 fingerprint: %s\n",
				what, filepath.Join(c.dataDir, "tls", "agent.crt"), tlscert.Fingerprint(cert))
		}
	}
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", c.listen)
	if err != nil {
		return err
	}
	srv := standard.New(runner, c.token, cert, log)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.Info("berth-agent listening (standard mode)", "addr", ln.Addr().String(), "version", version.Version)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	srv.Stop(sctx)
	return nil
}

func runEdge(ctx context.Context, c config, runner *ops.Runner, info engine.AgentInfo, log *slog.Logger) error {
	var ca []byte
	if c.serverCA != "" {
		var err error
		if ca, err = os.ReadFile(c.serverCA); err != nil {
			return fmt.Errorf("server CA: %w", err)
		}
	}
	a, err := edge.New(edge.Config{Server: c.server, Token: c.token, CACert: ca, InsecureSkipVerify: c.insecureSkipVerify,
		Hello:      &agentpb.Hello{AgentId: info.ID, AgentName: info.Name, AgentVersion: info.Version, Capabilities: info.Capabilities},
		MinBackoff: c.minBackoff, MaxBackoff: c.maxBackoff, Log: log}, runner)
	if err != nil {
		return err
	}
	log.Info("berth-agent dialling Berth (edge mode)", "server", c.server, "version", version.Version, "id", info.ID, "name", info.Name)
	return a.Run(ctx)
}

// agentID is the configured id, else the one kept in dataDir (generated on
// the first start), else — when dataDir cannot be written — one for this
// process only.
func agentID(configured, dataDir string, log *slog.Logger) (string, error) {
	if configured != "" {
		return configured, nil
	}
	file := filepath.Join(dataDir, "agent-id")
	if b, err := os.ReadFile(file); err == nil && len(strings.TrimSpace(string(b))) > 0 {
		return strings.TrimSpace(string(b)), nil
	}
	raw := make([]byte, 16)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	id := hex.EncodeToString(raw)
	if err := os.MkdirAll(dataDir, 0o700); err == nil {
		if err := os.WriteFile(file, []byte(id+"\n"), 0o600); err == nil {
			return id, nil
		}
	}
	log.Warn("cannot keep the agent id in the data directory: it changes at every start", "dir", dataDir)
	return id, nil
}
