package engine

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"strings"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/client"
)

// Removing a path from a stopped container.
//
// The archive API can only add to a container's filesystem; a running
// container's files are removed with rm inside it, but a stopped one runs
// nothing. On the overlay2 storage driver a container's own changes live in
// a plain directory of the engine's host (its "upper" layer), which the
// engine mounts over the image's layers when it needs the container's root.
// Overlay records a removal in that directory as a whiteout: a character
// device 0/0 with the removed entry's name, which hides the entry of the
// layers below. So a removal is an extraction too: a helper container, made
// from Berth's helper image (by id: never an image picked by name) and
// never started, bind-mounts the upper directory, and a tar holding the
// whiteout (after the path's ancestors, with the attributes they have in
// the container) is extracted into it through the archive API. The engine's extraction replaces whatever the
// upper directory held at that name (a file, or a directory with
// everything under it) and makes the device node. Only the engine's own
// API is used, so it works on remote engines and through agents alike.

// ErrStorageUnsupported means the engine's storage keeps a stopped
// container's changes where a removal cannot be recorded (a storage driver
// other than overlay2, or an engine that cannot make device nodes).
var ErrStorageUnsupported = errors.New("engine: the storage driver cannot remove files from a stopped container")

// ErrOnMount means the path is on a volume or bind mount of the container,
// not in its own layer: a stopped container's mounts are not written.
var ErrOnMount = errors.New("engine: the path is on a mount of the container")

// upperMount is where the helper mounts the container's upper directory.
const upperMount = "/berth-upper"

// HelperLabel marks Berth's helper containers; its value names the kind
// (the volume helpers' kinds are the volumes package's).
const HelperLabel = "berth.helper"

// filesHelperKind is the kind of RemoveStoppedPath's helpers; the label
// HelperLabel+".container" names the container each is for.
const filesHelperKind = "container-files"

// FilesHelperStale is the age past which a helper of RemoveStoppedPath is
// a leftover (of a Berth stopped in the middle of a removal, which takes
// seconds): the next removal on that engine removes it.
const FilesHelperStale = 10 * time.Minute

// RemoveStoppedPath removes p (absolute and clean; a directory with
// everything under it; a link, not what it points to) from the filesystem
// of the stopped container id, with a helper container made from the image
// helperImage (the id of Berth's helper image on this engine). It refuses a
// running container (ErrConflict) and storage it cannot write a removal to
// (ErrStorageUnsupported).
func (c *Client) RemoveStoppedPath(ctx context.Context, id, p, helperImage string) error {
	if !isImageID(helperImage) {
		return fmt.Errorf("%w: the helper image %q is not an image id", ErrInvalid, helperImage)
	}
	l, dir, err := c.stoppedTarget(ctx, id, p)
	if err != nil {
		return err
	}
	full := path.Join(dir, path.Base(p))
	archive, err := c.whiteoutArchive(ctx, l.id, dir, path.Base(p))
	if err != nil {
		return err
	}
	c.RemoveFilesHelpers(ctx, nil, time.Now().Add(-FilesHelperStale))
	helper, err := c.createFilesHelper(ctx, helperImage, l.upper, l.id)
	if err != nil {
		return err
	}
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), callTimeout)
		defer cancel()
		// With its anonymous volumes: the image may declare some.
		_, _ = c.cli.ContainerRemove(rctx, helper, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
	}()
	cctx, cancel := context.WithTimeout(ctx, transferTimeout)
	defer cancel()
	_, err = c.cli.CopyToContainer(cctx, helper, client.CopyToContainerOptions{
		DestinationPath: upperMount, Content: bytes.NewReader(archive), AllowOverwriteDirWithFile: true})
	if err != nil {
		return c.fail(err)
	}
	// An engine that cannot make device nodes (rootless, user namespaces)
	// skips them silently: the entry of the layers below would show again.
	if _, err := c.StatPath(ctx, l.id, full); err == nil {
		return fmt.Errorf("%w: the engine did not record the removal", ErrStorageUnsupported)
	} else if !errors.Is(err, ErrNotFound) {
		return err
	}
	return nil
}

