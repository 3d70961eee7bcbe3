// Package gitops provides git-backed stacks: credentials (secrets sealed by
// the store), repositories, git stacks cloned with go-git and deployed
// through the stacks package, syncs that deploy only when the commit
// changed, the auto-sync schedule record, and webhooks verified by HMAC
// signature, GitLab token or GET secret.
package gitops

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/berth-dev/berth/server/internal/outbound"
	"github.com/berth-dev/berth/server/internal/schedule"
	"github.com/berth-dev/berth/server/internal/stacks"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// Authentication types of a credential.
const (
	AuthNone     = "none"
	AuthPassword = "password"
	AuthSSH      = "ssh"
)

// Service runs git operations.
type Service struct {
	store    *store.Store
	stacks   *stacks.Service
	log      *slog.Logger
	now      func() time.Time
	recorder Recorder
	notifier Notifier // nil: no notifications
	outbound *outbound.Settings
}

// Recorder records work as an execution of a schedule: the scheduler
// (schedule.Service).
type Recorder interface {
	Record(ctx context.Context, t schedule.Type, id int64, trigger string, fn schedule.RunnerFunc) (store.Execution, error)
}

// UseRecorder makes webhook deploys executions of their git stack's sync
// schedule (triggered by webhook), recorded by r. Call it before serving.
func (s *Service) UseRecorder(r Recorder) { s.recorder = r }

// New returns a Service deploying through stk.
func New(st *store.Store, stk *stacks.Service, log *slog.Logger) *Service {
	return &Service{store: st, stacks: stk, log: log, now: time.Now}
}

var (
	errCredentialNotFound = fault.New(fault.NotFound, "Credential not found")
	errRepositoryNotFound = fault.New(fault.NotFound, "Repository not found")
	errGitStackNotFound   = fault.New(fault.NotFound, "Git stack not found")
)

// notFound maps the store's ErrNotFound to f.
func notFound(err, f error) error {
	if errors.Is(err, store.ErrNotFound) {
		return f
	}
	return err
}

// Credential returns a credential, or 404.
func (s *Service) Credential(ctx context.Context, id int64) (store.GitCredential, error) {
	c, err := s.store.GetGitCredential(ctx, id)
	return c, notFound(err, errCredentialNotFound)
}

// Repository returns a repository, or 404.
func (s *Service) Repository(ctx context.Context, id int64) (store.GitRepository, error) {
	r, err := s.store.GetGitRepository(ctx, id)
	return r, notFound(err, errRepositoryNotFound)
}

// CredentialSpec is a credential as an administrator sends it. On update a
// nil AuthType, Username, Password, SSHPrivateKey or Host keeps the stored
// value and "" removes it; on creation nil is "" (AuthType: none). Host is
// the repository URL or scheme://host:port the credential is for; a
// credential saved without one is bound to the host of its first use by an
// admin.
//
// SSHPassphrase is the passphrase of an encrypted SSH key (the reference's
// name): an ssh credential keeps it as its Password, sealed like the key.
type CredentialSpec struct {
	Name                                              string
	AuthType, Username, Password, SSHPrivateKey, Host *string
	SSHPassphrase                                     *string
}

// SaveCredential validates and stores a credential: new when id is 0,
// otherwise the stored one with the fields sp sets. It answers the record
// as stored.
func (s *Service) SaveCredential(ctx context.Context, id int64, sp CredentialSpec) (store.GitCredential, error) {
	c := &store.GitCredential{ID: id}
	if id != 0 {
		old, err := s.store.GetGitCredential(ctx, id)
		if err != nil {
			return store.GitCredential{}, notFound(err, errCredentialNotFound)
		}
		c = &old
	}
	c.Name = sp.Name
	for _, f := range []struct{ dst, src *string }{{&c.AuthType, sp.AuthType}, {&c.Username, sp.Username},
		{&c.Password, sp.Password}, {&c.SSHPrivateKey, sp.SSHPrivateKey}} {
		if f.src != nil {
			*f.dst = *f.src
		}
	}
	if err := setPassphrase(c, sp); err != nil {
		return store.GitCredential{}, err
	}
	if err := checkCredential(c); err != nil {
		return store.GitCredential{}, err
	}
	if err := setCredentialHost(c, sp); err != nil {
		return store.GitCredential{}, err
	}
	if err := s.store.SaveGitCredential(ctx, c); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return store.GitCredential{}, fault.New(fault.Conflict, fmt.Sprintf("Credential '%s' already exists", c.Name))
		}
		return store.GitCredential{}, notFound(err, errCredentialNotFound)
	}
	return *c, nil
}

