package api

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/gitops"
	"github.com/berth-dev/berth/server/internal/jobs"
	"github.com/berth-dev/berth/server/internal/stacks"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// gitCredentialJSON is a credential as clients read it: never its secrets.
type gitCredentialJSON struct {
	ID          int64  `json:"id"`
	Name        string `json:"name"`
	AuthType    string `json:"authType"`
	Username    string `json:"username"`
	HasPassword bool   `json:"hasPassword"`
	HasSSHKey   bool   `json:"hasSshKey"`
	// Host is the origin (scheme://host:port) the credential is sent to;
	// "" while it is saved for none (only an admin's use binds it).
	Host      string    `json:"host"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

func toCredentialJSON(c store.GitCredential) gitCredentialJSON {
	return gitCredentialJSON{ID: c.ID, Name: c.Name, AuthType: c.AuthType, Username: c.Username, HasPassword: c.Password != "",
		HasSSHKey: c.SSHPrivateKey != "", Host: gitops.CredentialOrigin(c), CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
}

func (s *Server) listGitCredentials(c *gin.Context) error {
	list, err := s.store.ListGitCredentials(c.Request.Context())
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, convert(list, toCredentialJSON))
}

func (s *Server) getGitCredential(c *gin.Context) error {
	id, err := pathID(c, "Credential")
	if err != nil {
		return err
	}
	cred, err := s.git.Credential(c.Request.Context(), id)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, toCredentialJSON(cred))
}

// saveGitCredential creates (POST) or updates (PUT /{id}) a credential. On
// update an absent or null authType or username keeps its value; password
// and sshPrivateKey follow secretField.
func (s *Server) saveGitCredential(c *gin.Context) error {
	var req gitCredentialInput
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	id, status, err := saveTarget(c, "Credential")
	if err != nil {
		return err
	}
	cred, err := s.git.SaveCredential(c.Request.Context(), id, gitops.CredentialSpec{Name: req.Name, AuthType: req.AuthType,
		Username: req.Username, Password: req.Password.change(), SSHPrivateKey: req.SSHPrivateKey.change(), Host: req.Host,
		SSHPassphrase: req.SSHPassphrase.change()})
	if err != nil {
		return err
	}
	noteAudit(c, fmt.Sprint(cred.ID), cred.Name)
	return writeJSON(c, status, toCredentialJSON(cred))
}

func (s *Server) deleteGitCredential(c *gin.Context) error {
	id, err := pathID(c, "Credential")
	if err != nil {
		return err
	}
	if err := s.git.DeleteCredential(c.Request.Context(), id); err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, success)
}

// saveTarget tells a save handler what it saves: a new record (POST, 201)
// or the record of the {id} path parameter (PUT, 200).
func saveTarget(c *gin.Context, what string) (id int64, status int, err error) {
	if c.Request.Method != http.MethodPut {
		return 0, http.StatusCreated, nil
	}
	id, err = pathID(c, what)
	return id, http.StatusOK, err
}

// gitRepositoryJSON is a repository as clients read it (never its webhook
// secret).
type gitRepositoryJSON struct {
	ID               int64      `json:"id"`
	Name             string     `json:"name"`
	URL              string     `json:"url"`
	Branch           string     `json:"branch"`
	CredentialID     *int64     `json:"credentialId"`
	WebhookEnabled   bool       `json:"webhookEnabled"`
	HasWebhookSecret bool       `json:"hasWebhookSecret"`
	WebhookPath      string     `json:"webhookPath"`
	LastSync         *time.Time `json:"lastSync"`
	// The last fetch of the branch (a sync, a test, a helper): status
	// never, success or failed, as GET …/{id}/sync tells it.
	SyncStatus string     `json:"syncStatus"`
	SyncCommit string     `json:"syncCommit,omitempty"`
	SyncError  string     `json:"syncError,omitempty"`
	SyncedAt   *time.Time `json:"syncedAt"`
	CreatedAt  time.Time  `json:"createdAt"`
	UpdatedAt  time.Time  `json:"updatedAt"`
}

func toRepositoryJSON(g store.GitRepository) gitRepositoryJSON {
	out := gitRepositoryJSON{ID: g.ID, Name: g.Name, URL: g.URL, Branch: g.Branch, CredentialID: g.CredentialID,
		WebhookEnabled: g.WebhookEnabled, HasWebhookSecret: g.WebhookSecret != "", WebhookPath: fmt.Sprintf("/api/git/webhook/%d", g.ID),
		LastSync: g.LastSyncAt, CreatedAt: g.CreatedAt, UpdatedAt: g.UpdatedAt}
	st := gitops.RepositoryStatus(g)
	out.SyncStatus, out.SyncCommit, out.SyncError, out.SyncedAt = st.Status, st.Commit, st.Error, st.SyncedAt
	return out
}

func (s *Server) listGitRepositories(c *gin.Context) error {
	list, err := s.store.ListGitRepositories(c.Request.Context())
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, convert(list, toRepositoryJSON))
}

func (s *Server) getGitRepository(c *gin.Context) error {
	id, err := pathID(c, "Repository")
	if err != nil {
		return err
	}
	g, err := s.git.Repository(c.Request.Context(), id)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, toRepositoryJSON(g))
}

// saveGitRepository creates (POST) or updates (PUT /{id}) a repository.
func (s *Server) saveGitRepository(c *gin.Context) error {
	var req gitRepositoryInput
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	id, status, err := saveTarget(c, "Repository")
	if err != nil {
		return err
	}
	g := store.GitRepository{ID: id, Name: req.Name, URL: req.URL, Branch: req.Branch, CredentialID: req.CredentialID,
		WebhookEnabled: req.WebhookEnabled}
	if err := s.git.SaveRepository(c.Request.Context(), &g, req.WebhookSecret.change(), callerIsAdmin(c)); err != nil {
		return err
	}
	noteAudit(c, fmt.Sprint(g.ID), g.Name)
	return writeJSON(c, status, toRepositoryJSON(g))
}

func (s *Server) deleteGitRepository(c *gin.Context) error {
	id, err := pathID(c, "Repository")
	if err != nil {
		return err
	}
	if err := s.git.DeleteRepository(c.Request.Context(), id); err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, success)
}

// gitStackJSON is a git stack as clients read it (never its webhook secret).
type gitStackJSON struct {
	ID               int64      `json:"id"`
	StackName        string     `json:"stackName"`
	EnvironmentID    int64      `json:"environmentId"`
	RepositoryID     int64      `json:"repositoryId"`
	ComposePath      string     `json:"composePath"`
	EnvFilePath      string     `json:"envFilePath"`
	AutoUpdate       bool       `json:"autoUpdate"`
	AutoUpdateCron   string     `json:"autoUpdateCron"`
	WebhookEnabled   bool       `json:"webhookEnabled"`
	HasWebhookSecret bool       `json:"hasWebhookSecret"`
	WebhookPath      string     `json:"webhookPath"`
	LastCommit       string     `json:"lastCommit"`
	LastSync         *time.Time `json:"lastSync"`
	LastSyncStatus   string     `json:"lastSyncStatus"`
	LastSyncError    string     `json:"lastSyncError"`
	CreatedAt        time.Time  `json:"createdAt"`
	UpdatedAt        time.Time  `json:"updatedAt"`
	JobID            string     `json:"jobId,omitempty"`
}

func toGitStackJSON(g store.GitStack) gitStackJSON {
	return gitStackJSON{ID: g.ID, StackName: g.StackName, EnvironmentID: g.EnvironmentID, RepositoryID: g.RepositoryID,
		ComposePath: g.ComposePath, EnvFilePath: g.EnvFilePath, AutoUpdate: g.AutoUpdate, AutoUpdateCron: g.AutoUpdateCron,
		WebhookEnabled: g.WebhookEnabled, HasWebhookSecret: g.WebhookSecret != "", WebhookPath: fmt.Sprintf("/api/git/stacks/%d/webhook", g.ID),
		LastCommit: g.LastCommit, LastSync: g.LastSyncAt, LastSyncStatus: g.LastSyncStatus, LastSyncError: g.LastSyncError,
		CreatedAt: g.CreatedAt, UpdatedAt: g.UpdatedAt}
}

// listGitStacks answers the git stacks, only those of one environment with
// the reference's ?env=.
func (s *Server) listGitStacks(c *gin.Context) error {
	var envID int64
	if v := c.Query("env"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return fault.New(fault.Invalid, "Invalid environment ID: env must be a positive integer")
		}
		envID = n
	}
	list, err := s.store.ListGitStacks(c.Request.Context(), 0)
	if err != nil {
		return err
	}
	if envID > 0 {
		list = slices.DeleteFunc(list, func(g store.GitStack) bool { return g.EnvironmentID != envID })
	}
	return writeJSON(c, http.StatusOK, convert(list, toGitStackJSON))
}

func (s *Server) getGitStack(c *gin.Context) error {
	id, err := pathID(c, "Git stack")
	if err != nil {
		return err
	}
	g, err := s.git.Stack(c.Request.Context(), id)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, toGitStackJSON(g))
}

// gitStackRequest is COMPAT's git stack body (webhookSecret follows
// secretField).
type gitStackRequest struct {
	StackName      string            `json:"stackName"`
	EnvironmentID  int64             `json:"environmentId"`
	RepositoryID   int64             `json:"repositoryId"`
	ComposePath    string            `json:"composePath"`
	EnvFilePath    string            `json:"envFilePath"`
	AutoUpdate     bool              `json:"autoUpdate"`
	AutoUpdateCron string            `json:"autoUpdateCron"`
	WebhookEnabled bool              `json:"webhookEnabled"`
	WebhookSecret  secretField       `json:"webhookSecret"`
	DeployNow      bool              `json:"deployNow"`
	EnvVars        []stacks.Variable `json:"envVars"`
}

func (q gitStackRequest) record() store.GitStack {
	return store.GitStack{RepositoryID: q.RepositoryID, ComposePath: q.ComposePath, EnvFilePath: q.EnvFilePath,
		AutoUpdate: q.AutoUpdate, AutoUpdateCron: q.AutoUpdateCron, WebhookEnabled: q.WebhookEnabled}
}

// createGitStack records a git stack; with deployNow it also starts its
// first deploy as a job, whose id the answer carries.
func (s *Server) createGitStack(c *gin.Context) error {
	var req gitStackRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	if req.EnvironmentID == 0 {
		req.EnvironmentID = DefaultEnvironmentID
	}
	env, err := s.environmentFor(c, req.EnvironmentID, "stacks:create")
	if err != nil {
		return err
	}
	git := req.record()
	req.WebhookSecret.applyTo(&git.WebhookSecret)
	g, err := s.git.CreateStack(c.Request.Context(), gitops.StackSpec{StackName: req.StackName, Environment: env, Git: git, EnvVars: req.EnvVars})
	if err != nil {
		return err
	}
	noteAudit(c, fmt.Sprint(g.ID), g.StackName)
	s.schedulesChanged(c) // its auto-sync
	out := toGitStackJSON(g)
	if req.DeployNow {
		out.JobID = s.startJob(c, s.gitDeployJob(env, g.ID, false)).ID
	}
	return writeJSON(c, http.StatusCreated, out)
}

func (s *Server) updateGitStack(c *gin.Context) error {
	id, err := pathID(c, "Git stack")
	if err != nil {
		return err
	}
	var req gitStackRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	g := req.record()
	g.ID = id
	if err := s.git.UpdateStack(c.Request.Context(), &g, req.WebhookSecret.change()); err != nil {
		return err
	}
	g, err = s.git.Stack(c.Request.Context(), id)
	if err != nil {
		return err
	}
	noteAudit(c, fmt.Sprint(g.ID), g.StackName)
	s.schedulesChanged(c) // its auto-sync
	return writeJSON(c, http.StatusOK, toGitStackJSON(g))
}

func (s *Server) deleteGitStack(c *gin.Context) error {
	g, env, err := s.gitStackOf(c, "stacks:remove")
	if err != nil {
		return err
	}
	force, err := queryBool(c, "force", true)
	if err != nil {
		return err
	}
	if err := s.git.DeleteStack(c.Request.Context(), env, g.ID, force); err != nil {
		return err
	}
	noteAudit(c, fmt.Sprint(g.ID), g.StackName)
	s.schedulesChanged(c) // its auto-sync went with it
	return writeJSON(c, http.StatusOK, success)
}

// deployGitStack pulls and deploys (sync: only when the commit changed) as
// a job: {jobId}, or the final payload with Accept: application/json.
func (s *Server) deployGitStack(onlyChanged bool) handler {
	return func(c *gin.Context) error {
		g, env, err := s.gitStackOf(c, "stacks:start")
		if err != nil {
			return err
		}
		noteAudit(c, fmt.Sprint(g.ID), g.StackName)
		return s.runJob(c, s.gitDeployJob(env, g.ID, onlyChanged))
	}
}

// gitDeployJob deploys a git stack, streaming {message} lines; the final
// payload is {success, deployed, commit, message, output, error?}.
func (s *Server) gitDeployJob(env store.Environment, id int64, onlyChanged bool) jobs.Func {
	return func(ctx context.Context, emit jobs.Emit) (string, any, bool) {
		var out output
		res, err := s.git.Deploy(ctx, env, id, onlyChanged, out.streamTo(emit))
		final := map[string]any{"success": err == nil, "deployed": res.Deployed, "commit": res.Commit, "message": res.Message,
			"output": out.String()}
		if err != nil {
			final["error"] = stacks.Message(err)
		}
		return "", final, err != nil
	}
}

// gitStackOf returns the git stack of the {id} path parameter and its
// environment, once the user holds perm there.
func (s *Server) gitStackOf(c *gin.Context, perm string) (store.GitStack, store.Environment, error) {
	id, err := pathID(c, "Git stack")
	if err != nil {
		return store.GitStack{}, store.Environment{}, err
	}
	g, err := s.git.Stack(c.Request.Context(), id)
	if err != nil {
		return store.GitStack{}, store.Environment{}, err
	}
	env, err := s.environmentFor(c, g.EnvironmentID, perm)
	return g, env, err
}

// environmentFor returns environment id once the request's user holds perm
// in it (git routes name their environment in the body or the record).
func (s *Server) environmentFor(c *gin.Context, id int64, perm string) (store.Environment, error) {
	env, err := s.environmentByID(c.Request.Context(), id)
	if err != nil {
		return store.Environment{}, err
	}
	if ident := identityOf(c); ident != nil {
		if err := denial(ident.Access.Check(perm, &env.ID)); err != nil {
			return store.Environment{}, err
		}
	}
	return env, nil
}

// maxWebhookBody bounds a webhook payload (GitHub caps theirs at 25 MB;
// pushes are far smaller).
const maxWebhookBody = 5 << 20

// gitWebhook serves POST and GET of the repository webhook and of the
// per-stack form: verified by signature, GitLab token or secret, never by a
// session. The answer is {success, message}; an audit entry records it.
func (s *Server) gitWebhook(perStack bool) handler {
	return func(c *gin.Context) error {
		id, err := pathID(c, "Webhook")
		if err != nil {
			return err
		}
		body, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, maxWebhookBody))
		if err != nil {
			return fault.New(fault.Invalid, "Webhook payload too large")
		}
		secret, hasSecret := c.Request.URL.Query()["secret"]
		h := gitops.Hook{Body: body, Proof: gitops.Proof{Signature256: c.GetHeader("X-Hub-Signature-256"),
			GitLabToken: c.GetHeader("X-Gitlab-Token"), HasSecret: hasSecret}}
		if hasSecret {
			h.Proof.Secret = secret[0]
		}
		if c.Request.Method == http.MethodGet {
			h.Body = nil // a manual trigger: no payload
		}
		if perStack {
			h.GitStackID = id
		} else {
			h.RepositoryID = id
		}
		out, err := s.git.Webhook(c.Request.Context(), h)
		s.auditWebhook(c, id, perStack, out, err)
		if err != nil {
			f, ok := fault.As(err)
			if !ok {
				return err
			}
			return writeJSON(c, statusOf[f.Kind], map[string]any{"success": false, "message": f.Message, "error": f.Message})
		}
		return writeJSON(c, http.StatusOK, map[string]any{"success": !out.Failed(), "message": out.Message})
	}
}

// auditWebhook writes the audit entry of a webhook call.
func (s *Server) auditWebhook(c *gin.Context, id int64, perStack bool, out gitops.HookOutcome, err error) {
	e := store.AuditEntry{Action: "git.webhook", EntityType: "git_repository", EntityID: fmt.Sprint(id)}
	if perStack {
		e.EntityType = "git_stack"
	}
	e.Description = out.Message
	if err != nil {
		e.Description = "Webhook refused: " + stacks.Message(err)
	}
	names := []string{}
	for _, d := range out.Deployed {
		names = append(names, d.GitStack.StackName)
		envID := d.GitStack.EnvironmentID
		e.EnvironmentID = &envID
	}
	e.EntityName = strings.Join(names, ",")
	details, _ := json.Marshal(map[string]any{"ref": out.Push.Ref, "pusher": out.Push.PusherName,
		"email": out.Push.PusherEmail, "commits": len(out.Push.Commits)})
	e.Details = string(details)
	if out.Push.PusherName != "" {
		e.Username = "webhook:" + out.Push.PusherName
	}
	s.audit(c, e)
}
