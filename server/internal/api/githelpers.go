package api

import (
	"context"
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/auth"
	"github.com/berth-dev/berth/server/internal/gitops"
	"github.com/berth-dev/berth/server/internal/jobs"
	"github.com/berth-dev/berth/server/internal/stacks"
)

// The git helpers (issue 15). COMPAT names these endpoints but not their
// shapes; they are documented on each handler. Tests and previews change
// nothing; a repository that cannot be reached is reported in the answer
// (success false, error) rather than as an HTTP error, as the environment
// test does.

// probeRequest is a repository to test or preview: a URL and branch with a
// stored credential (credentialId) or an inline one (authType, username,
// password, sshPrivateKey), never saved.
type probeRequest struct {
	URL           string  `json:"url"`
	Branch        string  `json:"branch"`
	CredentialID  *int64  `json:"credentialId"`
	AuthType      *string `json:"authType"`
	Username      *string `json:"username"`
	Password      *string `json:"password"`
	SSHPrivateKey *string `json:"sshPrivateKey"`
}

func (q probeRequest) probe(c *gin.Context) gitops.Probe {
	p := gitops.Probe{URL: q.URL, Branch: q.Branch, CredentialID: q.CredentialID, Admin: callerIsAdmin(c)}
	if q.CredentialID == nil && (q.AuthType != nil || q.Password != nil || q.SSHPrivateKey != nil) {
		p.Credential = &gitops.CredentialSpec{AuthType: q.AuthType, Username: q.Username, Password: q.Password, SSHPrivateKey: q.SSHPrivateKey}
	}
	return p
}

// mayUseStoredCredential refuses a test or preview of unsaved settings that
// names a stored credential (credentialId) to a user who may not edit
// credentials (git:edit): such a test sends the credential.
func (q probeRequest) mayUseStoredCredential(c *gin.Context) error {
	if ident := identityOf(c); q.CredentialID != nil && ident != nil && ident.Access.CheckAny("git:edit") != auth.Allowed {
		return errPermission
	}
	return nil
}

// callerIsAdmin reports whether the request's user is an admin (anyone is
// when authentication is off).
func callerIsAdmin(c *gin.Context) bool {
	ident := identityOf(c)
	return ident == nil || ident.Access.Admin
}

// testNewGitRepository answers POST /api/git/repositories/test {url,
// branch, credentialId | authType, username, password, sshPrivateKey} with
// {success, branch, branchExists, branches?, commit?, error?} (git
// ls-remote). A malformed URL or branch, or an invalid inline credential,
// is a 400; a stored credential needs git:edit and must be saved for the
// URL's host (403).
func (s *Server) testNewGitRepository(c *gin.Context) error {
	var req probeRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	if err := req.mayUseStoredCredential(c); err != nil {
		return err
	}
	out, err := s.git.TestRepository(c.Request.Context(), req.probe(c))
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, out)
}

// testGitRepository answers POST /api/git/repositories/{id}/test like
// testNewGitRepository, with the stored URL, branch and credential.
func (s *Server) testGitRepository(c *gin.Context) error {
	id, err := pathID(c, "Repository")
	if err != nil {
		return err
	}
	out, err := s.git.TestSavedRepository(c.Request.Context(), id)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, out)
}

// gitRepositorySync serves GET and POST /api/git/repositories/{id}/sync:
// POST fetches the repository's branch now into its mirror; both answer
// {success, repositoryId, branch, status: never|success|failed, commit?,
// error?, syncedAt, lastSync}. A fetch that fails is success false with
// the error, status 200.
func (s *Server) gitRepositorySync(m *gitops.Mirrors) handler {
	return func(c *gin.Context) error {
		id, err := pathID(c, "Repository")
		if err != nil {
			return err
		}
		var st gitops.SyncStatus
		if c.Request.Method == http.MethodPost {
			st, err = m.Sync(c.Request.Context(), id)
		} else {
			st, err = m.Status(c.Request.Context(), id)
		}
		if err != nil {
			return err
		}
		if c.Request.Method == http.MethodPost {
			if r, err := s.git.Repository(c.Request.Context(), id); err == nil {
				noteAudit(c, fmt.Sprint(id), r.Name)
			}
		}
		return writeJSON(c, http.StatusOK, struct {
			Success bool `json:"success"`
			gitops.SyncStatus
		}{st.Status != "failed", st})
	}
}

