package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/compose-spec/compose-go/v2/types"
	"github.com/docker/cli/cli/command"
	"github.com/docker/cli/cli/config/configfile"
	clitypes "github.com/docker/cli/cli/config/types"
	"github.com/docker/cli/cli/flags"
	"github.com/docker/compose/v5/pkg/api"
	"github.com/docker/compose/v5/pkg/compose"

	"github.com/berth-dev/berth/shared/agentpb"
)

// Compose labels the engine's containers carry (set by every compose
// implementation, Berth's included).
const (
	ComposeProjectLabel    = api.ProjectLabel
	ComposeServiceLabel    = api.ServiceLabel
	ComposeWorkingDirLabel = api.WorkingDirLabel
	ComposeConfigLabel     = api.ConfigFilesLabel
	ComposeOneoffLabel     = api.OneoffLabel
)

// composeTimeout bounds one compose operation (pulls included).
const composeTimeout = 30 * time.Minute

// ComposeProgress receives one human-readable line of a compose operation.
type ComposeProgress func(line string)

// LabelProject sets the labels compose itself puts on a project's
// containers, so that the engine, the compose CLI and Berth agree on which
// containers belong to it.
func LabelProject(p *types.Project) {
	for name, s := range p.Services {
		s.CustomLabels = map[string]string{
			api.ProjectLabel:     p.Name,
			api.ServiceLabel:     name,
			api.VersionLabel:     api.ComposeVersion,
			api.WorkingDirLabel:  p.WorkingDir,
			api.ConfigFilesLabel: strings.Join(p.ComposeFiles, ","),
			api.OneoffLabel:      "False",
		}
		p.Services[name] = s
	}
}

// compose returns the compose library bound to this engine, reporting
// progress lines to progress.
func (c *Client) compose(auths []Credentials, progress ComposeProgress) (api.Compose, error) {
	cli, err := command.NewDockerCli(command.WithAPIClient(c.cli), command.WithCombinedStreams(io.Discard),
		command.WithInputStream(io.NopCloser(strings.NewReader(""))))
	if err != nil {
		return nil, fmt.Errorf("compose: %w", err)
	}
	// Initialize resolves the context the library asks for; left out, the
	// CLI exits the process on first use. A fixed host pins the default
	// context, so that no DOCKER_HOST, DOCKER_CONTEXT or CLI configuration of
	// Berth's own process can make that resolution fail. The client the
	// operations use stays this environment's.
	opts := flags.NewClientOptions()
	opts.Hosts = []string{"unix:///var/run/docker.sock"}
	if err := cli.Initialize(opts); err != nil {
		return nil, fmt.Errorf("compose: %w", err)
	}
	// Pulls authenticate with Berth's configured registries only: the CLI
	// configuration of Berth's own process (credential helpers, proxies,
	// stored logins) never reaches a stack.
	cf := cli.ConfigFile()
	*cf = configfile.ConfigFile{AuthConfigs: map[string]clitypes.AuthConfig{}}
	for _, a := range auths {
		key := a.ServerAddress
		if key == "docker.io" || key == "index.docker.io" || key == "registry-1.docker.io" {
			key = "https://index.docker.io/v1/"
		}
		cf.AuthConfigs[key] = clitypes.AuthConfig{Username: a.Username, Password: a.Password, ServerAddress: key}
	}
	return compose.NewComposeService(classicBuilder{cli}, compose.WithEventProcessor(&progressLines{fn: progress}),
		compose.WithPrompt(compose.AlwaysOkPrompt()), compose.WithMaxConcurrency(8))
}

// classicBuilder is the CLI the compose library gets: builds go through
// this environment's Engine API (the classic builder), never through a
// buildx plugin that might be installed on Berth's host, which would run
// as a separate program against that host's own engine.
type classicBuilder struct{ *command.DockerCli }

func (classicBuilder) BuildKitEnabled() (bool, error) { return false, nil }

// composeRun runs one compose operation with the compose deadline, turning
// its error into this package's kinds.
func (c *Client) composeRun(ctx context.Context, auths []Credentials, progress ComposeProgress, fn func(ctx context.Context, svc api.Compose) error) error {
	svc, err := c.compose(auths, progress)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, composeTimeout)
	defer cancel()
	return c.fail(fn(ctx, svc))
}

// UpOptions are what a compose up does beyond bringing the project up.
type UpOptions struct {
	// Force recreates every container, so that changed variables apply
	// (up --force-recreate).
	Force bool
	// Pull pulls every service image before the up, even one the engine
	// has (up --pull always).
	Pull bool
	// Build builds the images of the services that have build: (up
	// --build); only on an engine Berth reaches directly, where the build
	// context (the stack's directory) is.
	Build bool
}

