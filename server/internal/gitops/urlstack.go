package gitops

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/berth-dev/berth/server/internal/outbound"
	"github.com/berth-dev/berth/server/internal/stacks"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// DefaultTemplateStackFile is the compose file of a repository template
// that names none (Portainer's default).
const DefaultTemplateStackFile = "docker-compose.yml"

// URLStackSpec is a git stack of a public repository named by its URL, as
// an app template gives it (Portainer's repository {url, stackfile}).
type URLStackSpec struct {
	StackName   string
	Environment store.Environment
	URL         string
	ComposePath string // in the repository; "" is DefaultTemplateStackFile
	EnvVars     []stacks.Variable
}

// CreateStackFromURL records a git stack deploying sp.ComposePath of the
// repository at sp.URL on its default branch, without a credential: the
// repository record of that URL and branch without a credential is
// reused, else one is made (named after the URL). Before anything is
// recorded the branch is cloned into a temporary directory and the compose
// file looked for, so that a repository that cannot be read or lacks the
// file is a 400 saying which. It deploys nothing (see Deploy).
func (s *Service) CreateStackFromURL(ctx context.Context, sp URLStackSpec) (store.GitStack, error) {
	if err := stacks.CheckName(sp.StackName); err != nil {
		return store.GitStack{}, err
	}
	sp.URL = strings.TrimSpace(sp.URL)
	if err := checkURL(sp.URL); err != nil {
		return store.GitStack{}, err
	}
	composePath, err := checkRelPath("compose path", sp.ComposePath)
	if err != nil {
		return store.GitStack{}, err
	}
	if composePath == "" {
		composePath = DefaultTemplateStackFile
	}
	ctx, err = s.remoteContext(ctx)
	if err != nil {
		return store.GitStack{}, err
	}
	branch, err := checkComposeAtHead(ctx, sp.URL, composePath)
	if err != nil {
		return store.GitStack{}, err
	}
	repo, created, err := s.repositoryFor(ctx, sp.URL, branch)
	if err != nil {
		return store.GitStack{}, err
	}
	g, err := s.CreateStack(ctx, StackSpec{StackName: sp.StackName, Environment: sp.Environment, EnvVars: sp.EnvVars,
		Git: store.GitStack{RepositoryID: repo.ID, ComposePath: composePath}})
	if err != nil && created {
		if derr := s.store.DeleteGitRepository(context.WithoutCancel(ctx), repo.ID); derr != nil {
			s.log.Warn("remove repository of a refused git stack", "repository", repo.ID, "err", derr)
		}
	}
	return g, err
}

// checkComposeAtHead clones the default branch of the repository at u into
// a temporary directory, checks that it holds composePath and returns the
// branch.
func checkComposeAtHead(ctx context.Context, u, composePath string) (string, error) {
	branch, _, err := composeAtHead(ctx, u, composePath, false)
	return branch, err
}

// maxTemplateCompose bounds the compose file ReadComposeAtHead reads.
const maxTemplateCompose = 4 << 20

// ReadComposeAtHead returns the content of the compose file composePath
// ("" is DefaultTemplateStackFile) at the head of the default branch of
// the repository at u, read from a temporary clone removed afterwards (a
// repository stack template's compose file). Only http(s), ssh and git://
// remotes are read: u may come from a client, and a file:// remote or a
// local path would read Berth's own host.
func (s *Service) ReadComposeAtHead(ctx context.Context, u, composePath string) (string, error) {
	u = strings.TrimSpace(u)
	if err := checkURL(u); err != nil {
		return "", err
	}
	if strings.HasPrefix(strings.ToLower(u), "file:") {
		return "", fault.Invalidf("Invalid repository URL %q: use https, ssh or git", u)
	}
	rel, err := checkRelPath("compose path", composePath)
	if err != nil {
		return "", err
	}
	if rel == "" {
		rel = DefaultTemplateStackFile
	}
	ctx, err = s.remoteContext(ctx)
	if err != nil {
		return "", err
	}
	_, content, err := composeAtHead(ctx, u, rel, true)
	return content, err
}

