package gitops

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/http"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
	"golang.org/x/crypto/ssh"

	"github.com/berth-dev/berth/server/internal/outbound"
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
		if err := checkSSHKey(c.SSHPrivateKey, c.Password); err != nil {
			return nil, err
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
	if err := guardRemote(ctx, url); err != nil {
		return "", err
	}
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
	if err := guardRemote(ctx, url); err != nil {
		return "", err
	}
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

// gitFault is the 500 of a failed clone or fetch, with git's own message,
// or the outbound policy's refusal (403).
func gitFault(err error) error {
	if f, ok := outbound.Refused(err); ok {
		return f
	}
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

// pruneClones removes the clones under the git directory (DATA_DIR/git)
// that nothing uses any more: mirrors (repo-<id>) of repositories that do
// not exist and clones (stack-<id>) of stacks that are not git stacks. A
// clone is made only after its record exists, so the directory is read
// before the records: one created meanwhile is never taken for an orphan.
// Failures are logged; the next prune tries again.
func (s *Service) pruneClones(ctx context.Context) {
	root := filepath.Dir(s.stacks.RepositoryDir(0))
	entries, err := os.ReadDir(root)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			s.log.Warn("prune git clones", "dir", root, "err", err)
		}
		return
	}
	repos, err := s.store.ListGitRepositories(ctx)
	if err != nil {
		s.log.Warn("prune git clones", "err", err)
		return
	}
	gitStacks, err := s.store.ListGitStacks(ctx, 0)
	if err != nil {
		s.log.Warn("prune git clones", "err", err)
		return
	}
	live := map[string]bool{}
	for _, r := range repos {
		live[filepath.Base(s.stacks.RepositoryDir(r.ID))] = true
	}
	for _, g := range gitStacks {
		live[filepath.Base(s.stacks.CloneDir(g.StackID))] = true
	}
	for _, e := range entries {
		if !e.IsDir() || live[e.Name()] || !cloneName.MatchString(e.Name()) {
			continue
		}
		if err := os.RemoveAll(filepath.Join(root, e.Name())); err != nil {
			s.log.Warn("remove unused git clone", "dir", e.Name(), "err", err)
			continue
		}
		s.log.Info("removed unused git clone", "dir", e.Name())
	}
}

// cloneName matches the names of the clones pruneClones looks after (not
// the temporary directories of clones in progress).
var cloneName = regexp.MustCompile(`^(repo|stack)-[0-9]+$`)

// checkSSHKey tells apart the ways an SSH private key fails to open: an
// encrypted key without its passphrase, or with a wrong one.
func checkSSHKey(key, passphrase string) error {
	_, err := ssh.ParseRawPrivateKey([]byte(key))
	var missing *ssh.PassphraseMissingError
	if !errors.As(err, &missing) {
		return nil // not encrypted: NewPublicKeys tells what else is wrong
	}
	if passphrase == "" {
		return fault.Invalidf("SSH private key is encrypted: send its passphrase (sshPassphrase)")
	}
	_, err = ssh.ParseRawPrivateKeyWithPassphrase([]byte(key), []byte(passphrase))
	if errors.Is(err, x509.IncorrectPasswordError) {
		return fault.Invalidf("Wrong passphrase for the SSH private key")
	}
	if err != nil {
		return fault.Invalidf("Invalid SSH private key: %v", err)
	}
	return nil
}