// CheckStoppedRemoval tells whether RemoveStoppedPath can remove p from the
// container id: nil, ErrConflict (it runs), ErrStorageUnsupported or
// ErrOnMount (or the error of a missing path).
func (c *Client) CheckStoppedRemoval(ctx context.Context, id, p string) error {
	_, _, err := c.stoppedTarget(ctx, id, p)
	return err
}

// stoppedTarget returns the layer of the stopped container id and the
// resolved directory of p in it, checking that p is in the layer, not on
// one of the container's mounts.
func (c *Client) stoppedTarget(ctx context.Context, id, p string) (layer, string, error) {
	if p == "/" || !path.IsAbs(p) || path.Clean(p) != p {
		return layer{}, "", fmt.Errorf("%w: cannot remove %q", ErrInvalid, p)
	}
	id, err := checkContainer(id)
	if err != nil {
		return layer{}, "", err
	}
	l, err := c.stoppedLayer(ctx, id)
	if err != nil {
		return layer{}, "", err
	}
	dir, err := c.resolveDir(ctx, l.id, path.Dir(p))
	if err != nil {
		return layer{}, "", err
	}
	full := path.Join(dir, path.Base(p))
	for _, m := range l.mounts {
		if full == m || strings.HasPrefix(full, m+"/") || m == "/" {
			return layer{}, "", fmt.Errorf("%w: %s is on %s", ErrOnMount, full, m)
		}
	}
	return l, dir, nil
}

// layer is a stopped container's own overlay layer.
type layer struct {
	id, upper string
	mounts    []string // the destinations of its volumes and bind mounts
}

// stoppedLayer returns the layer of the stopped container id.
func (c *Client) stoppedLayer(ctx context.Context, id string) (layer, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	res, err := c.cli.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
	if err != nil {
		return layer{}, c.fail(err)
	}
	ct := res.Container
	if ct.State != nil && (ct.State.Running || ct.State.Paused || ct.State.Restarting) {
		return layer{}, fmt.Errorf("%w: the container is running", ErrConflict)
	}
	gd := ct.GraphDriver
	if gd == nil || (gd.Name != "overlay2" && gd.Name != "overlay") || gd.Data["UpperDir"] == "" {
		driver := "unknown"
		if gd != nil && gd.Name != "" {
			driver = gd.Name
		}
		return layer{}, fmt.Errorf("%w (it is %s)", ErrStorageUnsupported, driver)
	}
	l := layer{id: ct.ID, upper: gd.Data["UpperDir"]}
	for _, m := range ct.Mounts {
		l.mounts = append(l.mounts, path.Clean(m.Destination))
	}
	return l, nil
}

// resolveDir returns the directory dir of container id with every symbolic
// link on the way resolved: the path the directory has in the container's
// layers. The engine resolves a link inside the container's root, and
// tells the resolved absolute path.
func (c *Client) resolveDir(ctx context.Context, id, dir string) (string, error) {
	cur := "/"
	comps := strings.Split(dir, "/")
	for hops := 0; len(comps) > 0; {
		comp := comps[0]
		comps = comps[1:]
		if comp == "" {
			continue
		}
		cand := path.Join(cur, comp)
		st, err := c.StatPath(ctx, id, cand)
		if err != nil {
			return "", err
		}
		switch {
		case st.Mode&os.ModeSymlink != 0:
			if hops++; hops > 40 || !path.IsAbs(st.LinkTarget) {
				return "", fmt.Errorf("%w: cannot resolve %s", ErrInvalid, cand)
			}
			// The target is resolved already; walking it again checks
			// that each of its components is a directory.
			comps = append(strings.Split(st.LinkTarget, "/"), comps...)
			cur = "/"
		case st.Mode.IsDir():
			cur = cand
		default:
			return "", fmt.Errorf("%w: %s is not a directory", ErrInvalid, cand)
		}
	}
	return cur, nil
}