// composeAtHead clones the default branch of the repository at u into a
// temporary directory and checks that it holds composePath; with read it
// also returns the file's content.
func composeAtHead(ctx context.Context, u, composePath string, read bool) (string, string, error) {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	if err := guardRemote(ctx, u); err != nil {
		return "", "", err
	}
	branch, err := defaultBranch(ctx, u, nil)
	if f, ok := outbound.Refused(err); ok {
		return "", "", f
	}
	if err != nil {
		return "", "", fault.Wrap(fault.Invalid, fmt.Sprintf("Cannot read the repository %s: %s", redactURL(u), gitReason(err)), err)
	}
	tmp, err := os.MkdirTemp("", "berth-template-")
	if err != nil {
		return "", "", err
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "repo")
	if _, err := clone(ctx, dir, u, plumbing.NewBranchReferenceName(branch), nil); err != nil {
		if f, ok := outbound.Refused(err); ok {
			return "", "", f
		}
		return "", "", fault.Wrap(fault.Invalid, fmt.Sprintf("Cannot read the repository %s: %s", redactURL(u), gitReason(err)), err)
	}
	notFound := func(err error) error {
		return fault.Wrap(fault.Invalid, fmt.Sprintf("Compose file '%s' not found in the repository %s (branch %s)",
			composePath, redactURL(u), branch), err)
	}
	if err := fileInside(dir, composePath); err != nil {
		return "", "", notFound(err)
	}
	if !read {
		return branch, "", nil
	}
	p, err := insidePath(dir, composePath)
	if err != nil {
		return "", "", notFound(err)
	}
	f, err := os.Open(p)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxTemplateCompose+1))
	if err != nil {
		return "", "", err
	}
	if len(b) > maxTemplateCompose {
		return "", "", fault.Invalidf("Compose file '%s' of the repository %s is larger than %d MiB", composePath, redactURL(u), maxTemplateCompose>>20)
	}
	return branch, string(b), nil
}

// defaultBranch is the branch the repository's HEAD names, else main or
// master, else its first branch.
func defaultBranch(ctx context.Context, u string, auth transport.AuthMethod) (string, error) {
	remote := git.NewRemote(memory.NewStorage(), &config.RemoteConfig{Name: "origin", URLs: []string{u}})
	refs, err := remote.ListContext(ctx, &git.ListOptions{Auth: auth})
	if err != nil {
		return "", err
	}
	var branches []string
	for _, r := range refs {
		if r.Name() == plumbing.HEAD && r.Type() == plumbing.SymbolicReference && r.Target().IsBranch() {
			return r.Target().Short(), nil
		}
		if r.Name().IsBranch() {
			branches = append(branches, r.Name().Short())
		}
	}
	for _, b := range []string{"main", "master"} {
		for _, have := range branches {
			if have == b {
				return b, nil
			}
		}
	}
	if len(branches) == 0 {
		return "", transport.ErrEmptyRemoteRepository
	}
	return branches[0], nil
}

// gitReason is git's reason for a failed read, in words.
func gitReason(err error) string {
	if errors.Is(err, transport.ErrEmptyRemoteRepository) {
		return "the repository is empty"
	}
	if f, ok := fault.As(gitFault(err)); ok && f.Details != "" {
		return f.Details
	}
	return err.Error()
}

// redactURL is u without its user information, to be shown.
func redactURL(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.User == nil {
		return u
	}
	p.User = nil
	return p.String()
}

// repositoryFor returns the repository record of URL u and branch without
// a credential, making one when there is none (created reports that).
func (s *Service) repositoryFor(ctx context.Context, u, branch string) (store.GitRepository, bool, error) {
	list, err := s.store.ListGitRepositories(ctx)
	if err != nil {
		return store.GitRepository{}, false, err
	}
	for _, r := range list {
		if r.URL == u && r.Branch == branch && r.CredentialID == nil {
			return r, false, nil
		}
	}
	name := strings.TrimSuffix(strings.TrimPrefix(redactURL(u), "https://"), ".git")
	for i := 1; ; i++ {
		r := store.GitRepository{Name: name, URL: u, Branch: branch}
		if i > 1 {
			r.Name = fmt.Sprintf("%s (%d)", name, i)
		}
		err := s.SaveRepository(ctx, &r, nil, false)
		if f, ok := fault.As(err); ok && f.Kind == fault.Conflict && i < 10 {
			continue // a repository of that name with another branch or a credential
		}
		return r, err == nil, err
	}
}
