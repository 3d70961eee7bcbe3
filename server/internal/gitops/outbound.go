package gitops

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing/transport/client"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"

	"github.com/berth-dev/berth/server/internal/outbound"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// UseOutbound makes clones, fetches and tests follow the outbound policy in
// force (nil: outbound.Open). Call it before serving.
func (s *Service) UseOutbound(o *outbound.Settings) { s.outbound = o }

// installTransport makes go-git's http and https transports dial through
// outbound.ContextClient: go-git keeps one transport per scheme for the
// whole process, so the policy travels with each operation's context
// (remoteContext).
var installTransport = sync.OnceFunc(func() {
	t := githttp.NewClient(outbound.ContextClient())
	client.InstallProtocol("http", t)
	client.InstallProtocol("https", t)
})

// remoteContext is ctx carrying the outbound policy in force, for every
// operation that reaches a remote.
func (s *Service) remoteContext(ctx context.Context) (context.Context, error) {
	installTransport()
	return s.outbound.Context(ctx)
}

// guardRemote checks the host of a remote that is not reached over HTTP
// (ssh, git://, the scp-like form) against ctx's policy before connecting;
// HTTP remotes are checked as they are dialled, redirects included.
func guardRemote(ctx context.Context, raw string) error {
	u := remoteURL(raw)
	if u == nil {
		return nil
	}
	switch u.Scheme {
	case "http", "https", "file", "":
		return nil
	}
	return outbound.FromContext(ctx).CheckHost(ctx, u.Hostname())
}

// remoteURL parses a remote as a URL, the scp-like form as ssh://; nil when
// it does not parse.
func remoteURL(raw string) *url.URL {
	if scpURL.MatchString(raw) {
		at := strings.Index(raw, "@")
		colon := strings.Index(raw[at:], ":") + at
		raw = "ssh://" + raw[:colon] + "/" + raw[colon+1:]
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil
	}
	return u
}

// remoteOrigin is the origin (scheme://host:port) of a remote or of a
// credential's recorded host; "" for a local (file) remote.
func remoteOrigin(raw string) string {
	return outbound.Origin(remoteURL(raw))
}

// checkCredentialHost refuses to send credential c to remote: c is sent
// only to the origin it was saved for. A credential bound to no origin yet
// is bound to remote's when bind is set (an admin's use), else refused.
func (s *Service) checkCredentialHost(ctx context.Context, c *store.GitCredential, remote string, bind bool) error {
	if c == nil || c.AuthType == AuthNone {
		return nil
	}
	want := remoteOrigin(remote)
	if c.Host == "" {
		if !bind || want == "" {
			return fault.New(fault.Forbidden, fmt.Sprintf("Credential %s is not saved for a host yet: an admin saves it with its host", c.Name))
		}
		ok, err := s.store.BindGitCredential(ctx, c.ID, want)
		if err != nil {
			return err
		}
		if !ok { // bound meanwhile: check against what was recorded
			fresh, err := s.store.GetGitCredential(ctx, c.ID)
			if err != nil {
				return notFound(err, errCredentialNotFound)
			}
			return s.checkCredentialHost(ctx, &fresh, remote, false)
		}
		c.Host = want
		return nil
	}
	if have := remoteOrigin(c.Host); have != want {
		return fault.New(fault.Forbidden, fmt.Sprintf("Credential %s is saved for %s, not for %s", c.Name, have, orLocal(want)))
	}
	return nil
}

func orLocal(origin string) string {
	if origin == "" {
		return "a local repository"
	}
	return origin
}

// CredentialOrigin is the origin (scheme://host:port) credential c is sent
// to; "" while it is saved for none.
func CredentialOrigin(c store.GitCredential) string {
	if c.Host == "" {
		return ""
	}
	return remoteOrigin(c.Host)
}
