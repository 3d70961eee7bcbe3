package files

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// pausedFault is the refusal of a delete or rename in a paused container.
func pausedFault(what string) error {
	return fault.New(fault.Conflict, what+" is not possible while the container is paused: unpause it first")
}

// removeStopped removes p from the stopped container t (see the package
// comment); op names the operation in errors.
func (s *Service) removeStopped(ctx context.Context, t target, op, p string) error {
	img, err := s.helperImg.Ensure(ctx, t.c)
	if err != nil {
		return err
	}
	return stoppedFault(op, p, t.c.RemoveStoppedPath(ctx, t.id, p, img))
}

// stoppedFault is the fault of a removal from a stopped container.
func stoppedFault(op, p string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, engine.ErrStorageUnsupported):
		return fault.Wrap(fault.Conflict, "Removing files from a stopped container needs the engine's overlay2 storage driver; "+
			"start the container to "+op, err).WithDetails(engine.Details(err))
	case errors.Is(err, engine.ErrOnMount):
		return fault.Wrap(fault.Conflict, p+" is on a volume or bind mount of the container, which is not mounted while "+
			"the container is stopped: start the container to "+op, err).WithDetails(engine.Details(err))
	case errors.Is(err, engine.ErrConflict):
		return fault.Wrap(fault.Conflict, "The container was started meanwhile: try again", err)
	}
	return pathFault(op, p, err)
}

// Delete removes p (a directory with everything under it; a link, not what
// it points to), in a running or a stopped container.
func (s *Service) Delete(ctx context.Context, env store.Environment, id, p string) error {
	p, err := writablePath(p)
	if err != nil {
		return err
	}
	t, err := s.open(ctx, env, id, "delete file")
	if err != nil {
		return err
	}
	if err := s.guardWrite(ctx, t, p); err != nil {
		return err
	}
	if _, err := t.c.StatPath(ctx, t.id, p); err != nil {
		return pathFault("delete file", p, err)
	}
	switch {
	case t.paused:
		return pausedFault("Deleting a file")
	case !t.running:
		return s.removeStopped(ctx, t, "delete file", p)
	}
	return s.run(ctx, t, "delete file", "rm", "-rf", "--", p)
}

// Rename moves from to to (a full path; its parent must exist, and to must
// not), in a running or a stopped container.
func (s *Service) Rename(ctx context.Context, env store.Environment, id, from, to string) error {
	from, err := writablePath(from)
	if err != nil {
		return err
	}
	if strings.TrimSpace(to) == "" {
		return fault.New(fault.Invalid, "New path is required")
	}
	to, err = writablePath(to)
	if err != nil {
		return err
	}
	if err := validName(path.Base(to)); err != nil {
		return err
	}
	if from == to {
		return fault.New(fault.Invalid, "The new path is the same as the old one")
	}
	if strings.HasPrefix(to, from+"/") {
		return fault.New(fault.Invalid, "A directory cannot be moved into itself")
	}
	t, err := s.open(ctx, env, id, "rename file")
	if err != nil {
		return err
	}
	for _, p := range []string{from, to} {
		if err := s.guardWrite(ctx, t, p); err != nil {
			return err
		}
	}
	if _, err := t.c.StatPath(ctx, t.id, from); err != nil {
		return pathFault("rename file", from, err)
	}
	if _, err := t.c.StatPath(ctx, t.id, to); err == nil {
		return fault.New(fault.Conflict, "Path already exists: "+to)
	} else if !errors.Is(err, engine.ErrNotFound) {
		return pathFault("rename file", to, err)
	}
	if _, err := t.c.StatPath(ctx, t.id, path.Dir(to)); err != nil {
		return pathFault("rename file", path.Dir(to), err)
	}
	switch {
	case t.paused:
		return pausedFault("Renaming a file")
	case !t.running:
		return s.renameStopped(ctx, t, from, to)
	}
	return s.run(ctx, t, "rename file", "mv", "--", from, to)
}

// renameStopped moves from to to in the stopped container t: from's tar is
// streamed out and back in under the new name, then from is removed. If the
// removal fails the copy is removed again, so the container is as before.
func (s *Service) renameStopped(ctx context.Context, t target, from, to string) error {
	if err := t.c.CheckStoppedRemoval(ctx, t.id, from); err != nil {
		return stoppedFault("rename file", from, err)
	}
	rc, _, err := t.c.CopyFrom(ctx, t.id, from)
	if err != nil {
		return pathFault("rename file", from, err)
	}
	pr, pw := io.Pipe()
	go func() {
		pw.CloseWithError(renameEntries(rc, pw, path.Base(from), path.Base(to)))
	}()
	err = t.c.CopyTo(ctx, t.id, path.Dir(to), pr)
	_ = pr.CloseWithError(io.ErrClosedPipe) // ends the rewriter if the engine stopped reading
	rc.Close()
	if err != nil {
		return pathFault("rename file", to, err)
	}
	if err := s.removeStopped(ctx, t, "rename file", from); err != nil {
		if undo := s.removeStopped(context.WithoutCancel(ctx), t, "rename file", to); undo != nil {
			return fault.Wrap(fault.Internal, "Failed to rename file: "+from+" was copied to "+to+
				" but could not be removed, nor the copy", err).WithDetails(engine.Details(undo))
		}
		return err
	}
	return nil
}

