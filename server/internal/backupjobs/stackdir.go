package backupjobs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/berth-dev/berth/server/internal/backup"
	"github.com/berth-dev/berth/server/internal/hostpath"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/fault"
)

// A stack's directory is on Berth's host whatever the engine's host. On an
// environment whose engine runs elsewhere (direct TCP/TLS, agents), a
// backup copies it into the helper (backup.Source.Copied); a restore has
// restic dump it from the snapshot, and Berth writes it itself: unpacked
// into a staging directory beside its target (only directories and regular
// files, each inside it), then renamed into place, so that a restore that
// fails or is refused leaves the target as it was.

// stackDirOf is the path of snapshot sn that is its stack's directory on
// Berth's host ("" when not tagged so: a snapshot made before the tag, or
// of a container).
func stackDirOf(sn backup.Snapshot) string { return tagValue(sn.Tags, TagStackDir) }

// onBerthHost reports whether a restore onto env writes the snapshot path
// hp of sn on Berth's host itself rather than through the helper: hp is
// the stack's directory and env's engine is on another host.
func onBerthHost(env store.Environment, sn backup.Snapshot, hp string) bool {
	return !Local(env) && hp != "" && hp == stackDirOf(sn)
}

// confineStackDir checks that to, where a restore writes a stack's
// directory on Berth's host, is a place stack files of env may be (the
// stacks' policy).
func (s *Service) confineStackDir(ctx context.Context, env store.Environment, to string) error {
	if s.o.PathPolicy == nil {
		return fault.Invalidf("Stack directories cannot be restored by this server")
	}
	pol, err := s.o.PathPolicy(ctx, env.ID)
	if err != nil {
		return err
	}
	_, err = pol.Confine("targetPath", to, hostpath.Dir)
	return err
}

// stageDir dumps the directory src of snapshot sn and unpacks it into a new
// staging directory beside dst, which it returns; on failure nothing is
// left.
func (s *Service) stageDir(ctx context.Context, w backup.Where, r backup.Repo, sn backup.Snapshot, src, dst string) (string, error) {
	parent := filepath.Dir(dst)
	if err := os.MkdirAll(parent, 0o750); err != nil {
		return "", fmt.Errorf("restore: %w", err)
	}
	staging, err := os.MkdirTemp(parent, ".berth-restore-"+filepath.Base(dst)+"-")
	if err != nil {
		return "", fmt.Errorf("restore: %w", err)
	}
	// The directory keeps its mode (a new one gets a stack directory's);
	// restic's dump has no entry of the directory itself.
	mode := os.FileMode(0o750)
	if fi, err := os.Stat(dst); err == nil && fi.IsDir() {
		mode = fi.Mode().Perm()
	}
	if err := os.Chmod(staging, mode|0o700); err != nil {
		os.Remove(staging)
		return "", fmt.Errorf("restore: %w", err)
	}
	pr, pw := io.Pipe()
	unpacked := make(chan error, 1)
	go func() {
		_, err := backup.UnpackDir(pr, backup.PathsDir+src, staging)
		if err == nil {
			// The tar's padding after its end, so that the dump ends well.
			_, err = io.Copy(io.Discard, pr)
		}
		// A refused content cuts the dump short.
		pr.CloseWithError(err)
		unpacked <- err
	}()
	derr := s.o.Runner.Dump(ctx, w, r, sn.ID, backup.PathsDir+src, pw)
	pw.CloseWithError(derr)
	uerr := <-unpacked
	if err := errors.Join(uerr, derr); err != nil {
		if rerr := os.RemoveAll(staging); rerr != nil {
			s.o.Log.Warn("restore: a staging directory not removed", "dir", staging, "err", rerr)
		}
		if derr != nil && (uerr == nil || !errors.Is(derr, uerr)) {
			return "", derr // the dump failed (the unpack only saw it cut)
		}
		return "", uerr // why the content is refused (the dump was cut for it)
	}
	return staging, nil
}

// swapIn puts the staging directory in place of dst: an existing dst is
// moved aside first and removed once the staging directory is there (put
// back if that fails).
func swapIn(staging, dst string) error {
	fi, err := os.Lstat(dst)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return os.Rename(staging, dst)
	case err != nil:
		return err
	case !fi.IsDir():
		return fault.Invalidf("%s is not a directory: the stack's directory is not restored over it", dst)
	}
	old := staging + ".old"
	if err := os.Rename(dst, old); err != nil {
		return err
	}
	if err := os.Rename(staging, dst); err != nil {
		if berr := os.Rename(old, dst); berr != nil {
			return errors.Join(err, fmt.Errorf("the previous %s is left at %s: %w", dst, old, berr))
		}
		return err
	}
	return os.RemoveAll(old)
}
