package api

import (
	"context"
	"net/url"
	"strings"

	"github.com/berth-dev/berth/server/internal/backup"
	"github.com/berth-dev/berth/server/internal/outbound"
	"github.com/berth-dev/berth/shared/fault"
)

// The repository string, its flags and its environment are checked by the
// backup package (backup.CheckRepo). restic runs in a helper container
// with the host's network, so a remote repository is also an outbound
// destination like a webhook's URL: its host follows the outbound policy
// (docs/security.md), checked here.

// normalizeRepository is a repository string as stored: trimmed, a local
// path without restic's optional "local:" prefix.
func normalizeRepository(repo string) string {
	repo = strings.TrimSpace(repo)
	if p, ok := strings.CutPrefix(repo, "local:"); ok && strings.HasPrefix(p, "/") {
		return p
	}
	return repo
}

// repositoryHost is the host restic connects to for a repository of type
// typ ("" for a local one). The string was checked by
// backup.ParseRepository.
func repositoryHost(repo, typ string) string {
	switch typ {
	case backup.TypeSFTP:
		if strings.HasPrefix(repo, "sftp://") {
			if u, err := url.Parse(repo); err == nil {
				return u.Hostname()
			}
			return ""
		}
		userHost, _, _ := strings.Cut(strings.TrimPrefix(repo, "sftp:"), ":")
		_, host, _ := strings.Cut(userHost, "@")
		return host
	case backup.TypeREST:
		if u, err := url.Parse(strings.TrimPrefix(repo, "rest:")); err == nil {
			return u.Hostname()
		}
	case backup.TypeS3:
		rest := strings.TrimPrefix(repo, "s3:")
		if strings.Contains(rest, "://") {
			if u, err := url.Parse(rest); err == nil {
				return u.Hostname()
			}
			return ""
		}
		host, _, _ := strings.Cut(rest, "/")
		if h, _, ok := strings.Cut(host, ":"); ok {
			return h
		}
		return host
	}
	return ""
}

// checkRepositoryHost applies the outbound policy to a remote repository's
// host. A refusal is a 400 here (the reference's "SSRF-blocked
// repository"), with the policy's words.
func (s *Server) checkRepositoryHost(ctx context.Context, repo, typ string) error {
	host := repositoryHost(repo, typ)
	if typ == backup.TypeLocal {
		return nil
	}
	if host == "" {
		return fault.New(fault.Invalid, "Invalid repository: it names no host")
	}
	p, err := s.outbound.Policy(ctx)
	if err != nil {
		return err
	}
	if err := p.CheckHost(ctx, host); err != nil {
		if f, ok := outbound.Refused(err); ok {
			return fault.New(fault.Invalid, "Repository refused: "+f.Message)
		}
		return err
	}
	return nil
}
