package engine

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/client"
)

// HelperSpec is a short-lived helper container of Berth's that mounts
// volumes (to browse, export or copy them) or host paths (to back them
// up). Image is the id of one of Berth's images on the engine
// (server/internal/helperimage, server/internal/backup): nothing is
// pulled, and no image is picked by name.
type HelperSpec struct {
	Image  string
	Cmd    []string
	Mounts []VolumeMount
	Binds  []BindMount
	Labels map[string]string
	// HostNetwork runs the helper in the host's network (a backup reaching
	// a repository on the host's loopback); without it the helper has no
	// network at all.
	HostNetwork bool
	// Hostname is the helper's host name ("" the engine's default); a
	// helper in the host's network still has a UTS namespace of its own.
	Hostname string
	// Start runs the container's command; a helper that is only read
	// through the archive API need not run.
	Start bool
}

// BindMount mounts the host path Source (absolute and clean) at Target.
// A missing Source is an error unless Create, which makes it (a
// directory owned by root).
type BindMount struct {
	Source   string
	Target   string
	ReadOnly bool
	Create   bool
}

// VolumeMount mounts the named volume at Target.
type VolumeMount struct {
	Volume   string
	Target   string
	ReadOnly bool
}

// CreateHelper creates (and with spec.Start starts) a helper container and
// returns its id; spec.Image must be an image id. A helper that fails to
// start is removed.
func (c *Client) CreateHelper(ctx context.Context, spec HelperSpec) (string, error) {
	if !isImageID(spec.Image) {
		return "", fmt.Errorf("%w: the helper image %q is not an image id", ErrInvalid, spec.Image)
	}
	if err := CheckImage(spec.Image); err != nil {
		return "", err
	}
	for _, m := range spec.Mounts {
		if err := checkVolume(m.Volume); err != nil {
			return "", err
		}
	}
	var binds []string
	for _, b := range spec.Binds {
		for _, p := range []string{b.Source, b.Target} {
			if !path.IsAbs(p) || path.Clean(p) != p || strings.ContainsAny(p, ":,\x00") {
				return "", fmt.Errorf("%w: the bind mount path %q is not a clean absolute path", ErrInvalid, p)
			}
		}
		if b.Create {
			// The engine makes a missing source of a Binds entry, not of a
			// bind Mount.
			mode := "rw"
			if b.ReadOnly {
				mode = "ro"
			}
			binds = append(binds, b.Source+":"+b.Target+":"+mode)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	mounts := make([]mount.Mount, 0, len(spec.Mounts)+len(spec.Binds))
	for _, m := range spec.Mounts {
		mounts = append(mounts, mount.Mount{Type: mount.TypeVolume, Source: m.Volume, Target: m.Target, ReadOnly: m.ReadOnly,
			VolumeOptions: &mount.VolumeOptions{NoCopy: true}})
	}
	for _, b := range spec.Binds {
		if !b.Create {
			mounts = append(mounts, mount.Mount{Type: mount.TypeBind, Source: b.Source, Target: b.Target, ReadOnly: b.ReadOnly})
		}
	}
	cfg := &container.Config{Image: spec.Image, Entrypoint: spec.Cmd, Labels: spec.Labels, NetworkDisabled: true,
		Hostname: spec.Hostname}
	hc := &container.HostConfig{Mounts: mounts, Binds: binds, NetworkMode: "none"}
	if spec.HostNetwork {
		cfg.NetworkDisabled, hc.NetworkMode = false, "host"
	}
	res, err := c.cli.ContainerCreate(ctx, client.ContainerCreateOptions{
		// The command is the entrypoint: the image's own entrypoint and
		// command play no part.
		Config: cfg, HostConfig: hc,
	})
	if err != nil {
		return "", c.fail(err)
	}
	if spec.Start {
		if _, err := c.cli.ContainerStart(ctx, res.ID, client.ContainerStartOptions{}); err != nil {
			_ = c.RemoveContainer(context.WithoutCancel(ctx), res.ID, true)
			return "", c.fail(err)
		}
	}
	return res.ID, nil
}

// WaitHelper waits until the started helper id is not running and
// returns its exit code (137 for a killed one).
func (c *Client) WaitHelper(ctx context.Context, id string) (int64, error) {
	id, err := checkContainer(id)
	if err != nil {
		return 0, err
	}
	wait := c.cli.ContainerWait(ctx, id, client.ContainerWaitOptions{Condition: container.WaitConditionNotRunning})
	select {
	case w := <-wait.Result:
		if w.Error != nil && w.Error.Message != "" {
			return w.StatusCode, fmt.Errorf("engine: wait for helper: %s", w.Error.Message)
		}
		return w.StatusCode, nil
	case err := <-wait.Error:
		return 0, c.fail(err)
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// ContainersLabelled returns the ids of the containers (running or not)
// that carry every one of labels.
func (c *Client) ContainersLabelled(ctx context.Context, labels map[string]string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	f := make(client.Filters)
	for k, v := range labels {
		f.Add("label", k+"="+v)
	}
	res, err := c.cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return nil, c.fail(err)
	}
	ids := make([]string, 0, len(res.Items))
	for _, ct := range res.Items {
		ids = append(ids, ct.ID)
	}
	return ids, nil
}

// ErrOutputTooLarge is returned by ExecOutput when a process prints more
// than the limit asked.
var ErrOutputTooLarge = errors.New("engine: exec output exceeds the limit")

// ExecOutput runs cmd in the running container id (no terminal, no input)
// and returns what it printed on its standard output, at most limit bytes;
// its standard error is discarded. Through an agent the exec is the agent's
// exec operation.
func (c *Client) ExecOutput(ctx context.Context, id string, cmd []string, limit int) ([]byte, error) {
	id, err := checkContainer(id)
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	res, err := c.cli.ExecCreate(cctx, id, client.ExecCreateOptions{AttachStdout: true, AttachStderr: true, Cmd: cmd})
	cancel()
	if err != nil {
		return nil, c.fail(err)
	}
	st, err := c.StartExec(ctx, res.ID, false)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	_ = st.CloseWrite()
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-ctx.Done():
			st.Close()
		case <-done:
		}
	}()
	out, err := stdoutOf(st, limit)
	if err != nil && ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return out, err
}

// stdoutOf reads the engine's multiplexed output stream (frames of an
// 8-byte header: stream id, 3 zero bytes, big-endian length) to its end and
// returns the standard output's bytes, at most limit of them.
func stdoutOf(r io.Reader, limit int) ([]byte, error) {
	br := bufio.NewReaderSize(r, 32<<10)
	var out []byte
	var hdr [8]byte
	for {
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return out, fmt.Errorf("engine: exec output: %w", err)
		}
		n := int64(binary.BigEndian.Uint32(hdr[4:]))
		switch hdr[0] {
		case 0, 1:
			if int64(len(out))+n > int64(limit) {
				return nil, ErrOutputTooLarge
			}
			start := len(out)
			out = append(out, make([]byte, n)...)
			if _, err := io.ReadFull(br, out[start:]); err != nil {
				return nil, fmt.Errorf("engine: exec output: %w", err)
			}
		case 2:
			if _, err := io.CopyN(io.Discard, br, n); err != nil {
				return nil, fmt.Errorf("engine: exec output: %w", err)
			}
		default:
			return nil, fmt.Errorf("engine: exec output: bad frame header %x", hdr[0])
		}
	}
}

// ImageSaveStream returns a "docker save" tarball of the image ref as a
// stream (constant memory); an unknown image is ErrNotFound before anything
// is read. The caller closes it; ctx bounds the whole stream.
func (c *Client) ImageSaveStream(ctx context.Context, ref string) (io.ReadCloser, error) {
	if _, err := c.InspectImage(ctx, ref); err != nil {
		return nil, err
	}
	rc, err := c.cli.ImageSave(ctx, []string{ref})
	if err != nil {
		return nil, c.fail(err)
	}
	return rc, nil
}
