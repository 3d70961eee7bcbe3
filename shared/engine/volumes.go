package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/moby/moby/api/types/volume"
	"github.com/moby/moby/client"
)

// Volume is a volume in the shape API clients decode. Labels and Options are
// never nil.
type Volume struct {
	Name       string            `json:"name"`
	Driver     string            `json:"driver"`
	Mountpoint string            `json:"mountpoint"`
	Scope      string            `json:"scope"`
	CreatedAt  string            `json:"createdAt"`
	Labels     map[string]string `json:"labels"`
	Options    map[string]string `json:"options"`
}

// VolumeSpec describes a volume to create.
type VolumeSpec struct {
	Name       string
	Driver     string
	DriverOpts map[string]string
	Labels     map[string]string
}

func toVolume(v volume.Volume) Volume {
	out := Volume{Name: v.Name, Driver: v.Driver, Mountpoint: v.Mountpoint, Scope: v.Scope,
		CreatedAt: v.CreatedAt, Labels: v.Labels, Options: v.Options}
	if out.Labels == nil {
		out.Labels = map[string]string{}
	}
	if out.Options == nil {
		out.Options = map[string]string{}
	}
	return out
}

// ListVolumes lists the volumes of the engine.
func (c *Client) ListVolumes(ctx context.Context) ([]Volume, error) {
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	res, err := c.cli.VolumeList(ctx, client.VolumeListOptions{})
	if err != nil {
		return nil, c.fail(err)
	}
	out := make([]Volume, 0, len(res.Items))
	for _, v := range res.Items {
		out = append(out, toVolume(v))
	}
	return out, nil
}

// InspectVolume returns the volume called name.
func (c *Client) InspectVolume(ctx context.Context, name string) (Volume, error) {
	if err := checkVolume(name); err != nil {
		return Volume{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	res, err := c.cli.VolumeInspect(ctx, name, client.VolumeInspectOptions{})
	if err != nil {
		return Volume{}, c.fail(err)
	}
	return toVolume(res.Volume), nil
}

// CreateVolume creates a volume. The engine's own create succeeds when a
// volume of that name exists already (it returns the existing one, whatever
// options were asked for); this one fails with ErrConflict instead.
func (c *Client) CreateVolume(ctx context.Context, spec VolumeSpec) (Volume, error) {
	if err := checkVolume(spec.Name); err != nil {
		return Volume{}, err
	}
	switch _, err := c.InspectVolume(ctx, spec.Name); {
	case err == nil:
		return Volume{}, &Error{Kind: ErrConflict, Msg: fmt.Sprintf("volume %q already exists", spec.Name),
			err: fmt.Errorf("volume %q already exists", spec.Name)}
	case !errors.Is(err, ErrNotFound):
		return Volume{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	res, err := c.cli.VolumeCreate(ctx, client.VolumeCreateOptions{
		Name: spec.Name, Driver: spec.Driver, DriverOpts: spec.DriverOpts, Labels: spec.Labels,
	})
	if err != nil {
		return Volume{}, c.fail(err)
	}
	return toVolume(res.Volume), nil
}

// RemoveVolume removes a volume. A volume in use by a container fails with
// ErrConflict, force or not (force only ignores errors of volume plugins).
func (c *Client) RemoveVolume(ctx context.Context, name string, force bool) error {
	if err := checkVolume(name); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	_, err := c.cli.VolumeRemove(ctx, name, client.VolumeRemoveOptions{Force: force})
	return c.fail(err)
}
