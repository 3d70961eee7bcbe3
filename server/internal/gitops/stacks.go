package gitops

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/berth-dev/berth/server/internal/schedule"
	"github.com/berth-dev/berth/server/internal/stacks"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// StackSpec is a new git stack.
type StackSpec struct {
	StackName   string
	Environment store.Environment
	Git         store.GitStack // repository, paths, schedule record, webhook
	EnvVars     []stacks.Variable
}

// CreateStack validates spec and records the git stack with its variables.
// It clones nothing yet (see Deploy).
func (s *Service) CreateStack(ctx context.Context, spec StackSpec) (store.GitStack, error) {
	g := spec.Git
	if err := stacks.CheckName(spec.StackName); err != nil {
		return store.GitStack{}, err
	}
	if err := s.checkStack(ctx, &g); err != nil {
		return store.GitStack{}, err
	}
	st := store.Stack{EnvironmentID: spec.Environment.ID, Name: spec.StackName, SourceType: store.SourceGit, ComposePath: g.ComposePath}
	if err := s.stacks.CreateRecord(ctx, spec.Environment, &st, func(st *store.Stack) error {
		return s.store.CreateGitStack(ctx, st, &g, nil)
	}); err != nil {
		return store.GitStack{}, err
	}
	if len(spec.EnvVars) > 0 {
		if err := s.stacks.SetVariables(ctx, spec.Environment, st.Name, spec.EnvVars); err != nil {
			s.store.DeleteStack(ctx, st.ID)
			return store.GitStack{}, err
		}
	}
	return s.store.GetGitStack(ctx, g.ID)
}

// checkStack validates the settings of a git stack.
func (s *Service) checkStack(ctx context.Context, g *store.GitStack) error {
	if _, err := s.store.GetGitRepository(ctx, g.RepositoryID); err != nil {
		return notFound(err, errRepositoryNotFound)
	}
	var err error
	if g.ComposePath, err = checkRelPath("compose path", g.ComposePath); err != nil {
		return err
	}
	if g.ComposePath == "" {
		g.ComposePath = "compose.yaml"
	}
	if g.EnvFilePath, err = checkRelPath("env file path", g.EnvFilePath); err != nil {
		return err
	}
	return checkSchedule(g)
}

// UpdateStack writes new settings of a git stack with the webhook secret
// webhookSecret: nil keeps the stored one, "" removes it.
func (s *Service) UpdateStack(ctx context.Context, g *store.GitStack, webhookSecret *string) error {
	old, err := s.store.GetGitStack(ctx, g.ID)
	if err != nil {
		return notFound(err, errGitStackNotFound)
	}
	g.WebhookSecret = old.WebhookSecret
	if webhookSecret != nil {
		g.WebhookSecret = *webhookSecret
	}
	if err := s.checkStack(ctx, g); err != nil {
		return err
	}
	return notFound(s.store.UpdateGitStack(ctx, g), errGitStackNotFound)
}

// Stack returns a git stack, or 404.
func (s *Service) Stack(ctx context.Context, id int64) (store.GitStack, error) {
	g, err := s.store.GetGitStack(ctx, id)
	return g, notFound(err, errGitStackNotFound)
}

// Result is the outcome of a deploy or sync.
type Result struct {
	Deployed bool   `json:"deployed"`
	Commit   string `json:"commit"`
	Message  string `json:"message"`
}

// Deploy pulls the git stack's repository and brings the stack up. With
// onlyChanged (a sync) it deploys only when the commit differs from the
// last one deployed. The outcome is recorded as the stack's last sync and
// the repository's sync time.
func (s *Service) Deploy(ctx context.Context, env store.Environment, id int64, onlyChanged bool, progress engine.ComposeProgress) (Result, error) {
	g, err := s.store.GetGitStack(ctx, id)
	if err != nil {
		return Result{}, notFound(err, errGitStackNotFound)
	}
	res, err := s.deploy(ctx, env, g, onlyChanged, progress)
	status, msg := "success", ""
	if err != nil {
		status, msg = "failed", stacks.Message(err)
	}
	at := s.now().UTC()
	if rerr := s.store.RecordGitSync(context.WithoutCancel(ctx), g.ID, res.Commit, status, msg, at); rerr != nil {
		s.log.Error("record git sync", "gitStack", g.ID, "err", rerr)
	}
	if rerr := s.store.TouchGitRepository(context.WithoutCancel(ctx), g.RepositoryID, at); rerr != nil {
		s.log.Error("record repository sync", "repository", g.RepositoryID, "err", rerr)
	}
	return res, err
}