// renameEntries copies the tar in to out with the leading name from (the
// entry itself and everything under it, hard link targets included)
// replaced by to.
func renameEntries(in io.Reader, out io.Writer, from, to string) error {
	rename := func(name string) string {
		if name == from || strings.HasPrefix(name, from+"/") {
			return to + name[len(from):]
		}
		return name
	}
	tr := tar.NewReader(in)
	tw := tar.NewWriter(out)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		hdr.Name = rename(hdr.Name)
		if hdr.Typeflag == tar.TypeLink {
			hdr.Linkname = rename(hdr.Linkname)
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := io.Copy(tw, tr); err != nil {
			return err
		}
	}
	return tw.Close()
}

// run runs a file command in the container; a failure carries its output.
// An image without the program but with busybox (minimal images often ship
// only some of its links) runs it as a busybox applet.
func (s *Service) run(ctx context.Context, t target, op string, cmd ...string) error {
	res, missing, err := s.runOnce(ctx, t, op, cmd)
	if missing {
		res, missing, err = s.runOnce(ctx, t, op, append([]string{"busybox"}, cmd...))
	}
	if missing {
		return fault.New(fault.Conflict, fmt.Sprintf("The container has no %s program, which is needed to %s", cmd[0], op)).
			WithDetails(strings.TrimSpace(res.Output))
	}
	if err != nil {
		return err
	}
	if res.ExitCode != 0 {
		return fault.New(fault.Internal, "Failed to "+op).WithDetails(strings.TrimSpace(res.Output))
	}
	return nil
}

// runOnce runs cmd; missing reports that its program does not exist.
func (s *Service) runOnce(ctx context.Context, t target, op string, cmd []string) (res engine.CommandResult, missing bool, err error) {
	res, err = t.c.RunCommand(ctx, t.id, cmd)
	if err != nil {
		if strings.Contains(err.Error(), "executable file not found") || strings.Contains(err.Error(), "no such file or directory") {
			return engine.CommandResult{Output: engine.Details(err)}, true, err
		}
		return res, false, opFault(op, err)
	}
	return res, res.ExitCode == 126 || res.ExitCode == 127, nil
}

// ParseMode reads a permission mode: octal digits ("644", "0755", "0o755").
func ParseMode(s string) (int64, error) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "0o")
	m, err := strconv.ParseInt(s, 8, 64)
	if s == "" || err != nil || m < 0 || m > 0o7777 {
		return 0, fault.Invalidf("Invalid mode %q: use octal digits such as 644 or 0755", s)
	}
	return m, nil
}

// Chmod sets the permission bits of p (and, when recursive, of everything
// under it except links). It works on stopped containers too: p's tar is
// read from the engine, its headers get the new mode, and it is extracted
// back over itself, streamed (a recursive change rewrites every file of the
// tree; a concurrent write by the container in between may be lost).
func (s *Service) Chmod(ctx context.Context, env store.Environment, id, p string, mode int64, recursive bool) error {
	p, err := writablePath(p)
	if err != nil {
		return err
	}
	t, err := s.open(ctx, env, id, "change file mode")
	if err != nil {
		return err
	}
	if err := s.guardWrite(ctx, t, p); err != nil {
		return err
	}
	rc, st, err := t.c.CopyFrom(ctx, t.id, p)
	if err != nil {
		return pathFault("change file mode", p, err)
	}
	defer rc.Close()
	if st.Mode&fsModeSymlink != 0 {
		return fault.Invalidf("Path %s is a symbolic link; change the mode of the file it points to", p)
	}
	pr, pw := io.Pipe()
	go func() {
		pw.CloseWithError(rewriteModes(rc, pw, mode, recursive))
	}()
	err = t.c.CopyTo(ctx, t.id, path.Dir(p), pr)
	_ = pr.CloseWithError(io.ErrClosedPipe) // ends the rewriter if the engine stopped reading
	if err != nil {
		return pathFault("change file mode", p, err)
	}
	return nil
}

// rewriteModes copies the tar in to out with mode on its first entry (all
// entries but links when recursive; only the first otherwise).
func rewriteModes(in io.Reader, out io.Writer, mode int64, recursive bool) error {
	tr := tar.NewReader(in)
	tw := tar.NewWriter(out)
	for first := true; ; first = false {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) || (!first && !recursive) {
			break
		}
		if err != nil {
			return err
		}
		if hdr.Typeflag != tar.TypeSymlink && hdr.Typeflag != tar.TypeLink {
			hdr.Mode = hdr.Mode&^0o7777 | mode
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := io.Copy(tw, tr); err != nil {
			return err
		}
	}
	return tw.Close()
}
