package selfupdate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// Label marks an updater container; its value is the id of the container
// it replaces.
const Label = "berth.selfupdate"

// Subcommand is the berth subcommand an updater runs:
// berth self-update-handover <container id> <new image>.
const Subcommand = "self-update-handover"

// Check is what GET /api/self-update/check answers.
type Check struct {
	UpdateAvailable  bool   `json:"updateAvailable"`
	CurrentImage     string `json:"currentImage,omitempty"`
	NewImage         string `json:"newImage,omitempty"`
	CurrentDigest    string `json:"currentDigest,omitempty"`
	NewDigest        string `json:"newDigest,omitempty"`
	ContainerName    string `json:"containerName,omitempty"`
	IsComposeManaged bool   `json:"isComposeManaged"`
	IsLocalImage     bool   `json:"isLocalImage"`
	Error            string `json:"error,omitempty"`
}

// CheckUpdate compares the digest of the image Berth's container self runs
// with the one its registry gives for the same reference now, asked with
// the credentials creds gives for that reference (Berth's registries).
func CheckUpdate(ctx context.Context, c *engine.Client, self string, creds Credentials) (Check, error) {
	cfg, err := c.InspectConfig(ctx, self)
	if err != nil {
		return Check{}, fmt.Errorf("inspect Berth's container: %w", err)
	}
	out := Check{CurrentImage: cfg.Image, NewImage: cfg.Image, ContainerName: cfg.Name,
		IsComposeManaged: cfg.Labels["com.docker.compose.project"] != ""}
	img, err := c.InspectImage(ctx, cfg.ImageID)
	if err != nil {
		return out, fmt.Errorf("inspect Berth's image: %w", err)
	}
	out.IsLocalImage = len(img.RepoDigests) == 0
	if len(img.RepoDigests) > 0 {
		_, out.CurrentDigest, _ = strings.Cut(img.RepoDigests[0], "@")
	}
	if out.IsLocalImage {
		out.Error = "Berth's image was built or loaded locally: there is no registry to compare it with"
		return out, nil
	}
	auth, err := creds(ctx, cfg.Image)
	if err != nil {
		return out, fmt.Errorf("read the registry's credentials: %w", err)
	}
	d, err := c.RegistryDigest(ctx, cfg.Image, auth)
	if err != nil {
		out.Error = "The registry could not be asked: " + engine.Details(err)
		return out, nil
	}
	out.NewDigest = d
	out.UpdateAvailable = !slices.ContainsFunc(img.RepoDigests, func(rd string) bool { return strings.HasSuffix(rd, "@"+d) })
	return out, nil
}

// Credentials gives the credentials of the registry of an image reference
// (nil: none), as the images service keeps them.
type Credentials func(ctx context.Context, ref string) (*engine.Credentials, error)

// socketBind is the bind of the engine socket into container raw (its
// inspection), "" when it has none; readOnly tells whether it is.
func socketBind(raw json.RawMessage) (source string, readOnly bool) {
	var in struct {
		Mounts []struct {
			Source, Destination string
			RW                  bool
		}
	}
	if json.Unmarshal(raw, &in) != nil {
		return "", false
	}
	for _, m := range in.Mounts {
		if strings.HasSuffix(m.Destination, "/docker.sock") {
			return m.Source, !m.RW
		}
	}
	return "", false
}

// Preflight checks, before anything is pulled, that Launch can start an
// updater for container self: the engine socket is mounted writable.
func Preflight(ctx context.Context, c *engine.Client, self string) error {
	raw, _, err := c.InspectContainer(ctx, self)
	if err != nil {
		return fmt.Errorf("inspect Berth's container: %w", err)
	}
	return socketProblem(raw)
}

// socketProblem is why the updater cannot use the engine socket of the
// container inspected as raw, or nil.
func socketProblem(raw json.RawMessage) error {
	switch src, ro := socketBind(raw); {
	case src == "":
		return fault.New(fault.Invalid, "Berth's container has no engine socket mounted: the updater needs it")
	case ro:
		return fault.New(fault.Invalid, "The engine socket is mounted read-only into Berth's container: the updater needs it writable")
	}
	return nil
}

