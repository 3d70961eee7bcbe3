package gitops

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/berth-dev/berth/server/internal/outbound"
	"github.com/berth-dev/berth/server/internal/schedule"
	"github.com/berth-dev/berth/server/internal/stacks"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// repositoryAuth returns the authentication of repository r (nil: none),
// refusing a credential saved for another host than r's.
func (s *Service) repositoryAuth(ctx context.Context, r store.GitRepository) (transport.AuthMethod, error) {
	if r.CredentialID == nil {
		return nil, nil
	}
	c, err := s.store.GetGitCredential(ctx, *r.CredentialID)
	if err != nil {
		return nil, notFound(err, errCredentialNotFound)
	}
	if err := s.checkCredentialHost(ctx, &c, r.URL, false); err != nil {
		return nil, err
	}
	return authMethod(&c)
}

// Probe is a repository to test without saving it: its URL and branch,
// and either a stored credential or one given inline.
type Probe struct {
	URL          string
	Branch       string
	CredentialID *int64
	Credential   *CredentialSpec // inline; Name is not needed
	// Admin binds a stored credential saved for no host yet to URL's host
	// (the caller is an admin); otherwise such a credential is refused.
	Admin bool
}

// ProbeResult is the outcome of a repository test. A repository that cannot
// be reached is not an error of the request: Success is false and Error
// says why.
type ProbeResult struct {
	Success      bool     `json:"success"`
	Branch       string   `json:"branch"`
	BranchExists bool     `json:"branchExists"`
	Branches     []string `json:"branches,omitempty"`
	Commit       string   `json:"commit,omitempty"` // head of Branch
	Error        string   `json:"error,omitempty"`
}

// TestRepository lists the branches of a repository (git ls-remote) with
// the given credential and checks that the branch exists. The URL, the
// branch and an inline credential are validated as when saving (400); a
// stored credential saved for another host, or a host the outbound policy
// refuses, is a 403.
func (s *Service) TestRepository(ctx context.Context, p Probe) (ProbeResult, error) {
	if err := checkURL(p.URL); err != nil {
		return ProbeResult{}, err
	}
	if p.Branch == "" {
		p.Branch = "main"
	}
	if err := checkBranch(p.Branch); err != nil {
		return ProbeResult{}, err
	}
	auth, err := s.probeAuth(ctx, p)
	if err != nil {
		return ProbeResult{}, err
	}
	ctx, err = s.remoteContext(ctx)
	if err != nil {
		return ProbeResult{}, err
	}
	return lsRemote(ctx, p.URL, p.Branch, auth)
}

// probeAuth returns the authentication of a probe: its stored credential,
// or its inline one validated as when saving.
func (s *Service) probeAuth(ctx context.Context, p Probe) (transport.AuthMethod, error) {
	var cred *store.GitCredential
	switch {
	case p.CredentialID != nil:
		c, err := s.store.GetGitCredential(ctx, *p.CredentialID)
		if err != nil {
			return nil, notFound(err, errCredentialNotFound)
		}
		if err := s.checkCredentialHost(ctx, &c, p.URL, p.Admin); err != nil {
			return nil, err
		}
		cred = &c
	case p.Credential != nil:
		c := store.GitCredential{Name: "test"}
		for _, f := range []struct{ dst, src *string }{{&c.AuthType, p.Credential.AuthType}, {&c.Username, p.Credential.Username},
			{&c.Password, p.Credential.Password}, {&c.SSHPrivateKey, p.Credential.SSHPrivateKey}} {
			if f.src != nil {
				*f.dst = *f.src
			}
		}
		if err := checkCredential(&c); err != nil {
			return nil, err
		}
		cred = &c
	}
	return authMethod(cred)
}

// TestSavedRepository is TestRepository of a stored repository.
func (s *Service) TestSavedRepository(ctx context.Context, id int64) (ProbeResult, error) {
	r, err := s.Repository(ctx, id)
	if err != nil {
		return ProbeResult{}, err
	}
	auth, err := s.repositoryAuth(ctx, r)
	if err != nil {
		return ProbeResult{}, err
	}
	ctx, err = s.remoteContext(ctx)
	if err != nil {
		return ProbeResult{}, err
	}
	return lsRemote(ctx, r.URL, r.Branch, auth)
}

// lsRemote lists url's branches; a failure is reported in the result with
// git's message (never a credential: go-git's errors carry none), except a
// refusal of the outbound policy, which is the error.
func lsRemote(ctx context.Context, url, branch string, auth transport.AuthMethod) (ProbeResult, error) {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	if err := guardRemote(ctx, url); err != nil {
		return ProbeResult{}, err
	}
	out := ProbeResult{Branch: branch}
	remote := git.NewRemote(memory.NewStorage(), &config.RemoteConfig{Name: "origin", URLs: []string{url}})
	refs, err := remote.ListContext(ctx, &git.ListOptions{Auth: auth})
	if err != nil {
		if f, ok := outbound.Refused(err); ok {
			return ProbeResult{}, f
		}
		if errors.Is(err, transport.ErrEmptyRemoteRepository) {
			out.Error = "the repository is empty"
			return out, nil
		}
		out.Error = err.Error()
		if f, ok := fault.As(gitFault(err)); ok && f.Details != "" {
			out.Error = f.Details
		}
		return out, nil
	}
	out.Branches = []string{}
	for _, r := range refs {
		if r.Name().IsBranch() {
			name := r.Name().Short()
			out.Branches = append(out.Branches, name)
			if name == branch {
				out.BranchExists, out.Commit = true, r.Hash().String()
			}
		}
	}
	sort.Strings(out.Branches)
	out.Success = out.BranchExists
	if !out.BranchExists {
		out.Error = fmt.Sprintf("branch '%s' not found", branch)
	}
	return out, nil
}

// RepositoryDeploy is the outcome of deploying every git stack of a
// repository.
type RepositoryDeploy struct {
	Message  string
	Deployed []Deployed
}

// DeployRepository deploys every git stack of repository id, one after the
// other, as the webhook does (each an execution of its sync schedule,
// triggered manually). progress, when set, gets a line per stack.
func (s *Service) DeployRepository(ctx context.Context, id int64, progress func(string)) (RepositoryDeploy, error) {
	if _, err := s.Repository(ctx, id); err != nil {
		return RepositoryDeploy{}, err
	}
	targets, err := s.store.ListGitStacks(ctx, id)
	if err != nil {
		return RepositoryDeploy{}, err
	}
	if len(targets) == 0 {
		return RepositoryDeploy{Message: "No git stack deploys from this repository"}, nil
	}
	var out RepositoryDeploy
	var msgs []string
	for _, g := range targets {
		if progress != nil {
			progress(fmt.Sprintf("Deploying stack '%s'", g.StackName))
		}
		d := s.deployTarget(ctx, g, schedule.TriggerManual)
		out.Deployed = append(out.Deployed, d)
		msg := d.Result.Message
		if d.Err != nil {
			msg = fmt.Sprintf("Stack '%s' failed: %s", g.StackName, stacks.Message(d.Err))
		}
		msgs = append(msgs, msg)
		if progress != nil {
			progress(msg)
		}
	}
	out.Message = strings.Join(msgs, "; ")
	return out, nil
}
