package agents

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
	"github.com/berth-dev/berth/shared/version"
)

// tokenPrefix marks Berth's edge tokens (so that a leaked one is recognisable).
const tokenPrefix = "bae_"

// HashToken is the digest an edge token is stored and looked up by.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// InstallConfig says what install lines contain.
type InstallConfig struct {
	PublicURL string // the URL agents dial; empty: derived from the request host and Port
	Port      int    // the agent port Berth listens on (0: off)
	TLS       bool   // the agent port speaks TLS
	Image     string // the agent image; empty: berth/agent:<version>
}

// Install is a new edge token and the lines that install an agent with it.
// The token is shown this once: Berth keeps only its digest.
type Install struct {
	Token     string `json:"token"`
	Command   string `json:"command"`
	DockerRun string `json:"dockerRun"`
	ServerURL string `json:"serverUrl"`
}

// IssueToken generates env's edge token, stores its digest (replacing the
// previous one), closes the connection of an agent that used the previous
// token, and returns the install lines. requestHost is the host the client
// reached Berth at (used when no public URL is configured).
func (s *Service) IssueToken(ctx context.Context, env store.Environment, requestHost string) (Install, error) {
	if env.ConnectionType != engine.AgentEdge {
		return Install{}, fault.New(fault.Invalid, "Agent tokens are issued for agent-edge environments only")
	}
	if s.install.Port == 0 && s.install.PublicURL == "" {
		return Install{}, fault.New(fault.Invalid, "The edge agent port is turned off (AGENT_PORT=0)")
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return Install{}, err
	}
	token := tokenPrefix + base64.RawURLEncoding.EncodeToString(raw)
	if err := s.store.SetAgentTokenHash(ctx, env.ID, HashToken(token)); err != nil {
		return Install{}, err
	}
	if c := s.edge.get(env.ID); c != nil {
		s.lose(c, errRotated)
	}
	if s.relay != nil {
		// An agent connected to another replica: its lease goes, and that
		// replica finds its token no longer valid at its next reconcile.
		s.relay.drop(ctx, env.ID)
	}
	s.log.Info("edge token issued", "env", env.ID) // never the token
	server := s.serverURL(requestHost)
	return Install{Token: token, ServerURL: server,
		Command: fmt.Sprintf("berth-agent --server %s --token %s", server, token),
		DockerRun: fmt.Sprintf("docker run -d --name berth-agent --restart unless-stopped "+
			"-v /var/run/docker.sock:/var/run/docker.sock -v berth-agent:/var/lib/berth-agent "+
			"-e BERTH_SERVER=%s -e BERTH_TOKEN=%s %s", server, token, s.image()),
	}, nil
}

// serverURL is the URL edge agents dial: the configured public URL, else
// the host the client reached Berth at, on the agent port.
func (s *Service) serverURL(requestHost string) string {
	if s.install.PublicURL != "" {
		return strings.TrimRight(s.install.PublicURL, "/")
	}
	host := requestHost
	if h, _, err := net.SplitHostPort(requestHost); err == nil {
		host = h
	}
	if host == "" {
		host = "localhost"
	}
	scheme := "http"
	if s.install.TLS {
		scheme = "https"
	}
	return (&url.URL{Scheme: scheme, Host: net.JoinHostPort(host, strconv.Itoa(s.install.Port))}).String()
}

func (s *Service) image() string {
	if s.install.Image != "" {
		return s.install.Image
	}
	return "berth/agent:" + version.Version
}
