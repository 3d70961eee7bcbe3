// Package files provides the file browser of a container: listing, reading,
// writing, creating, renaming, deleting and changing the mode of files,
// downloads and uploads as tar streams, the shells a container offers, and
// in-place updates of its resources.
//
// Everything that can goes through the engine's archive API (stat, copy out
// as tar, extract a tar), which works on running and stopped containers and,
// through the agent's raw Engine pipe, on agent environments. The engine
// resolves every path inside the container's root filesystem, so nothing
// reaches the host. The archive API cannot remove anything: in a running
// container deleting and renaming run rm and mv (or busybox's); in a stopped
// one a removal is recorded in the container's own overlay layer by the
// engine (engine.Client.RemoveStoppedPath) and a rename is a copy through
// the archive API followed by that removal. A paused container is refused
// with a Conflict (it can run nothing, and its layer is in use).
package files

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/berth-dev/berth/server/internal/helperimage"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// Limits of the file browser.
const (
	// ContentLimit is the largest file the text editor reads or writes.
	ContentLimit = 1 << 20
	// UploadLimit is the largest upload request (all its files together).
	UploadLimit = 512 << 20
	// ListLimit is the most entries a directory listing returns.
	ListLimit = 10000
)

// TooLargeError is a request or file over one of the limits (413).
type TooLargeError struct{ Message string }

func (e *TooLargeError) Error() string { return e.Message }

// Service runs the file operations on an environment's containers.
type Service struct {
	engines   *engine.Manager
	helperImg *helperimage.Set // the image of the stopped-container removal helper
}

// New returns a Service whose removals from stopped containers use the
// helper image of helperImg.
func New(engines *engine.Manager, helperImg *helperimage.Set) *Service {
	return &Service{engines: engines, helperImg: helperImg}
}

// target is one container of one environment, resolved.
type target struct {
	c       *engine.Client
	id      string // full id
	running bool
	paused  bool
}

// open resolves the container id (or name) of env for operation op.
func (s *Service) open(ctx context.Context, env store.Environment, id, op string) (target, error) {
	c, err := s.engines.Client(ctx, env.Endpoint())
	if err != nil {
		return target{}, opFault(op, err)
	}
	_, st, err := c.InspectContainer(ctx, id)
	if err != nil {
		return target{}, opFault(op, err)
	}
	return target{c: c, id: st.ID, running: st.Running && !st.Paused, paused: st.Paused}, nil
}

// opFault turns an engine error of operation op into the fault clients see.
func opFault(op string, err error) error {
	if f, ok := fault.As(err); ok {
		return f
	}
	details := engine.Details(err)
	switch {
	case errors.Is(err, engine.ErrNotFound):
		return fault.Wrap(fault.NotFound, "Container not found", err)
	case errors.Is(err, engine.ErrInvalid):
		return fault.Wrap(fault.Invalid, "Failed to "+op, err).WithDetails(strings.TrimPrefix(details, engine.ErrInvalid.Error()+": "))
	}
	return fault.Wrap(fault.Internal, "Failed to "+op, err).WithDetails(details)
}

// pathFault is opFault for an operation on path p: a missing path is a 404
// naming it.
func pathFault(op, p string, err error) error {
	if errors.Is(err, engine.ErrNotFound) {
		return fault.Wrap(fault.NotFound, "Path not found: "+p, err)
	}
	return opFault(op, err)
}

// CleanPath normalises a path of the container: absolute, cleaned, with ".."
// resolved against the root, so that it never climbs above "/".
func CleanPath(p string) (string, error) {
	if strings.ContainsRune(p, 0) {
		return "", fault.New(fault.Invalid, "Path must not contain NUL bytes")
	}
	return path.Clean("/" + p), nil
}

// writablePath cleans p for an operation that changes it: the root itself
// cannot be written, deleted or renamed.
func writablePath(p string) (string, error) {
	if strings.TrimSpace(p) == "" {
		return "", fault.New(fault.Invalid, "Path is required")
	}
	p, err := CleanPath(p)
	if err != nil {
		return "", err
	}
	if p == "/" {
		return "", fault.New(fault.Invalid, "The root directory cannot be changed")
	}
	return p, nil
}

// validName checks a single file name (the base of a path to create).
func validName(name string) error {
	switch {
	case name == "" || name == "." || name == "..":
		return fault.Invalidf("Invalid file name %q", name)
	case strings.Contains(name, "/"):
		return fault.Invalidf("File name %q must not contain '/'", name)
	}
	return nil
}

// guardWrite refuses a change of p whose parent directories go through a
// symbolic link that is absolute or climbs above the root: the engine would
// resolve it inside the container, but a write must land where the user
// sees it, and the link may well point somewhere they did not mean. Relative
// links within the tree are allowed. Components that do not exist end the
// check (the write then fails as the engine says).
func (s *Service) guardWrite(ctx context.Context, t target, p string) error {
	dir := path.Dir(p)
	if dir == "/" {
		return nil
	}
	parts := strings.Split(strings.TrimPrefix(dir, "/"), "/")
	cur := ""
	for _, part := range parts {
		cur += "/" + part
		st, err := t.c.StatPath(ctx, t.id, cur)
		if errors.Is(err, engine.ErrNotFound) {
			return nil
		}
		if err != nil {
			return pathFault("read file information", cur, err)
		}
		if st.Mode&fsModeSymlink == 0 {
			continue
		}
		raw, err := s.rawLinkTarget(ctx, t, cur)
		if err != nil {
			return err
		}
		if escapes(path.Dir(cur), raw) {
			return fault.New(fault.Invalid, fmt.Sprintf("Refusing to write through the symbolic link %s (it points to %s); use the real path", cur, raw))
		}
	}
	return nil
}

// escapes reports whether the link target raw, relative to directory dir,
// is absolute or climbs above the root.
func escapes(dir, raw string) bool {
	if strings.HasPrefix(raw, "/") {
		return true
	}
	depth := strings.Count(strings.Trim(dir, "/"), "/") + 1
	if dir == "/" {
		depth = 0
	}
	for _, part := range strings.Split(raw, "/") {
		switch part {
		case "", ".":
		case "..":
			depth--
			if depth < 0 {
				return true
			}
		default:
			depth++
		}
	}
	return false
}

// rawLinkTarget returns a symbolic link's target as written in the link
// (the engine's stat gives it resolved): the one header of its tar.
func (s *Service) rawLinkTarget(ctx context.Context, t target, p string) (string, error) {
	hdr, err := s.header(ctx, t, p)
	if err != nil {
		return "", err
	}
	return hdr.Linkname, nil
}
