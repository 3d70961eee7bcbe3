package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	dockerspec "github.com/moby/docker-image-spec/specs-go/v1"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
)

// RegistryDigest asks the registry of ref, through the engine (which knows
// the registry's TLS setup), for the digest of the manifest ref names now.
func (c *Client) RegistryDigest(ctx context.Context, ref string, creds *Credentials) (string, error) {
	if err := CheckImageName(ref); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	auth, err := creds.encode()
	if err != nil {
		return "", err
	}
	res, err := c.cli.DistributionInspect(ctx, ref, client.DistributionInspectOptions{EncodedRegistryAuth: auth})
	if err != nil {
		return "", c.fail(err)
	}
	d := res.Descriptor.Digest.String()
	if d == "" {
		return "", fmt.Errorf("engine: the registry gave no digest for %s", ref)
	}
	return d, nil
}

// ContainerConfig is a container's whole configuration as the engine reports
// it — configuration, host configuration (mounts, ports, restart policy,
// resources), networks with aliases and static addresses — and the
// configuration of its image, from which a copy can be made on another image.
type ContainerConfig struct {
	ID      string
	Name    string // without the leading slash
	Image   string // the image reference it was created with (Config.Image)
	ImageID string
	Running bool
	Labels  map[string]string

	inspect  container.InspectResponse
	image    *dockerspec.DockerOCIImageConfig
	settings *Settings // set by With
}