// setPassphrase sets the SSH key passphrase sp sends as c's Password: only
// an ssh credential has one, and a password sent beside it must be the same.
func setPassphrase(c *store.GitCredential, sp CredentialSpec) error {
	if sp.SSHPassphrase == nil {
		return nil
	}
	if c.AuthType != AuthSSH {
		if *sp.SSHPassphrase == "" {
			return nil // a form's empty field
		}
		return fault.Invalidf("sshPassphrase is the passphrase of an SSH key: it needs authType ssh")
	}
	if sp.Password != nil && *sp.Password != "" && *sp.Password != *sp.SSHPassphrase {
		return fault.Invalidf("password and sshPassphrase differ: send the SSH key's passphrase as sshPassphrase")
	}
	c.Password = *sp.SSHPassphrase
	return nil
}

// checkCredential validates c and drops the secrets its type does not use.
func checkCredential(c *store.GitCredential) error {
	if strings.TrimSpace(c.Name) == "" {
		return fault.New(fault.Invalid, "Credential name is required")
	}
	if c.AuthType == "" {
		c.AuthType = AuthNone
	}
	switch c.AuthType {
	case AuthNone:
		c.Username, c.Password, c.SSHPrivateKey = "", "", ""
	case AuthPassword:
		if c.Password == "" {
			return fault.New(fault.Invalid, "Password or token is required")
		}
		c.SSHPrivateKey = ""
	case AuthSSH:
		if c.SSHPrivateKey == "" {
			return fault.New(fault.Invalid, "SSH private key is required")
		}
		if _, err := authMethod(c); err != nil {
			return err
		}
	default:
		return fault.Invalidf("Invalid authType %q: use none, password or ssh", c.AuthType)
	}
	return nil
}

// setCredentialHost records the host sp gives c, as an origin. Moving a
// stored secret to another host needs the secret again: whoever may edit a
// credential cannot send an admin's password elsewhere without knowing it.
func setCredentialHost(c *store.GitCredential, sp CredentialSpec) error {
	if sp.Host == nil {
		return nil
	}
	host := strings.TrimSpace(*sp.Host)
	if host != "" {
		if checkURL(host) != nil || remoteOrigin(host) == "" {
			return fault.Invalidf("Invalid credential host %q: give the repository URL or scheme://host:port", host)
		}
		host = remoteOrigin(host)
	}
	old := ""
	if c.Host != "" {
		old = remoteOrigin(c.Host)
	}
	if host == old {
		return nil
	}
	resent := sp.Password != nil && *sp.Password != "" || sp.SSHPrivateKey != nil && *sp.SSHPrivateKey != ""
	if c.ID != 0 && c.AuthType != AuthNone && !resent {
		return fault.New(fault.Forbidden, fmt.Sprintf("Changing the host of credential '%s' needs its password or key again", c.Name))
	}
	c.Host = host
	return nil
}

// DeleteCredential deletes a credential no repository uses.
func (s *Service) DeleteCredential(ctx context.Context, id int64) error {
	err := s.store.DeleteGitCredential(ctx, id)
	if errors.Is(err, store.ErrInUse) {
		return fault.New(fault.Conflict, "Credential is used by a repository")
	}
	return notFound(err, errCredentialNotFound)
}

// scpURL is the scp-like form git accepts for SSH: user@host:path.
var scpURL = regexp.MustCompile(`^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:[^/].*$`)

