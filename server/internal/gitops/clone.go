package gitops

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/http"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
	"golang.org/x/crypto/ssh"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// gitTimeout bounds one clone or fetch.
const gitTimeout = 5 * time.Minute

// authMethod turns a credential into go-git's authentication (nil: none).
func authMethod(c *store.GitCredential) (transport.AuthMethod, error) {
	if c == nil {
		return nil, nil
	}
	switch c.AuthType {
	case AuthNone:
		return nil, nil
	case AuthPassword:
		user := c.Username
		if user == "" {
			user = "git" // token-only credentials: hosts accept any user name
		}
		return &http.BasicAuth{Username: user, Password: c.Password}, nil
	case AuthSSH:
		user := c.Username
		if user == "" {
			user = "git"
		}
		keys, err := gitssh.NewPublicKeys(user, []byte(c.SSHPrivateKey), c.Password)
		if err != nil {
			return nil, fault.Invalidf("Invalid SSH private key: %v", err)
		}
		// Host keys are not pinned yet: the first connection is trusted.
		keys.HostKeyCallback = ssh.InsecureIgnoreHostKey()
		return keys, nil
	}
	return nil, fault.Invalidf("Unknown authentication type %q", c.AuthType)
}

// checkout brings dir to the head of branch of url (cloning on first use)
// and returns the commit. A clone goes to a temporary directory first, so
// that a failed one never leaves half a repository behind.
func checkout(ctx context.Context, dir, url, branch string, auth transport.AuthMethod) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	ref := plumbing.NewBranchReferenceName(branch)
	repo, err := git.PlainOpen(dir)
	if errors.Is(err, git.ErrRepositoryNotExists) {
		return clone(ctx, dir, url, ref, auth)
	}
	if err != nil {
		return "", fmt.Errorf("open clone: %w", err)
	}
	remote := plumbing.NewRemoteReferenceName("origin", branch)
	err = repo.FetchContext(ctx, &git.FetchOptions{RemoteName: "origin", RemoteURL: url, Auth: auth, Force: true, Tags: git.NoTags,
		RefSpecs: []config.RefSpec{config.RefSpec(fmt.Sprintf("+%s:%s", ref, remote))}})
	if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
		return "", gitFault(err)
	}
	head, err := repo.Reference(remote, true)
	if err != nil {
		return "", fmt.Errorf("branch %s: %w", branch, err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		return "", err
	}
	if err := wt.Reset(&git.ResetOptions{Commit: head.Hash(), Mode: git.HardReset}); err != nil {
		return "", fmt.Errorf("reset to %s: %w", head.Hash(), err)
	}
	return head.Hash().String(), nil
}

func clone(ctx context.Context, dir, url string, ref plumbing.ReferenceName, auth transport.AuthMethod) (string, error) {
	if err := os.MkdirAll(filepath.Dir(dir), 0o750); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".clone-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	repo, err := git.PlainCloneContext(ctx, tmp, false, &git.CloneOptions{URL: url, Auth: auth, ReferenceName: ref,
		SingleBranch: true, Tags: git.NoTags})
	if err != nil {
		return "", gitFault(err)
	}
	head, err := repo.Head()
	if err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return "", err
	}
	return head.Hash().String(), nil
}

// gitFault is the 500 of a failed clone or fetch, with git's own message.
func gitFault(err error) error {
	msg := err.Error()
	switch {
	case errors.Is(err, transport.ErrAuthenticationRequired), errors.Is(err, transport.ErrAuthorizationFailed):
		msg = "authentication failed: check the repository's credentials"
	case errors.Is(err, transport.ErrRepositoryNotFound):
		msg = "repository not found"
	case errors.Is(err, plumbing.ErrReferenceNotFound):
		msg = "branch not found"
	}
	return fault.Wrap(fault.Internal, "Failed to pull the repository", err).WithDetails(msg)
}