// ComposeUp creates and starts the project in the background (up -d),
// pulling missing images with auths (by registry host), removing containers
// of services no longer in it, with what o asks for besides.
func (c *Client) ComposeUp(ctx context.Context, p *types.Project, o UpOptions, auths []Credentials, progress ComposeProgress) error {
	if err := CheckProjectName(p.Name); err != nil {
		return err
	}
	if o.Build && (c.hawser != nil || c.agent != nil) {
		return &Error{Kind: ErrInvalid, Msg: ErrBuildRemote.Error(), err: ErrBuildRemote}
	}
	if o.Pull {
		// As compose's --pull always: the policy of every service, so that
		// an agent, which gets the project, pulls the same way.
		for name, s := range p.Services {
			if s.Image != "" && s.Build == nil {
				s.PullPolicy = types.PullPolicyAlways
				p.Services[name] = s
			}
		}
	}
	if c.hawser != nil {
		return c.composeOnHawser(ctx, "up", p.Name, p, func(r *hawserCompose) {
			r.ForceRecreate, r.Registries = o.Force, hawserCredentials(auths)
			if o.Pull {
				r.PullPolicy = types.PullPolicyAlways
			}
		}, progress)
	}
	if c.agent != nil {
		return c.composeOnAgent(ctx, agentpb.ComposeAction_COMPOSE_ACTION_UP, p.Name, p, func(r *agentpb.ComposeRequest) {
			r.ForceRecreate = o.Force
			for _, a := range auths {
				r.Registries = append(r.Registries, agentCredentials(&a))
			}
		}, progress)
	}
	recreate := api.RecreateDiverged
	if o.Force {
		recreate = api.RecreateForce
	}
	create := api.CreateOptions{RemoveOrphans: true, Recreate: recreate, RecreateDependencies: recreate}
	if o.Build {
		// As compose's --build: the services with build: are built even
		// when their image exists.
		for name, s := range p.Services {
			if s.Build != nil {
				s.PullPolicy = types.PullPolicyBuild
				p.Services[name] = s
			}
		}
		create.Build = &api.BuildOptions{Progress: "plain", Out: io.Discard}
	}
	return c.composeRun(ctx, auths, progress, func(ctx context.Context, svc api.Compose) error {
		return svc.Up(ctx, p, api.UpOptions{Create: create, Start: api.StartOptions{Project: p}})
	})
}

// ErrBuildRemote refuses a build on an agent's engine: the build context is
// in Berth's own stack directory, which the agent does not have.
var ErrBuildRemote = errors.New("building images is supported only on environments Berth reaches directly (socket or direct): the build context is in Berth's stack directory")

// ComposeStart starts the project's existing containers. p may be nil: the
// project is then rebuilt from the containers' labels.
func (c *Client) ComposeStart(ctx context.Context, name string, p *types.Project, progress ComposeProgress) error {
	if err := CheckProjectName(name); err != nil {
		return err
	}
	if c.hawser != nil {
		return c.composeOnHawser(ctx, "start", name, p, nil, progress)
	}
	if c.agent != nil {
		return c.composeOnAgent(ctx, agentpb.ComposeAction_COMPOSE_ACTION_START, name, p, nil, progress)
	}
	return c.composeRun(ctx, nil, progress, func(ctx context.Context, svc api.Compose) error {
		return svc.Start(ctx, name, api.StartOptions{Project: p})
	})
}

// ComposeStop stops the project's containers.
func (c *Client) ComposeStop(ctx context.Context, name string, p *types.Project, progress ComposeProgress) error {
	if err := CheckProjectName(name); err != nil {
		return err
	}
	if c.hawser != nil {
		return c.composeOnHawser(ctx, "stop", name, p, nil, progress)
	}
	if c.agent != nil {
		return c.composeOnAgent(ctx, agentpb.ComposeAction_COMPOSE_ACTION_STOP, name, p, nil, progress)
	}
	return c.composeRun(ctx, nil, progress, func(ctx context.Context, svc api.Compose) error {
		return svc.Stop(ctx, name, api.StopOptions{Project: p})
	})
}

// ComposeRestart restarts the project's containers.
func (c *Client) ComposeRestart(ctx context.Context, name string, p *types.Project, progress ComposeProgress) error {
	if err := CheckProjectName(name); err != nil {
		return err
	}
	if c.hawser != nil {
		return c.composeOnHawser(ctx, "restart", name, p, nil, progress)
	}
	if c.agent != nil {
		return c.composeOnAgent(ctx, agentpb.ComposeAction_COMPOSE_ACTION_RESTART, name, p, nil, progress)
	}
	return c.composeRun(ctx, nil, progress, func(ctx context.Context, svc api.Compose) error {
		return svc.Restart(ctx, name, api.RestartOptions{Project: p})
	})
}

// ComposeDown stops and removes the project's containers and the networks
// it created (kept while other containers use them); volumes removes its
// named volumes too.
func (c *Client) ComposeDown(ctx context.Context, name string, p *types.Project, volumes bool, progress ComposeProgress) error {
	if err := CheckProjectName(name); err != nil {
		return err
	}
	if c.hawser != nil {
		return c.composeOnHawser(ctx, "down", name, p, func(r *hawserCompose) { r.RemoveVolumes = volumes }, progress)
	}
	if c.agent != nil {
		return c.composeOnAgent(ctx, agentpb.ComposeAction_COMPOSE_ACTION_DOWN, name, p,
			func(r *agentpb.ComposeRequest) { r.RemoveVolumes = volumes }, progress)
	}
	return c.composeRun(ctx, nil, progress, func(ctx context.Context, svc api.Compose) error {
		return svc.Down(ctx, name, api.DownOptions{Project: p, RemoveOrphans: true, Volumes: volumes})
	})
}

// progressLines turns compose's task events into lines such as
// "Container web-1 Started", skipping repeats of a task's state.
type progressLines struct {
	fn ComposeProgress

	mu   sync.Mutex
	last map[string]string
}

func (p *progressLines) Start(context.Context, string) {}

func (p *progressLines) Done(string, bool) {}

func (p *progressLines) On(events ...api.Resource) {
	if p.fn == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.last == nil {
		p.last = map[string]string{}
	}
	for _, e := range events {
		line := strings.TrimSpace(e.ID + " " + e.Text)
		if e.Details != "" {
			line += ": " + e.Details
		}
		if p.last[e.ID] == line || e.Text == "" {
			continue
		}
		p.last[e.ID] = line
		p.fn(line)
	}
}