// deployGitRepository answers POST /api/git/repositories/{id}/deploy: every
// git stack of the repository is deployed, one after the other, as the
// webhook does (each recorded as a manual run of its sync schedule). The
// user needs stacks:start in each stack's environment. It is a job:
// {jobId}, or with Accept: application/json the final payload {success,
// message, results: [{gitStackId, stackName, success, deployed, commit,
// message, error?}]}; progress events are {message}.
func (s *Server) deployGitRepository(c *gin.Context) error {
	id, err := pathID(c, "Repository")
	if err != nil {
		return err
	}
	r, err := s.git.Repository(c.Request.Context(), id)
	if err != nil {
		return err
	}
	targets, err := s.store.ListGitStacks(c.Request.Context(), id)
	if err != nil {
		return err
	}
	for _, g := range targets {
		if _, err := s.environmentFor(c, g.EnvironmentID, "stacks:start"); err != nil {
			return err
		}
	}
	noteAudit(c, fmt.Sprint(id), r.Name)
	return s.runJob(c, func(ctx context.Context, emit jobs.Emit) (string, any, bool) {
		var out output
		res, err := s.git.DeployRepository(ctx, id, out.streamTo(emit))
		results := []map[string]any{}
		failed := err != nil
		for _, d := range res.Deployed {
			item := map[string]any{"gitStackId": d.GitStack.ID, "stackName": d.GitStack.StackName, "success": d.Err == nil,
				"deployed": d.Result.Deployed, "commit": d.Result.Commit, "message": d.Result.Message}
			if d.Err != nil {
				item["error"] = stacks.Message(d.Err)
				failed = true
			}
			results = append(results, item)
		}
		final := map[string]any{"success": !failed, "message": res.Message, "results": results, "output": out.String()}
		if err != nil {
			final["error"] = stacks.Message(err)
		}
		return "", final, failed
	})
}

// testGitStack answers POST /api/git/stacks/{id}/test: the repository is
// fetched (into its mirror: the deployed clone is not touched) and the
// compose and env file paths are checked at the branch head: {success,
// commit?, branch, composePath, composeFileExists, envFilePath,
// envFileExists (null without an env file path), error?}.
func (s *Server) testGitStack(m *gitops.Mirrors) handler {
	return func(c *gin.Context) error {
		g, _, err := s.gitStackOf(c, "stacks:view")
		if err != nil {
			return err
		}
		out, err := m.TestStack(c.Request.Context(), g.ID)
		if err != nil {
			return err
		}
		return writeJSON(c, http.StatusOK, out)
	}
}

// gitStackEnvFiles serves /api/git/stacks/{id}/env-files. GET lists the
// env files of the repository at the branch head (.env, .env.*, *.env;
// those next to the compose file first): {files, commit, composePath,
// envFilePath, truncated}. POST {path} reads the variables of one of them
// without deploying or saving anything: {vars: {name: value}, commit,
// path} (the reference's shapes); a file not in the repository is a 404.
func (s *Server) gitStackEnvFiles(m *gitops.Mirrors) handler {
	return func(c *gin.Context) error {
		g, _, err := s.gitStackOf(c, "stacks:view")
		if err != nil {
			return err
		}
		if c.Request.Method == http.MethodGet {
			out, err := m.EnvFiles(c.Request.Context(), g.ID)
			if err != nil {
				return err
			}
			return writeJSON(c, http.StatusOK, out)
		}
		var req pathInput
		if err := bindJSON(c, &req); err != nil {
			return err
		}
		out, err := m.ReadEnvFile(c.Request.Context(), g.ID, req.Path)
		if err != nil {
			return err
		}
		return writeJSON(c, http.StatusOK, out)
	}
}

// deployGitStackStream answers POST /api/git/stacks/{id}/deploy-stream with
// the deploy of POST …/deploy as an event stream, in the style of stack
// deploys: {message} progress events, then the final payload {success,
// deployed, commit, message, output, error?}. The job id is in X-Job-Id.
func (s *Server) deployGitStackStream(c *gin.Context) error {
	g, env, err := s.gitStackOf(c, "stacks:start")
	if err != nil {
		return err
	}
	noteAudit(c, fmt.Sprint(g.ID), g.StackName)
	return s.streamJob(c, s.gitDeployJob(env, g.ID, false))
}

// previewGitEnv answers POST /api/git/preview-env {repositoryId | url with
// credentialId or an inline credential, branch?, composePath?,
// envFilePath?} with {commit, branch, composePath, envFilePath, variables:
// [{key, value, isSecret}], composeVariables: [{name, defaultValue?,
// required}], missing}. A compose or env file not in the repository is a
// 400; nothing is saved.
func (s *Server) previewGitEnv(m *gitops.Mirrors) handler {
	return func(c *gin.Context) error {
		var req previewEnvInput
		if err := bindJSON(c, &req); err != nil {
			return err
		}
		if err := req.mayUseStoredCredential(c); err != nil {
			return err
		}
		out, err := m.PreviewEnv(c.Request.Context(), gitops.PreviewSpec{Probe: req.probe(c), RepositoryID: req.RepositoryID,
			ComposePath: req.ComposePath, EnvFilePath: req.EnvFilePath})
		if err != nil {
			return err
		}
		return writeJSON(c, http.StatusOK, out)
	}
}