// checkURL accepts the URLs git clones from: http(s), ssh, git, file, and
// the scp-like SSH form.
func checkURL(raw string) error {
	if raw == "" {
		return fault.New(fault.Invalid, "Repository URL is required")
	}
	if scpURL.MatchString(raw) {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" && u.Scheme != "file" {
		return fault.Invalidf("Invalid repository URL %q", raw)
	}
	switch u.Scheme {
	case "http", "https", "ssh", "git", "file":
		return nil
	}
	return fault.Invalidf("Invalid repository URL %q: use https, ssh or git", raw)
}

// branchPattern is what git accepts as a branch name, roughly: no spaces,
// no "..", no leading '-'.
var branchPattern = regexp.MustCompile(`^[A-Za-z0-9._/][A-Za-z0-9._/-]*$`)

func checkBranch(b string) error {
	if !branchPattern.MatchString(b) || strings.Contains(b, "..") || strings.HasSuffix(b, ".lock") {
		return fault.Invalidf("Invalid branch %q", b)
	}
	return nil
}

// SaveRepository validates and stores r (new when r.ID is 0) with the
// webhook secret webhookSecret: nil keeps the stored one (none, on
// creation), "" removes it. Its credential must be saved for r's host
// (403); one saved for none is bound to it when bind is set (an admin
// saves the repository).
func (s *Service) SaveRepository(ctx context.Context, r *store.GitRepository, webhookSecret *string, bind bool) error {
	if strings.TrimSpace(r.Name) == "" {
		return fault.New(fault.Invalid, "Repository name is required")
	}
	if err := checkURL(r.URL); err != nil {
		return err
	}
	if r.Branch == "" {
		r.Branch = "main"
	}
	if err := checkBranch(r.Branch); err != nil {
		return err
	}
	if r.ID != 0 {
		old, err := s.store.GetGitRepository(ctx, r.ID)
		if err != nil {
			return notFound(err, errRepositoryNotFound)
		}
		r.WebhookSecret, r.LastSyncAt, r.CreatedAt = old.WebhookSecret, old.LastSyncAt, old.CreatedAt
	}
	if webhookSecret != nil {
		r.WebhookSecret = *webhookSecret
	}
	if r.CredentialID != nil {
		c, err := s.store.GetGitCredential(ctx, *r.CredentialID)
		if err != nil {
			return notFound(err, errCredentialNotFound)
		}
		if err := s.checkCredentialHost(ctx, &c, r.URL, bind); err != nil {
			return err
		}
	}
	if err := s.store.SaveGitRepository(ctx, r); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return fault.New(fault.Conflict, fmt.Sprintf("Repository '%s' already exists", r.Name))
		}
		return notFound(err, errRepositoryNotFound)
	}
	return nil
}

// DeleteRepository deletes a repository no git stack uses, then its mirror
// and any clone left behind by a repository or git stack that no longer
// exists (see pruneClones).
func (s *Service) DeleteRepository(ctx context.Context, id int64) error {
	err := s.store.DeleteGitRepository(ctx, id)
	if errors.Is(err, store.ErrInUse) {
		return fault.New(fault.Conflict, "Repository is used by a git stack")
	}
	if err != nil {
		return notFound(err, errRepositoryNotFound)
	}
	if err := os.RemoveAll(s.stacks.RepositoryDir(id)); err != nil {
		s.log.Warn("remove repository mirror", "repository", id, "err", err)
	}
	s.pruneClones(context.WithoutCancel(ctx))
	return nil
}

// checkRelPath validates a path inside the repository: relative, clean,
// never leaving the clone.
func checkRelPath(what, p string) (string, error) {
	if p == "" {
		return "", nil
	}
	clean := path.Clean(strings.ReplaceAll(p, `\`, "/"))
	if path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") || strings.ContainsRune(p, 0) {
		return "", fault.Invalidf("Invalid %s %q: a path inside the repository is required", what, p)
	}
	return clean, nil
}

// checkSchedule validates the auto-sync schedule record.
func checkSchedule(g *store.GitStack) error {
	if !g.AutoUpdate {
		return nil
	}
	if g.AutoUpdateCron == "" {
		g.AutoUpdateCron = "*/5 * * * *"
	}
	_, err := schedule.ParseCron(g.AutoUpdateCron)
	return err
}
