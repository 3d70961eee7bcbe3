package api

import (
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/backup"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// A destination's stored secrets (its password, SSH key, cloud and REST
// credentials) go only to the endpoint they were saved for: an update
// moving the repository elsewhere (403) and a test of a form edited to
// point elsewhere (400) must send them again.

// repositoryLocation is where a repository's secrets go: its type and the
// endpoint restic connects to (scheme, host and port; an SFTP one's host
// and port); a local repository: its environment.
func repositoryLocation(d store.BackupDestination) string {
	repo := normalizeRepository(d.Repository)
	typ, err := backup.ParseRepository(repo)
	if err != nil {
		return d.Repository
	}
	if typ == backup.TypeLocal {
		if d.EnvironmentID == nil {
			return "local"
		}
		return fmt.Sprintf("local (environment %d)", *d.EnvironmentID)
	}
	return typ + ":" + repositoryEndpoint(repo, typ)
}

// repositoryEndpoint is scheme://host:port of a remote repository (the
// defaults restic takes filled in), lower case.
func repositoryEndpoint(repo, typ string) string {
	host := strings.ToLower(repositoryHost(repo, typ))
	scheme, port := "", ""
	switch typ {
	case backup.TypeSFTP:
		scheme, port = "ssh", "22"
		if u, err := url.Parse(repo); err == nil && strings.HasPrefix(repo, "sftp://") && u.Port() != "" {
			port = u.Port()
		}
	case backup.TypeREST:
		if u, err := url.Parse(strings.TrimPrefix(repo, "rest:")); err == nil {
			scheme, port = strings.ToLower(u.Scheme), u.Port()
		}
	case backup.TypeS3:
		rest := strings.TrimPrefix(repo, "s3:")
		scheme = "https" // restic's default for an endpoint without one
		if s, after, ok := strings.Cut(rest, "://"); ok {
			scheme, rest = strings.ToLower(s), after
		}
		hostPort, _, _ := strings.Cut(rest, "/")
		if _, p, err := net.SplitHostPort(hostPort); err == nil {
			port = p
		}
	}
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}

// keptSecrets names the secrets of d that req left out (absent, null or
// the mask), so that they are old's stored ones. AWS_DEFAULT_REGION is
// not one.
func keptSecrets(old, d store.BackupDestination, req backupDestinationRequest) []string {
	var kept []string
	if req.Password.change() == nil && old.Password != "" && d.Password == old.Password {
		kept = append(kept, "password")
	}
	if req.SSHKey.change() == nil && old.SSHKey != "" && d.SSHKey == old.SSHKey {
		kept = append(kept, "SSH key")
	}
	var urlUser, urlPassword string
	if req.Repository != nil {
		_, urlUser, urlPassword, _ = splitRESTCredentials(strings.TrimSpace(*req.Repository))
	}
	for _, k := range slices.Sorted(maps.Keys(d.EnvVars)) {
		v := d.EnvVars[k]
		if k == "AWS_DEFAULT_REGION" || v == "" || old.EnvVars[k] != v {
			continue
		}
		if sent, ok := req.EnvVars[k]; ok && sent != secretMask {
			continue
		}
		if k == "RESTIC_REST_USERNAME" && urlUser != "" || k == "RESTIC_REST_PASSWORD" && urlPassword != "" {
			continue
		}
		kept = append(kept, k)
	}
	return kept
}

// secretsStayHome refuses (with kind) the destination d, edited from old
// by req, when it points to another endpoint than old's and would take
// any of old's stored secrets there.
func secretsStayHome(old, d store.BackupDestination, req backupDestinationRequest, kind fault.Kind) error {
	from, to := repositoryLocation(old), repositoryLocation(d)
	if from == to {
		return nil
	}
	kept := keptSecrets(old, d, req)
	if len(kept) == 0 {
		return nil
	}
	return fault.New(kind, fmt.Sprintf("The credentials must be entered again for a new host: the stored %s "+
		"are saved for %s, not for %s", strings.Join(kept, ", "), from, to))
}

// edits reports whether req changes anything of a saved destination.
func (r backupDestinationRequest) edits() bool {
	return r.Name != nil || r.Repository != nil || r.Password.present || r.EnvVars != nil || r.Flags != nil ||
		r.HostPath != nil || r.Policies != nil || r.EnvironmentID != nil || r.SSHKey.present || r.SSHKnownHosts != nil
}

// testEditedDestination tests saved destination d as a form edited it
// (req): the secrets req leaves out are d's stored ones, only while the
// repository stays on d's endpoint. Nothing is stored, not even the
// test's outcome.
func (s *Server) testEditedDestination(c *gin.Context, d store.BackupDestination, req backupDestinationRequest) error {
	ctx := c.Request.Context()
	edited := d
	if err := s.applyBackupDestination(ctx, &edited, req); err != nil {
		return err
	}
	if err := secretsStayHome(d, edited, req, fault.Invalid); err != nil {
		return err
	}
	if err := s.checkLocalRepository(c, edited, &d); err != nil {
		return err
	}
	edited.ID = 0 // a test of what is not saved records nothing
	return writeJSON(c, http.StatusOK, toBackupTestAnswer(s.testRepository(ctx, edited)))
}