// InspectConfig returns the configuration of container id (or name).
func (c *Client) InspectConfig(ctx context.Context, id string) (ContainerConfig, error) {
	id, err := checkContainer(id)
	if err != nil {
		return ContainerConfig{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	res, err := c.cli.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
	if err != nil {
		return ContainerConfig{}, c.fail(err)
	}
	in := res.Container
	if in.Config == nil || in.HostConfig == nil {
		return ContainerConfig{}, fmt.Errorf("engine: inspection of %s has no configuration", id)
	}
	cc := ContainerConfig{ID: in.ID, Name: strings.TrimPrefix(in.Name, "/"), Image: in.Config.Image, ImageID: in.Image,
		Running: in.State != nil && (in.State.Running || in.State.Restarting), Labels: in.Config.Labels, inspect: in}
	img, err := c.cli.ImageInspect(ctx, in.Image)
	switch {
	case err == nil:
		cc.image = img.Config
	case !errors.Is(c.fail(err), ErrNotFound):
		return ContainerConfig{}, c.fail(err)
	}
	return cc, nil
}

// With returns cfg with settings s over it: CreateLike makes the copy with
// them, and Needs tells what the result asks of the host.
func (cfg ContainerConfig) With(s Settings) ContainerConfig {
	cfg.settings = &s
	if s.Image != "" {
		cfg.Image = s.Image
	}
	return cfg
}

// Needs is what a copy made by CreateLike would ask of the host.
func (cfg ContainerConfig) Needs() (HostNeeds, error) {
	conf, hc := *cfg.inspect.Config, *cfg.inspect.HostConfig
	if cfg.settings != nil {
		if err := cfg.settings.apply(&conf, &hc); err != nil {
			return HostNeeds{}, err
		}
	}
	return needs(&hc), nil
}

// CreateLike creates a container named name with cfg's configuration on the
// image cfg.Image names now, and connects it to cfg's networks. Settings that
// came from the old image (its command, entrypoint, environment, labels,
// ports, volumes, working directory, user, health check) are left to the new
// image; what the container set itself is kept. Anonymous volumes are
// mounted again by name, so their data stays. The settings given With are
// applied over it all. The container is not started.
func (c *Client) CreateLike(ctx context.Context, cfg ContainerConfig, name string) (string, error) {
	if name != "" {
		n, err := checkContainer(name)
		if err != nil {
			return "", err
		}
		name = n
	}
	in := cfg.inspect
	conf := *in.Config
	conf.Image = cfg.Image
	conf.Labels = cloneMap(in.Config.Labels)
	inheritFromImage(&conf, cfg.image)
	if conf.Hostname == shortID(in.ID) {
		conf.Hostname = "" // the engine's default: the new container's own id
	}
	hc := *in.HostConfig
	hc.Mounts = append(slices.Clone(in.HostConfig.Mounts), anonymousVolumes(in)...)

	nets := map[string]*network.EndpointSettings{}
	for n, ep := range networksOf(in) {
		nets[n] = endpointLike(ep, n, in.ID)
	}
	if s := cfg.settings; s != nil {
		if err := s.apply(&conf, &hc); err != nil {
			return "", err
		}
		var err error
		if nets, err = s.applyNetworks(string(hc.NetworkMode), nets); err != nil {
			return "", err
		}
	}
	return c.createConnected(ctx, name, &conf, &hc, nets)
}

// networksOf are the endpoints of in, none when it shares a namespace.
func networksOf(in container.InspectResponse) map[string]*network.EndpointSettings {
	if in.NetworkSettings == nil || primaryNetwork(string(in.HostConfig.NetworkMode)) == "" {
		return nil
	}
	return in.NetworkSettings.Networks
}

// createConnected creates a container and connects it to nets: the primary
// network (its network mode's) at creation, the others (engines before API
// 1.44 take one network at creation) before it starts. A failed connection
// removes the container again.
func (c *Client) createConnected(ctx context.Context, name string, conf *container.Config, hc *container.HostConfig, nets map[string]*network.EndpointSettings) (string, error) {
	first := primaryNetwork(string(hc.NetworkMode))
	var nc *network.NetworkingConfig
	if ep, ok := nets[first]; ok && ep != nil {
		nc = &network.NetworkingConfig{EndpointsConfig: map[string]*network.EndpointSettings{first: ep}}
	}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	res, err := c.cli.ContainerCreate(cctx, client.ContainerCreateOptions{Name: name, Config: conf, HostConfig: hc, NetworkingConfig: nc})
	if err != nil {
		return "", c.fail(err)
	}
	names := make([]string, 0, len(nets))
	for n := range nets {
		if n != first {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		_, err := c.cli.NetworkConnect(cctx, n, client.NetworkConnectOptions{Container: res.ID, EndpointConfig: nets[n]})
		if err != nil {
			_, _ = c.cli.ContainerRemove(context.WithoutCancel(ctx), res.ID, client.ContainerRemoveOptions{Force: true})
			return "", fmt.Errorf("connect to network %s: %w", n, c.fail(err))
		}
	}
	return res.ID, nil
}

// endpointLike is the configuration of an endpoint like ep: static
// addresses, links, aliases (without the old container's id, which the
// engine adds by itself) and driver options.
func endpointLike(ep *network.EndpointSettings, netName, oldID string) *network.EndpointSettings {
	if ep == nil {
		return &network.EndpointSettings{}
	}
	out := &network.EndpointSettings{IPAMConfig: ep.IPAMConfig, Links: ep.Links, DriverOpts: ep.DriverOpts, GwPriority: ep.GwPriority}
	if netName == "bridge" {
		return out // the default bridge has no aliases
	}
	for _, a := range ep.Aliases {
		if a != shortID(oldID) && a != oldID {
			out.Aliases = append(out.Aliases, a)
		}
	}
	return out
}

// anonymousVolumes are the volume mounts of in that neither its binds nor
// its mounts name: volumes the engine created for the image's VOLUME
// entries. They are mounted by name in the copy.
func anonymousVolumes(in container.InspectResponse) []mount.Mount {
	named := map[string]bool{}
	for _, b := range in.HostConfig.Binds {
		parts := strings.Split(b, ":")
		if len(parts) >= 2 {
			named[parts[1]] = true
		}
	}
	for _, m := range in.HostConfig.Mounts {
		named[m.Target] = true
	}
	var out []mount.Mount
	for _, m := range in.Mounts {
		if m.Type == mount.TypeVolume && m.Name != "" && !named[m.Destination] {
			out = append(out, mount.Mount{Type: mount.TypeVolume, Source: m.Name, Target: m.Destination, ReadOnly: !m.RW})
		}
	}
	return out
}

// inheritFromImage clears from conf what equals the old image's defaults,
// so that the new image's apply.
func inheritFromImage(conf *container.Config, img *dockerspec.DockerOCIImageConfig) {
	if img == nil {
		return
	}
	if slices.Equal(conf.Cmd, img.Cmd) {
		conf.Cmd = nil
	}
	if slices.Equal(conf.Entrypoint, img.Entrypoint) {
		conf.Entrypoint = nil
	}
	if conf.WorkingDir == img.WorkingDir {
		conf.WorkingDir = ""
	}
	if conf.User == img.User {
		conf.User = ""
	}
	if conf.StopSignal == img.StopSignal {
		conf.StopSignal = ""
	}
	if conf.Healthcheck != nil && img.Healthcheck != nil && sameJSON(conf.Healthcheck, img.Healthcheck) {
		conf.Healthcheck = nil
	}
	imageEnv := map[string]bool{}
	for _, e := range img.Env {
		imageEnv[e] = true
	}
	conf.Env = slices.DeleteFunc(slices.Clone(conf.Env), func(e string) bool { return imageEnv[e] })
	for k, v := range img.Labels {
		if cur, ok := conf.Labels[k]; ok && cur == v {
			delete(conf.Labels, k)
		}
	}
	for p := range conf.ExposedPorts {
		if _, ok := img.ExposedPorts[p.String()]; ok {
			delete(conf.ExposedPorts, p)
		}
	}
	for v := range conf.Volumes {
		if _, ok := img.Volumes[v]; ok {
			delete(conf.Volumes, v)
		}
	}
}

func sameJSON(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}

func cloneMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// shortID is the 12-character form of a container id.
func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
