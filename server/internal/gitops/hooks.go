package gitops

import (
	"context"
	"fmt"
	"strings"

	"github.com/berth-dev/berth/server/internal/schedule"
	"github.com/berth-dev/berth/server/internal/stacks"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// Hook is one webhook call: for a repository (every git stack deploying
// from it) or for one git stack.
type Hook struct {
	RepositoryID int64
	GitStackID   int64
	Body         []byte
	Proof        Proof
}

// HookOutcome is what a webhook did, for its answer and its audit entry.
type HookOutcome struct {
	Message  string
	Push     Push
	Deployed []Deployed
}

// Deployed is one git stack a webhook redeployed (or tried to).
type Deployed struct {
	GitStack store.GitStack
	Result   Result
	Err      error
}

var errWebhookDisabled = fault.New(fault.Forbidden, "Webhook is disabled")

// Webhook processes a webhook call in the spec's order: verify the secret
// or signature; check the payload and the repository; ignore pushes to
// other branches; pull with the configured credentials and bring each stack
// up; the caller writes the audit entry. Syncs are recorded by Deploy.
func (s *Service) Webhook(ctx context.Context, h Hook) (HookOutcome, error) {
	var (
		secret  string
		enabled bool
		branch  string
		targets []store.GitStack
	)
	if h.GitStackID != 0 {
		g, err := s.store.GetGitStack(ctx, h.GitStackID)
		if err != nil {
			return HookOutcome{}, notFound(err, errGitStackNotFound)
		}
		repo, err := s.store.GetGitRepository(ctx, g.RepositoryID)
		if err != nil {
			return HookOutcome{}, notFound(err, errRepositoryNotFound)
		}
		secret, enabled, branch, targets = g.WebhookSecret, g.WebhookEnabled, repo.Branch, []store.GitStack{g}
	} else {
		repo, err := s.store.GetGitRepository(ctx, h.RepositoryID)
		if err != nil {
			return HookOutcome{}, notFound(err, errRepositoryNotFound)
		}
		if targets, err = s.store.ListGitStacks(ctx, repo.ID); err != nil {
			return HookOutcome{}, err
		}
		secret, enabled, branch = repo.WebhookSecret, repo.WebhookEnabled, repo.Branch
	}
	if err := Verify(secret, h.Body, h.Proof); err != nil {
		return HookOutcome{}, err
	}
	if !enabled {
		return HookOutcome{}, errWebhookDisabled
	}
	push, err := ParsePush(h.Body)
	if err != nil {
		return HookOutcome{}, err
	}
	out := HookOutcome{Push: push}
	if len(strings.TrimSpace(string(h.Body))) > 0 {
		switch {
		case push.Ref == "":
			out.Message = "No branch in the payload: nothing to deploy"
			return out, nil
		case push.Branch != branch:
			out.Message = fmt.Sprintf("Push to '%s' ignored: the stack deploys branch '%s'", push.Ref, branch)
			return out, nil
		}
	}
	if len(targets) == 0 {
		out.Message = "No git stack deploys from this repository"
		return out, nil
	}
	var msgs []string
	for _, g := range targets {
		d := s.deployTarget(ctx, g, schedule.TriggerWebhook)
		out.Deployed = append(out.Deployed, d)
		if d.Err != nil {
			msgs = append(msgs, fmt.Sprintf("Stack '%s' failed: %s", g.StackName, stacks.Message(d.Err)))
		} else {
			msgs = append(msgs, d.Result.Message)
		}
	}
	out.Message = strings.Join(msgs, "; ")
	return out, nil
}

// deployTarget deploys git stack g in its environment, for a webhook or a
// repository deploy (trigger).
func (s *Service) deployTarget(ctx context.Context, g store.GitStack, trigger string) Deployed {
	d := Deployed{GitStack: g}
	env, err := s.store.GetEnvironment(ctx, g.EnvironmentID)
	if err != nil {
		d.Err = err
		return d
	}
	d.Result, d.Err = s.recordedDeploy(ctx, env, g, trigger)
	return d
}

// recordedDeploy deploys git stack g as an execution of its sync schedule
// triggered by trigger, when a Recorder is in use.
func (s *Service) recordedDeploy(ctx context.Context, env store.Environment, g store.GitStack, trigger string) (Result, error) {
	if s.recorder == nil {
		return s.Deploy(ctx, env, g.ID, false, nil)
	}
	var (
		res       Result
		deployErr error
	)
	_, err := s.recorder.Record(ctx, schedule.GitStackSync, g.ID, trigger,
		func(ctx context.Context, _ schedule.Definition, run *schedule.Run) error {
			res, deployErr = s.deployRun(ctx, env, g.ID, false, run)
			return deployErr
		})
	if deployErr == nil {
		deployErr = err // not run (a sync in progress), or not recorded
	}
	return res, deployErr
}

// Failed reports whether any deploy of the outcome failed.
func (o HookOutcome) Failed() bool {
	for _, d := range o.Deployed {
		if d.Err != nil {
			return true
		}
	}
	return false
}
