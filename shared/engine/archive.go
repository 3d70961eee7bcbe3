package engine

import (
	"context"
	"io"
	"os"
	"sync"
	"time"

	"github.com/moby/moby/client"
)

// transferTimeout bounds a streamed copy out of or into a container (a
// download of a large directory, an upload): long, but never unbounded.
const transferTimeout = time.Hour

// PathStat is what the engine tells about one path in a container's
// filesystem. The engine resolves the path inside the container's root: a
// symbolic link as the last component is described, not followed.
type PathStat struct {
	Name       string
	Size       int64
	Mode       os.FileMode
	Mtime      time.Time
	LinkTarget string
}

// StatPath describes path (absolute, inside the container). It works on
// running and stopped containers alike; a missing path is ErrNotFound.
func (c *Client) StatPath(ctx context.Context, containerID, path string) (PathStat, error) {
	containerID, err := checkContainer(containerID)
	if err != nil {
		return PathStat{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	res, err := c.cli.ContainerStatPath(ctx, containerID, client.ContainerStatPathOptions{Path: path})
	if err != nil {
		return PathStat{}, c.fail(err)
	}
	s := res.Stat
	return PathStat{Name: s.Name, Size: s.Size, Mode: s.Mode, Mtime: s.Mtime, LinkTarget: s.LinkTarget}, nil
}

// CopyFrom opens a tar stream of path in the container: the file itself, or
// the directory with everything under it (entry names start with the path's
// base name). The caller reads as much as it needs and closes the stream;
// closing early ends the transfer. The stream lives at most transferTimeout.
func (c *Client) CopyFrom(ctx context.Context, containerID, path string) (io.ReadCloser, PathStat, error) {
	containerID, err := checkContainer(containerID)
	if err != nil {
		return nil, PathStat{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, transferTimeout)
	res, err := c.cli.CopyFromContainer(ctx, containerID, client.CopyFromContainerOptions{SourcePath: path})
	if err != nil {
		cancel()
		return nil, PathStat{}, c.fail(err)
	}
	s := res.Stat
	st := PathStat{Name: s.Name, Size: s.Size, Mode: s.Mode, Mtime: s.Mtime, LinkTarget: s.LinkTarget}
	return &cancelOnClose{ReadCloser: res.Content, cancel: cancel}, st, nil
}

// CopyTo extracts the tar stream content into the directory dir of the
// container, keeping the entries' modes and numeric owners. An existing
// directory is never replaced by a non-directory, nor the other way round
// (ErrConflict-free: the engine answers invalid argument). dir must exist.
func (c *Client) CopyTo(ctx context.Context, containerID, dir string, content io.Reader) error {
	containerID, err := checkContainer(containerID)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, transferTimeout)
	defer cancel()
	_, err = c.cli.CopyToContainer(ctx, containerID, client.CopyToContainerOptions{DestinationPath: dir, Content: content})
	return c.fail(err)
}

// cancelOnClose ends a stream's context when the stream is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
	once   sync.Once
}

func (r *cancelOnClose) Close() error {
	err := r.ReadCloser.Close()
	r.once.Do(r.cancel)
	return err
}