// whiteoutArchive returns the tar extracted into the upper directory: the
// ancestors of name in dir (absolute, resolved), each with the mode, owner,
// times and extended attributes it has in the container (an ancestor that
// only the image's layers hold is created with them, so the container sees
// it unchanged), then the whiteout of name.
func (c *Client) whiteoutArchive(ctx context.Context, id, dir, name string) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	now := time.Now()
	prefix := "/"
	for _, comp := range strings.Split(strings.Trim(dir, "/"), "/") {
		if comp == "" {
			continue
		}
		prefix = path.Join(prefix, comp)
		hdr, err := c.dirHeader(ctx, id, prefix)
		if err != nil {
			return nil, err
		}
		hdr.Name = strings.TrimPrefix(prefix, "/") + "/"
		if prefix == dir {
			hdr.ModTime = now // the directory an entry was removed from changed
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
	}
	wh := &tar.Header{Name: strings.TrimPrefix(path.Join(dir, name), "/"), Typeflag: tar.TypeChar,
		Devmajor: 0, Devminor: 0, Mode: 0, ModTime: now, Format: tar.FormatPAX}
	if err := tw.WriteHeader(wh); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// dirHeader returns the tar header the engine gives the directory dir of
// container id (the first of its archive; the rest is not read).
func (c *Client) dirHeader(ctx context.Context, id, dir string) (*tar.Header, error) {
	rc, st, err := c.CopyFrom(ctx, id, dir)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	if !st.Mode.IsDir() {
		return nil, fmt.Errorf("%w: %s is not a directory", ErrInvalid, dir)
	}
	hdr, err := tar.NewReader(rc).Next()
	if err != nil {
		return nil, fmt.Errorf("engine: reading %s: %w", dir, err)
	}
	if hdr.Typeflag != tar.TypeDir {
		return nil, fmt.Errorf("%w: %s is not a directory", ErrInvalid, dir)
	}
	out := &tar.Header{Typeflag: tar.TypeDir, Mode: hdr.Mode, Uid: hdr.Uid, Gid: hdr.Gid,
		ModTime: hdr.ModTime, AccessTime: hdr.AccessTime, Format: tar.FormatPAX}
	for k, v := range hdr.PAXRecords {
		if strings.HasPrefix(k, "SCHILY.xattr.") {
			if out.PAXRecords == nil {
				out.PAXRecords = map[string]string{}
			}
			out.PAXRecords[k] = v
		}
	}
	return out, nil
}

// RemoveFilesHelpers removes the helpers of RemoveStoppedPath (with the
// labels also given, if any) created before cutoff, with their anonymous
// volumes, and returns how many it removed. It does its best: what it
// cannot list or remove is left for the next time.
func (c *Client) RemoveFilesHelpers(ctx context.Context, labels map[string]string, cutoff time.Time) int {
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	f := make(client.Filters).Add("label", HelperLabel+"="+filesHelperKind)
	for k, v := range labels {
		f.Add("label", k+"="+v)
	}
	res, err := c.cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return 0
	}
	n := 0
	for _, ct := range res.Items {
		if ct.State == container.StateRunning || !time.Unix(ct.Created, 0).Before(cutoff) {
			continue
		}
		if _, err := c.cli.ContainerRemove(ctx, ct.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err == nil {
			n++
		}
	}
	return n
}

// isImageID reports whether s is a full image id (sha256:<64 hex>), which
// names content, not a name anyone could give another image.
func isImageID(s string) bool {
	hex, ok := strings.CutPrefix(s, "sha256:")
	if !ok || len(hex) != 64 {
		return false
	}
	for _, r := range hex {
		if (r < '0' || r > '9') && (r < 'a' || r > 'f') {
			return false
		}
	}
	return true
}

// createFilesHelper creates (never starts) the helper that mounts the
// upper directory of container target, from image (Berth's helper image,
// by id).
func (c *Client) createFilesHelper(ctx context.Context, image, upper, target string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	res, err := c.cli.ContainerCreate(ctx, client.ContainerCreateOptions{
		Config: &container.Config{Image: image, Entrypoint: []string{"/berth-never-started"}, NetworkDisabled: true,
			Labels: map[string]string{HelperLabel: filesHelperKind, HelperLabel + ".container": target}},
		HostConfig: &container.HostConfig{NetworkMode: "none",
			Mounts: []mount.Mount{{Type: mount.TypeBind, Source: upper, Target: upperMount}}},
	})
	if err != nil {
		return "", c.fail(err)
	}
	return res.ID, nil
}