func (s *Service) deploy(ctx context.Context, env store.Environment, g store.GitStack, onlyChanged bool, progress engine.ComposeProgress) (Result, error) {
	repo, err := s.store.GetGitRepository(ctx, g.RepositoryID)
	if err != nil {
		return Result{}, notFound(err, errRepositoryNotFound)
	}
	auth, err := s.repositoryAuth(ctx, repo)
	if err != nil {
		return Result{}, err
	}
	if ctx, err = s.remoteContext(ctx); err != nil {
		return Result{}, err
	}
	if progress != nil {
		progress(fmt.Sprintf("Pulling %s (branch %s)", repo.URL, repo.Branch))
	}
	commit, err := checkout(ctx, s.stacks.CloneDir(g.StackID), repo.URL, repo.Branch, auth)
	if err != nil {
		return Result{}, err
	}
	short := commit[:min(7, len(commit))]
	if onlyChanged && commit == g.LastCommit && g.LastSyncStatus == "success" {
		return Result{Commit: commit, Message: fmt.Sprintf("Stack '%s' is up to date at commit %s", g.StackName, short)}, nil
	}
	composeFile := filepath.Join(s.stacks.CloneDir(g.StackID), filepath.FromSlash(g.ComposePath))
	if _, err := os.Stat(composeFile); err != nil {
		return Result{Commit: commit}, fault.Wrap(fault.Invalid, fmt.Sprintf("Compose file '%s' not found in the repository", g.ComposePath), err)
	}
	if err := s.stacks.Up(ctx, env, g.StackName, false, progress); err != nil {
		return Result{Commit: commit}, err
	}
	return Result{Deployed: true, Commit: commit, Message: fmt.Sprintf("Deployed stack '%s' at commit %s", g.StackName, short)}, nil
}

// DeleteStack removes a git stack by the stacks' delete rules: containers,
// files, clone, schedule record and records.
func (s *Service) DeleteStack(ctx context.Context, env store.Environment, id int64, force bool) error {
	g, err := s.store.GetGitStack(ctx, id)
	if err != nil {
		return notFound(err, errGitStackNotFound)
	}
	err = s.stacks.Delete(ctx, env, g.StackName, force)
	var f *fault.Error
	if errors.As(err, &f) && f.Kind == fault.NotFound { // no stack on the engine nor files: drop the records
		os.RemoveAll(s.stacks.CloneDir(g.StackID))
		return s.store.DeleteStack(ctx, g.StackID)
	}
	return err
}

// RunSync is the git_stack_sync schedule: pull git stack d.ID's repository
// and redeploy the stack when the commit changed.
func (s *Service) RunSync(ctx context.Context, d schedule.Definition, run *schedule.Run) error {
	g, err := s.store.GetGitStack(ctx, d.ID)
	if err != nil {
		return notFound(err, errGitStackNotFound)
	}
	env, err := s.store.GetEnvironment(ctx, g.EnvironmentID)
	if err != nil {
		return err
	}
	_, err = s.deployRun(ctx, env, g.ID, true, run)
	return err
}

// deployRun is Deploy as the run of an execution: the compose output and
// the outcome go to its logs, the commit and whether it deployed to its
// details.
func (s *Service) deployRun(ctx context.Context, env store.Environment, id int64, onlyChanged bool, run *schedule.Run) (Result, error) {
	res, err := s.Deploy(ctx, env, id, onlyChanged, func(line string) { run.Logf("%s", line) })
	s.notifySync(env.ID, s.stackName(ctx, id), res, err)
	run.Detail("commit", res.Commit)
	run.Detail("deployed", res.Deployed)
	if err != nil {
		return res, err
	}
	run.Logf("%s", res.Message)
	return res, nil
}