// Launch pulls nothing: it starts the updater for container self on
// newImage (already on the engine) and returns the updater's id. Berth's
// container must have the engine socket mounted writable.
func Launch(ctx context.Context, c *engine.Client, self, newImage string) (string, error) {
	raw, st, err := c.InspectContainer(ctx, self)
	if err != nil {
		return "", fmt.Errorf("inspect Berth's container: %w", err)
	}
	if err := socketProblem(raw); err != nil {
		return "", err
	}
	src, _ := socketBind(raw)
	name := fmt.Sprintf("%s-updater-%d", strings.TrimPrefix(st.Name, "/"), time.Now().Unix())
	// The updater runs as Berth's container does: the same user and extra
	// groups (the socket's group, added with --group-add, is how an
	// unprivileged Berth reaches the engine), without the image's health
	// check (it serves nothing).
	var own struct {
		Config     struct{ User string }
		HostConfig struct{ GroupAdd []string }
	}
	_ = json.Unmarshal(raw, &own)
	opts := engine.Settings{GroupAdd: own.HostConfig.GroupAdd, Healthcheck: &engine.Healthcheck{Disable: true},
		Tmpfs: imageVolumesAsTmpfs(ctx, c, newImage)}
	if own.Config.User != "" {
		opts.User = &own.Config.User
	}
	removeEndedUpdaters(ctx, c, strings.TrimPrefix(st.Name, "/")+"-updater-")
	id, err := c.CreateContainer(ctx, engine.CreateSpec{Name: name, Image: newImage, Cmd: []string{Subcommand, st.ID, newImage},
		Labels: map[string]string{Label: st.ID}, Binds: []string{src + ":" + engine.DefaultSocket}, Options: opts})
	if err != nil {
		return "", fmt.Errorf("create the updater: %w", err)
	}
	if err := c.StartContainer(ctx, id); err != nil {
		_ = c.RemoveContainer(context.WithoutCancel(ctx), id, true)
		return "", fmt.Errorf("start the updater: %w", err)
	}
	return id, nil
}

// imageVolumesAsTmpfs returns a tmpfs for each volume image declares
// (Berth's image: VOLUME /data). The updater writes nothing there; without
// these the engine would create an anonymous volume for each, left behind
// with every update.
func imageVolumesAsTmpfs(ctx context.Context, c *engine.Client, image string) map[string]string {
	raw, err := c.InspectImageRaw(ctx, image)
	if err != nil {
		return nil // the create that follows says what is wrong with the image
	}
	var in struct {
		Config struct{ Volumes map[string]struct{} }
	}
	if json.Unmarshal(raw, &in) != nil || len(in.Config.Volumes) == 0 {
		return nil
	}
	out := make(map[string]string, len(in.Config.Volumes))
	for path := range in.Config.Volumes {
		out[path] = ""
	}
	return out
}

// removeEndedUpdaters removes the updaters of this Berth's earlier
// self-updates (named prefix…: the container keeps its name across updates)
// that have ended, with the anonymous volumes updaters of earlier releases
// were given: their progress was read when Berth came back. A running one
// is left alone, and so are other installs' on the same engine. Failures
// are ignored: the update goes on, and the next one tries again.
func removeEndedUpdaters(ctx context.Context, c *engine.Client, prefix string) {
	list, err := c.ListContainers(ctx, true)
	if err != nil {
		return
	}
	for _, ct := range list {
		if _, ok := ct.Labels[Label]; !ok || !strings.HasPrefix(ct.Name, prefix) {
			continue
		}
		switch ct.State {
		case "exited", "dead", "created":
			_ = c.RemoveContainerAndVolumes(ctx, ct.ID)
		}
	}
}

// Progress is an updater's state: its output and, once it ended, its exit
// code (0: the new container took over).
type Progress struct {
	Logs     string `json:"logs"`
	Status   string `json:"status"` // running, exited, …
	ExitCode *int   `json:"exitCode,omitempty"`
}

var errNoUpdater = fault.New(fault.NotFound, "Updater container not found")

// Follow reads the progress of updater id (which must be an updater).
func Follow(ctx context.Context, c *engine.Client, id string) (Progress, error) {
	raw, st, err := c.InspectContainer(ctx, id)
	if errors.Is(err, engine.ErrNotFound) {
		return Progress{}, errNoUpdater
	}
	if err != nil {
		return Progress{}, err
	}
	var in struct {
		Config struct{ Labels map[string]string }
	}
	if json.Unmarshal(raw, &in) != nil || in.Config.Labels[Label] == "" {
		return Progress{}, errNoUpdater
	}
	var b strings.Builder
	if err := c.Logs(ctx, id, st.Tty, engine.LogOptions{Tail: "500"}, func(l engine.LogLine) error {
		b.WriteString(l.Text + "\n")
		return nil
	}); err != nil {
		return Progress{}, err
	}
	p := Progress{Logs: b.String(), Status: st.Status}
	if !st.Running && st.Status != "created" {
		code := st.ExitCode
		p.ExitCode = &code
	}
	return p, nil
}
